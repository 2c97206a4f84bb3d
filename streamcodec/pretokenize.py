"""Pre-tokenization: cut text into pieces with the vocabulary's pattern before any merging.

Merges never cross a piece boundary, so the pattern decides a lot: GPT-2's keeps a leading space
with the word after it (``" world"``), cl100k_base caps digit runs at three, and so on. The
pattern is matched with the ``regex`` module, which understands the possessive quantifiers and
Unicode classes of tiktoken's patterns.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> Pretokenizer(CL100K_PATTERN).pieces("Hello world!!  12345")
    ['Hello', ' world', '!!', ' ', ' ', '123', '45']
"""

from __future__ import annotations

import regex

__all__ = ["Pretokenizer"]


class Pretokenizer:
    """Split text into the matches of a pattern (tiktoken's and GPT-2's pre-tokenization)."""

    def __init__(self, pattern: str) -> None:
        try:
            self._regex = regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"invalid pre-tokenizer pattern {pattern!r}: {exc}") from None
        self.pattern = pattern

    def pieces(self, text: str, start: int = 0, end: int | None = None) -> list[str]:
        """The pieces of ``text[start:end]``; the slice ends the text for ``$`` and lookaheads."""
        return self._regex.findall(text, start, len(text) if end is None else end)
