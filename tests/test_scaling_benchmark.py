"""benchmarks/scaling.py refuses a contender it does not know (``--only "sc batch count"``, a
typo of "sc count batch", ran the thread pool's path and only printed "(differs)")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_an_unknown_only_name_is_refused_naming_the_known_ones() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    only = "sc count batch,sc batch count"
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scaling.py"), "--threads", "1", "--only", only],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0
    assert "unknown contender(s) 'sc batch count'" in run.stderr
    assert "'sc count batch'" in run.stderr and "'sc pool numpy'" in run.stderr
    assert "documents" not in run.stdout  # refused before any work
