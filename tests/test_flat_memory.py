"""``streamcodec count``'s peak memory does not grow with the input (issue 22 §2)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python_sources(path: Path, size: int) -> None:
    """``size`` bytes of the standard library's source: varied text, on every machine."""
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    with open(path, "wb") as out:
        while out.tell() < size:
            for file in files:
                out.write(file.read_bytes())
                if out.tell() >= size:
                    break
        out.truncate(size)


def _peak_mb(path: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["PYTHONPATH"] = str(ROOT)
    command = [
        sys.executable,
        "-m",
        "streamcodec",
        "count",
        "-q",
        "--special-as-text",
        "--errors",
        "replace",
    ]
    proc = subprocess.Popen([*command, str(path)], stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0
    return usage.ru_maxrss / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_count_peak_memory_is_flat_from_16_to_64_mb(tmp_path: Path) -> None:
    """Regression: glibc's heap fragmented under the 1 MB chunks and their id lists (before:
    83 MB for 16 MB, 94 MB for 64 MB of Python source; now 76 and 77)."""
    small, big = tmp_path / "small.py", tmp_path / "big.py"
    _python_sources(small, 16_000_000)
    _python_sources(big, 64_000_000)
    assert _peak_mb(big) - _peak_mb(small) < 5
