"""The merge behind each token: what formats with explicit merge lists need from a rank table.

A ``.tiktoken`` file stores only ranks: any adjacent pair whose concatenation is a token merges,
at that token's rank. GPT-2's ``vocab.bpe`` and minbpe's ``.model`` store one merge per token
instead, a pair of tokens. :func:`merge_pairs` recovers that pair: the two parts that
rank-merging the token's own bytes reaches just before its last merge.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    >>> merge_pairs(ranks)[b"abc"]
    (b'a', b'bc')

A token that merging its own bytes never produces is *unreachable*; only tiktoken's whole-piece
rule (Hugging Face's ``ignore_merges``) ever outputs it:

    >>> unreachable_tokens({b"a": 0, b"b": 1, b"c": 2, b"abc": 3})
    [b'abc']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from streamcodec.engine.backend import backend, compiled_module
from streamcodec.pieces.piece import LONG_PIECE
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.vocab import VocabularyError

__all__ = ["compiled_merge", "merge_pairs", "splits", "unreachable_tokens"]


def splits(token: bytes, ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every way to write ``token`` as two tokens, by where they meet.

    >>> splits(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4})
    [(b'a', b'bc'), (b'ab', b'c')]
    """
    return [
        (token[:i], token[i:])
        for i in range(1, len(token))
        if token[:i] in ranks and token[i:] in ranks
    ]


def merge_pairs(
    ranks: Mapping[bytes, int], *, source: str = "vocabulary"
) -> dict[bytes, tuple[bytes, bytes]]:
    """The pair every multi-byte token is built from, keyed by token, in rank order.

    For a reachable token this is its split
    (:meth:`streamcodec.pieces.rank_order.RankOrder.split`), the last merge of
    ``rank_merge(token, ranks, whole_piece=False)``. An unreachable token has no such pair; it
    gets the split into two tokens whose later part is earliest. Raises :class:`VocabularyError`
    for a token that is not two tokens joined, since no merge list can describe it.
    """
    order = RankOrder(ranks)
    pairs: dict[bytes, tuple[bytes, bytes]] = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        split = order.split(rank)
        if split is not None:
            pairs[token] = (order.token_bytes(split[0]), order.token_bytes(split[1]))
            continue
        candidates = splits(token, ranks)
        if not candidates:
            raise VocabularyError(
                f"{source}: token {token!r} (rank {rank}) is not two tokens joined, "
                "so no merge can describe it"
            )
        pairs[token] = min(candidates, key=lambda pair: max(ranks[pair[0]], ranks[pair[1]]))
    return pairs


def unreachable_tokens(ranks: Mapping[bytes, int], *, native: bool = True) -> list[bytes]:
    """The tokens that rank-merging their own bytes does not produce, in rank order (the bytes
    of :meth:`streamcodec.pieces.rank_order.RankOrder.unreachable_tokens`).

    Every load of an open model's file runs this over the whole vocabulary, so it merges with the
    compiled core where the native path is chosen (:func:`compiled_merge`): 0.33 s rather than
    3.0 s of CPU for Command R's 253,589 tokens. ``native=False`` takes the pure loop, the
    reference.
    """
    merge = compiled_merge(ranks) if native else None
    order = RankOrder(ranks, merge=merge)
    return [order.token_bytes(token) for token in order.unreachable_tokens()]


def compiled_merge(ranks: Mapping[bytes, int]) -> Callable[[bytes], list[int]] | None:
    """The compiled core's ``Core.merge_piece`` for ``ranks``, which equals
    :func:`streamcodec.pieces.merge.merge_piece` of ``ranks`` (tests/test_native.py), or None
    where the pure path is chosen (``STREAMCODEC_BACKEND``) or the core cannot take the
    vocabulary (a single byte that is no token, a rank past 32 bits: the pure loop says why)."""
    try:
        if not isinstance(ranks, dict) or backend() != "native":
            return None
        core = compiled_module("pieces._core").Core(ranks, long_piece=LONG_PIECE)
    except (ImportError, ValueError, TypeError):
        return None
    merge: Callable[[bytes], list[int]] = core.merge_piece
    return merge
