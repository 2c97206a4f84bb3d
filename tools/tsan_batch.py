"""The batch pass under ThreadSanitizer (tools/tsan.sh builds the modules it imports): batches
of str, bytes (valid, invalid under each errors mode) and a pyarrow array on 4 threads, every
output compared with the per-text encoder; one-thread batches on Python threads beside a
many-thread one, on a fresh encoder; many-thread batches on several Python threads at once, on
one encoder (its pooled caches and id buffers taken and given back concurrently); single calls,
one-thread and many-thread batches at once, sharing one word cache; calls beside a cold batch
while it teaches that cache without the GIL; and a batch stopped by a signal mid-way."""

from __future__ import annotations

import signal
import threading

import streamcodec

enc = streamcodec.get_encoding("cl100k_base")
words = ["hello", " world", " déjà", " 你好", " 🦙", "\n", " x=1;", "a\ud83d"]
docs = ["".join(words[(i * 7 + k) % len(words)] for k in range(i % 300)) for i in range(2000)]
want = [enc.encode_ordinary(text) for text in docs]
ids, offsets = enc.encode_ordinary_batch_to_numpy(docs, num_threads=4)
assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(docs))] == want
assert enc.count_tokens_batch(docs, num_threads=4).tolist() == list(map(len, want))
assert enc.encode_ordinary_batch(docs, num_threads=4) == want
# Again, on a primary cache the batches above taught (its sets and long store read by all).
long_docs = [
    text * 3 + " 你好世界朋友猫猫猫猫猫猫 🦙🦙🦙🦙🦙🦙🦙" * (i % 5) for i, text in enumerate(docs)
]
long_want = [enc.encode_ordinary(text) for text in long_docs]
for _ in range(3):
    assert enc.encode_ordinary_batch(long_docs, num_threads=4) == long_want
data = [text.encode("utf-8", "replace") + b"\xff" * (i % 2) for i, text in enumerate(docs)]
for errors in ("replace", "surrogateescape"):
    enc.encode_ordinary_batch_to_numpy(data, num_threads=4, errors=errors)
try:
    enc.count_tokens_batch(data, num_threads=4)
except ValueError as exc:
    assert "texts[1]" in str(exc), exc
try:
    import pyarrow as pa

    enc.count_tokens_batch(pa.array(data[::2], pa.binary()), num_threads=4)
except ImportError:
    pass
# The corpus workers' way: Python threads (no signal handled: each runs its one-thread batch
# itself, the GIL released) beside a many-thread batch, on a fresh encoder (new caches made by
# the batch's own threads), at once.
fresh = streamcodec.Encoding(
    enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks, special_tokens={}
)
results: list[bool] = []


def one_thread_batches() -> None:
    for _ in range(3):
        got, at = fresh.encode_ordinary_batch_to_numpy(docs, num_threads=1)
        results.append([got[at[i] : at[i + 1]].tolist() for i in range(len(docs))] == want)


workers = [threading.Thread(target=one_thread_batches) for _ in range(3)]
for worker in workers:
    worker.start()
results.append(fresh.encode_ordinary_batch(docs, num_threads=4) == want)
for worker in workers:
    worker.join()
assert results == [True] * 10, results
# Many-thread batches from several Python threads at once on one encoder: each takes a primary,
# private caches and id buffers from the encoder's pools and gives them back while the others
# run (the pools handled with the GIL held, each cache and buffer used by one batch at a time).
many: list[bool] = []


def many_thread_batches(kind: int) -> None:
    for _ in range(3):
        if kind == 0:
            got, at = enc.encode_ordinary_batch_to_numpy(docs, num_threads=3)
            many.append([got[at[i] : at[i + 1]].tolist() for i in range(len(docs))] == want)
        elif kind == 1:
            many.append(
                enc.count_tokens_batch(long_docs, num_threads=2).tolist()
                == [len(ids) for ids in long_want]
            )
        else:
            many.append(enc.encode_ordinary_batch(docs[::-1], num_threads=4) == want[::-1])


workers = [threading.Thread(target=many_thread_batches, args=(k % 3,)) for k in range(4)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
assert many == [True] * 12, many
# Concurrent calls share the encoder's one word cache (engine/_fused_lease.h): single calls
# off the GIL (texts of 4,096 code points and more), one-thread batches and a many-thread batch
# on Python threads at once, on a fresh encoder: the first to meet a call holding the cache
# reads none (apart), the next ones read it beside private caches, the last out teaches it.
shared = streamcodec.Encoding(
    enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks, special_tokens={}
)
joined = ["".join(docs[k : k + 40]) for k in range(0, 400, 40)]
joined_want = [enc.encode_ordinary(text) for text in joined]
long_text = "".join(joined) * 5  # two blocks: held, then read once another call went apart
long_want = enc.encode_ordinary(long_text)
calls: list[bool] = []


def concurrent_calls(kind: int) -> None:
    for _ in range(3):
        if kind == 0:
            calls.append([shared.encode_to_numpy(t).tolist() for t in joined] == joined_want)
        elif kind == 1:
            calls.append([shared.count_tokens(t) for t in joined] == list(map(len, joined_want)))
        elif kind == 2:
            got, at = shared.encode_ordinary_batch_to_numpy(joined, num_threads=1)
            calls.append(
                [got[at[i] : at[i + 1]].tolist() for i in range(len(at) - 1)] == joined_want
            )
        elif kind == 3:
            calls.append(shared.encode_ordinary_batch(joined, num_threads=3) == joined_want)
        else:
            calls.append(shared.encode_to_numpy(long_text).tolist() == long_want)


workers = [threading.Thread(target=concurrent_calls, args=(k % 5,)) for k in range(6)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
assert calls == [True] * 18, calls
assert shared.ordinary.cache_info()["caches"] == 1
# The teaching runs without the GIL (engine/_fused_lease.h: lease_teach; _fused_batch.h:
# batch_teach): on a fresh encoder, a many-thread batch (its first part taught between its
# phases, its threads' private caches at its end) while other threads, once it began, make
# short calls, which keep the GIL (one that comes while it teaches goes apart; a long one would
# read the primary through the first part, and the batch then skips that teaching), and read
# cache_info (which leaves out a primary being taught). With either teaching's `held` taken
# out, TSan reports the race here (an arrival attaching to the primary being taught).
beside: list[bool] = []


def beside_calls(encoding: streamcodec.Encoding, stop: threading.Event) -> None:
    while not encoding.ordinary.cache_info()["private_caches"]:  # the batch's threads made
        pass
    for k in range(10**9):
        if stop.is_set():
            return
        beside.append(encoding.encode_ordinary(docs[k % 300]) == want[k % 300])
        encoding.ordinary.cache_info()


# Words seldom met twice, so that the private caches learn thousands of pieces: the teaching
# lasts long enough for an arrival to meet it.
rich = [" ".join(f"w{(i * 50 + k) * 2654435761 % 10**9:x}" for k in range(50)) for i in range(4000)]
rich_want = [enc.encode_ordinary(text) for text in rich]
for _ in range(3):
    taught = streamcodec.Encoding(
        enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks, special_tokens={}
    )
    stop = threading.Event()
    workers = [threading.Thread(target=beside_calls, args=(taught, stop)) for _ in range(2)]
    for worker in workers:
        worker.start()
    assert taught.encode_ordinary_batch(rich, num_threads=3) == rich_want
    stop.set()
    for worker in workers:
        worker.join()
assert beside and all(beside), beside.count(False)
# A signal while the workers run: they stop, and the batch raises.
big = docs * 40
threading.Timer(0.05, signal.raise_signal, (signal.SIGINT,)).start()
try:
    while True:
        enc.count_tokens_batch(big, num_threads=4)
except KeyboardInterrupt:
    pass
print("tsan batch: ok")
