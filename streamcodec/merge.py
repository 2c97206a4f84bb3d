"""The rank-merge loop: the fast path for short pieces.

It must equal :func:`streamcodec.reference.rank_merge` with ``whole_piece=False`` (the caller
checks the whole-piece rule first). It keeps the rank of each adjacent pair in a list and, after
each merge, recomputes only the two pairs around it, so one merge costs a scan for the minimum
rather than a rebuild: quadratic in the worst case, fast for the short pieces that make up real
text (long pieces go to the backtracking encoder in :mod:`streamcodec.bpe`).

    >>> merge_piece(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4})
    [0, 3]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

__all__ = ["merge_bounds", "merge_piece"]

_NO_MERGE = sys.maxsize


def merge_bounds(piece: bytes, ranks: Mapping[bytes, int], *, parts: int = 1) -> list[int]:
    """Where each part starts after merging, plus ``len(piece)``; stop early at ``parts`` parts.

    Stopping at two parts gives the state before the last merge, the split of a token.

    >>> merge_bounds(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"abc": 4})
    [0, 3]
    >>> merge_bounds(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"abc": 4}, parts=2)
    [0, 1, 3]
    """
    get = ranks.get
    # bounds[i] is where part i starts; pair_ranks[i] is the rank of parts i and i + 1 merged.
    bounds = list(range(len(piece) + 1))
    pair_ranks = [get(piece[i : i + 2], _NO_MERGE) for i in range(len(piece) - 1)]
    while len(pair_ranks) >= parts:
        best = min(pair_ranks)
        if best == _NO_MERGE:
            break
        i = pair_ranks.index(best)
        del bounds[i + 1]
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = get(piece[bounds[i - 1] : bounds[i + 1]], _NO_MERGE)
        if i < len(pair_ranks):
            pair_ranks[i] = get(piece[bounds[i] : bounds[i + 2]], _NO_MERGE)
    return bounds


def merge_piece(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Encode ``piece`` by merging the lowest-ranked adjacent pair, leftmost on ties."""
    bounds = merge_bounds(piece, ranks)
    try:
        return [ranks[piece[bounds[i] : bounds[i + 1]]] for i in range(len(bounds) - 1)]
    except KeyError as exc:
        raise ValueError(
            f"byte {exc.args[0]!r} of piece {piece!r} is not a token: the vocabulary lacks "
            "single bytes that byte-level BPE needs"
        ) from None
