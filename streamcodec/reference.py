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

Training is specified here too, as the naive loop: count the pre-tokens, then every round
recount all adjacent pairs, merge the most frequent pair everywhere, and give its bytes the next
rank (ties go to the smallest (left id, right id)).

    >>> ranks = train_naive("aaabdaaabac", 259, pat_str=r".+")
    >>> [token for token, rank in ranks.items() if rank >= 256]
    [b'aa', b'ab', b'aaab']

Nothing in this module may import the fast paths: they are tested against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from itertools import pairwise

__all__ = ["longest_match", "merge_steps", "rank_merge", "train_naive"]


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


def train_naive(
    text: str,
    vocab_size: int,
    *,
    pat_str: str,
    special_tokens: Iterable[str] = (),
    min_frequency: int = 2,
) -> dict[bytes, int]:
    """Learn mergeable ranks from ``text``: the 256 single bytes, then one token per merge.

    The text is cut at special tokens (which are not counted), each part is pre-tokenized with
    ``pat_str``, and merges never cross a pre-token. Each round recounts every adjacent pair (a
    pair inside ``aaa`` counts twice), takes the most frequent, smallest (left id, right id) on
    ties, and stops when ``vocab_size`` ranks exist or the best pair occurs fewer than
    ``min_frequency`` times. (A merge never makes bytes that are already a token: the bytes of a
    token are split the same way wherever they occur, so they can be built only once.)

    >>> ranks = train_naive("ab ab ab", 257, pat_str=r"\\S+| ")
    >>> max(ranks, key=ranks.get)
    b'ab'
    """
    import regex  # the trainer's pattern as the spec reads it (off the import path: Pyodide)

    parts = (
        regex.split("|".join(map(regex.escape, special_tokens)), text) if special_tokens else [text]
    )
    words = Counter(
        # whole matches, as tiktoken takes them (findall gives a pattern's groups, if it has any)
        tuple(m.group().encode("utf-8"))
        for part in parts
        for m in regex.finditer(pat_str, part)
    )
    tokens = [bytes([b]) for b in range(256)]
    ranks = {token: rank for rank, token in enumerate(tokens)}
    while len(ranks) < vocab_size:
        pairs: Counter[tuple[int, int]] = Counter()
        for word, count in words.items():
            for pair in pairwise(word):
                pairs[pair] += count
        if not pairs:
            break
        (left, right), count = min(pairs.items(), key=lambda item: (-item[1], item[0]))
        if count < min_frequency:
            break
        ranks[tokens[left] + tokens[right]] = len(tokens)
        tokens.append(tokens[left] + tokens[right])
        words = Counter(
            {_merge_pair(word, left, right, len(tokens) - 1): n for word, n in words.items()}
        )
    return ranks


def _merge_pair(word: tuple[int, ...], left: int, right: int, new_id: int) -> tuple[int, ...]:
    """Replace every ``(left, right)`` in ``word``, scanning left to right, by ``new_id``."""
    out: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)
