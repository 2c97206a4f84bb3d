"""Start-up: ``import streamcodec``, a named encoding's load, and small commands, beside tiktoken.

    python benchmarks/startup.py [--runs 15]

Each figure is the CPU time (user + system, from ``wait4``) of fresh interpreters, least and
median of ``--runs``, the rows taken in turn so that a busy machine weighs on all of them alike
(``-X importtime`` is not used: it slows the imports it measures), against its target where it
has one (issues 22 and 28):

- the bare interpreter (``python -c pass``), the floor under all of them;
- ``import streamcodec``: the package, which loads nothing until a name is used;
- ``from streamcodec import Encoding``: every module an encode needs (target: 80 ms);
- ``import streamcodec; get_encoding("cl100k_base")``: the vocabulary (the compiled core's
  tables from the shipped arrays, no dict of the ranks) beside tiktoken's ``get_encoding`` from
  its cache (a folder filled here from the shipped ranks, whose sha256 tiktoken checks: no
  network), where tiktoken is installed (target: under tiktoken's);
- ``streamcodec encode`` of 2 KB with cl100k_base, to ``/dev/null`` (target: 0.2 s), ``count``
  of one line, and ``tokenize-corpus`` of a one-line JSON Lines file (target: 60 ms).

Prints each row and its ratio to its target (under 1: met).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamcodec.registry import SPECS, load_vocabulary_file  # noqa: E402

GET = "import streamcodec; streamcodec.get_encoding('cl100k_base')"
TIKTOKEN = "tiktoken get_encoding (its cache)"


def _seconds(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The CPU and wall seconds of one run of ``command``."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{command} failed with status {status}")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - start


def _tiktoken_cache(folder: Path) -> Path:
    """tiktoken's cache folder with cl100k_base's file, rebuilt from the shipped ranks, under
    the name tiktoken gives a download (the sha1 of its URL)."""
    spec = SPECS["cl100k_base"]
    cache = folder / "tiktoken-cache"
    cache.mkdir()
    name = hashlib.sha1(spec.download_url.encode()).hexdigest()
    (cache / name).write_bytes(load_vocabulary_file(spec))
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    python = sys.executable
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.txt"
        small.write_text((ROOT / "README.md").read_text(encoding="utf-8")[:2000], "utf-8")
        line = Path(folder) / "one.jsonl"
        line.write_text('{"text": "hello world"}\n', "utf-8")
        encode = ["-m", "streamcodec", "encode", str(small), "-o", "/dev/null", "-q"]
        corpus = ["-m", "streamcodec", "tokenize-corpus", "-q", "--restart", str(line)]
        count = ["-m", "streamcodec", "count", str(line)]
        load = "from streamcodec import Encoding"
        rows: list[tuple[str, list[str], float | str | None, dict[str, str]]] = [
            ("python -c pass", [python, "-c", "pass"], None, env),
            ("import streamcodec", [python, "-c", "import streamcodec"], None, env),
            (load, [python, "-c", load], 0.080, env),
            ("get_encoding('cl100k_base')", [python, "-c", GET], TIKTOKEN, env),
            ("streamcodec encode 2 KB", [python, *encode], 0.200, env),
            ("streamcodec count, one line", [python, *count], None, env),
            ("tokenize-corpus, one line", [python, *corpus, "-o", f"{folder}/out"], 0.060, env),
        ]  # fmt: skip
        if importlib.util.find_spec("tiktoken") is not None:
            cache = {**env, "TIKTOKEN_CACHE_DIR": str(_tiktoken_cache(Path(folder)))}
            tiktoken = "import tiktoken; tiktoken.get_encoding('cl100k_base')"
            rows.append((TIKTOKEN, [python, "-c", tiktoken], None, cache))
        cpu: dict[str, list[float]] = {label: [] for label, *_ in rows}
        wall: dict[str, list[float]] = {label: [] for label, *_ in rows}
        for _ in range(args.runs):
            for label, command, _, row_env in rows:
                used, took = _seconds(command, row_env)
                cpu[label].append(used)
                wall[label].append(took)
        print(f"{args.runs} fresh processes a row: CPU least (median), wall median")
        for label, _, target, _ in rows:
            least, middle = min(cpu[label]), statistics.median(cpu[label])
            goal = min(cpu[target]) if isinstance(target, str) and target in cpu else target
            versus = "" if not isinstance(goal, float) else f"   x{least / goal:.2f} of the target"
            print(
                f"  {label:34} {least * 1000:6.1f} ({middle * 1000:6.1f}) ms, wall "
                f"{statistics.median(wall[label]) * 1000:6.1f} ms{versus}"
            )


if __name__ == "__main__":
    main()
