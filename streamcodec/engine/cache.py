"""A bounded cache of ids for text, filled in batches, that no scan can flush.

Real text repeats itself: a 300 kB English sample has 66k pieces but only 7k distinct ones. So
after the text is cut, most ids are one lookup away, and what costs is Python's per-item work.
:class:`IdCache` never touches items one by one in Python: a call joins the ids of all its keys
(``list.extend`` mapped over ``dict.__getitem__``), one pass in C; a ``KeyError`` says some are
missing, and then a ``set`` and ``filterfalse`` find them, still in C, and only they run Python
code (``compute``).

    >>> cache = IdCache(cache_bytes=1000)
    >>> cache.flat(["ab", "c", "ab"], lambda keys: [(k, tuple(map(ord, k))) for k in keys])
    [97, 98, 99, 97, 98]

**Bounded in bytes.** Each entry is charged what it keeps alive: ``sys.getsizeof`` of its key
and of its ids tuple (exact for CPython's objects, GC header included; the ints are the
vocabulary's own, shared, so not charged) plus ``DICT_SLOT`` for its place in the dict's table,
a fixed figure because a dict grows by doubling: measured with ``tracemalloc``, a str-keyed dict
costs 19 to 44 bytes per entry depending on how full its table is, so 33 is within 14 bytes of
the truth, a few percent of a typical entry's ~130-170. The charges are summed by ``map`` over
the new keys, in C (``__sizeof__``: ``getsizeof`` costs six times as much). A typical entry (a
short word and one id) is charged about ``ENTRY_BYTES``.

**The policy: admit while there is room, never evict under a scan.** Keys are stored while the
cache has room; once it is full, new keys serve their own call and are dropped, so the cache
keeps what it holds. A pass over text it has seen is then never slower than the first pass (it
computes at most what the first computed), however many distinct keys the text has, and a text
with more distinct keys than the cache holds still finds the ones it stored. A least-recently-
used order, the policy before, evicted every key of such a text before its next use, so every
pass merged everything again, plus the bookkeeping (``move_to_end`` over every key). To follow
text that changes over a long run, once the cache has turned away four times as many keys as it
holds, it forgets its older half (insertion order) and admits again. Only admitted keys enter
the dict: a dict never shrinks, so keys stored and then dropped would grow its table past the
bound (a full 32 MiB cache held 41.5 MB so, measured).

The cache has a lock, so an ``Encoding`` can be shared by threads. What is cached (words and
pieces of ordinary text) is decided by :mod:`streamcodec.engine.ordinary`.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from itertools import accumulate, filterfalse, islice, repeat
from operator import add
from sys import getsizeof
from typing import TypeVar

__all__ = ["DICT_SLOT", "ENTRY_BYTES", "MAX_KEY_LENGTH", "IdCache", "Ids"]

# A dict entry's share of the table (the module docstring): the mean of 22 and 44 bytes.
DICT_SLOT = 33

#: A typical entry's charge: 139 bytes on average over ``fuzz.corpus``'s English prose and
#: code, 173 over its multilingual text (cl100k_base, pure path). The deprecated ``cache_size``
#: (in entries) is converted by it.
ENTRY_BYTES = 150

# An entry's charge beyond its key's and its tuple's __sizeof__: the tuple's GC header, the slot.
_ENTRY_EXTRA = getsizeof(()) - ().__sizeof__() + DICT_SLOT

# The least an entry is charged: an empty key, one id.
_LEAST_ENTRY = getsizeof("") + getsizeof((0,)) + DICT_SLOT

# Longer keys are not stored: a megabyte-long piece would hold its text and ids in memory.
MAX_KEY_LENGTH = 256

# Turned-away keys, in multiples of the keys held, after which the older half is forgotten.
REFRESH_AFTER = 4

Ids = tuple[int, ...]
Compute = Callable[[list[str]], list[tuple[str, Ids]]]
T = TypeVar("T")


class IdCache:
    """A bounded map from text to ids, filled in batches, admitting keys while it has room.

    Its entries are charged at most ``cache_bytes`` between calls (the module docstring), none
    with a key longer than ``MAX_KEY_LENGTH``; ``cache_bytes=0`` keeps nothing. ``compute``
    receives the missing keys and returns ``(key, ids)`` pairs for them.

    >>> cache = IdCache(cache_bytes=200)  # room for one short entry
    >>> compute = lambda keys: [(k, tuple(map(ord, k))) for k in keys]
    >>> cache.flat(["ab", "c", "ab"], compute)
    [97, 98, 99, 97, 98]
    >>> len(cache), cache.flat(["x"], compute), "x" in cache  # full: x serves its call only
    (1, [120], False)
    """

    def __init__(self, *, cache_bytes: int) -> None:
        if cache_bytes < 0:
            raise ValueError(f"cache_bytes must be >= 0, not {cache_bytes}")
        self.cache_bytes = cache_bytes
        self.bytes = 0  # charged to the entries held
        self._table: dict[str, Ids] = {}
        self._refused = 0  # keys turned away since the last refresh
        self._full = False  # a call's new keys did not all fit: admit none until a refresh
        # Reentrant: computing missing words looks their pieces up in the same cache.
        self._lock = threading.RLock()
        self._depth = 0  # nesting of lookups; only the outermost refreshes

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: str) -> bool:
        return key in self._table

    def info(self) -> dict[str, int]:
        """``bytes`` charged to the ``entries`` held, and the bound, ``bytes_each`` (the names of
        the compiled word cache's ``cache_info``; one cache, shared by threads)."""
        with self._lock:
            return {
                "bytes": self.bytes,
                "entries": len(self._table),
                "bytes_each": self.cache_bytes,
            }

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
        if not self.cache_bytes:
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
        if len(missing) > give_up * len(keys):
            no_room = self._full or self.bytes + _LEAST_ENTRY * len(missing) > self.cache_bytes
            if len(missing) == len(distinct) or no_room:
                return None
        computed = dict(compute(missing))
        # Computing words stores their pieces, and a one-piece word is its own piece.
        fresh = list(filterfalse(table.__contains__, missing))
        kept = self._admit(fresh, computed)
        if len(kept) == len(fresh):  # (the others' ids are the same as the table's)
            table.update(computed)
        else:
            # Only what is kept enters the table: a dict never shrinks, so keys stored to be
            # dropped would grow it past the bound on novel text.
            table.update(zip(kept, map(computed.__getitem__, kept), strict=True))
            hits = distinct.difference(computed)
            computed.update(zip(hits, map(table.__getitem__, hits), strict=True))
            table = computed
        result = collect(map(table.__getitem__, keys))
        if self._depth == 1 and self._refused > REFRESH_AFTER * len(self._table):
            # The text has moved on: forget the older half, so that new keys come in.
            older = list(islice(self._table, len(self._table) // 2))
            self.bytes -= _charge(older, self._table)
            deque(map(self._table.__delitem__, older), 0)
            self._refused = 0
            self._full = False
        return result

    def _admit(self, fresh: list[str], computed: dict[str, Ids]) -> list[str]:
        """The first of the ``fresh`` keys that fit in the bound, charged; the rest serve
        their call only, and the cache is full from then on (until a refresh)."""
        if max(map(len, fresh), default=0) > MAX_KEY_LENGTH:
            # Long keys would hold much memory for little gain.
            fresh = [key for key in fresh if len(key) <= MAX_KEY_LENGTH]
        fits = 0 if self._full else len(fresh)
        charge = _charge(fresh, computed) if fits else 0
        if self.bytes + charge > self.cache_bytes:  # the first that fit: sum one by one
            room = self.cache_bytes - self.bytes
            charges = list(accumulate(_charges(fresh, computed)))
            fits = bisect_right(charges, room)
            charge = charges[fits - 1] if fits else 0
            self._full = True
        self.bytes += charge
        self._refused += len(fresh) - fits
        return fresh[:fits]


def _charges(keys: list[str], table: dict[str, Ids]) -> Iterator[int]:
    """The charge of each of ``keys`` (entries of ``table``), in C: ``sys.getsizeof`` of the key
    and of the ids (a tuple's adds the garbage collector's header to its ``__sizeof__``)."""
    ids = map(tuple.__sizeof__, map(table.__getitem__, keys))
    return map(add, map(add, map(str.__sizeof__, keys), ids), repeat(_ENTRY_EXTRA))


def _charge(keys: list[str], table: dict[str, Ids]) -> int:
    """The charges of ``keys`` summed."""
    return sum(_charges(keys, table))


def _joined(found: Iterator[Ids]) -> list[int]:
    # list.extend mapped over the tuples: faster than chain.from_iterable, still all in C.
    ids: list[int] = []
    deque(map(ids.extend, found), 0)
    return ids
