"""The pure path's cache is bounded in bytes, and the bytes it charges are what it holds.

Memory is measured with ``tracemalloc`` (what Python allocated and still holds), never timed.
"""

from __future__ import annotations

import functools
import gc
import random
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding
from streamcodec.engine.cache import DICT_SLOT, IdCache, Ids
from streamcodec.engine.ordinary import DEFAULT_CACHE_BYTES
from streamcodec.reference import rank_merge


@contextmanager
def held() -> Iterator[list[int]]:
    """Yields a list that holds, on exit, the bytes allocated inside and still alive."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        found: list[int] = []
        yield found
        gc.collect()
        found.append(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()


def test_a_full_default_cache_holds_about_its_bound() -> None:
    # Entries shaped as real ones: a word of 4-12 characters, one to three ids (the ints are
    # the vocabulary's, made before; the cache holds only references to them).
    rng = random.Random(5)
    vocabulary = [100_000 + i for i in range(1000)]
    compute: Callable[[list[str]], list[tuple[str, Ids]]] = lambda keys: [  # noqa: E731
        (key, tuple(rng.choices(vocabulary, k=1 + len(key) % 3))) for key in keys
    ]
    cache = IdCache(cache_bytes=DEFAULT_CACHE_BYTES)
    with held() as memory:
        for start in range(0, 400_000, 10_000):
            batch = [f" w{i}{'x' * (i % 9)}" for i in range(start, start + 10_000)]
            cache.flat(batch, compute)
        del batch
    assert DEFAULT_CACHE_BYTES - 200 <= cache.bytes <= DEFAULT_CACHE_BYTES  # full
    assert memory[0] == pytest.approx(DEFAULT_CACHE_BYTES, rel=0.1)


def test_the_charge_is_what_the_pure_path_holds_on_novel_text() -> None:
    base = streamcodec.get_encoding("cl100k_base")
    words = samples()["prose"].split() + samples()["multilingual"].split()
    rng = random.Random(0)
    text = " ".join(f"{rng.choice(words)}{rng.randrange(10**6)}" for _ in range(100_000))
    # Outside the measure: on the pure path (STREAMCODEC_BACKEND=python) base fills a cache too.
    expected = base.encode_ordinary(text)
    found = {}
    for bound in (0, 2 << 20):
        enc = Encoding(
            "novel",
            pat_str=base.pat_str,
            mergeable_ranks=base.mergeable_ranks,
            special_tokens={},
            cache_bytes=bound,
            backend="python",
        )
        enc.encode_ordinary("warm up")  # the lazy tables of the path, outside the measure
        with held() as memory:
            assert enc.encode_ordinary(text) == expected
        found[bound] = memory[0]
        info = enc.ordinary.cache_info()
        assert info["bytes"] <= info["bytes_each"] == bound
    charged = enc.ordinary.cache_info()["bytes"]
    assert charged > 1 << 20
    assert found[2 << 20] - found[0] == pytest.approx(charged, rel=0.15)


BOUNDS = [0, 1, 300, 5_000, DEFAULT_CACHE_BYTES]  # none, nothing fits, tiny, small, default


@functools.cache
def bounded(name: str, backend: str, bound: int) -> Encoding:
    """An encoding with the caches bounded by ``bound``, kept across examples (warm)."""
    base = streamcodec.get_encoding(name)
    return Encoding(
        name,
        pat_str=base.pat_str,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens={},
        cache_bytes=bound,
        backend=backend,
    )


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(samples()["prose"].split()[:300] + samples()["multilingual"].split()[:300]),
        max_size=60,
    ),
    noise=st.text(max_size=20),
)
def test_every_bound_gives_tiktoken_and_the_reference_ids(
    real_pair: tuple[Encoding, Any], words: list[str], noise: str
) -> None:
    ours, theirs = real_pair
    text = " ".join(words) + noise + " ".join(reversed(words))
    expected = theirs.encode_ordinary(text)
    pieces = regex.findall(ours.pat_str, text)
    ranks = ours.mergeable_ranks
    assert expected == [i for piece in pieces for i in rank_merge(piece.encode(), ranks)]
    for bound in BOUNDS:
        enc = bounded(ours.name, ours.backend, bound)
        for _ in range(2):  # cold, then warm
            assert enc.encode_ordinary(text) == expected, bound
        assert enc.ordinary.cache_info().get("bytes", 0) <= bound
        if enc.backend == "python":
            assert enc.ordinary._cache.bytes == recharged(enc.ordinary._cache)


def recharged(cache: IdCache) -> int:
    """The charges of the entries ``cache`` holds, counted afresh (the module docstring's)."""
    table = cache._table
    return sum(sys.getsizeof(key) + sys.getsizeof(ids) + DICT_SLOT for key, ids in table.items())


@settings(max_examples=200, deadline=None)
@given(
    calls=st.lists(st.lists(st.text("abcé中", min_size=0, max_size=6), max_size=12), max_size=30),
    bound=st.integers(0, 3000),
    give_up=st.sampled_from([0.1, 0.5, 1.0]),
)
def test_the_charge_is_each_entry_s_and_stays_in_the_bound(
    calls: list[list[str]], bound: int, give_up: float
) -> None:
    # Keys that look up other keys while computed, as words look up their pieces.
    cache = IdCache(cache_bytes=bound)

    def pieces(keys: list[str]) -> list[tuple[str, Ids]]:
        return [(key, tuple(map(ord, key))) for key in keys]

    def words(keys: list[str]) -> list[tuple[str, Ids]]:
        cache.each([key[:1] for key in keys] + keys, pieces)
        return pieces(keys)

    for keys in calls:
        found = cache.flat(keys, words, give_up=give_up)
        assert found is None or found == [ord(c) for key in keys for c in key]
        assert cache.bytes == recharged(cache) <= bound
        assert all(cache._table[key] == tuple(map(ord, key)) for key in cache._table)
