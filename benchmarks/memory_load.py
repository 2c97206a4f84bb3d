"""Load time and peak memory of streamcodec against tiktoken, on the same ranks.

    python benchmarks/memory_load.py [--encoding cl100k_base] [--runs 7]

Load time: the median time to construct an ``Encoding`` from ranks already in memory (both
libraries get the same dict), then the time of the first ``encode_ordinary`` call (streamcodec
builds its fast pattern then). Memory: each library runs in a fresh process that loads the
ranks, constructs the encoding and encodes the corpus of ``fuzz/corpus.py`` (filling
streamcodec's caches); the figures are the resident set size added to that process by the
encoding (Linux only). tiktoken allocates in Rust, where ``tracemalloc`` cannot see, hence RSS.
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

# Run in a fresh interpreter: prints the resident set size (kB) added by constructing an encoding
# and encoding the corpus, measured after loading the ranks (Linux: /proc/self/statm).
_CHILD = """
import gc, os, sys
sys.path.insert(0, {root!r})
import streamcodec, tiktoken
from fuzz.corpus import samples
texts = list(samples().values())
ranks = dict(streamcodec.get_encoding({name!r}).mergeable_ranks)
pat, special = streamcodec.get_encoding({name!r}).pat_str, {{}}
import streamcodec.registry as registry
registry.ENCODINGS.clear()
gc.collect()
def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
before = rss_kb()
library = streamcodec if {library!r} == "streamcodec" else tiktoken
enc = library.Encoding("x", pat_str=pat, mergeable_ranks=ranks, special_tokens=special)
constructed = rss_kb()
for text in texts:
    enc.encode_ordinary(text)
print(constructed - before, rss_kb() - before)
"""


def added_kb(library: str, name: str) -> tuple[int, int]:
    """RSS (kB) added by constructing ``library``'s encoding, and after encoding the corpus."""
    code = _CHILD.format(root=str(ROOT), name=name, library=library)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    constructed, encoded = out.stdout.split()[-2:]
    return int(constructed), int(encoded)


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
    ratio = theirs / ours
    print(f"  streamcodec {ours * 1e3:.1f} ms, tiktoken {theirs * 1e3:.1f} ms, ratio {ratio:.2f}x")
    first = time.perf_counter()
    streamcodec.Encoding("x", **kwargs).encode_ordinary("hello world")  # type: ignore[arg-type]
    first = time.perf_counter() - first
    print(f"  first encode call in this process (builds the fast patterns): {first * 1e3:.1f} ms")
    for library in ("streamcodec", "tiktoken"):
        constructed, encoded = added_kb(library, args.encoding)
        print(
            f"  {library}: RSS +{constructed / 1024:.1f} MB constructed, "
            f"+{encoded / 1024:.1f} MB after encoding the corpus (1.4 MB of text)"
        )


if __name__ == "__main__":
    main()
