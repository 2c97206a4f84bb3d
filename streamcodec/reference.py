"""The specification: byte-level BPE as a few lines that can be checked by eye.

A vocabulary maps token bytes to a *rank*. The rank is both the token id and the merge priority:
a token with a lower rank was learned earlier, so its merge is applied first. Encoding one
pre-token ("piece") starts from its single bytes and repeatedly merges the adjacent pair whose
concatenation has the lowest rank, the leftmost such pair on ties, until no adjacent pair is a
token.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    >>> rank_merge(b"abc", ranks)
    [0, 3]

tiktoken adds one rule in front (Hugging Face calls it ``ignore_merges``): when the bytes of the
whole piece are a token, that token is the answer, even if the merges would never build it. Some
real vocabularies contain such tokens, so the rule changes real output; ``whole_piece=False``
turns it off.

Greedy longest-match is *not* BPE, although it is often described as such. It is kept here only
to show where the two differ: with the ranks above, longest-match takes ``ab`` first.

    >>> longest_match(b"abc", ranks)
    [4, 2]

Nothing in this module may import the fast paths: they are tested against it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

__all__ = ["longest_match", "merge_steps", "rank_merge"]


def merge_steps(piece: bytes, ranks: Mapping[bytes, int]) -> Iterator[list[bytes]]:
    """Yield the parts of ``piece`` before the first merge and after every merge, in rank order.

    >>> [b"|".join(p) for p in merge_steps(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3})]
    [b'a|b|c', b'a|bc']
    """
    parts = [piece[i : i + 1] for i in range(len(piece))]
    yield parts
    while True:
        best: tuple[int, int] | None = None  # (rank, index of the pair's left part)
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return
        i = best[1]
        parts = [*parts[:i], parts[i] + parts[i + 1], *parts[i + 2 :]]
        yield parts


def rank_merge(piece: bytes, ranks: Mapping[bytes, int], *, whole_piece: bool = True) -> list[int]:
    """Encode one piece: merge the lowest-ranked adjacent pair (leftmost on ties) while any is.

    With ``whole_piece`` (tiktoken's behaviour), a piece whose bytes are a token is that token.

    >>> rank_merge(b"aaa", {b"a": 0, b"aa": 1})
    [1, 0]
    """
    if whole_piece and piece in ranks:
        return [ranks[piece]]
    *_, parts = merge_steps(piece, ranks)
    return [ranks[part] for part in parts]


def longest_match(
    piece: bytes, ranks: Mapping[bytes, int], *, longest: int | None = None
) -> list[int]:
    """Greedy left-to-right longest match: NOT BPE, kept to show where it differs.

    ``longest`` is the length of the longest token; pass it to save a scan of ``ranks`` when
    calling this many times with a big vocabulary.

    >>> longest_match(b"aaa", {b"a": 0, b"aa": 1})
    [1, 0]
    """
    if longest is None:
        longest = max(map(len, ranks), default=1)
    ids: list[int] = []
    start = 0
    while start < len(piece):
        for end in range(min(len(piece), start + longest), start, -1):
            rank = ranks.get(piece[start:end])
            if rank is not None:
                ids.append(rank)
                start = end
                break
        else:
            raise KeyError(piece[start : start + 1])
    return ids
