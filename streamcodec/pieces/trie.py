"""Candidate lookup: the tokens that are prefixes of the bytes at a position, longest first.

A :mod:`pygtrie` trie over the token bytes answers it in one walk down the bytes, however many
tokens there are. Building one trie for a 100k-token vocabulary takes about a second of Python,
and only long pieces (the backtracking encoder) need it, so the index is built lazily and in
parts: one small trie per two-byte start, each built the first time a piece needs it.

    >>> trie = TokenTrie({b"a": 0, b"b": 1, b"ab": 2, b"abc": 3})
    >>> trie.candidates(b"xabd", 1)
    [(2, 2), (0, 1)]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygtrie

__all__ = ["TokenTrie"]

_Candidate = tuple[int, int]  # (token, length in bytes)


class TokenTrie:
    """Prefix lookup over the bytes of a vocabulary's tokens, built lazily."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self._ranks = ranks
        self._lock = threading.Lock()
        self._groups: dict[bytes, list[bytes]] | None = None  # longer tokens by first two bytes
        self._tries: dict[bytes, pygtrie.Trie] = {}
        self._longest = 1

    def _grouped(self) -> dict[bytes, list[bytes]]:
        with self._lock:
            if self._groups is None:
                groups: dict[bytes, list[bytes]] = {}
                for data in self._ranks:
                    if len(data) > 1:
                        groups.setdefault(data[:2], []).append(data)
                self._longest = max(map(len, self._ranks), default=1)
                self._groups = groups
            return self._groups

    def _trie(self, start: bytes) -> pygtrie.Trie:
        trie = self._tries.get(start)
        if trie is None:
            import pygtrie  # here: 7 ms that every start paid, for the long pieces of the pure path

            trie = pygtrie.Trie()
            for data in (self._groups or self._grouped()).get(start, ()):
                # The length travels with the id: reading a step's key would rebuild it.
                trie[data] = (self._ranks[data], len(data))
            self._tries[start] = trie
        return trie

    @property
    def longest(self) -> int:
        """The length of the longest token: candidates depend on no more bytes than this."""
        if self._groups is None:
            self._grouped()
        return self._longest

    def candidates(self, data: bytes, start: int) -> list[_Candidate]:
        """``(token, length)`` of every token that ``data[start:]`` starts with, longest first.

        Bytes that are not tokens on their own have no candidates.
        """
        # A view, not a copy: the walk reads only as far as some token matches.
        window = memoryview(data)[start : start + self.longest]
        found = [step.value for step in self._trie(data[start : start + 2]).prefixes(window)]
        found.reverse()
        single = self._ranks.get(data[start : start + 1])
        if single is not None:
            found.append((single, 1))
        return found
