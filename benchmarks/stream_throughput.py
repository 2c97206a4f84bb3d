"""Streaming throughput vs whole-text encoding, and --jobs 2 vs --jobs 1.

Prints, measured in the same run (the machine is shared, so only ratios mean much):

- whole-text ``encode_ordinary`` (streamcodec and tiktoken) against streaming the same text with
  ``iter_encode_chunks`` (from a ``str`` and from a file of bytes): target, streaming within 10%
  of whole-text encoding;
- ``streamcodec count --jobs 1`` against ``--jobs 2`` on a file: target 1.7x on two cores.

Run: ``python benchmarks/stream_throughput.py [--mb 20] [--jobs-mb 40]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import streamcodec
from fuzz.corpus import samples


def corpus_text(megabytes: float) -> str:
    """Real text (prose, code, multilingual) repeated to about ``megabytes`` of UTF-8."""
    unit = "".join(samples().values())
    repeat = max(1, int(megabytes * 1e6 / len(unit.encode())))
    return unit * repeat


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The least CPU time of ``runs`` runs (CPU time: other work on the machine matters less)."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def throughput(megabytes: float) -> None:
    import tiktoken

    enc = streamcodec.get_encoding("cl100k_base")
    theirs = tiktoken.Encoding(
        enc.name,
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )
    text = corpus_text(megabytes)
    size = len(text.encode())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "text.txt"
        path.write_text(text, encoding="utf-8")
        policy = {"disallowed_special": ()}
        cases: dict[str, Callable[[], object]] = {
            "tiktoken encode_ordinary (whole text)": lambda: theirs.encode_ordinary(text),
            "streamcodec encode_ordinary (whole text)": lambda: enc.encode_ordinary(text),
            "streamcodec iter_encode_chunks(str)": lambda: sum(
                map(len, enc.iter_encode_chunks(text, **policy))  # type: ignore[arg-type]
            ),
            "streamcodec iter_encode_chunks(Path)": lambda: sum(
                map(len, enc.iter_encode_chunks(path, **policy))  # type: ignore[arg-type]
            ),
        }
        seconds = {name: best_of(3, work) for name, work in cases.items()}
    whole = seconds["streamcodec encode_ordinary (whole text)"]
    print(f"text: {size / 1e6:.1f} MB of real text, cl100k_base, best of 3, CPU time")
    for name, took in seconds.items():
        print(f"  {name:42s} {took:7.2f} s CPU {size / took / 1e6:6.2f} MB/s  {took / whole:5.2f}x")
    print("  target: streaming within 1.10x of streamcodec whole-text encode_ordinary")


def _spin(_: object) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - start


def available_parallelism() -> float:
    """The speed-up two processes get right now on pure Python loops (2.0 on two free cores)."""
    import multiprocessing

    one = _spin(None)
    with multiprocessing.Pool(2) as pool:
        start = time.perf_counter()
        pool.map(_spin, [None, None])
        both = time.perf_counter() - start
    return 2 * one / both


def jobs_speedup(megabytes: float) -> None:
    from stream_memory import measure

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "text.txt"
        path.write_text(corpus_text(megabytes), encoding="utf-8")
        size = os.path.getsize(path)
        command = [sys.executable, "-m", "streamcodec", "count", str(path), "-q"]
        runs = {
            jobs: min(
                (measure([*command, "--special-as-text", "--jobs", str(jobs)]) for _ in range(2)),
                key=lambda run: run.wall,
            )
            for jobs in (1, 2)
        }
    print(f"count of a {size / 1e6:.1f} MB file, best of 2 (wall time includes start-up):")
    for jobs, run in runs.items():
        print(f"  --jobs {jobs}: {run.wall:7.2f} s wall  {run.cpu:7.2f} s CPU  "
              f"{size / run.wall / 1e6:6.2f} MB/s")  # fmt: skip
    print(f"  speed-up --jobs 2 / --jobs 1: {runs[1].wall / runs[2].wall:.2f}x (target 1.7x)")
    # With two free cores the wall time of --jobs 2 is about half its CPU time.
    print(
        f"  if both cores were free: {2 * runs[1].cpu / runs[2].cpu:.2f}x "
        f"(2 x CPU time of one job / CPU time of two)"
    )
    parallel = available_parallelism()
    print(f"  load average: {os.getloadavg()[0]:.2f}; two busy loops in two processes run "
          f"{parallel:.2f}x faster than one now (2.00x on two free cores)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20, help="text size for throughput")
    parser.add_argument("--jobs-mb", type=float, default=40, help="file size for --jobs")
    args = parser.parse_args()
    throughput(args.mb)
    jobs_speedup(args.jobs_mb)


if __name__ == "__main__":
    main()
