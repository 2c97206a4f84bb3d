"""The hot loop: text to ids through a bounded LRU cache of chunks and pieces.

Real text repeats itself: a 300 kB English sample has 66k pieces but only 7k distinct ones. So
after the text is cut, most ids are one lookup away, and what costs is Python's per-item work.
The loop never touches items one by one in Python: it marks all keys as just used
(``move_to_end`` mapped over them, which also proves them cached) and joins their ids
(``list.extend`` mapped over them), each a single pass in C. When some are missing, a ``set``
and ``filterfalse`` find them, still in C, and only they run Python code.

The biggest remaining cost is cutting text into pieces with the pattern, so for the named
patterns the text is first cut into *chunks*, much faster (:meth:`Pretokenizer.chunks`): each
chunk ends where the pattern must end a piece whatever follows, so its ids do not depend on its
neighbours, and whole chunks are cached too. Missing chunks are cut into pieces together, in one
pass, and the pieces' ids come from the same cache.

    >>> from streamcodec.pretokenize import Pretokenizer
    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> from streamcodec.bpe import PieceEncoder
    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> encoder = CachedEncoder(Pretokenizer(CL100K_PATTERN), PieceEncoder(ranks), size=8)
    >>> encoder.encode("ab ab", 0, 5)
    [97, 98, 32, 97, 98]

It must equal encoding each piece of :meth:`Pretokenizer.pieces` with ``encode_piece`` (in turn
equal to :func:`streamcodec.reference.rank_merge`). Keys are only stored when they are valid
UTF-8 (the caller keeps lone surrogates away), and the cache has a lock, so an ``Encoding`` can
be shared by threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from itertools import accumulate, chain, filterfalse
from typing import TypeVar

from streamcodec.bpe import PieceEncoder
from streamcodec.pretokenize import Pretokenizer

__all__ = ["DEFAULT_CACHE_SIZE", "MAX_KEY_LENGTH", "CachedEncoder", "LruIds"]

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

    >>> cache = LruIds(size=2)
    >>> cache.flat(["ab", "c", "ab"], lambda keys: [(k, tuple(map(ord, k))) for k in keys])
    [97, 98, 99, 97, 98]
    >>> len(cache)
    2
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


class CachedEncoder:
    """Text to ids: chunks (when the pattern allows), pieces, ``encode_piece`` for new pieces.

    One cache holds chunks and pieces alike, up to ``size`` of them: a string has the same ids
    whether it is a chunk or a piece (a piece is cut into itself, a chunk into its pieces), and
    many chunks are single pieces. When the cache knows no chunk of a text and the text repeats
    few of its chunks, cutting it straight into pieces is cheaper; that fills the cache with the
    single-piece chunks, and the next calls find some and add the others.
    """

    def __init__(
        self, pretokenizer: Pretokenizer, encode_piece: PieceEncoder, *, size: int
    ) -> None:
        self._pretokenizer = pretokenizer
        self._encode_piece = encode_piece
        self._ranks = encode_piece.ranks
        self._cache = LruIds(size=size)

    def encode(self, text: str, start: int, end: int) -> list[int]:
        """The ids of ``text[start:end]`` (the slice ends the text). Raises
        ``UnicodeEncodeError`` for lone surrogates."""
        chunks = self._pretokenizer.chunks(text, start, end)
        if chunks is not None and len(chunks) > 1 and self._cache.size:
            first, last = chunks[0], chunks[-1]
            ids = self._cache.flat(
                chunks, lambda missing: self._new_chunks(missing, first, last), give_up=0.1
            )
            if ids is not None:
                return ids
        pieces = self._pretokenizer.pieces(text, start, end)
        found = self._cache.flat(pieces, self._new_pieces)
        assert found is not None  # never gives up
        return found

    def _new_pieces(self, pieces: list[str]) -> list[tuple[str, Ids]]:
        data = list(map(str.encode, pieces))
        # Most new pieces are tokens themselves (the whole-piece rule): look them up in C.
        ids: list[Ids] = list(zip(map(self._ranks.get, data)))  # type: ignore[arg-type]
        encode_piece = self._encode_piece
        for i, found in enumerate(ids):
            if found[0] is None:
                ids[i] = tuple(encode_piece(data[i]))
        return list(zip(pieces, ids, strict=True))

    def _new_chunks(self, chunks: list[str], first: str, last: str) -> list[tuple[str, Ids]]:
        """Cut all ``chunks`` into pieces in one pass. Chunks are cut independently, so joined
        they give the same pieces, provided the text's first chunk (which may lack the leading
        space) comes first and its last chunk (which may end in whitespace) comes last."""
        if first in chunks:
            chunks.remove(first)
            chunks.insert(0, first)
        # (If first == last, and there are other chunks, it starts with a space and ends with
        # something else, so it may go anywhere.)
        if last != first and last in chunks:
            chunks.remove(last)
            chunks.append(last)
        pieces = self._pretokenizer.pieces("".join(chunks))
        ids = self._cache.each(pieces, self._new_pieces)
        # Chunk ends are piece ends: find each one's piece, then its token, then slice the ids.
        piece_at = dict(zip(accumulate(map(len, pieces)), range(1, len(pieces) + 1), strict=True))
        token_at = [0, *accumulate(map(len, ids))]
        ends = [
            0,
            *map(token_at.__getitem__, map(piece_at.__getitem__, accumulate(map(len, chunks)))),
        ]
        flat = tuple(chain.from_iterable(ids))
        slices = map(slice, ends, ends[1:])
        return list(zip(chunks, map(flat.__getitem__, slices), strict=True))
