"""JSON nested deeper than Python's parser recurses (issue 23, section 4): one line naming the
file (and the line, for ``-f jsonl``), never a RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamcodec.cli import main
from streamcodec.formats.jsondoc import TOO_DEEP

DEEP = "[" * 100_000


def test_a_deeply_nested_tokenizer_json_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vocab = tmp_path / "tokenizer.json"
    vocab.write_text(DEEP)
    (tmp_path / "in.txt").write_text("hi")
    assert main(["encode", str(tmp_path / "in.txt"), "--vocab", str(vocab)]) == 1
    err = capsys.readouterr().err
    assert err == f"streamcodec: error: {vocab}: {TOO_DEEP}\n"


def test_a_deeply_nested_jsonl_line_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = tmp_path / "ids.jsonl"
    ids.write_text(f"[15339]\n{DEEP}\n")
    assert main(["decode", str(ids), "-f", "jsonl"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "hello\n"
    assert captured.err == f"streamcodec: error: {ids}:2: {TOO_DEEP}\n"
