"""The specification itself: rank_merge, the whole-piece rule, and why longest-match is not BPE."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamcodec.pieces.merge import merge_piece
from streamcodec.reference import longest_match, merge_steps, rank_merge

BYTES = {bytes([b]): b for b in range(256)}


def _ranks(*merged: bytes) -> dict[bytes, int]:
    ranks = dict(BYTES)
    for token in merged:
        ranks[token] = len(ranks)
    return ranks


def test_lower_rank_merges_first_even_if_it_is_to_the_right() -> None:
    # merges (b,c) before (a,b): BPE gives [a, bc]; longest-match takes ab first.
    ranks = _ranks(b"bc", b"ab")
    assert rank_merge(b"abc", ranks) == [ranks[b"a"], ranks[b"bc"]]
    assert longest_match(b"abc", ranks) == [ranks[b"ab"], ranks[b"c"]]


def test_leftmost_pair_wins_a_tie() -> None:
    ranks = _ranks(b"aa")
    assert rank_merge(b"aaa", ranks) == [ranks[b"aa"], ranks[b"a"]]


def test_merges_apply_in_rank_order_step_by_step() -> None:
    ranks = _ranks(b"to", b"ke", b"ken", b"token")
    steps = [b"|".join(parts) for parts in merge_steps(b"token", ranks)]
    assert steps == [b"t|o|k|e|n", b"to|k|e|n", b"to|ke|n", b"to|ken", b"token"]


def test_whole_piece_rule_returns_an_unreachable_token() -> None:
    # "abc" is a token that no merge builds (there is no "ab" or "bc").
    ranks = _ranks(b"abc")
    assert rank_merge(b"abc", ranks) == [ranks[b"abc"]]
    assert rank_merge(b"abc", ranks, whole_piece=False) == [97, 98, 99]


def test_tokenization_example_from_the_article() -> None:
    # ../shared/articles/003: rules applied in order give [token, ization].
    ranks = _ranks(
        b"to",
        b"ke",
        b"ken",
        b"token",
        b"iz",
        b"at",
        b"io",
        b"ion",
        b"ation",
        b"ization",
        b"tokeniz",
    )
    assert rank_merge(b"tokenization", ranks) == [ranks[b"token"], ranks[b"ization"]]
    # Longest-match grabs the longer "tokeniz" first and must then spell out the rest.
    assert longest_match(b"tokenization", ranks) == [ranks[b"tokeniz"], ranks[b"ation"]]


small_alphabet = st.binary(min_size=0, max_size=12).map(lambda b: bytes(x % 3 + 97 for x in b))


@given(
    piece=small_alphabet,
    merged=st.lists(
        st.binary(min_size=2, max_size=5).map(lambda b: bytes(x % 3 + 97 for x in b)),
        unique=True,
        max_size=20,
    ),
)
def test_merge_loop_equals_the_reference(piece: bytes, merged: list[bytes]) -> None:
    ranks = _ranks(*merged)
    expected = rank_merge(piece, ranks, whole_piece=False)
    assert merge_piece(piece, ranks) == expected
    assert b"".join(bytes(p) for p in [_bytes_of(i, ranks) for i in expected]) == piece


def _bytes_of(token: int, ranks: dict[bytes, int]) -> bytes:
    return next(t for t, r in ranks.items() if r == token)
