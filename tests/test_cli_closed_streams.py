"""Regression tests (issue 23): a closed standard input or output, and an id past 2**32 - 1,
give one line and exit 1, not a traceback or silence; `-o FILE` needs no standard output."""

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


@pytest.mark.parametrize(
    "command", ["count README.txt", "explain --text hi", "encode README.txt -q"]
)
def test_a_closed_standard_output_is_an_error(command: str, tmp_path: Path) -> None:
    (tmp_path / "README.txt").write_text("hello world\n")
    done = _run(f"{command} >&-", tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "standard output is closed" in done.stderr


def test_output_to_a_file_needs_no_standard_output(tmp_path: Path) -> None:
    (tmp_path / "README.txt").write_text("hello world\n")
    done = _run("encode README.txt -o out.ids -q >&-", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.ids").read_text().split() == ["15339", "1917", "198"]


@pytest.mark.parametrize(
    ("command", "backend"),
    [("count README.txt", "auto"), ("encode README.txt -o out.ids --jobs 2", "python")],
)
def test_a_closed_standard_error_never_stops_the_work(
    command: str, backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMCODEC_BACKEND", backend)
    (tmp_path / "README.txt").write_text("hello world\n" * 1000)
    done = _run(f"{command} 2>&-", tmp_path)
    assert done.returncode == 0
    ids = done.stdout if "count" in command else (tmp_path / "out.ids").read_text()
    assert ids.split() == (["3000"] if "count" in command else ["15339", "1917", "198"] * 1000)
