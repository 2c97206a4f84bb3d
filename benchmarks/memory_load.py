"""Load time and peak memory of streamcodec against tiktoken, on the same ranks.

    python benchmarks/memory_load.py [--encoding cl100k_base] [--runs 7]

Load time: the median time to construct an ``Encoding`` from ranks already in memory (both
libraries get the same dict), then the time of the first ``encode_ordinary`` call (streamcodec
builds its fast pattern then). Peak memory: each library runs in a fresh process that loads
the ranks, constructs the encoding and encodes the corpus of ``tests/corpus.py`` (filling
streamcodec's caches); the figure is the peak resident set size above a process that only
loads the ranks. tiktoken allocates in Rust, where ``tracemalloc`` cannot see, hence RSS.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tiktoken  # noqa: E402

import streamcodec  # noqa: E402

# Run in a fresh interpreter: prints the peak RSS in kB after the given stage.
_CHILD = """
import resource, sys
sys.path.insert(0, {root!r})
import streamcodec, tiktoken
from tests.corpus import samples
texts = list(samples().values())
base = streamcodec.get_encoding({name!r})
ranks, pat, special = dict(base.mergeable_ranks), base.pat_str, dict(base.special_tokens)
del base
import streamcodec.registry as registry
registry._ENCODINGS.clear()
import gc; gc.collect()
stage = {stage!r}
if stage == "streamcodec":
    enc = streamcodec.Encoding("x", pat_str=pat, mergeable_ranks=ranks, special_tokens=special)
elif stage == "tiktoken":
    enc = tiktoken.Encoding("x", pat_str=pat, mergeable_ranks=ranks, special_tokens=special)
if stage != "ranks only":
    for text in texts:
        enc.encode_ordinary(text)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_kb(stage: str, name: str) -> int:
    """Peak RSS (kB) of a fresh process running ``stage``."""
    code = _CHILD.format(root=str(ROOT), name=name, stage=stage)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def median_seconds(run: object, runs: int) -> float:
    """Median wall time of ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print load times and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base = streamcodec.get_encoding(args.encoding)
    kwargs = dict(
        pat_str=base.pat_str,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens=base.special_tokens,
    )
    ours = median_seconds(lambda: streamcodec.Encoding("x", **kwargs), args.runs)  # type: ignore[arg-type]
    theirs = median_seconds(lambda: tiktoken.Encoding("x", **kwargs), args.runs)  # type: ignore[arg-type]
    print(f"{args.encoding}: construct Encoding from ranks, median of {args.runs} (wall time)")
    print(
        f"  streamcodec {ours * 1e3:.1f} ms, tiktoken {theirs * 1e3:.1f} ms, ratio {theirs / ours:.2f}x"
    )
    first = time.perf_counter()
    streamcodec.Encoding("x", **kwargs).encode_ordinary("hello world")  # type: ignore[arg-type]
    print(
        f"  first encode call of a new streamcodec Encoding: {(time.perf_counter() - first) * 1e3:.1f} ms"
    )
    only = peak_kb("ranks only", args.encoding)
    for stage in ("streamcodec", "tiktoken"):
        print(
            f"  peak RSS above ranks-only ({only / 1024:.0f} MB): {stage} {(peak_kb(stage, args.encoding) - only) / 1024:.1f} MB"
        )


if __name__ == "__main__":
    main()
