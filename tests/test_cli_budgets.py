"""``streamcodec count --limit`` and ``streamcodec split``: exit codes, files, atomicity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import streamcodec
from streamcodec.cli import main
from streamcodec.stream.windows import Window

TEXT = "The quick brown fox jumps over the lazy dog. 🦙 " * 200 + "a" * 3000 + "\n"


@pytest.fixture()
def book(tmp_path: Path) -> Path:
    path = tmp_path / "book.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_count_limit(book: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = len(streamcodec.get_encoding("cl100k_base").encode(TEXT))
    assert main(["count", str(book), "--limit", str(n)]) == 0
    assert capsys.readouterr().out == f"{n}\n"
    assert main(["count", str(book), "--limit", str(n - 1)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and f"more than {n - 1:,} tokens" in err


def test_split_writes_exact_windows(book: Path, tmp_path: Path) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    out = tmp_path / "windows"
    assert main(["split", str(book), "--max-tokens", "100", "-o", str(out), "-q"]) == 0
    files = sorted(out.iterdir())
    assert [f.name for f in files[:2]] == ["000001.txt", "000002.txt"]
    texts = [f.read_bytes().decode("utf-8") for f in files]
    assert "".join(texts) == TEXT
    assert [i for t in texts for i in enc.encode(t)] == enc.encode(TEXT)
    assert all(len(enc.encode(t)) <= 100 for t in texts)


def test_split_refuses_and_cleans_up(
    book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    assert main(["split", str(book), "--max-tokens", "100", "-o", str(full)]) == 1
    assert "not an empty folder" in capsys.readouterr().err

    def failing(*args: object, **kwargs: object) -> Iterator[Window]:
        yield Window("x", [87], 0)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(streamcodec.Encoding, "split", failing)
    out = tmp_path / "never"
    assert main(["split", str(book), "--max-tokens", "100", "-o", str(out)]) == 1
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["book.txt", "full"]


def test_split_overlap_and_special_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    path = tmp_path / "chat.txt"
    path.write_text("hello world, again and again <|endoftext|> and more", encoding="utf-8")
    out = tmp_path / "w"
    assert main(["split", str(path), "--max-tokens", "4", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "<|endoftext|>" in err and "--allowed-special" in err and not out.exists()
    args = ["split", str(path), "--max-tokens", "4", "--overlap", "1", "--allowed-special", "all"]
    assert main([*args, "-o", str(out), "-q"]) == 0
    windows = [f.read_text(encoding="utf-8") for f in sorted(out.iterdir())]
    assert all(len(enc.encode(w, allowed_special="all")) <= 4 for w in windows)
    assert windows[0] == "hello world, again" and windows[1].startswith(" again")
    assert main(["split", str(path), "--max-tokens", "4", "--overlap", "4", "-o", "x"]) == 1
    assert "--overlap must be below --max-tokens" in capsys.readouterr().err
