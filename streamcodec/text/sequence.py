r"""Hugging Face pre-tokenizer Sequences that no one pattern states, run step by step.

A ``tokenizer.json`` may chain pre-tokenizers: each step cuts every piece of the step before
into smaller pieces, and a step's pattern sees each piece as a text of its own (its ``$`` and
``(?!\S)`` hold at the piece's end). DeepSeek LLM and Coder split five or six times; Falcon
splits off punctuation, then runs ``ByteLevel``, then cuts digits in the byte alphabet, where a
character's UTF-8 bytes are separate characters and a cut may fall inside a character. Where the
steps amount to one pattern streamcodec keeps that pattern (the native scanner may know it,
:mod:`streamcodec.text.known_patterns`); the others run here, exactly, on both backends: the
pieces then go to the compiled core or the Python merge as bytes.

The steps are the encoding's ``pat_str``, written as :data:`STEPS_PREFIX` and a JSON list, so
an encoding pickles, streams and names its pre-tokenizer as any other:

    >>> pat = steps_pattern([("split", r"\p{L}+"), ("digits", True)])
    >>> Steps(pat).pieces("ab12 c")
    ['ab', '1', '2', ' ', 'c']
    >>> Steps(steps_pattern([("bytelevel", True), ("digits", False)])).byte_pieces("x½")
    [b'x', b'\xc2', b'\xbd']

The steps (each Hugging Face's, with its ``Isolated`` behaviour: a match is a piece, and so is
each run of text between two matches, found between the pattern's own matches; a pattern that
also matched the runs would hold it twice, and the copy's backreferences would name the first
copy's groups: ``(a)\1`` cut ``aaaab`` unlike Hugging Face):

- ``("split", pattern)``: ``Split`` with a regex (``regex`` dialect);
- ``("digits", individual)``: ``Digits``: each digit alone, or runs of digits;
- ``("punctuation", contiguous)``: ``Punctuation``: each punctuation character alone, or runs
  (``Contiguous``); punctuation is ASCII's or Unicode's ``P``, as Rust's ``is_punctuation``;
- ``("bytelevel", use_regex)``: ``ByteLevel``: GPT-2's pattern (Hugging Face's spelling) if
  ``use_regex``, then each piece written in GPT-2's byte alphabet for the steps after it.
"""

from __future__ import annotations

import functools
from typing import Any

from streamcodec.text.byte_alphabet import token_to_unicode, unicode_to_tokens
from streamcodec.text.known_patterns import HF_BYTE_LEVEL_PATTERN, STEPS_PREFIX
from streamcodec.text.pinned import pinned_re
from streamcodec.text.regex_patterns import Pattern, compile_regex, refuse_empty

__all__ = ["STEPS_PREFIX", "Step", "Steps", "parse_steps", "steps_pattern"]

Step = tuple[str, Any]
_KINDS = {"split": str, "digits": bool, "punctuation": bool, "bytelevel": bool}
_PUNCTUATION = r"[\p{P}!-/:-@\[-`{-~]"


def steps_pattern(steps: list[Step]) -> str:
    """The ``pat_str`` that stands for ``steps``."""
    import json  # here and below: a plain pattern's encoding needs no JSON (1 ms of a start)

    return STEPS_PREFIX + json.dumps([list(step) for step in steps], ensure_ascii=False)


def parse_steps(pattern: str) -> list[Step] | None:
    """The steps ``pattern`` stands for, or ``None`` when it is a plain pattern;
    ``ValueError`` for a malformed list."""
    if not pattern.startswith(STEPS_PREFIX):
        return None
    import json

    try:
        steps = json.loads(pattern[len(STEPS_PREFIX) :])
    except ValueError:
        raise ValueError(f"pre-tokenizer steps: not a JSON list: {pattern[:60]!r}") from None
    if not isinstance(steps, list) or not all(
        isinstance(step, list)
        and len(step) == 2
        and step[0] in _KINDS
        and isinstance(step[1], _KINDS[step[0]])
        for step in steps
    ):
        raise ValueError(f"pre-tokenizer steps: expected [[kind, argument], ...]: {pattern[:60]!r}")
    return [(kind, argument) for kind, argument in steps]


class Steps:
    """The pieces of a text under a Sequence of pre-tokenizer steps (the module docstring)."""

    def __init__(self, pattern: str) -> None:
        steps = parse_steps(pattern)
        if steps is None:
            raise ValueError(f"not a pre-tokenizer Sequence: {pattern[:60]!r}")
        self.pattern = pattern
        # The patterns that cut, in order, and where ByteLevel writes the bytes as characters.
        self._cutters: list[Pattern | None] = []
        for kind, argument in steps:
            if kind == "split":
                self._cutters.append(_cutter(argument))
            elif kind == "digits":
                self._cutters.append(_cutter(r"\p{N}" if argument else r"\p{N}+"))
            elif kind == "punctuation":
                self._cutters.append(_cutter(_PUNCTUATION + ("+" if argument else "")))
            else:
                if argument:
                    self._cutters.append(_cutter(HF_BYTE_LEVEL_PATTERN))
                self._cutters.append(None)  # the byte alphabet from here on
        first = self._cutters.index(None) if None in self._cutters else len(self._cutters)
        self._text_cutters = self._cutters[:first]
        self._byte_cutters = [c for c in self._cutters[first + 1 :] if c is not None]

    def pieces(self, text: str, start: int = 0, end: int | None = None) -> list[str]:
        """The pieces of ``text[start:end]`` until the steps see bytes: every later piece
        lies inside one of these (what the stream's cuts need)."""
        pieces = [text[start:end]] if end is None or start < end else []
        for cutter in self._text_cutters:
            assert cutter is not None
            pieces = [p for piece in pieces for p in _isolated(cutter, piece)]
        return [p for p in pieces if p]

    def byte_pieces(
        self, text: str, start: int = 0, end: int | None = None, errors: str = "strict"
    ) -> list[bytes]:
        """The final pieces of ``text[start:end]`` as bytes (a lone surrogate as for
        ``str.encode(..., errors)``)."""
        pieces = self.pieces(text, start, end)
        if not self._byte_cutters:
            return [piece.encode("utf-8", errors) for piece in pieces]
        written = [token_to_unicode(piece.encode("utf-8", errors)) for piece in pieces]
        for cutter in self._byte_cutters:
            written = [p for piece in written for p in _isolated(cutter, piece)]
        return unicode_to_tokens(written)


def _isolated(cutter: Pattern, text: str) -> list[str]:
    """``text`` cut as ``Isolated`` cuts it: each match of ``cutter`` is a piece, and so is each
    run of text between two matches (an empty match refused, as compiling refuses one)."""
    pieces = []
    at = 0
    for match in cutter.finditer(text):
        start, end = match.span()
        if start == end:
            refuse_empty(cutter, [""], text)
        if start > at:
            pieces.append(text[at:start])
        pieces.append(text[start:end])
        at = end
    if at < len(text):
        pieces.append(text[at:])
    return pieces


@functools.cache
def _cutter(pattern: str) -> Pattern:
    """``pattern`` compiled: checked by ``regex``, and cut on the shipped Unicode tables where
    its classes pin (:mod:`streamcodec.text.pinned`)."""
    checked = compile_regex(pattern)
    return pinned_re(pattern) or checked
