"""benchmarks/command_threads.py: a command's CPU by thread, in fresh processes (its hooks reach
every thread the corpus tool starts, and the command still ends with its own status)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(sys.platform != "linux", reason="RUSAGE_THREAD and /proc are Linux's")
def test_each_thread_of_the_corpus_tool_is_counted(tmp_path: Path) -> None:
    # past the first tasks that the main thread encodes alone (job.SOLO_TASKS: about 2 MB)
    line = '{"text": "%s"}\n' % ("hello world " * 10)
    (tmp_path / "docs.jsonl").write_text(line * (2_500_000 // len(line)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["tokenize-corpus", "-q", "--restart", str(tmp_path / "docs.jsonl"), "-o",
            str(tmp_path / "out")]  # fmt: skip
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "command_threads.py"), "--runs", "1",
         "--jobs", "1,2", "--", *argv],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    one, two = (line for line in run.stdout.splitlines() if line.startswith("jobs "))
    assert one.startswith("jobs 1:") and "| main " in one and "worker" not in one
    assert two.startswith("jobs 2:")
    assert all(f" {role} " in two for role in ("hasher", "main", "reader", "worker", "writer"))
    assert (tmp_path / "out" / "manifest.json").exists()
