"""The command line, run as a user would: ``python -m streamcodec``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import streamcodec


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args], input=stdin, capture_output=True, timeout=120
    )


def test_encode_count_decode(tmp_path: Path) -> None:
    text = "Hello, streaming world!\n" * 3
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "ids.txt"
    done = run("encode", str(src), "-o", str(out))
    assert done.returncode == 0, done.stderr
    ids = [int(x) for x in out.read_text().split()]
    assert ids == streamcodec.get_encoding("cl100k_base").encode(text)
    assert b"tokens" in done.stderr
    counted = run("count", str(src))
    assert counted.stdout.strip() == str(len(ids)).encode()
    decoded = run("decode", str(out))
    assert decoded.stdout.decode() == text


def test_errors_are_one_line(tmp_path: Path) -> None:
    missing = run("count", str(tmp_path / "missing.txt"))
    assert missing.returncode == 1
    assert missing.stderr.decode().count("\n") == 1 and "missing.txt" in missing.stderr.decode()
    unknown = run("count", "-", "--encoding", "nope", stdin=b"x")
    assert unknown.returncode == 1 and b"unknown encoding 'nope'" in unknown.stderr
    special = run("count", "-", stdin=b"x <|endoftext|>")
    assert special.returncode == 1
    assert b"special token '<|endoftext|>'; pass --allowed-special" in special.stderr


def test_the_readme_quick_start_encodes_the_readme(tmp_path: Path) -> None:
    """Regression: the README's first command (encode README.md) failed once the README quoted
    a special token's text; the quick start must work on the README as it is."""
    from streamcodec.cli import main

    readme = Path(__file__).resolve().parents[1] / "README.md"
    assert main(["encode", str(readme), "-o", str(tmp_path / "README.ids"), "-q"]) == 0
    assert (tmp_path / "README.ids").read_text().count("\n") > 1000
