"""The rank merge by heap, and the backtracking search giving way to it.

From ``HEAP_MERGE`` bytes on the merge keeps its pairs in a heap (``streamcodec.pieces.merge``,
``_core_merge.c``), and the backtracking search gives way to that merge once it has tried
``TRIES_PER_BYTE`` candidates a byte (``streamcodec.pieces.backtrack``, ``_core_backtrack.c``):
o200k_base's runs of ``-`` tried 48 a byte and ran at 0.4 MB/s. Both must equal the reference on
trained and shuffled vocabularies (unreachable tokens, ties of rank) and on runs of one byte of
every length, on both backends. Their cost is measured by ``benchmarks/cost_growth.py``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcodec import Encoding
from streamcodec.engine.backend import backend as default_backend
from streamcodec.pieces import backtrack
from streamcodec.pieces.merge import HEAP_MERGE, merge_parts, merge_piece
from streamcodec.pieces.piece import LONG_PIECE, PieceEncoder
from streamcodec.reference import merge_steps, rank_merge
from tests.test_fast import ALPHABET, random_vocabulary

# A few bytes repeated, then a tail: pieces of HEAP_MERGE to about 540 bytes.
long_pieces = st.tuples(
    st.binary(min_size=2, max_size=5), st.integers(64, 100), st.binary(max_size=40)
).map(lambda t: bytes(ALPHABET[b % len(ALPHABET)] for b in t[0] * t[1] + t[2]))


def core(ranks: dict[bytes, int], long_piece: int = LONG_PIECE):  # type: ignore[no-untyped-def]
    """The compiled core of ``ranks``, or None where it is not built."""
    if default_backend() != "native":
        return None
    from streamcodec.pieces._core import Core

    return Core(ranks, long_piece=long_piece)


def two_parts(piece: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """The merge's state once it has two parts or fewer (the last state if it never has)."""
    *_, last = steps = list(merge_steps(piece, ranks))
    return next((parts for parts in steps if len(parts) <= 2), last)


def runs(longest: int, seed: int | None) -> dict[bytes, int]:
    """Every run of ``a`` from 2 to ``longest`` bytes and ``ab``, ranked by length or shuffled."""
    tokens = [b"a" * k for k in range(2, longest + 1)] + [b"ab"]
    if seed is not None:
        random.Random(seed).shuffle(tokens)
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update((data, 256 + i) for i, data in enumerate(tokens))
    return ranks


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans(), piece=long_pieces)
def test_the_heap_merge_equals_the_reference(seed: int, shuffle: bool, piece: bytes) -> None:
    assert len(piece) >= HEAP_MERGE
    ranks = random_vocabulary(seed, shuffle=shuffle)
    expected = rank_merge(piece, ranks, whole_piece=False)
    assert merge_piece(piece, ranks) == expected
    assert merge_parts(piece, ranks, parts=2) == two_parts(piece, ranks)
    compiled = core(ranks)
    if compiled is not None:
        assert compiled.merge_piece(piece) == expected
        assert compiled.backtrack_piece(piece) == expected
        assert core(ranks, long_piece=1).encode_piece(piece) == rank_merge(piece, ranks)


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_runs_of_every_length_on_both_paths(seed: int | None) -> None:
    """Runs to 300 bytes: tokens past HEAP_MERGE (their splits merged by heap too), and a search
    that gives way on the longer pieces."""
    ranks = runs(300, seed)
    encoder = PieceEncoder(ranks, long_piece=1)
    compiled = core(ranks)
    lengths = (127, 128, 300, 301, 511, 512, 1500)
    for piece in [b"a" * n + tail for n in lengths for tail in (b"", b"b")]:
        expected = rank_merge(piece, ranks, whole_piece=False)
        assert merge_piece(piece, ranks) == expected, len(piece)
        assert encoder.merge(piece) == expected, len(piece)
        if compiled is not None:
            assert compiled.merge_piece(piece) == expected, len(piece)
            assert compiled.backtrack_piece(piece) == expected, len(piece)


def test_the_search_gives_way_on_a_run_and_keeps_real_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every run of ``a`` to 500 bytes: a run tries over 100 candidates a byte, and the search
    gives its piece to the merge; a piece that pairs at once (``ab`` repeated) keeps the search."""
    given_up: list[bytes] = []

    def merge(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
        given_up.append(piece)
        return merge_piece(piece, ranks)

    monkeypatch.setattr(backtrack, "merge_piece", merge)
    ranks = runs(500, None)
    encoder = PieceEncoder(ranks, long_piece=1)
    run = b"a" * 2000 + b"b"
    assert encoder(run) == merge_piece(run, ranks)
    assert given_up == [run]
    assert encoder(b"ab" * 2000) == [ranks[b"ab"]] * 2000
    assert given_up == [run]


@pytest.mark.parametrize("backend", ["native", "python"])
def test_long_runs_in_a_whole_text(backend: str) -> None:
    if backend == "native" and default_backend() != "native":
        pytest.skip("the compiled core is not built")
    ranks = runs(300, 3)
    enc = Encoding(
        "runs", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={}, backend=backend
    )
    pieces = ["a" * 1200 + "b", " ", "a" * 700, "\n", "a" * 200]
    expected = [i for piece in pieces for i in rank_merge(piece.encode(), ranks)]
    assert enc.encode_ordinary("".join(pieces)) == expected


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), piece=long_pieces)
def test_the_pure_heap_takes_ranks_past_2_to_the_32(seed: int, piece: bytes) -> None:
    """A pair's key is ``rank * n + start``: any rank orders as the pair (rank, start) does."""
    ranks = {data: rank * 7 + 2**40 for data, rank in random_vocabulary(seed, shuffle=True).items()}
    assert merge_piece(piece, ranks) == rank_merge(piece, ranks, whole_piece=False)
