"""A file truncated or rewritten while it is read (issue 23, section 5): an error naming it, with
one job or several, and nothing written to ``-o`` (``--jobs 2`` gave a prefix of the ids)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

import streamcodec
from streamcodec.cli import main
from streamcodec.stream import SourceChangedError, parallel, sources

TEXT = "The quick brown fox jumps over the lazy dog.\n" * 60_000  # 2.7 MB: 3 blocks


@pytest.fixture()
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "book.txt"
    path.write_text(TEXT)
    monkeypatch.setattr(parallel, "PART_BYTES", 100_000)  # 27 parts
    return path


def truncate_after_first_block(monkeypatch: pytest.MonkeyPatch, path: Path, *, size: int) -> None:
    """The first block read of ``path`` is followed by its truncation to ``size`` bytes (as
    `> book.txt` in another shell)."""
    read_blocks = sources.read_blocks

    def truncating(f: IO[bytes], **kwargs: int | None) -> Iterator[bytes]:
        for block in read_blocks(f, **kwargs):
            yield block
            if os.path.getsize(path) > size:
                os.truncate(path, size)

    monkeypatch.setattr(sources, "read_blocks", truncating)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("size", [0, 1_500_000])
def test_a_truncated_file_is_an_error(
    book: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, size: int
) -> None:
    truncate_after_first_block(monkeypatch, book, size=size)
    enc = streamcodec.get_encoding("cl100k_base")
    with pytest.raises(SourceChangedError, match=r"book\.txt: the file changed while it was read"):
        enc.encode_file(book, jobs=jobs)


def test_a_file_rewritten_in_place_is_an_error(book: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_blocks = sources.read_blocks

    def rewriting(f: IO[bytes], **kwargs: int | None) -> Iterator[bytes]:
        yield from read_blocks(f, **kwargs)
        os.utime(book, ns=(0, 10**18))  # the same size, written to: a new modification time

    monkeypatch.setattr(sources, "read_blocks", rewriting)
    with pytest.raises(SourceChangedError):
        streamcodec.get_encoding("cl100k_base").count_tokens(book)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_cli_says_so_and_writes_nothing(
    book: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    out = book.with_name("out.ids")
    out.write_text("old\n")
    truncate_after_first_block(monkeypatch, book, size=0)
    assert main(["encode", str(book), "-o", str(out), "--jobs", jobs, "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"streamcodec: error: {book}: the file changed while it was read")
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in book.parent.iterdir()) == ["book.txt", "out.ids"]


def test_the_error_crosses_a_process_boundary_intact() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(SourceChangedError("a.txt")))
    assert str(error) == str(SourceChangedError("a.txt")) and error.name == "a.txt"
