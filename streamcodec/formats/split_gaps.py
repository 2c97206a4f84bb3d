"""Hugging Face's ``Split`` keeps the text between its pattern's matches; tiktoken drops it.

A ``tokenizer.json`` whose ``Split`` pattern (behavior ``Isolated``) does not match every
character still encodes all of the text: Hugging Face makes each run between two matches a
piece of its own. :func:`with_gaps` gives the pattern that finds those same pieces, so that an
encoding read from the file encodes as Hugging Face does:

    >>> import regex
    >>> regex.findall(with_gaps(r"\\w+"), "hello, world\\n")
    ['hello', ', ', 'world', '\\n']

That pattern holds the Split's twice, and the second copy's groups are numbered after the
first's, so a backreference (``(a)\\1``) would name the other copy's group: such a pattern
has no gapped form (``None``), and the Split runs as a step instead
(:mod:`streamcodec.text.sequence`, which cuts the gaps between the pattern's own matches).
"""

from __future__ import annotations

import re

from streamcodec.text.known_patterns import DEEPSEEK_V3_PATTERN, shape_of
from streamcodec.vocab import PATTERNS

__all__ = ["GAPS", "with_gaps"]

#: A match of a pattern, else the longest run of characters at none of which it matches
#: (``[\s\S]``, not ``(?s:.)``: Oniguruma, Hugging Face's engine, has no ``s`` flag).
GAPS = r"(?:{0})|(?:(?!(?:{0}))[\s\S])+"
# A pattern's escapes and characters; a backreference among them is one of these.
_PATTERN_TOKEN = re.compile(r"\\.|\(\?P=|.", re.DOTALL)
_BACKREFERENCE = re.compile(r"\\[1-9gk]|\(\?P=")


def with_gaps(pattern: str) -> str | None:
    """``pattern``, whose matches are pieces, made to match the text between matches too: each
    gap is one piece, as in Hugging Face's ``Split`` (``Isolated``), where tiktoken drops it;
    ``None`` for a pattern with a backreference (the module docstring).

    The named patterns, every pattern of the known-pattern grammar (Llama 3's, Qwen's...: one
    of their alternatives matches each character, see docs/patterns.md) and DeepSeek V3's (its
    gaps are in it) leave no gap and are kept as they are, so the native scanner still knows
    them; so is a pattern already made so.
    """
    inner = (len(pattern) - len(GAPS.format(""))) // 2
    if pattern in PATTERNS.values() or shape_of(pattern) or pattern == DEEPSEEK_V3_PATTERN:
        return pattern
    if GAPS.format(pattern[3 : 3 + inner]) == pattern:
        return pattern
    if any(_BACKREFERENCE.fullmatch(token) for token in _PATTERN_TOKEN.findall(pattern)):
        return None
    return GAPS.format(pattern)
