"""Start-up: ``import streamcodec``, the package's code, and a small command-line encode.

    python benchmarks/startup.py [--runs 9]

Each figure is the median CPU time (user + system, from ``wait4``) of fresh interpreters, which
a busy machine changes less than wall time (``-X importtime`` is not used: it slows the imports
it measures), against its target from issue 22:

- ``import streamcodec``: the package, which loads nothing until a name is used;
- ``from streamcodec import Encoding``: every module an encode needs (target: 80 ms);
- ``streamcodec encode`` of 2 KB with cl100k_base, to ``/dev/null`` (target: 0.2 s): the
  interpreter, the imports, the vocabulary (``benchmarks/vocabulary_load.py``) and the
  encoding's tables;
- the bare interpreter (``python -c pass``), the floor under all of them.

Prints each median and its ratio to the target (under 1: met).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _median_seconds(command: list[str], runs: int) -> tuple[float, float]:
    """The median CPU and wall seconds of ``command``."""
    cpu, wall = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(command, env={"PYTHONPATH": str(ROOT)}, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall.append(time.perf_counter() - start)
        if status != 0:
            raise SystemExit(f"{command} failed with status {status}")
        cpu.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.txt"
        small.write_text((ROOT / "README.md").read_text(encoding="utf-8")[:2000], "utf-8")
        encode = ["-m", "streamcodec", "encode", str(small), "-o", "/dev/null", "-q"]
        load = "from streamcodec import Encoding"
        rows = [
            ("python -c pass", [python, "-c", "pass"], None),
            ("import streamcodec", [python, "-c", "import streamcodec"], None),
            (load, [python, "-c", load], 0.080),
            ("streamcodec encode 2 KB", [python, *encode], 0.200),
        ]
        print(f"median of {args.runs} fresh processes: CPU time (wall time)")
        for label, command, target in rows:
            cpu, wall = _median_seconds(command, args.runs)
            versus = "" if target is None else f"   x{cpu / target:.2f} of the target"
            print(f"  {label:34} {cpu * 1000:7.1f} ms ({wall * 1000:6.1f} ms){versus}")


if __name__ == "__main__":
    main()
