"""A bounded cache of ids for text, filled in batches, that no scan can flush.

Real text repeats itself: a 300 kB English sample has 66k pieces but only 7k distinct ones. So
after the text is cut, most ids are one lookup away, and what costs is Python's per-item work.
:class:`IdCache` never touches items one by one in Python: a call joins the ids of all its keys
(``list.extend`` mapped over ``dict.__getitem__``), one pass in C; a ``KeyError`` says some are
missing, and then a ``set`` and ``filterfalse`` find them, still in C, and only they run Python
code (``compute``).

    >>> cache = IdCache(size=2)
    >>> cache.flat(["ab", "c", "ab"], lambda keys: [(k, tuple(map(ord, k))) for k in keys])
    [97, 98, 99, 97, 98]

**The policy: admit while there is room, never evict under a scan.** Keys are stored while the
cache has room; once it is full, new keys serve their own call and are dropped, so the cache
keeps what it holds. A pass over text it has seen is then never slower than the first pass (it
computes at most what the first computed), however many distinct keys the text has, and a text
with more distinct keys than the cache holds still finds the ones it stored. A least-recently-
used order, the policy before, evicted every key of such a text before its next use, so every
pass merged everything again, plus the bookkeeping (``move_to_end`` over every key). To follow
text that changes over a long run, once the cache has turned away four times as many keys as it
holds, it forgets its older half (insertion order) and admits again.

The cache has a lock, so an ``Encoding`` can be shared by threads. What is cached (words and
pieces of ordinary text) is decided by :mod:`streamcodec.engine.ordinary`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from itertools import filterfalse, islice
from typing import TypeVar

__all__ = ["DEFAULT_CACHE_SIZE", "MAX_KEY_LENGTH", "IdCache", "Ids"]

# About 250 bytes per entry with CPython's objects: 32k entries cost some 8 MB.
DEFAULT_CACHE_SIZE = 32_768

# Longer keys are not stored: a megabyte-long piece would hold its text and ids in memory.
MAX_KEY_LENGTH = 256

# Turned-away keys, in multiples of the size, after which the older half is forgotten.
REFRESH_AFTER = 4

Ids = tuple[int, ...]
Compute = Callable[[list[str]], list[tuple[str, Ids]]]
T = TypeVar("T")


class IdCache:
    """A bounded map from text to ids, filled in batches, admitting keys while it has room.

    It holds at most ``size`` keys between calls, none longer than ``MAX_KEY_LENGTH``;
    ``size=0`` keeps nothing. ``compute`` receives the missing keys and returns ``(key, ids)``
    pairs for them.

    >>> cache = IdCache(size=1)
    >>> compute = lambda keys: [(k, tuple(map(ord, k))) for k in keys]
    >>> cache.flat(["ab", "c", "ab"], compute)
    [97, 98, 99, 97, 98]
    >>> len(cache), cache.flat(["x"], compute), "x" in cache  # full: x serves its call only
    (1, [120], False)
    """

    def __init__(self, *, size: int) -> None:
        if size < 0:
            raise ValueError(f"cache size must be >= 0, not {size}")
        self.size = size
        self._table: dict[str, Ids] = {}
        self._refused = 0  # keys turned away since the last refresh
        # Reentrant: computing missing words looks their pieces up in the same cache.
        self._lock = threading.RLock()
        self._depth = 0  # nesting of lookups; only the outermost refreshes

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: str) -> bool:
        return key in self._table

    def flat(self, keys: list[str], compute: Compute, *, give_up: float = 1.0) -> list[int] | None:
        """The ids of all ``keys``, joined; or ``None``, computing nothing, when the missing
        distinct keys are more than the fraction ``give_up`` of the keys and either no key is
        cached or the cache has no room for them (the caller has a cheaper way for text the
        cache cannot serve: on novel text a full cache would only compute and turn away)."""
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
        table = self._table
        try:
            return collect(map(table.__getitem__, keys))  # all cached: the common case
        except KeyError:
            pass
        distinct = set(keys)
        missing = list(filterfalse(table.__contains__, distinct))
        no_room = len(table) + len(missing) > self.size
        if len(missing) > give_up * len(keys) and (len(missing) == len(distinct) or no_room):
            return None
        added = len(table)
        table.update(compute(missing))
        added = len(table) - added
        result = collect(map(table.__getitem__, keys))
        self._drop_new(added, long_keys=max(map(len, missing), default=0) > MAX_KEY_LENGTH)
        return result

    def _drop_new(self, added: int, *, long_keys: bool) -> None:
        """Drop what this call added and the cache has no room for: its new keys are the
        ``added`` newest entries."""
        table = self._table
        if long_keys:  # long keys would hold much memory for little gain
            newest = list(islice(reversed(table), added))
            for key in newest:
                if len(key) > MAX_KEY_LENGTH:
                    del table[key]
                    added -= 1
        excess = max(0, min(len(table) - self.size, added))
        # Deleted by a map in C: a full cache turns away many keys per call on novel text.
        deque(map(table.__delitem__, list(islice(reversed(table), excess))), 0)
        self._refused += excess
        if self._depth == 1 and self._refused > REFRESH_AFTER * self.size:
            # The text has moved on: forget the older half, so that new keys come in.
            deque(map(table.__delitem__, list(islice(table, len(table) // 2))), 0)
            self._refused = 0


def _joined(found: Iterator[Ids]) -> list[int]:
    # list.extend mapped over the tuples: faster than chain.from_iterable, still all in C.
    ids: list[int] = []
    deque(map(ids.extend, found), 0)
    return ids
