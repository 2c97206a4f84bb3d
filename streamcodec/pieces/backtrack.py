"""The backtracking search for long pieces: :func:`backtrack_piece` must equal
:func:`streamcodec.reference.rank_merge` (without the whole-piece rule).

The merge loop (:func:`streamcodec.pieces.merge.merge_piece`) is quadratic in the piece length,
which is fine for the short pieces of real text and hopeless for a megabyte of ``"a"``. Long
pieces take this search instead (after GitHub's ``bpe`` crate): walk the piece left to right
taking the longest token that forms a valid pair with the previous one (:mod:`.rank_order`);
when no candidate fits, step back and try the previous position's next shorter candidate. The
merge result is the only sequence of reachable tokens whose adjacent pairs are all valid, so the
search finds it; and the tokens before a position are determined by the position alone, so a
position that failed once fails always and is marked dead: each position is left at most once.
Unreachable tokens can never be part of a merge result, so they are never candidates.

The search is linear in the piece, but each position may try as many candidates as the longest
token it starts is long: a run of one byte that starts many tokens (o200k_base's runs of
``-``) tries 10-50 a byte, each a valid-pair check, and every run of ``a`` to 500 bytes over
100. After ``TRIES_PER_BYTE`` tries a byte (and ``TRIES_BEYOND``) the search gives way to the
rank merge by heap (:mod:`.merge`), which gives the same ids in O(n log n) whatever the
vocabulary: pieces of real text try 0.01-4 a byte.

    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"bbb": 3}
    >>> backtrack_piece(b"abbb", RankOrder(ranks), TokenTrie(ranks))
    [2, 1, 1]
"""

from __future__ import annotations

from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.pieces.trie import TokenTrie

__all__ = ["TRIES_BEYOND", "TRIES_PER_BYTE", "backtrack_piece"]

# The search's budget of candidate tries, a byte and beyond. Here a try is mostly a memo's hit
# and a heap merge in Python costs 2-5 us a byte: at 64 a byte the runs of real vocabularies
# (o200k_base's "-" 48 tries a byte, "=" 29, "*" 20) keep the search and its speed (a lower
# budget made them 1.3-3x slower), every run of "a" to 500 bytes (over 100) gives way, 7x
# faster than unbounded. The compiled twin's tries cost more beside its heap merge: it gives
# way at 2 a byte (_core_backtrack.c).
TRIES_PER_BYTE = 64
TRIES_BEYOND = 64

_MAX_WINDOWS = 4096  # candidate lists remembered per piece
_MEMO_WINDOW = 1024  # the longest token for which they are remembered


def backtrack_piece(piece: bytes, order: RankOrder, trie: TokenTrie) -> list[int]:
    """The merge result of ``piece`` (``whole_piece=False``), found by backtracking search."""
    reachable = order.is_reachable
    valid = order.is_valid_pair
    # Identical windows (runs of one byte, repeated words) have identical candidates; the memo
    # is bounded so that a long piece of random bytes cannot fill memory with windows. Its key
    # is as long as the longest token, so a vocabulary with a very long one goes without it
    # (copying that many bytes per position would make the search quadratic).
    window = trie.longest
    seen: dict[bytes, list[tuple[int, int]]] | None = {} if window <= _MEMO_WINDOW else None

    def candidates(pos: int) -> list[tuple[int, int]]:
        if seen is None:
            return [c for c in trie.candidates(piece, pos) if reachable(c[0])]
        key = piece[pos : pos + window]
        found = seen.get(key)
        if found is None:
            if len(seen) >= _MAX_WINDOWS:
                seen.clear()
            found = seen[key] = [c for c in trie.candidates(piece, pos) if reachable(c[0])]
        return found

    dead = bytearray(len(piece) + 1)
    tokens: list[int] = []
    tried: list[int] = []  # for each token taken, its index among its position's candidates
    tries = TRIES_PER_BYTE * len(piece) + TRIES_BEYOND
    pos, options, i = 0, candidates(0), 0
    while pos < len(piece):
        while i < len(options):
            tries -= 1
            if tries < 0:
                return merge_piece(piece, order.ranks)
            token, length = options[i]
            if not dead[pos + length] and (not tokens or valid(tokens[-1], token)):
                break
            i += 1
        else:
            # Every candidate failed: no encoding has a boundary here. Step back.
            dead[pos] = 1
            pos -= len(order.token_bytes(tokens.pop()))
            options, i = candidates(pos), tried.pop() + 1
            continue
        tokens.append(token)
        tried.append(i)
        pos += length
        options, i = candidates(pos), 0
    return tokens
