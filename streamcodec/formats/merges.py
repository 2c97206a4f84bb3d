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

from collections.abc import Mapping

from streamcodec.bpe import merge_piece
from streamcodec.vocab import VocabularyError

__all__ = ["merge_pairs", "splits", "unreachable_tokens"]


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

    For a reachable token this is the last merge of ``rank_merge(token, ranks,
    whole_piece=False)``. When the token can be split into two tokens only one way, that is the
    pair. Otherwise the token's bytes are merged with the token itself taken out of the table:
    nothing before the last merge involves the whole token, so merging stops exactly at that
    pair. An unreachable token has no such pair; it gets the split whose later part is earliest.
    Raises :class:`VocabularyError` for a token that is not two tokens joined, since no merge
    list can describe it.
    """
    decoder = {rank: token for token, rank in ranks.items()}
    work = dict(ranks)
    pairs: dict[bytes, tuple[bytes, bytes]] = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        candidates = splits(token, ranks)
        if len(candidates) < 2:
            if not candidates:
                raise VocabularyError(
                    f"{source}: token {token!r} (rank {rank}) is not two tokens joined, "
                    "so no merge can describe it"
                )
            pairs[token] = candidates[0]
            continue
        del work[token]
        parts = merge_piece(token, work)
        work[token] = rank
        if len(parts) == 2:
            pairs[token] = (decoder[parts[0]], decoder[parts[1]])
        else:
            pairs[token] = min(candidates, key=lambda pair: max(ranks[pair[0]], ranks[pair[1]]))
    return pairs


def unreachable_tokens(ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens that rank-merging their own bytes does not produce, in rank order."""
    return [
        token
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
        if len(token) > 1 and merge_piece(token, ranks) != [rank]
    ]
