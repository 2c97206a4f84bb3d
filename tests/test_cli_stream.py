"""The streaming command line: formats, stdin, --jobs, --vocab, errors, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import streamcodec
from fuzz.corpus import samples
from streamcodec import cli
from streamcodec.formats import write_tiktoken
from streamcodec.stream import parallel
from streamcodec.vocab import GPT2_PATTERN
from tests.children import reaped

TEXT = "Hello, streaming world!\nIt's 2024 <|endoftext|> done.\n\n  naïve café 😀\n"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args], input=stdin, capture_output=True, timeout=120
    )


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text(TEXT * 20, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["ids", "u32", "npy", "jsonl"])
def test_every_format_round_trips(
    fmt: str, text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, back = tmp_path / f"ids.{fmt}", tmp_path / "back.txt"
    status, _, err = call(
        capsys, "encode", str(text_file), "-o", str(out), "-f", fmt, "--allowed-special", "all"
    )
    assert status == 0, err
    assert "tokens" in err and not list(tmp_path.glob(".*.tmp"))
    assert call(capsys, "decode", str(out), "-o", str(back), "-f", fmt)[0] == 0
    assert back.read_bytes() == text_file.read_bytes()


def test_formats_hold_the_ids(text_file: Path, tmp_path: Path) -> None:
    import numpy

    enc = streamcodec.get_encoding("cl100k_base")
    text = text_file.read_text(encoding="utf-8")
    expected = enc.encode(text, allowed_special="all")
    for fmt in ["u32", "npy", "jsonl"]:
        assert cli.main(["encode", str(text_file), "-o", str(tmp_path / fmt), "-f", fmt,
                         "--allowed-special", "all", "-q"]) == 0  # fmt: skip
    u32 = numpy.frombuffer((tmp_path / "u32").read_bytes(), dtype="<u4")
    assert u32.tolist() == expected
    npy = numpy.load(tmp_path / "npy")
    assert npy.dtype == numpy.dtype("<u4") and npy.tolist() == expected
    lines = (tmp_path / "jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        enc.encode(line, allowed_special="all") for line in text.split("\n")[:-1]
    ]


def test_stdin_and_stdout() -> None:
    data = (TEXT * 3).encode()
    enc = streamcodec.get_encoding("cl100k_base")
    expected = enc.encode(data.decode(), disallowed_special=())
    done = run("encode", "-", "--special-as-text", stdin=data)
    assert done.returncode == 0, done.stderr
    assert [int(x) for x in done.stdout.split()] == expected
    counted = run("count", "-", "--special-as-text", stdin=data)
    assert counted.stdout == f"{len(expected)}\n".encode()
    npy = run("encode", "-", "-f", "npy", "--special-as-text", stdin=data)
    assert len(npy.stdout) == 128 + 4 * len(expected)


def test_jobs_output_equals_one_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(parallel, "PART_BYTES", 4_000)
    path = tmp_path / "big.txt"
    path.write_text(samples()["prose"][:60_000] + TEXT, encoding="utf-8")
    outputs = []
    for jobs in ["1", "2"]:
        out = tmp_path / f"out{jobs}.u32"
        status, _, err = call(
            capsys, "encode", str(path), "-o", str(out), "-f", "u32", "--jobs", jobs,
            "--special-as-text", "-q",
        )  # fmt: skip
        assert status == 0, err
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and len(outputs[0]) > 40_000
    status, out, _ = call(capsys, "count", str(path), "--jobs", "2", "--special-as-text")
    assert out == f"{len(outputs[0]) // 4}\n"


def test_vocab_and_pattern(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    vocab = tmp_path / "mine.tiktoken"
    write_tiktoken(enc.mergeable_ranks, vocab)
    src = tmp_path / "in.txt"
    src.write_text("Hello   world 12345\n", encoding="utf-8")
    status, out, err = call(capsys, "encode", str(src), "--vocab", str(vocab), "--pattern", "gpt2")
    assert status == 0, err
    twin = streamcodec.Encoding(
        "t", pat_str=GPT2_PATTERN, mergeable_ranks=enc.mergeable_ranks, special_tokens={}
    )
    assert [int(x) for x in out.split()] == twin.encode("Hello   world 12345\n")


def test_vocab_file_with_its_own_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" ab": 257}
    vocabulary = Vocabulary(ranks, {"<|end|>": 258}, pat_str=GPT2_PATTERN)
    save_vocabulary(vocabulary, tmp_path / "tokenizer.json")
    src = tmp_path / "in.txt"
    src.write_text("ab ab<|end|>  ab", encoding="utf-8")
    status, out, err = call(
        capsys, "encode", str(src), "--vocab", str(tmp_path / "tokenizer.json"),
        "--allowed-special", "all",
    )  # fmt: skip
    assert status == 0, err
    twin = streamcodec.Encoding("t", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                                special_tokens={"<|end|>": 258})  # fmt: skip
    assert [int(x) for x in out.split()] == twin.encode(src.read_text(), allowed_special="all")


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n" * 100 + b"\xff\xfe")
    cases = {
        "byte offset 1000": ["count", str(bad)],
        "missing.txt": ["encode", str(tmp_path / "missing.txt")],
        "unknown encoding 'nope'": ["count", str(bad), "-e", "nope"],
        "--allowed-special: '<|bogus|>' is not a special token": [
            "count",
            str(bad),
            "--allowed-special",
            "<|bogus|>",
        ],
    }
    for expected, args in cases.items():
        status, _, err = call(capsys, *args)
        assert status == 1 and err.count("\n") == 1 and expected in err, err
    status, out, _ = call(capsys, "count", str(bad), "--errors", "replace")
    assert status == 0 and int(out) > 100
    special = run("encode", "-", "-o", str(tmp_path / "out.txt"), stdin=b"x <|endoftext|>")
    assert special.returncode == 1
    assert b"special token '<|endoftext|>'; pass --allowed-special" in special.stderr
    assert not list(tmp_path.glob("*out.txt*"))  # no output, not even a temporary file


def test_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text(samples()["prose"] * 5, encoding="utf-8")
    command = [sys.executable, "-m", "streamcodec", "encode", str(big)]
    popen = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with reaped(popen) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(100)
        proc.stdout.close()
        assert proc.wait(timeout=60) == 141
        assert proc.stderr.read() == b""


def test_ctrl_c_leaves_no_output(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text(samples()["prose"] * 60, encoding="utf-8")  # ~18 MB: several seconds
    out = tmp_path / "ids.txt"
    command = [sys.executable, "-m", "streamcodec", "encode", str(big), "-o", str(out)]
    with reaped(subprocess.Popen(command, stderr=subprocess.PIPE)) as proc:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".ids.txt.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # well into the encoding
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    assert sorted(os.listdir(tmp_path)) == ["big.txt"]


def test_progress_bar_only_on_a_terminal(
    text_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    count = ["count", str(text_file), "--special-as-text"]
    assert "B/s" not in call(capsys, *count)[2]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, err = call(capsys, *count)
    assert status == 0 and out.strip().isdigit()
    size = text_file.stat().st_size
    assert "B/s" in err and f"{size / 1000:.2f}k" in err  # the total, in bytes
    assert "B/s" not in call(capsys, *count, "--quiet")[2]
