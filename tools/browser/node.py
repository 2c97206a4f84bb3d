"""Run a Python script inside Pyodide under Node (tools/browser/run_in_node.mjs), offline: for
the tests (tests/test_pyodide.py) and the timings (benchmarks/pyodide_throughput.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tools.browser.build import PYODIDE

RUNNER = Path(__file__).resolve().parent / "run_in_node.mjs"


def missing() -> str | None:
    """Why Pyodide cannot run here (no Node, or tools/pyodide_setup.sh not run), or None."""
    if shutil.which("node") is None:
        return "node is not installed (Node 18+)"
    if not (PYODIDE / "pyodide.mjs").is_file():
        return f"no Pyodide in {PYODIDE}: run tools/pyodide_setup.sh (npm and pip, once)"
    return None


def run_in_pyodide(wheel_folder: Path, io: Path, script: Path, *args: str) -> str:
    """Run ``script`` with ``args`` inside Pyodide, in the folder ``io``, after micropip has
    installed the wheels of ``wheel_folder``; its standard output (RuntimeError if it fails)."""
    if reason := missing():
        raise RuntimeError(reason)
    node = shutil.which("node") or "node"
    command = [node, str(RUNNER), str(PYODIDE), str(wheel_folder), str(io), str(script), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} failed inside Pyodide:\n{done.stderr[-3000:]}")
    return done.stdout
