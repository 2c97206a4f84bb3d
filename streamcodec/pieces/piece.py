"""One piece's bytes to ids: the whole-piece rule, then the merge loop or the backtracking search.

:class:`PieceEncoder` must equal :func:`streamcodec.reference.rank_merge`. A piece that is a
token is that token (the whole-piece rule, tiktoken's, applied to the whole piece only); a short
piece is merged in rank order (:mod:`.merge`), a long one found by the backtracking search
(:mod:`.backtrack`), which the merge loop's quadratic cost makes the faster from
``LONG_PIECE`` bytes on. Its compiled twin is ``_core_piece.c``.

    >>> encode = PieceEncoder({b"a": 0, b"b": 1, b"ab": 2, b"bbb": 3}, long_piece=2)
    >>> encode(b"bbb"), encode(b"abbb")  # bbb is unreachable: only the whole piece gives it
    ([3], [2, 1, 1])
"""

from __future__ import annotations

from collections.abc import Mapping

from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.pieces.trie import TokenTrie

__all__ = ["LONG_PIECE", "PieceEncoder"]

# Pieces of at least this many bytes take the backtracking encoder: from here on the merge loop's
# quadratic cost dominates on repetitive pieces (measured on cl100k_base: docs/performance.md).
LONG_PIECE = 512


class PieceEncoder:
    """One piece's bytes to ids, equal to :func:`streamcodec.reference.rank_merge`.

    The whole-piece rule first, then the merge loop for short pieces and the backtracking
    encoder for pieces of ``long_piece`` bytes or more.
    """

    def __init__(self, ranks: Mapping[bytes, int], *, long_piece: int = LONG_PIECE) -> None:
        self.ranks = ranks
        self._long_piece = long_piece
        self.order = RankOrder(ranks)
        self._trie = TokenTrie(ranks)

    def __call__(self, piece: bytes) -> list[int]:
        """The ids of ``piece``."""
        token = self.ranks.get(piece)
        if token is not None:
            return [token]
        return self.merge(piece)

    def merge(self, piece: bytes) -> list[int]:
        """The ids of ``piece`` without the whole-piece rule (``whole_piece=False``)."""
        if len(piece) < self._long_piece:
            return merge_piece(piece, self.ranks)
        return backtrack_piece(piece, self.order, self._trie)
