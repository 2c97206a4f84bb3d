"""Peak memory of ``streamcodec count`` on a 1 GB file, and throughput against tiktoken.

Generates real text (fuzz/corpus.py, repeated) in a temporary folder, then runs, each in its own
process so that its peak RSS can be read from ``wait4``:

- ``streamcodec count BIG`` (target: peak RSS under 150 MB for 1 GB; tiktoken would hold the whole
  text and every id);
- on a smaller file, ``streamcodec count`` against tiktoken's whole-text ``encode_ordinary``
  (read whole, encoded whole): time and peak RSS of each.

The two counts are the check that memory does not grow with the input: with ``--jobs 1`` the
big file's peak must be within 10% of the small file's, else the script exits 1 (glibc's heap
fragmenting made it grow: 61 MB for 2 KB, 180 MB for 509 MB; issue 22).

Run: ``python benchmarks/stream_memory.py [--gb 1.0] [--small-mb 30] [--jobs 1]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz.corpus import samples  # noqa: E402

TIKTOKEN_WHOLE = """
import sys, tiktoken, streamcodec
enc = streamcodec.get_encoding("cl100k_base")
theirs = tiktoken.Encoding(enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                           special_tokens=enc.special_tokens)
print(len(theirs.encode_ordinary(open(sys.argv[1], encoding="utf-8").read())))
"""


def write_text_file(path: Path, size: int) -> None:
    """About ``size`` bytes of real text."""
    unit = "".join(samples().values()).encode()
    with open(path, "wb") as f:
        written = 0
        while written < size:
            f.write(unit)
            written += len(unit)


class Run(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds of user + system time, the process and the children it waited for
    peak_mb: float  # peak RSS
    output: str


def measure(command: list[str]) -> Run:
    """Run ``command`` in its own process and measure it (``wait4`` gives its own usage)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None
    output = proc.stdout.read().decode().strip()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{command} failed with status {status}")
    # ru_maxrss is in KiB on Linux
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output)


def report(name: str, size: int, run: Run) -> None:
    print(f"  {name:36s} {run.wall:8.1f} s {size / run.wall / 1e6:6.2f} MB/s  "
          f"peak RSS {run.peak_mb:7.1f} MB  ({run.output} tokens)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the big file")
    parser.add_argument("--small-mb", type=float, default=30, help="size of the file for tiktoken")
    parser.add_argument("--jobs", type=int, default=1, help="--jobs for the big count")
    args = parser.parse_args()
    count = [sys.executable, "-m", "streamcodec", "count", "-q", "--special-as-text"]
    with tempfile.TemporaryDirectory() as folder:
        small, big = Path(folder) / "small.txt", Path(folder) / "big.txt"
        write_text_file(small, int(args.small_mb * 1e6))
        size = small.stat().st_size
        print(f"small file: {size / 1e6:.0f} MB of real text, cl100k_base")
        tiktoken_run = measure([sys.executable, "-c", TIKTOKEN_WHOLE, str(small)])
        report("tiktoken whole-text encode_ordinary", size, tiktoken_run)
        small_run = measure([*count, str(small)])
        report("streamcodec count", size, small_run)
        write_text_file(big, int(args.gb * 1e9))
        size = big.stat().st_size
        print(f"big file: {size / 1e9:.2f} GB (target: peak RSS under 150 MB)")
        big_run = measure([*count, "--jobs", str(args.jobs), str(big)])
        report(f"streamcodec count --jobs {args.jobs}", size, big_run)
    if args.jobs == 1:
        growth = big_run.peak_mb / small_run.peak_mb
        print(f"peak RSS big / small: {growth:.2f} (must stay under 1.10)")
        if growth > 1.10:
            raise SystemExit("streamcodec count's peak memory grows with the input")


if __name__ == "__main__":
    main()
