"""Vocabularies built to hurt the search for long pieces, and ids that are always plain ints.

The backtracking encoders (``streamcodec.pieces.backtrack.backtrack_piece`` and its C twin) look for
the tokens that a position starts with. One very long token sharing its first bytes with the
text once made the C search try every length down to 2, hashing each prefix (cubic time), and a
merge chain thousands of steps deep made ``RankOrder.is_ordered`` recurse past Python's limit.
Each vocabulary here is encoded on both backends and compared with ``streamcodec.reference``;
the cost of these cases is measured by ``benchmarks/cost_growth.py``, not here.
"""

from __future__ import annotations

import enum
import random
import subprocess
import sys

import pytest

from streamcodec import Encoding
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.reference import rank_merge

BACKENDS = ("native", "python")
PATTERN = r"\S+|\s+"


def byte_ranks() -> dict[bytes, int]:
    return {bytes([i]): i for i in range(256)}


def encoding(ranks: dict[bytes, int], backend: str, **special: int) -> Encoding:
    if backend == "native":
        pytest.importorskip("streamcodec.pieces._core")
    enc = Encoding(
        "hostile", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=special, backend=backend
    )
    assert enc.backend == backend
    return enc


def long_shared_prefix() -> dict[bytes, int]:
    """The issue's case: ``ab`` and ``ab`` + 100,000 ``c`` (unreachable: only whole)."""
    ranks = byte_ranks()
    ranks[b"ab"] = 256
    ranks[b"ab" + b"c" * 100_000] = 257
    return ranks


def many_lengths() -> dict[bytes, int]:
    """A reachable chain ``ab``, ``abc``, ``abcc``, ... of every length to 600, beside ``abab``."""
    ranks = byte_ranks()
    ranks[b"ab"] = len(ranks)
    for n in range(1, 600):
        ranks[b"ab" + b"c" * n] = len(ranks)
    ranks[b"abab"] = len(ranks)
    return ranks


def merge_chain(steps: int) -> dict[bytes, int]:
    """``ab``, ``abb``, ``abbb``, ... (no ``bb``): each token's split is the one before and
    ``b``, a chain ``steps`` merges deep."""
    ranks = byte_ranks()
    for n in range(1, steps + 1):
        ranks[b"a" + b"b" * n] = len(ranks)
    return ranks


def runs(longest: int, seed: int | None) -> dict[bytes, int]:
    """Every run of ``a`` from 2 to ``longest`` bytes (and of ``b`` to 8, ``ab``, ``ba``), ranked
    by length, or shuffled by ``seed``: then many runs are unreachable, and a position's shorter
    candidates are found through chains of unreachable prefixes."""
    tokens = [b"a" * k for k in range(2, longest + 1)] + [b"b" * k for k in range(2, 9)]
    tokens += [b"ab", b"ba"]
    if seed is not None:
        random.Random(seed).shuffle(tokens)
    ranks = byte_ranks()
    ranks.update((data, 256 + i) for i, data in enumerate(tokens))
    return ranks


RUN_TEXTS = [
    "a" * 511 + "b",
    "a" * 1000,
    "a" * 1500 + "b",
    "a" * 700 + "b" + "a" * 300 + "bb",
    ("a" * 37 + "b") * 30,
    "b" + "a" * 600 + "bbbbbbbbba",
]


TEXTS = [
    "ab" * 4000,
    "ab" * 300 + "c" * 700 + "ab",
    "ab" + "c" * 599 + "ab" * 400,
    "ab" + "c" * 1000,
    ("abab" + "c" * 7) * 100,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [long_shared_prefix, many_lengths])
def test_long_tokens_sharing_a_prefix_equal_the_reference(make, backend: str) -> None:  # type: ignore[no-untyped-def]
    ranks = make()
    enc = encoding(ranks, backend)
    for text in TEXTS:
        piece = text.encode()
        assert enc.encode_ordinary(text) == rank_merge(piece, ranks), text[:20]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_every_run_of_a_byte_a_token_equals_the_reference(seed: int | None, backend: str) -> None:
    """A long run starts a candidate of every length: the search steps from each to the next
    shorter reachable one (a trie walk per step was quadratic in the run's length)."""
    ranks = runs(160, seed)
    enc = encoding(ranks, backend)
    for text in RUN_TEXTS:
        assert enc.encode_ordinary(text) == rank_merge(text.encode(), ranks), (seed, text[:20])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_merge_chain_deeper_than_the_recursion_limit(backend: str) -> None:
    ranks = merge_chain(1100)
    enc = encoding(ranks, backend)
    # One piece past the long-piece length: the search asks whether the tokens are ordered.
    text = "a" + "b" * 1100 + "a" + "b" * 17
    expected = [ranks[b"a" + b"b" * 1100], ranks[b"a" + b"b" * 17]]
    assert enc.encode_ordinary(text) == expected == rank_merge(text.encode(), ranks)
    order = RankOrder(ranks)
    assert order.is_ordered(ranks[b"a" + b"b" * 1100])
    assert order.is_valid_pair(ranks[b"a" + b"b" * 1100], ranks[b"ab"])


def test_is_ordered_is_false_for_a_split_ranked_above_its_token() -> None:
    ranks = merge_chain(1100)
    top = ranks[b"a" + b"b" * 1100]
    ranks[b"a" + b"b" * 600] = top + 1  # now ranked after the tokens built on it
    order = RankOrder(ranks)
    assert not order.is_ordered(top)
    assert order.is_ordered(ranks[b"a" + b"b" * 599])


class Rank(int):
    """A caller's own rank type."""


class Special(enum.IntEnum):
    END = 10_000


@pytest.mark.parametrize("backend", BACKENDS)
def test_ids_are_plain_ints_whatever_the_ranks_are(backend: str) -> None:
    ranks = {data: Rank(rank) for data, rank in merge_chain(40).items()}
    enc = encoding(ranks, backend, **{"<|end|>": Special.END})
    text = "abbb" * 200 + " ab a<|end|>"
    results = [
        enc.encode(text, allowed_special="all"),
        enc.encode_ordinary(text),
        *enc.encode_batch([text, "aaa"], allowed_special="all"),
        *enc.encode_ordinary_batch([text]),
        list(enc.iter_encode(iter([text[:300], text[300:]]), allowed_special="all")),
        [enc.encode_single_token("abb")],
    ]
    if backend == "native":
        ordinary = enc._ordinary  # the core's own entry point for pieces
        results.append(ordinary.encode(text[:-7]))
    for ids in results:
        assert ids and {type(i) for i in ids} == {int}
    assert enc.encode(text, allowed_special="all")[-1] == 10_000


def test_a_merge_chain_on_a_small_thread_stack() -> None:
    """The C core's is_ordered walks a merge chain with its own stack, not by recursion (a
    chain is as deep as its longest token is long): 6,000 merges deep in a thread of 128 KiB of
    stack, where a recursion of some 100 bytes a frame overflows."""
    pytest.importorskip("streamcodec.pieces._core")
    code = f"""
import threading
from streamcodec import Encoding
from tests.test_hostile_vocab import merge_chain
ranks = merge_chain(6000)
enc = Encoding("chain", pat_str={PATTERN!r}, mergeable_ranks=ranks, special_tokens={{}},
               backend="native")
text = "a" + "b" * 6000 + "a" + "b" * 17
out = []
threading.stack_size(128 * 1024)
thread = threading.Thread(target=lambda: out.append(enc.encode_ordinary(text)))
thread.start()
thread.join()
assert out == [[ranks[b"a" + b"b" * 6000], ranks[b"a" + b"b" * 17]]], out
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
