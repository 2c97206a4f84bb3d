"""Hugging Face's ``Split`` keeps the text between its pattern's matches; tiktoken drops it.

A ``tokenizer.json`` whose ``Split`` pattern (behavior ``Isolated``) does not match every
character still encodes all of the text: Hugging Face makes each run between two matches a
piece of its own. :func:`with_gaps` gives the pattern that finds those same pieces, so that an
encoding read from the file encodes as Hugging Face does:

    >>> import regex
    >>> regex.findall(with_gaps(r"\\w+"), "hello, world\\n")
    ['hello', ', ', 'world', '\\n']
"""

from __future__ import annotations

from streamcodec.text.known_patterns import DEEPSEEK_V3_PATTERN, shape_of
from streamcodec.text.sequence import GAPS
from streamcodec.vocab import PATTERNS

__all__ = ["with_gaps"]

_GAPS = GAPS


def with_gaps(pattern: str) -> str:
    """``pattern``, whose matches are pieces, made to match the text between matches too: each
    gap is one piece, as in Hugging Face's ``Split`` (``Isolated``), where tiktoken drops it.

    The named patterns, every pattern of the known-pattern grammar (Llama 3's, Qwen's...: one
    of their alternatives matches each character, see docs/patterns.md) and DeepSeek V3's (its
    gaps are in it) leave no gap and are kept as they are, so the native scanner still knows
    them; so is a pattern already made so.
    """
    inner = (len(pattern) - len(_GAPS.format(""))) // 2
    if pattern in PATTERNS.values() or shape_of(pattern) or pattern == DEEPSEEK_V3_PATTERN:
        return pattern
    if _GAPS.format(pattern[3 : 3 + inner]) == pattern:
        return pattern
    return _GAPS.format(pattern)
