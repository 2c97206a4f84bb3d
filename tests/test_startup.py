"""Start-up stays cheap: loading the package compiles no safe-cut rule and starts no workers'
machinery (issue 22 §3; the figures: benchmarks/startup.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _fresh_python(code: str, **env: str) -> str:
    """What ``code`` prints, run by a fresh interpreter that imports streamcodec from here
    (with ``env`` added to its environment)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), **env},
    ).stdout


def test_loading_encoding_compiles_no_safe_cut_rule() -> None:
    """Regression: stream/windows.py compiled the reverse safe-cut rules at import (130 ms of
    every start-up, the CLI's too); multiprocessing was imported for runs that use no worker."""
    code = (
        "import sys\n"
        "from streamcodec import Encoding\n"
        "import streamcodec.stream.cuts as cuts\n"
        "print(cuts.safe_cuts.cache_info().currsize, cuts.last_safe_cut.cache_info().currsize,\n"
        "      'multiprocessing' in sys.modules)\n"
    )
    out = _fresh_python(code)
    assert out.split() == ["0", "0", "False"]


def test_the_pure_backend_imports_no_compiled_module() -> None:
    """Regression: a shipped vocabulary's ranks were unpacked by the compiled core even under
    ``STREAMCODEC_BACKEND=python`` (the backend is the one choice of path, engine/backend.py)."""
    code = (
        "import sys, streamcodec\n"
        "streamcodec.get_encoding('cl100k_base').encode('hello world')\n"
        "print([m for m in sys.modules if m.rpartition('.')[2] in ('_core', '_scan', '_fused')])\n"
    )
    assert _fresh_python(code, STREAMCODEC_BACKEND="python").strip() == "[]"
