"""The corpus's inputs read so that nothing is lost without a word (issue 31's corpus items).

A compressed input is read to its own end-of-stream marker or refused with its name and byte
offset (a truncated ``.zst`` was a shorter document, exit 0); garbage says which file; a FIFO,
device or folder where a file is expected is refused, never a hang; an input changed while the
run reads it fails that shard; invalid UTF-8 in Parquet names the row and byte offset.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import random
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec.cli import main
from streamcodec.corpus import jsonlines, read_documents, tokenize
from streamcodec.corpus.document import Range
from streamcodec.corpus.files import InputChangedError

ENC = streamcodec.get_encoding("cl100k_base")


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress, "xz": lzma.compress, "zst": _zstd,
}  # fmt: skip
LINES = "".join(
    json.dumps({"text": f"document {i} " + "word " * (i % 50)}) + "\n" for i in range(3000)
)


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A FIFO opened for reading blocks: the test fails in 20 s instead of hanging."""

    def stop(signum: int, frame: object) -> None:
        raise TimeoutError("hung")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("codec", sorted(COMPRESS))
@pytest.mark.parametrize("kind", ["txt", "jsonl"])
def test_compressed_input_truncated_at_random_points_is_refused_with_file_and_offset(
    tmp_path: Path, codec: str, kind: str
) -> None:
    data = COMPRESS[codec](LINES.encode())
    path = tmp_path / f"a.{kind}.{codec}"
    rng = random.Random(f"{codec}{kind}")
    for cut in sorted(rng.sample(range(1, len(data)), 8)):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=rf"a\.{kind}\.{codec}: the {codec} stream is cut "
                           rf"short at byte offset {cut} \(after [\d,]+ bytes of text\): a "
                           "truncated file"):  # fmt: skip
            tokenize([path], tmp_path / "out", restart=True)
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
        assert not manifest["complete"] and manifest["shards"] == []


@pytest.mark.parametrize("codec", sorted(COMPRESS))
def test_whole_compressed_input_of_several_members_is_read_whole(
    tmp_path: Path, codec: str
) -> None:
    half = len(LINES) // 2
    path = tmp_path / f"a.jsonl.{codec}"
    path.write_bytes(
        COMPRESS[codec](LINES[:half].encode()) + COMPRESS[codec](LINES[half:].encode())
    )
    tokenize([path], tmp_path / "out")
    texts = [json.loads(line)["text"] for line in LINES.splitlines()]
    got = [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "out")]
    assert got == texts


@pytest.mark.parametrize("codec", sorted(COMPRESS))
def test_garbage_compressed_input_names_the_file(tmp_path: Path, codec: str) -> None:
    path = tmp_path / f"junk.txt.{codec}"
    path.write_bytes(os.urandom(5000))
    with pytest.raises(ValueError, match=rf"junk\.txt\.{codec}: not a valid {codec} stream"):
        tokenize([path], tmp_path / "out")


def test_cli_truncated_zst_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(_zstd(LINES.encode())[:-100])
    assert main(["tokenize-corpus", str(path), "-o", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a.jsonl.zst: the zst stream is cut short" in err


@pytest.mark.parametrize("where", ["named", "in a folder", "in a glob"])
def test_a_fifo_is_refused_never_read(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("hello")
    os.mkfifo(folder / "pipe.txt")
    name = {"named": folder / "pipe.txt", "in a folder": folder, "in a glob": folder / "*.txt"}
    with pytest.raises(OSError, match=r"a FIFO \(named pipe\), not a regular file") as caught:
        tokenize(str(name[where]), tmp_path / "out")
    assert caught.value.filename == str(folder / "pipe.txt")


def test_a_device_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tokenize-corpus", "/dev/null", "-o", str(tmp_path / "out"), "-q"]) == 1
    assert capsys.readouterr().err == (
        "streamcodec: error: /dev/null: a character device, not a regular file: name files "
        "(or - for standard input)\n"
    )


def test_a_str_is_one_path_and_jobs_below_one_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world")
    manifest = tokenize(str(tmp_path / "a.txt"), tmp_path / "out")
    assert [i["kind"] for i in manifest["inputs"]] == ["text"]
    for jobs in (0, -1):
        with pytest.raises(ValueError, match="jobs must be a whole number of at least 1"):
            tokenize(str(tmp_path / "a.txt"), tmp_path / "out", jobs=jobs)


def test_stdin_named_twice_and_inputs_inside_the_output_say_why(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"standard input \(-\) is named twice"):
        tokenize(["-", "-"], tmp_path / "out")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").write_text("hello")
    with pytest.raises(ValueError, match="the 1 found are inside the output folder"):
        tokenize([tmp_path / "out"], tmp_path / "out")


def _change_after_first_document(
    monkeypatch: pytest.MonkeyPatch, path: Path, change: Callable[[Path], None]
) -> None:
    """Change ``path`` once the run has read its first block of lines."""
    blocks = jsonlines.line_blocks

    def changing(*args: object, **kwargs: object) -> Iterator[object]:
        for n, block in enumerate(blocks(*args, **kwargs)):  # type: ignore[arg-type]
            yield block
            if n == 0:
                change(path)

    monkeypatch.setattr("streamcodec.corpus.tasks.line_blocks", changing)


def _append(path: Path) -> None:
    with open(path, "a") as f:
        f.write('{"text": "more"}\n')


def _same_size(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b"document 5 ", b"document X "))
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 10**9))  # a clock that moved on


@pytest.mark.parametrize("change", [_append, _same_size, lambda p: os.truncate(p, 1000)])
def test_an_input_changed_while_it_is_read_fails_that_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(LINES)
    _change_after_first_document(monkeypatch, path, change)
    with pytest.raises(InputChangedError, match=r"a\.jsonl: the file changed while it was read"):
        tokenize([path], tmp_path / "out")
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["shards"] == []


def test_an_input_changed_between_shards_fails_the_next_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_text(LINES)
    (tmp_path / "b.jsonl").write_text(LINES)
    blocks = jsonlines.line_blocks
    ranges = []

    def changing(*args: object, **kwargs: object) -> Iterator[object]:
        ranges.append(args)
        yield from blocks(*args, **kwargs)  # type: ignore[arg-type]
        if len(ranges) == 1:  # the first shard's input read: change the second input's
            _append(tmp_path / "b.jsonl")

    # on the reader's thread, ahead of the writer: changed once the first input is read, not
    # at a point of the writer's progress (the reader may have read both inputs by then)
    monkeypatch.setattr("streamcodec.corpus.tasks.line_blocks", changing)
    with pytest.raises(InputChangedError, match=r"b\.jsonl: the file changed before it was"):
        tokenize([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], tmp_path / "out",
                 shard_bytes=len(LINES))  # fmt: skip
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [entry["index"] for entry in manifest["shards"]] == [0]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bad_line_fails_its_shard_after_the_shards_before_are_listed(
    tmp_path: Path, jobs: int
) -> None:
    """A task's error (here a worker's: a line without the field) is raised at the task's
    place: the shards before it are finished and listed first, on every job count, as on one
    thread (the pipeline's threads raised it ahead of the results before it, and the first
    shard, encoded and waiting to be written, was made again by the rerun)."""
    (tmp_path / "a.jsonl").write_text(LINES)
    (tmp_path / "b.jsonl").write_text(LINES + '{"title": "no text"}\n')
    with pytest.raises(ValueError, match=r"b\.jsonl:3001: no field 'text'"):
        tokenize([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], tmp_path / "out",
                 shard_bytes=len(LINES), jobs=jobs)  # fmt: skip
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [entry["index"] for entry in manifest["shards"]] == [0, 1]  # b's last line: shard 2


def _parquet_with_bad_utf8(path: Path) -> None:
    import pyarrow
    import pyarrow.parquet

    raw = pyarrow.array([b"fine", b"also fine", b"bad \xff here"], type=pyarrow.binary())
    text = pyarrow.Array.from_buffers(pyarrow.string(), 3, raw.buffers())  # unchecked
    pyarrow.parquet.write_table(pyarrow.table({"text": text}), path)


def test_invalid_utf8_in_parquet_names_the_row_and_byte_offset(tmp_path: Path) -> None:
    _parquet_with_bad_utf8(tmp_path / "a.parquet")
    with pytest.raises(ValueError, match=r"a\.parquet at row 2: invalid UTF-8 at byte offset 4"):
        tokenize([tmp_path / "a.parquet"], tmp_path / "out")
    tokenize([tmp_path / "a.parquet"], tmp_path / "out", errors="replace", restart=True)
    got = [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "out")]
    assert got == ["fine", "also fine", "bad \ufffd here"]


def test_a_special_token_in_a_streamed_document_names_its_byte_offset(tmp_path: Path) -> None:
    text = "plain words " * 1000 + "<|endoftext|> and more"
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(text.encode()))
    with pytest.raises(ValueError, match=r"a\.txt\.gz at byte offset 12000: the document contains"):
        tokenize([tmp_path / "a.txt.gz"], tmp_path / "out")


def test_standard_input_lines_are_counted_as_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    data = b'{"text": "one"}\n\n{"text": "two"}\n{"nope": 3}\n{"text": "four"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = str(tmp_path / "out")
    assert main(["tokenize-corpus", "-", "-o", out, "-q", "--field", "text"]) == 1
    assert "<stdin>:4: no field 'text' in this JSON line (it has: nope)" in capsys.readouterr().err


def test_a_compressed_inputs_end_is_not_its_size_on_disk(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(LINES.encode()))
    manifest = tokenize([tmp_path / "a.jsonl.gz"], tmp_path / "out")
    assert [source["end"] for source in manifest["shards"][0]["sources"]] == [-1]
    assert check_corpus_text(tmp_path / "out")


def check_corpus_text(out: Path) -> bool:
    from streamcodec.corpus import check_corpus

    return check_corpus(out, text=50).endswith("tokens")


@settings(max_examples=300)
@given(
    lines=st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=25),
    last_newline=st.booleans(),
    where=st.lists(st.tuples(st.floats(0, 1), st.integers(-1, 1)), max_size=4),
    size=st.integers(1, 48),
    first=st.integers(0, 48),
)
def test_line_blocks_hold_each_line_once_whole_in_the_range_it_starts_in(
    lines: list[bytes], last_newline: bool, where: list[tuple[float, int]], size: int, first: int
) -> None:
    # The reader's blocks (each chunk read copied once into its block, a long line held in
    # parts): whole lines, each in the range its first byte is in, counted, numbered, hashed.
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    # cuts anywhere, and at a line's start, or a byte either side of it
    snapped = [data.find(b"\n", int(at * len(data))) + 1 + by for at, by in where]
    cuts = [int(at * len(data)) for at, _ in where] + snapped
    starts = [0] + [k + 1 for k, byte in enumerate(data) if byte == 10 and k + 1 < len(data)]
    bounds = sorted({min(max(c, 0), len(data)) for c in cuts} | {0})
    for n, start in enumerate(bounds):
        end = bounds[n + 1] if n + 1 < len(bounds) else -1
        digest = hashlib.sha256()
        part = Range(0, start, end)
        blocks = list(jsonlines.line_blocks(io.BytesIO(data), part, digest=digest, size=size,
                                            first=first))  # fmt: skip
        mine = [s for s in starts if start <= s and (end < 0 or s < end) and s < len(data)]
        want = (
            data[mine[0] : ([s for s in starts if s > mine[-1]] or [len(data)])[0]] if mine else b""
        )
        assert b"".join(b.data for b in blocks) == want
        rest = b""  # the rest of the line that started before the range, hashed with it
        if start:
            rest = data[start - 1 : data.find(b"\n", start - 1) + 1 or len(data)]
        assert digest.digest() == hashlib.sha256(rest + want).digest()
        position, number = (mine[0] if mine else start), (1 if start == 0 else 0)
        for block in blocks:
            assert block.start == position and block.number == number
            assert block.line_count == block.data.count(b"\n") + (not block.data.endswith(b"\n"))
            assert block.data.endswith(b"\n") or position + len(block.data) == len(data)
            position += len(block.data)
            number += block.line_count if number else 0
