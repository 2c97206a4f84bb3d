"""Regression tests (issue 23): a closed standard input and an id past 2**32 - 1 give one line
and exit 1, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _run(shell_args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    # The redirections (<&-) need a shell; the interpreter is passed as $0.
    return subprocess.run(
        ["bash", "-c", f'"$0" -m streamcodec {shell_args}', sys.executable],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize("command", ["count -", "encode -", "split - --max-tokens 8 -o out"])
def test_a_closed_standard_input_is_named(command: str, tmp_path: Path) -> None:
    done = _run(f"{command} <&-", tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "standard input is closed" in done.stderr


def test_an_id_past_the_32_bit_limit_is_one_line(tmp_path: Path) -> None:
    done = _run("decode -", tmp_path, stdin="4294967296\n")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "between 0 and 2**32 - 1" in done.stderr
