"""Pre-token bytes to ids: the merge loop, rank-order verification, the backtracking encoder.

A *piece* is one pre-token's UTF-8 bytes. :class:`PieceEncoder` (:mod:`.piece`) turns a piece
into ids exactly as :func:`streamcodec.reference.rank_merge` does: a piece that is a token is
that token (the whole-piece rule), a short piece is merged in rank order (:mod:`.merge`), a long
one is found by the backtracking search over the token trie with rank-order verification
(:mod:`.backtrack`, :mod:`.trie`, :mod:`.rank_order`). Byte mode (:mod:`.bytemode`) merges text
that was not pre-tokenized, cutting it where no token can cross. The compiled twin is
``_core*.c``. This package imports nothing of streamcodec's but :mod:`streamcodec.vocab`.
"""

from streamcodec.pieces.bytemode import ByteMode
from streamcodec.pieces.piece import LONG_PIECE, PieceEncoder
from streamcodec.pieces.rank_order import RankOrder

__all__ = ["LONG_PIECE", "ByteMode", "PieceEncoder", "RankOrder"]
