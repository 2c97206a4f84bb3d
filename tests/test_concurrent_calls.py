"""Concurrent calls of one encoder share its word cache (issue 28): ``engine/_fused_lease.h``.

A call alone writes the encoder's one word cache (the primary); calls at once (a thread pool over
``encode_to_numpy``, the corpus tool's jobs, each a one-thread batch) read it, each beside a
private cache that keeps what it learned across calls, offered to the primary when no call reads
it. Here: one cache whatever the calls at once (each once took a whole cache of its own), every
answer tiktoken's whichever way a call leased the cache, and the encoder back to writing the
primary directly after a run of calls alone.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from streamcodec import Encoding

pa = pytest.importorskip("pyarrow")

WORDS = [" zqxv", " flurbligate", " déjàvuish", " 你好世界朋友", " 🦙🦙🦙", " the", " hello",
         "\n\n", " 12345", " x=1;", " Quetzalcoatlus", " 猫猫猫猫", " ünïcödé", " ok"]  # fmt: skip


@pytest.fixture
def pair(real_pair: Any) -> Any:
    """A genuine encoding on the native path and its tiktoken twin."""
    if real_pair[0].backend != "native":
        pytest.skip("the native word cache's lease")
    return real_pair


def fresh(base: Encoding) -> Encoding:
    """A new encoder of base's vocabulary: its one word cache, no private ones."""
    return Encoding(base.name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                    special_tokens={}, backend=base.backend)  # fmt: skip


def documents(seed: int, count: int) -> list[str]:
    """Documents of 6-20 kB of WORDS: long enough that a call releases the GIL (4,096 code
    points) and a one-thread batch of two of them runs off it (64 kB of str data)."""
    rng = random.Random(seed)
    sizes = [rng.randrange(700, 2000) for _ in range(count)]
    return ["".join(rng.choice(WORDS) for _ in range(size)) for size in sizes]


def at_once(work: list[Callable[[], bool]]) -> list[bool]:
    """Each function on a thread of its own, started together: what each returned."""
    results = [False] * len(work)
    start = threading.Barrier(len(work))

    def run(k: int) -> None:
        start.wait()
        results[k] = work[k]()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def callers(enc: Encoding, ref: Any, docs: list[str]) -> list[Callable[[], bool]]:
    """Calls of every kind, each checking its answers against tiktoken's: single calls of str
    (lists, arrays, counts) and one-thread batches of str, UTF-8 bytes and an arrow array."""
    want = [ref.encode_ordinary(d) for d in docs]

    def singles() -> bool:
        return all(
            enc.encode_ordinary(d) == w and enc.encode_to_numpy(d).tolist() == w
            and enc.count_tokens(d) == len(w)
            for d, w in zip(docs, want, strict=True)
        )  # fmt: skip

    def batch(kind: str) -> Callable[[], bool]:
        inputs = {"str": docs, "bytes": [d.encode() for d in docs],
                  "arrow": pa.array(docs, pa.large_string())}[kind]  # fmt: skip

        def run() -> bool:
            ok = True
            for k in range(0, len(docs), 4):
                part = inputs[k : k + 4]
                ids, offsets = enc.encode_ordinary_batch_to_numpy(part, num_threads=1)
                got = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(part))]
                ok &= got == want[k : k + 4]
            return ok

        return run

    return [singles, batch("str"), batch("bytes"), batch("arrow")]


@pytest.mark.parametrize("warm", [False, True])
def test_calls_at_once_equal_tiktoken_and_share_one_cache(pair: Any, warm: bool) -> None:
    base, ref = pair
    enc = fresh(base)
    docs = documents(28, 24)
    if warm:
        enc.count_tokens("".join(docs[:4]))
    for _ in range(3):  # fresh private caches, then ones that kept what they learned
        assert at_once(callers(enc, ref, docs) * 2) == [True] * 8
    info = enc.ordinary.cache_info()
    # One full cache whatever the calls at once (each took one of its own before: 2-8 here);
    # the calls that met others used private caches, at most one a call at once, each within
    # half the bound; what they learned was offered to the primary when the last call ended.
    assert info["caches"] == 1
    assert 1 <= info["private_caches"] <= 8
    assert info["private_bytes"] <= info["private_caches"] * info["bytes_each"] // 2
    assert info["bytes"] <= info["bytes_each"]


def test_batches_on_threads_beside_single_calls_equal_tiktoken(pair: Any) -> None:
    base, ref = pair
    enc = fresh(base)
    docs = documents(29, 16)
    want = [ref.encode_ordinary(d) for d in docs]

    def batches() -> bool:
        return all(enc.encode_ordinary_batch(docs, num_threads=n) == want for n in (2, 3))

    work = [batches, batches, *callers(enc, ref, docs)[:2]]
    for _ in range(2):
        assert at_once(work) == [True] * 4
    assert enc.ordinary.cache_info()["caches"] == 1


def test_a_run_of_calls_alone_writes_the_cache_again(pair: Any) -> None:
    base, ref = pair
    enc = fresh(base)
    docs = documents(30, 8)
    text = "".join(docs)
    for _ in range(5):
        at_once([lambda: enc.count_tokens(text) > 0] * 2)
        if enc.ordinary.cache_info()["sharing"]:
            break
    else:
        pytest.skip("two calls never met (a busy host)")
    # Alone: each call reads the cache beside a private one, then (8 calls off the GIL in a
    # row that met no other) writes it directly again; the answers are the same either way.
    want = len(ref.encode_ordinary(text))
    for _ in range(8):
        assert enc.count_tokens(text) == want
    assert enc.ordinary.cache_info()["sharing"] == 0
    before = enc.ordinary.cache_info()["merges"]
    assert np.array_equal(enc.encode_to_numpy(text), ref.encode_ordinary(text))
    assert enc.ordinary.cache_info()["merges"] == before  # it learned them all already


def test_a_long_call_beside_others_equals_tiktoken(pair: Any) -> None:
    # A call of 2.6 M code points (three blocks) that holds the cache reads it from its next
    # block on once another call went apart (lease_share), or runs apart itself: exact either way.
    base, ref = pair
    enc = fresh(base)
    text = "".join(documents(31, 8)) * 40
    want = ref.encode_ordinary(text)
    docs = documents(32, 12)

    def long() -> bool:
        return bool(enc.encode_to_numpy(text).tolist() == want)

    for _ in range(2):
        assert at_once([long, *callers(enc, ref, docs)[:2]]) == [True] * 3
    assert enc.ordinary.cache_info()["caches"] == 1


def short_calls(
    enc: Encoding, pairs: list[tuple[str, list[int]]], stop: threading.Event, results: list[bool]
) -> None:
    """Short calls (they keep the GIL) until stop, each answer checked, and cache_info read."""
    while not stop.is_set():
        results.extend(enc.encode_ordinary(text) == want for text, want in pairs)
        results.append(enc.ordinary.cache_info()["caches"] == 1)


def test_calls_while_a_batch_teaches_the_cache_equal_tiktoken(pair: Any) -> None:
    # A fresh encoder's batch on threads teaches its private caches to the primary between its
    # phases and at its end with the GIL released, the primary held: short calls that come
    # meanwhile go apart, and cache_info leaves the primary out; all exact.
    base, ref = pair
    rng = random.Random(33)
    docs = [" ".join(f"w{rng.getrandbits(40):x}" for _ in range(60)) for _ in range(3000)]
    want = [ref.encode_ordinary(d) for d in docs]
    short = [" ".join(rng.sample(WORDS, 6)) for _ in range(40)]
    pairs = [(text, ref.encode_ordinary(text)) for text in short]
    for _ in range(2):
        enc = fresh(base)
        stop = threading.Event()
        results: list[bool] = []
        thread = threading.Thread(target=short_calls, args=(enc, pairs, stop, results))
        thread.start()
        got = enc.encode_ordinary_batch(docs, num_threads=2)
        stop.set()
        thread.join()
        assert got == want
        assert results and all(results)


def test_calls_that_keep_learning_keep_as_many_private_caches_as_run_at_once(pair: Any) -> None:
    # Each call learns new words, so the last one out teaches with the GIL released (the idle
    # private caches out of the pool): a call that comes meanwhile (here from a thread that made
    # its next text while the others encoded) makes a cache of its own. Those made so must not
    # add to those taught at each teaching: three threads of 300 such calls each made 10-31
    # private caches (6cfe0d7), one more at many teachings, where three run at once. One
    # vocabulary: the lease is the same for all.
    base, _ = pair
    if base.name != "cl100k_base":
        pytest.skip("one vocabulary is enough")
    enc = fresh(base)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def learner(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            words = ("".join(rng.choices(letters, k=rng.randrange(3, 14))) for _ in range(600))
            enc.count_tokens(" ".join(words))

    threads = [threading.Thread(target=learner, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert enc.ordinary.cache_info()["private_caches"] <= 6
