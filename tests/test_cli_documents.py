"""One input layer (issue 30 item 5): ``encode`` and ``count`` read what ``tokenize-corpus`` reads.

JSON Lines (``--field``, compressed or not, or standard input) and Parquet (``--column``) are
documents, each encoded alone, as the corpus encodes them; a ``.gz``/``.xz``/``.zst`` text is
read decompressed, to its proper end. ``encode x.jsonl.gz`` read the compressed bytes as text.
"""

from __future__ import annotations

import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest

import streamcodec
from tests.conftest import tiktoken_twin

ENC = streamcodec.get_encoding("cl100k_base")
TEXTS = ["hello world", "second document, with more words", "caf\u00e9 \U0001f600", ""]


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args], input=stdin, capture_output=True, timeout=120
    )


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


@pytest.fixture
def lines(tmp_path: Path) -> bytes:
    return "".join(json.dumps({"text": t, "id": i}) + "\n" for i, t in enumerate(TEXTS)).encode()


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz", ".zst"])
def test_json_lines_documents_each_encoded_alone(tmp_path: Path, lines: bytes, suffix: str) -> None:
    compress = {"": bytes, ".gz": gzip.compress, ".xz": lzma.compress, ".zst": _zstd}[suffix]
    path = tmp_path / f"a.jsonl{suffix}"
    path.write_bytes(compress(lines))
    twin = tiktoken_twin(ENC)
    done = run("encode", str(path), "--field", "text", "-f", "jsonl")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        twin.encode_ordinary(t) for t in TEXTS
    ]
    counted = run("count", str(path), "--field", "text")
    assert int(counted.stdout) == sum(len(twin.encode_ordinary(t)) for t in TEXTS)


def test_parquet_rows_and_standard_input(tmp_path: Path, lines: bytes) -> None:
    import pyarrow
    import pyarrow.parquet

    pyarrow.parquet.write_table(pyarrow.table({"body": TEXTS}), tmp_path / "a.parquet")
    done = run("encode", str(tmp_path / "a.parquet"), "--column", "body", "-f", "jsonl")
    assert [json.loads(line) for line in done.stdout.splitlines()] == [ENC.encode(t) for t in TEXTS]
    ids = run("encode", "-", "--field", "text", stdin=lines)
    assert [int(i) for i in ids.stdout.split()] == [i for t in TEXTS for i in ENC.encode(t)]


def test_compressed_text_is_read_to_its_end_or_refused(tmp_path: Path) -> None:
    text = "The quick brown fox. " * 5000
    (tmp_path / "a.txt.zst").write_bytes(_zstd(text.encode()))
    assert int(run("count", str(tmp_path / "a.txt.zst")).stdout) == len(ENC.encode(text))
    data = gzip.compress(text.encode())
    (tmp_path / "cut.txt.gz").write_bytes(data[: len(data) // 2])
    for command in ("encode", "count"):
        done = run(command, str(tmp_path / "cut.txt.gz"))
        assert done.returncode == 1 and done.stdout == b""
        err = done.stderr.decode()
        assert err.count("\n") == 1 and "cut.txt.gz: the gz stream is cut short" in err


def test_options_the_input_does_not_take_and_special_tokens_in_documents(
    tmp_path: Path, lines: bytes
) -> None:
    (tmp_path / "a.jsonl").write_bytes(lines + b'{"text": "a <|endoftext|> b"}\n')
    refused = {
        ("encode", "a.jsonl", "--column", "text"): "--column reads Parquet inputs",
        ("count", "a.jsonl", "--field", "text", "--mode", "word", "--codes", "c"): (
            "--field reads documents, and --mode word reads the input as text"
        ),
        ("count", "a.jsonl", "--field", "text"): (
            "a.jsonl:5: the document contains the special token '<|endoftext|>'"
        ),
        ("encode", "a.jsonl", "--field", "text", "--jobs", "2"): "leave out --jobs",
    }
    for args, message in refused.items():
        done = subprocess.run(
            [sys.executable, "-m", "streamcodec", *args], cwd=tmp_path, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1 and message in done.stderr, (args, done.stderr)
    special = run("count", str(tmp_path / "a.jsonl"), "--field", "text", "--special-as-text")
    assert int(special.stdout) == sum(
        len(ENC.encode_ordinary(t)) for t in [*TEXTS, "a <|endoftext|> b"]
    )


def test_jobs_on_a_compressed_input_says_it_reads_with_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt.xz").write_bytes(lzma.compress(b"hello world"))
    done = run("count", str(tmp_path / "a.txt.xz"), "--jobs", "2")
    assert done.stdout == b"2\n"
    assert b"--jobs 2 splits uncompressed regular files only" in done.stderr
