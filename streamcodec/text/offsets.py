"""Where each token starts in the input: character offsets (or UTF-8 byte offsets) of ids.

A token's character offset is the index of the character in which its first byte lies, so a
token that starts inside a character (the second of the three tokens of an emoji) gets that
character's offset: the rule of tiktoken's ``decode_with_offsets``. Counting is done on the
token bytes: every byte that is not a UTF-8 continuation byte (``0b10xxxxxx``) starts a
character.

    >>> counter = OffsetCounter("char")
    >>> counter.offsets([b"hi", b" \\xf0\\x9f", b"\\xa6\\x99", b"!"])
    [0, 2, 3, 4]
    >>> OffsetCounter("byte").offsets([b"hi", b" \\xf0\\x9f", b"\\xa6\\x99", b"!"])
    [0, 2, 5, 7]

The counter keeps its position between calls, so a stream of ids gets absolute offsets.
``encode`` turns a lone surrogate into U+FFFD and a surrogate pair into the one character it
stands for; :func:`input_positions` maps offsets in that text back to the caller's string.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from operator import itemgetter, sub
from typing import Literal

from streamcodec.text.unicode import has_surrogates

__all__ = ["OffsetCounter", "Unit", "input_positions", "starts_inside_character"]

Unit = Literal["char", "byte"]
_CONTINUATION = bytes(range(0x80, 0xC0))
_INSIDE = bytes(0x80 <= b < 0xC0 for b in range(256))  # 1 for a continuation byte


class _CharCounts(dict[bytes, int]):
    """Token bytes -> the characters that start in them (bytes that are not continuation
    bytes); filled on first sight, so it holds at most the vocabulary."""

    def __missing__(self, token: bytes) -> int:
        count = self[token] = len(token.translate(None, _CONTINUATION))
        return count


_CHARS = _CharCounts()


class OffsetCounter:
    """Offsets of consecutive tokens, in ``unit`` (``"char"`` or ``"byte"``), from ``start``.

    Character offsets need the bytes to be UTF-8 (text that ``encode`` read, or bytes decoded
    with ``errors="strict"`` or ``"replace"``).
    """

    def __init__(self, unit: Unit = "char", start: int = 0) -> None:
        if unit not in ("char", "byte"):
            raise ValueError(f"unit must be 'char' or 'byte', not {unit!r}")
        self._chars = unit == "char"
        self.position = start  # the offset after the last token counted

    def offsets(self, data: Sequence[bytes]) -> list[int]:
        """The offset of each token of ``data`` (the bytes of consecutive tokens).

        (The loops run in C: ``map`` and ``accumulate`` over the tokens.)
        """
        sizes = map(_CHARS.__getitem__ if self._chars else len, data)
        starts = list(accumulate(sizes, initial=self.position))
        self.position = starts.pop()
        if not self._chars:
            return starts
        # A token starting with a continuation byte starts inside the character before.
        return list(map(sub, starts, map(_INSIDE.__getitem__, map(itemgetter(0), data))))


def input_positions(text: str) -> list[int] | None:
    """For each character ``encode`` sees in ``text``, its index in ``text``; plus ``len(text)``.

    None when ``text`` holds no surrogate (the two are the same). A surrogate pair is one
    character to ``encode`` and two in ``text``; a lone surrogate is one in both (U+FFFD).

    >>> input_positions("a\\ud83d\\ude00b")
    [0, 1, 3, 4]
    """
    if not has_surrogates(text):
        return None
    positions: list[int] = []
    i = 0
    while i < len(text):
        positions.append(i)
        pair = "\ud800" <= text[i] <= "\udbff" and "\udc00" <= text[i + 1 : i + 2] <= "\udfff"
        i += 2 if pair else 1
    positions.append(len(text))
    return positions


def starts_inside_character(token: bytes) -> bool:
    """Whether ``token`` starts with a UTF-8 continuation byte (inside a character)."""
    return 0x80 <= token[0] < 0xC0
