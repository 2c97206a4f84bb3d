"""``tokenize-corpus`` against ``count`` on the same bytes, --jobs 1 against 2, and peak memory.

Builds a corpus of real documents (the standard library's Python sources, repeated to ``--mb``
megabytes) twice: as one JSON Lines file and as a folder of text files; and the same documents
joined as one text file for ``count``. Each command runs in a fresh process; printed: the wall
time (best of ``--runs``), MB/s, ratios and the process's peak RSS. Targets (issue 21): the
corpus at least 0.8x of ``count`` per job, two jobs at least 1.6x one, and memory bounded by
the shards and the jobs, not the corpus.

Run: ``python benchmarks/corpus_throughput.py [--mb 40] [--runs 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def documents(megabytes: float) -> list[str]:
    """Standard-library sources, in a fixed order, repeated to about ``megabytes``."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts = [p.read_text(encoding="utf-8") for p in sorted(stdlib.glob("*.py"))]
    docs: list[str] = []
    size = 0
    while size < megabytes * 1e6:
        for text in texts:
            docs.append(text)
            size += len(text.encode())
            if size >= megabytes * 1e6:
                break
    return docs


def run(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of ``python -m streamcodec ARGS`` in a fresh
    process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "streamcodec", *args], env=env,
                               stdout=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    took = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: streamcodec {' '.join(args)}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def build(base: Path, megabytes: float) -> None:
    """The corpus three ways: joined text, one JSON Lines file, a folder of text files."""
    docs = documents(megabytes)
    (base / "joined.txt").write_text("".join(docs), encoding="utf-8")
    with open(base / "corpus.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": doc}) + "\n" for doc in docs)
    (base / "files").mkdir()
    for i, doc in enumerate(docs):
        (base / "files" / f"{i:06d}.txt").write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=40)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--build", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.build:
        build(Path(options.build), options.mb)
        return
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        # built by another process: a child's peak RSS counts its parent's at the fork
        build_in = [sys.executable, __file__, "--build", folder, "--mb", str(options.mb)]
        subprocess.run(build_in, check=True)
        joined = base / "joined.txt"
        size = joined.stat().st_size
        documents_count = len(list((base / "files").iterdir()))
        common = ["--special-as-text", "-q", "--shard-size", "16M", "--restart"]
        cases = {
            "count --jobs 1 (joined text)": ["count", str(joined), "--special-as-text"],
            "count --jobs 2 (joined text)": ["count", str(joined), "--special-as-text", "-j", "2"],
            "tokenize-corpus --jobs 1 (JSON Lines)": [
                "tokenize-corpus", str(base / "corpus.jsonl"), "-o", str(base / "o"), *common],
            "tokenize-corpus --jobs 2 (JSON Lines)": [
                "tokenize-corpus", str(base / "corpus.jsonl"), "-o", str(base / "o"), *common,
                "-j", "2"],
            "tokenize-corpus --jobs 1 (text files)": [
                "tokenize-corpus", str(base / "files"), "-o", str(base / "o"), *common],
            "tokenize-corpus --jobs 2 (text files)": [
                "tokenize-corpus", str(base / "files"), "-o", str(base / "o"), *common, "-j", "2"],
        }  # fmt: skip
        results = {}
        for name, args in cases.items():
            runs = [run(args) for _ in range(options.runs)]
            results[name] = (
                min(r[0] for r in runs),
                min(r[1] for r in runs),
                max(r[2] for r in runs),
            )
    machine = f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    print(f"{size / 1e6:.0f} MB, {documents_count:,} documents, cl100k_base; {machine}; "
          f"best of {options.runs}, each in a fresh process")  # fmt: skip
    for name, (took, cpu, rss) in results.items():
        print(f"  {name:40s} {took:6.2f} s {size / took / 1e6:6.1f} MB/s  CPU {cpu:6.2f} s  "
              f"peak RSS {rss:5.0f} MB")  # fmt: skip
    count1 = results["count --jobs 1 (joined text)"][0]
    for kind in ("JSON Lines", "text files"):
        one = results[f"tokenize-corpus --jobs 1 ({kind})"][0]
        two = results[f"tokenize-corpus --jobs 2 ({kind})"][0]
        cpu = (
            results["count --jobs 1 (joined text)"][1]
            / results[f"tokenize-corpus --jobs 1 ({kind})"][1]
        )
        print(f"  {kind}: jobs 1 = {count1 / one:.2f}x count, wall (target 0.8x; CPU time "
              f"{cpu:.2f}x); jobs 2 = {one / two:.2f}x jobs 1 (target 1.6x)")  # fmt: skip


if __name__ == "__main__":
    main()
