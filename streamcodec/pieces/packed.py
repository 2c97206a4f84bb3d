"""A vocabulary in rank order as three flat arrays, its dict made only when asked for.

The shipped vocabularies (:mod:`streamcodec.vocabularies`) unpack to this form: token k is the
next ``lengths[k]`` bytes of ``blob``, and its rank the next of the ``runs``' ``(first, count)``
ranges. The compiled core builds its tables from these arrays directly (``Core.packed``), so a
command that only encodes never makes the dict of 100,000 bytes objects (a third of its start,
with the decoding table, and the manifest's hash of it); :meth:`PackedRanks.ranks` makes it the
first time something asks (``Encoding.mergeable_ranks``, a decode, the pure path).

    >>> packed = PackedRanks(bytes([1] * 256 + [2]), bytes(range(256)) + b"ab", [(0, 257)])
    >>> len(packed), packed.max_rank, packed.every_byte, packed.ranks()[b"ab"]
    (257, 256, True, 256)
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from typing import Any

from streamcodec.pieces.piece import LONG_PIECE

__all__ = ["PackedRanks"]


class PackedRanks:
    """:class:`~streamcodec.pieces.ranks.Ranks` where token k is the next ``lengths[k]`` bytes
    of ``blob``, with the next rank of ``runs`` (``(first, count)`` pairs from a file,
    ascending, each number 32 bits: a ``ValueError`` naming ``source`` where they overlap or
    one is negative or larger); ``native`` says
    whether the compiled core may make the dict (the backend's choice). The sizes are checked
    where the arrays are read: by ``Core.packed`` and by :meth:`ranks`."""

    def __init__(
        self,
        lengths: bytes,
        blob: bytes,
        runs: list[tuple[int, int]],
        *,
        source: str = "<bytes>",
        native: bool = False,
    ) -> None:
        if any(a + n > b for (a, n), (b, _) in itertools.pairwise(runs)):
            raise ValueError(f"{source}: damaged vocabulary (ranks overlap); reinstall streamcodec")
        if not all(0 <= a < 2**32 and 0 <= n < 2**32 for a, n in runs):  # the file's "<II"
            raise ValueError(
                f"{source}: damaged vocabulary (a run past 32 bits); reinstall streamcodec"
            )
        self.lengths, self.blob, self.runs = lengths, blob, runs
        self.source, self.native = source, native
        self._count = sum(count for _, count in runs)
        self._ranks: dict[bytes, int] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    @property
    def max_rank(self) -> int:
        """The largest rank (0 for no token)."""
        return max((first + count - 1 for first, count in self.runs if count), default=0)

    @property
    def longest(self) -> int:
        """The bytes of the longest token (1 for no token)."""
        return max(self.lengths, default=1)

    @property
    def every_byte(self) -> bool:
        """Whether each single byte is a token: 256 one-byte tokens, since no two tokens are
        alike (both readers refuse that)."""
        return self.lengths.count(1) == 256

    def reused(self, ids: Iterable[int]) -> int:
        """How many of ``ids`` a token has as its rank (no two tokens share one: the runs do
        not overlap)."""
        return sum(any(a <= i < a + count for a, count in self.runs) for i in ids)

    def compiled(self, core: Any) -> Any:
        """``core``'s tables (``streamcodec.pieces._core.Core``) read from the arrays, no dict
        made; None where the core cannot take them."""
        return core.packed(self.lengths, self.blob, self.runs, long_piece=LONG_PIECE)

    def ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank, made once (by the compiled core where ``native`` and it is
        built); a ``ValueError`` naming ``source`` where the sizes disagree or a token repeats."""
        with self._lock:
            if self._ranks is None:
                made = _rank_dict(self.lengths, self.blob, self.runs, native=self.native)
                if made is None:
                    raise ValueError(
                        f"{self.source}: damaged vocabulary (sizes disagree); reinstall streamcodec"
                    )
                self._ranks = made
            return self._ranks


def _rank_dict(
    lengths: bytes, blob: bytes, runs: list[tuple[int, int]], *, native: bool
) -> dict[bytes, int] | None:
    """Token k (the next ``lengths[k]`` bytes of ``blob``) -> the next rank of ``runs``'
    ``(first, count)`` ranges; None where the sizes disagree or a token repeats. With ``native``
    in one call of the core where it is built (``rank_dict``), else here (the reference it
    equals)."""
    if native:
        try:
            from streamcodec.pieces._core import rank_dict
        except ImportError:
            pass
        else:
            return rank_dict(lengths, blob, runs)
    offsets = list(itertools.accumulate(lengths, initial=0))
    tokens = [blob[a:b] for a, b in itertools.pairwise(offsets)]
    ranks = itertools.chain.from_iterable(range(first, first + n) for first, n in runs)
    unpacked = dict(zip(tokens, ranks, strict=False))  # their counts are compared next
    total = sum(count for _, count in runs)
    if len(tokens) != total or offsets[-1] != len(blob) or len(unpacked) != total:
        return None
    return unpacked
