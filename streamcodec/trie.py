"""Candidate lookup: the tokens that are prefixes of the bytes at a position, longest first.

A :mod:`pygtrie` trie over the token bytes answers it in one walk down the bytes, however many
tokens there are. Building the trie for a 100k-token vocabulary takes about a second, so it is
built on first use: only long pieces (the backtracking encoder) need it.

    >>> trie = TokenTrie({b"a": 0, b"b": 1, b"ab": 2, b"abc": 3})
    >>> trie.candidates(b"xabd", 1)
    [(2, 2), (0, 1)]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import pygtrie

__all__ = ["TokenTrie"]


class TokenTrie:
    """Prefix lookup over the bytes of a vocabulary's tokens, built lazily."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self._ranks = ranks
        self._trie: pygtrie.Trie | None = None
        self._lock = threading.Lock()
        self._longest = 0

    def _built(self) -> pygtrie.Trie:
        with self._lock:
            if self._trie is None:
                trie = pygtrie.Trie()
                for data, rank in self._ranks.items():
                    # The length travels with the id: reading a step's key would rebuild it.
                    trie[data] = (rank, len(data))
                self._longest = max(map(len, self._ranks), default=0)
                self._trie = trie
            return self._trie

    @property
    def longest(self) -> int:
        """The length of the longest token: candidates depend on no more bytes than this."""
        self._trie or self._built()
        return self._longest

    def candidates(self, data: bytes, start: int) -> list[tuple[int, int]]:
        """``(token, length)`` of every token that ``data[start:]`` starts with, longest first."""
        trie = self._trie or self._built()
        found = [step.value for step in trie.prefixes(data[start : start + self._longest])]
        found.reverse()
        return found
