"""How long a Python thread waits for the GIL beside a many-thread batch (issue 28).

A batch releases the GIL once for its documents; what it does with the GIL held (collecting the
documents, teaching its threads' private word caches to the encoder's one cache between its
phases and at its end, building the result) is time every other Python thread of the process
waits. A ticker thread sleeps ``--tick`` seconds in a loop beside ``count_tokens_batch`` (or
``encode_ordinary_batch_to_numpy``) on a fresh encoder (cold: every word learned during the
batch, the teaching at its largest), then on the same one again (warm); the longest time
between two of its wake-ups, less the tick, is the longest gap. The machine's own scheduling
adds to it (a busy machine: a few ms), so compare builds within one run.

    python benchmarks/gil_gap.py --corpus /tmp/scdocs.pickle --threads 2 --runs 3
"""

from __future__ import annotations

import argparse
import pickle
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamcodec  # noqa: E402


def longest_gap(call: Any, *, tick: float) -> tuple[float, float]:
    """Run call() beside a ticker thread: (its seconds, the ticker's longest gap in seconds)."""
    done = threading.Event()
    gaps = [0.0]

    def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(tick)
            now = time.perf_counter()
            gaps[0] = max(gaps[0], now - last - tick)
            last = now

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(20 * tick)  # the ticker running before the call starts
    start = time.perf_counter()
    call()
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    return seconds, gaps[0]


def fresh_encoding() -> streamcodec.Encoding:
    """A cl100k_base encoding with a word cache of its own (nothing learned yet)."""
    base = streamcodec.get_encoding("cl100k_base")
    return streamcodec.Encoding(
        base.name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks, special_tokens={}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, help="a pickled list of str (default: generated)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tick", type=float, default=0.0005, help="the ticker's sleep, seconds")
    parser.add_argument("--numpy", action="store_true", help="ids as numpy, not counts")
    args = parser.parse_args()
    if args.corpus:
        with open(args.corpus, "rb") as f:
            docs = pickle.load(f)
    else:
        from benchmarks.scaling import documents

        docs = documents(10_000)
    size = sum(map(len, docs)) / 1e6
    print(f"{len(docs):,} documents, {size:.1f} M code points, {args.threads} threads, "
          f"tick {args.tick * 1e3:g} ms, {streamcodec.backend()}")  # fmt: skip
    for run in range(args.runs):
        enc = fresh_encoding()
        batch = enc.encode_ordinary_batch_to_numpy if args.numpy else enc.count_tokens_batch
        figures = []
        for state in ("cold", "warm"):
            seconds, gap = longest_gap(
                partial(batch, docs, num_threads=args.threads), tick=args.tick
            )
            figures.append(f"{state} {seconds * 1e3:.0f} ms, longest gap {gap * 1e3:.1f} ms")
        print(f"run {run + 1}: " + "; ".join(figures))


if __name__ == "__main__":
    main()
