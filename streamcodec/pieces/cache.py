"""A bounded cache of ids for text, filled in batches, with no per-item Python work.

Real text repeats itself: a 300 kB English sample has 66k pieces but only 7k distinct ones. So
after the text is cut, most ids are one lookup away, and what costs is Python's per-item work.
:class:`LruIds` never touches items one by one in Python: it marks all keys as just used
(``move_to_end`` mapped over them, which also proves them cached) and joins their ids
(``list.extend`` mapped over them), each a single pass in C. When some are missing, a ``set``
and ``filterfalse`` find them, still in C, and only they run Python code (``compute``).

    >>> cache = LruIds(size=2)
    >>> cache.flat(["ab", "c", "ab"], lambda keys: [(k, tuple(map(ord, k))) for k in keys])
    [97, 98, 99, 97, 98]

The cache has a lock, so an ``Encoding`` can be shared by threads. What is cached (chunks and
pieces of ordinary text) is decided by :mod:`streamcodec.ordinary`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from itertools import filterfalse
from typing import TypeVar

__all__ = ["DEFAULT_CACHE_SIZE", "MAX_KEY_LENGTH", "Ids", "LruIds"]

# About 250 bytes per entry with CPython's objects: 32k entries cost some 8 MB.
DEFAULT_CACHE_SIZE = 32_768

# Longer keys are not stored: a megabyte-long piece would hold its text and ids in memory.
MAX_KEY_LENGTH = 256

Ids = tuple[int, ...]
Compute = Callable[[list[str]], list[tuple[str, Ids]]]
T = TypeVar("T")


class LruIds:
    """A bounded least-recently-used map from text to ids, filled in batches.

    It holds at most ``size`` keys between calls (during one call it may also hold that call's
    distinct keys), none longer than ``MAX_KEY_LENGTH``; ``size=0`` keeps nothing. ``compute``
    receives the missing keys and returns ``(key, ids)`` pairs for them.

    >>> cache = LruIds(size=1)
    >>> cache.flat(["ab", "c", "ab"], lambda keys: [(k, tuple(map(ord, k))) for k in keys])
    [97, 98, 99, 97, 98]
    >>> len(cache)
    1
    """

    def __init__(self, *, size: int) -> None:
        if size < 0:
            raise ValueError(f"cache size must be >= 0, not {size}")
        self.size = size
        self._table: OrderedDict[str, Ids] = OrderedDict()
        # Reentrant: computing missing chunks looks their pieces up in the same cache.
        self._lock = threading.RLock()
        self._depth = 0  # nesting of lookups; only the outermost evicts

    def __len__(self) -> int:
        return len(self._table)

    def flat(self, keys: list[str], compute: Compute, *, give_up: float = 1.0) -> list[int] | None:
        """The ids of all ``keys``, joined; ``None``, computing nothing, if no key is cached and
        the distinct keys are more than the fraction ``give_up`` of them (the caller has a
        cheaper way for text the cache knows nothing of)."""
        return self._lookup(keys, compute, _joined, give_up)

    def each(self, keys: list[str], compute: Compute) -> list[Ids]:
        """The ids of each of ``keys``."""
        found = self._lookup(keys, compute, list, 1.0)
        assert found is not None  # never gives up
        return found

    def _lookup(
        self,
        keys: list[str],
        compute: Compute,
        collect: Callable[[Iterator[Ids]], T],
        give_up: float,
    ) -> T | None:
        if not self.size:
            table = dict(compute(list(set(keys))))
            return collect(map(table.__getitem__, keys))
        with self._lock:
            self._depth += 1
            try:
                return self._locked_lookup(keys, compute, collect, give_up)
            finally:
                self._depth -= 1

    def _locked_lookup(
        self,
        keys: list[str],
        compute: Compute,
        collect: Callable[[Iterator[Ids]], T],
        give_up: float,
    ) -> T | None:
        lru = self._table
        missing: list[str] = []
        try:
            # Mark every key as just used; when all are cached (the common case), that is all.
            deque(map(lru.move_to_end, keys), 0)
        except KeyError:
            distinct = set(keys)
            missing = list(filterfalse(lru.__contains__, distinct))
            if len(missing) == len(distinct) > give_up * len(keys):
                return None
            lru.update(compute(missing))
            deque(map(lru.move_to_end, distinct), 0)  # all used now: their order is free
        result = collect(map(lru.__getitem__, keys))
        if missing and max(map(len, missing)) > MAX_KEY_LENGTH:
            # Long keys would hold much memory for little gain: they serve this call only.
            for key in missing:
                if len(key) > MAX_KEY_LENGTH:
                    del lru[key]
        if self._depth == 1:  # a nested lookup must not evict what the outer one relies on
            for _ in range(len(lru) - self.size):
                lru.popitem(last=False)
        return result


def _joined(found: Iterator[Ids]) -> list[int]:
    # list.extend mapped over the tuples: faster than chain.from_iterable, still all in C.
    ids: list[int] = []
    deque(map(ids.extend, found), 0)
    return ids
