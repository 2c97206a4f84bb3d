"""Issue 31's cases outside the corpus tool: each failed before its fix (a hostile probe and a
newcomer's first hour). Outputs on a full disk or a closed pipe, options offered and refused,
names a newcomer reaches for. ``tools/probe_round4.py`` reruns the same families at scale.
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamcodec.cli import build_parser, main
from tests.children import reaped

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ["ids", "jsonl", "u32", "npy"]  # u16: cl100k ids do not fit


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    # stdout buffered, as a user has it (PYTHONUNBUFFERED hid Python's own flush at exit)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)
    kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args],
        timeout=120,
        env=env,
        **kwargs,  # type: ignore[call-overload]
    )


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """Lines whose ids take more than a pipe's buffer (64 KiB) in every format."""
    path = tmp_path / "book.txt"
    path.write_text("".join(f"line {i}: the quick brown fox\n" for i in range(6000)))
    return path


# ---------------------------------------------------------------------- full disk, closed pipe


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("size", ["small", "large"])
def test_stdout_on_a_full_disk_fails_in_one_line(
    book: Path, tmp_path: Path, fmt: str, size: str
) -> None:
    """``encode -f jsonl > file`` on a full disk: exit 1 and a line naming stdout, whether the
    disk is met while writing or only when the last buffer is flushed."""
    src = book
    if size == "small":
        src = tmp_path / "small.txt"
        src.write_text("hello\nworld\n")
    with open("/dev/full", "wb") as full:
        done = run("encode", str(src), "-f", fmt, stdout=full)
    assert done.returncode == 1
    assert done.stderr.decode() == "streamcodec: error: <stdout>: No space left on device\n"


class _FullRaw(io.RawIOBase):
    """A file on a full disk: every write fails, as does the flush of ``close``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["count", "explain", "verify", "decode"])
def test_every_command_printing_to_a_full_disk_fails_in_one_line(
    tmp_path: Path, command: str
) -> None:
    """``count FILE > file`` on a full disk: "Exception ignored in: <_io.TextIOWrapper ...>"
    and status 120 from Python's flush at exit (encode and decode printed their line, then
    that too)."""
    src = tmp_path / "in.txt"
    src.write_text("hello world\n")
    if command == "decode":
        src.write_text("15339\n1917\n")
    with open("/dev/full", "wb") as full:
        done = run(command, str(src), stdout=full)
    assert done.returncode == 1
    assert done.stderr.decode().endswith("streamcodec: error: <stdout>: No space left on device\n")
    assert b"Exception ignored" not in done.stderr


def test_a_full_disk_met_again_at_close_still_names_the_file(
    book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The named error of a full disk was replaced by the unnamed one of closing the file
    (its flush failed too): ``[Errno 28] No space left on device`` without the path."""
    import streamcodec.atomicfile as atomicfile

    def fdopen(fd: int, mode: str) -> io.BufferedWriter:
        return io.BufferedWriter(_FullRaw(fd))

    monkeypatch.setattr(atomicfile.os, "fdopen", fdopen)
    out = tmp_path / "out.jsonl"
    assert main(["encode", str(book), "-o", str(out), "-q"]) == 1
    assert capsys.readouterr().err == f"streamcodec: error: {out}: No space left on device\n"
    assert os.listdir(tmp_path) == ["book.txt"]  # no temporary left


@pytest.mark.parametrize("fmt", [*FORMATS, "u16"])
def test_a_closed_pipe_ends_every_format_alike(book: Path, fmt: str) -> None:
    """``-f jsonl | head -c 10`` exits 141 as the other formats do, with nothing on stderr."""
    args = ["-e", "gpt2"] if fmt == "u16" else []
    command = [sys.executable, "-m", "streamcodec", "encode", str(book), "-f", fmt, *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    popen = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    with reaped(popen) as process:
        assert process.stdout is not None and process.stderr is not None
        assert len(process.stdout.read(10)) == 10
        process.stdout.close()
        assert process.wait(timeout=120) == 141
        assert process.stderr.read() == b""


# ---------------------------------------------------------------------- options


def test_stdin_given_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``tokenize-corpus - -``: "I/O operation on closed file." after reading stdin once (the
    corpus's input layer refuses it; here: in one line from the command)."""
    assert main(["tokenize-corpus", "-", "-", "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err == "streamcodec: error: standard input (-) is named twice: it can be read once\n"
    assert not (tmp_path / "out").exists()


def test_an_output_suffix_naming_no_format_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o x.bin`` wrote decimal text; it is refused before any work, naming ``-f``; with
    ``-f`` it is written; no suffix and ``.txt`` are still ids."""
    src = tmp_path / "x.txt"
    src.write_text("hello world")
    assert main(["encode", str(src), "-o", str(tmp_path / "x.bin"), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'x.bin'}: the suffix .bin names no format of ids; pass -f" in err
    assert not (tmp_path / "x.bin").exists()
    assert main(["encode", str(src), "-o", str(tmp_path / "x.bin"), "-f", "u16", "-q"]) == 0
    assert (tmp_path / "x.bin").read_bytes() == (15339).to_bytes(2, "little") + (1917).to_bytes(
        2, "little"
    )
    for name in ["ids", "x.txt.txt"]:
        assert main(["encode", str(src), "-o", str(tmp_path / name), "-q"]) == 0
        assert (tmp_path / name).read_text() == "15339\n1917\n"
    assert main(["decode", str(tmp_path / "x.bin")]) == 1
    assert "pass -f" in capsys.readouterr().err


def _help(command: str) -> str:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return " ".join(commands.choices[command].format_help().split())


def test_split_offers_only_what_it_takes() -> None:
    """split's help offered --mode word, --codes, --separator and --errors surrogateescape,
    each then refused."""
    helped = _help("split")
    for offered in ["word", "--codes", "--separator", "surrogateescape"]:
        assert offered not in helped
    assert "{bytelevel,bytes}" in helped and "{strict,replace}" in helped
    for extra in [["--mode", "word"], ["--codes", "c"], ["--errors", "surrogateescape"]]:
        with pytest.raises(SystemExit):
            build_parser().parse_args(["split", "x", "--max-tokens", "5", "-o", "d", *extra])


def test_the_usage_lines_list_every_format() -> None:
    page = (ROOT / "docs" / "streaming.md").read_text()
    assert page.count("[-f ids|jsonl|u32|u16|npy]") == 2
    assert "{ids,jsonl,u32,u16,npy}" in _help("encode")


# ---------------------------------------------------------------------- a newcomer's names


def test_tiktokens_modules_are_attributes_in_a_fresh_process() -> None:
    """``import streamcodec as tiktoken; tiktoken.model.MODEL_TO_ENCODING`` failed (ttok
    --list-models): tiktoken's package imports its modules, so they are attributes."""
    code = (
        "import streamcodec as tiktoken\n"
        "assert tiktoken.model.MODEL_TO_ENCODING['gpt-4'] == 'cl100k_base'\n"
        "assert 'gpt2' in tiktoken.registry.list_encoding_names()\n"
        "assert tiktoken.model is __import__('streamcodec.model').model\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


# ---------------------------------------------------------------------- --vocab without a pattern


@pytest.fixture
def gpt2_tiktoken(tmp_path: Path) -> Path:
    """GPT-2's ranks as a .tiktoken file, which holds no pattern."""
    import streamcodec
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    path = tmp_path / "gpt2.tiktoken"
    save_vocabulary(Vocabulary(streamcodec.get_encoding("gpt2").mergeable_ranks), path)
    return path


@pytest.mark.parametrize("command", ["encode", "count", "verify"])
def test_vocab_without_its_pattern_is_refused_naming_the_flags(
    gpt2_tiktoken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``--vocab`` of a file without a pattern took cl100k_base's in silence: GPT-2's own
    files gave other ids than ``-e gpt2``."""
    src = tmp_path / "in.txt"
    src.write_text("Hello   world\n\n  123456 it's")
    assert main([command, str(src), "--vocab", str(gpt2_tiktoken), "-q"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"streamcodec: error: --vocab {gpt2_tiktoken}: the file does not say its pre-tokenizer "
        "pattern; pass --pattern (a name such as gpt2, cl100k_base, o200k_base, or a regex), or "
        "--mode bytes for none\n"
    )


def test_vocab_with_a_pattern_or_bytes_or_its_own_is_accepted(
    gpt2_tiktoken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import streamcodec

    src = tmp_path / "in.txt"
    src.write_text("Hello   world\n\n  123456 it's")
    assert main(["encode", str(src), "--vocab", str(gpt2_tiktoken), "--pattern", "gpt2"]) == 0
    ids = [int(i) for i in capsys.readouterr().out.split()]
    assert ids == streamcodec.get_encoding("gpt2").encode(src.read_text())
    assert main(["count", str(src), "--vocab", str(gpt2_tiktoken), "--mode", "bytes"]) == 0
    capsys.readouterr()
    ids_file = tmp_path / "x.ids"
    ids_file.write_text("".join(f"{i}\n" for i in ids))
    assert main(["decode", str(ids_file), "--vocab", str(gpt2_tiktoken)]) == 0  # no pattern needed
    assert capsys.readouterr().out == src.read_text()
    json_file = tmp_path / "tokenizer.json"
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import GPT2_PATTERN, Vocabulary

    ranks = streamcodec.get_encoding("gpt2").mergeable_ranks
    save_vocabulary(Vocabulary(ranks, {}, GPT2_PATTERN), json_file)
    assert main(["encode", str(src), "--vocab", str(json_file)]) == 0  # the file says its own
    assert [int(i) for i in capsys.readouterr().out.split()] == ids


# ---------------------------------------------------------------------- explain on a big file


class _CountingRanks(dict[bytes, int]):
    """Ranks that count how often they are walked whole."""

    walks = 0

    def items(self):  # type: ignore[no-untyped-def, override]
        type(self).walks += 1
        return super().items()


def test_explain_walks_the_vocabulary_once_not_once_a_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``explain`` on a 5 MB file printed for hours: every piece built the whole id-to-token
    table again (100,000 entries a piece)."""
    import streamcodec
    import streamcodec.cli.explain as explain

    enc = streamcodec.Encoding("counted", pat_str=streamcodec.get_encoding("gpt2").pat_str,
                               mergeable_ranks=streamcodec.get_encoding("gpt2").mergeable_ranks,
                               special_tokens={})  # fmt: skip
    enc._mergeable_ranks = _CountingRanks(enc.mergeable_ranks)
    monkeypatch.setattr(explain, "build_encoding", lambda args: enc)
    src = tmp_path / "many.txt"
    src.write_text("the quick brown fox jumps over the lazy dog\n" * 200)  # 2,000 pieces
    assert main(["explain", str(src)]) == 0
    assert capsys.readouterr().out.count("piece '") == 2000
    assert _CountingRanks.walks <= 2


def test_explain_shows_a_long_piece_without_every_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A piece of 200,000 bytes printed 200,000 steps of up to 200,000 parts each."""
    src = tmp_path / "long.txt"
    src.write_text("=" * 200_000 + " x")
    assert main(["explain", str(src)]) == 0
    out = capsys.readouterr().out
    assert "(200,000 bytes): too long to show every merge (at most 96 bytes)" in out
    assert len(out) < 10_000 and "piece '␣x': merges in rank order" in out


def test_explain_html_refuses_a_page_no_browser_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "big.txt"
    src.write_text("word " * 250_000)  # 1,250,000 bytes
    assert main(["explain", str(src), "--html", str(tmp_path / "page.html")]) == 1
    err = capsys.readouterr().err
    assert f"explain --html: {src} holds 1,250,000 bytes of text" in err
    assert "head -c 100000 FILE | streamcodec explain - --html OUT.html" in err
    assert not (tmp_path / "page.html").exists()


# ---------------------------------------------------------------------- the API's counts


def _api_calls() -> dict[str, object]:
    import streamcodec

    enc = streamcodec.get_encoding("cl100k_base")
    ranks, specials = enc.mergeable_ranks, enc.special_tokens

    def make(**options: object) -> object:
        return streamcodec.Encoding("x", pat_str=enc.pat_str, mergeable_ranks=ranks,
                                    special_tokens=specials, **options)  # type: ignore[arg-type]  # fmt: skip

    return {
        "cache_bytes": lambda value: make(cache_bytes=value),
        "cache_size": lambda value: make(cache_size=value),
        "jobs": lambda value: list(enc.iter_encode_chunks(io.StringIO("hi"), jobs=value)),
        "limit": lambda value: enc.count_tokens("hello world", limit=value),
        "max_tokens": lambda value: list(enc.split("hello world", value)),
        "overlap": lambda value: list(enc.split("hello world", 5, overlap=value)),
    }


@pytest.mark.parametrize("name", ["cache_bytes", "cache_size", "jobs", "limit", "max_tokens",
                                  "overlap"])  # fmt: skip
@pytest.mark.parametrize("value", ["32", 1.5, True, None])
def test_a_count_of_the_wrong_type_is_a_type_error_naming_it(name: str, value: object) -> None:
    """``cache_bytes='32'`` failed with "'<' not supported between instances of 'str' and
    'int'"; ``jobs=1.5`` asked for a file path."""
    if value is None and name in ("limit", "cache_size"):
        return  # limit=None: no limit; cache_size=None: not given (a deprecated alias)
    call = _api_calls()[name]
    with pytest.raises(TypeError, match=f"^{name}={value!r}: expected a whole number"):
        call(value)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("name", "value", "least"),
    [("cache_bytes", -1, 0), ("cache_size", -1, 0), ("jobs", 0, 1), ("jobs", -1, 1),
     ("limit", -1, 0), ("max_tokens", 0, 1), ("overlap", -1, 0)],
)  # fmt: skip
def test_a_count_below_its_least_is_a_value_error_naming_it(
    name: str, value: int, least: int
) -> None:
    """``jobs=0`` and ``jobs=-1`` ran as one job; ``limit=-1`` returned None."""
    with pytest.raises(ValueError, match=f"^{name}={value}: expected a whole number of at least "):
        _api_calls()[name](value)  # type: ignore[operator]


def test_numpy_integers_are_whole_numbers() -> None:
    np = pytest.importorskip("numpy")
    calls = _api_calls()
    assert calls["limit"](np.int64(100)) == 2  # type: ignore[operator]
    assert calls["jobs"](np.int32(1)) == [[], [6151]]  # type: ignore[operator]


# ---------------------------------------------------------------------- no file where one is due


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, str]:
    """A folder, a socket and a character device, by what they are."""
    import socket

    folder = tmp_path / "folder"
    folder.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    path = tmp_path / "sock"
    sock.bind(str(path))
    sock.close()
    return {"a folder": str(folder), "a socket": str(path), "a character device": "/dev/zero"}


@pytest.mark.parametrize("flag", ["--vocab", "--codes"])
@pytest.mark.parametrize("kind", ["a socket", "a character device", "a folder"])
def test_a_vocabulary_or_codes_file_that_is_no_file_is_refused(
    specials: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str,
    kind: str,
) -> None:  # fmt: skip
    """``--codes /dev/zero`` read until memory ran out (killed); a socket said "No such device
    or address". A folder is GPT-2's two files to --vocab, so only --codes refuses it."""
    if flag == "--vocab" and kind == "a folder":
        return
    src = tmp_path / "in.txt"
    src.write_text("hello")
    extra = ["--pattern", "gpt2"] if flag == "--vocab" else ["--mode", "word"]
    assert main(["encode", str(src), flag, specials[kind], *extra]) == 1
    assert capsys.readouterr().err == (
        f"streamcodec: error: {flag} {specials[kind]}: {kind}, not a file\n"
    )


@pytest.mark.parametrize("command", ["encode", "count", "decode", "verify", "explain", "train",
                                     "split"])  # fmt: skip
@pytest.mark.parametrize("kind", ["a socket", "a folder"])
def test_every_command_refuses_an_input_that_is_no_file(
    specials: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
    kind: str,
) -> None:  # fmt: skip
    """What cannot be read as a stream is refused in one line naming it, before any work (a
    FIFO is read: tests/test_cli_reliability.py)."""
    extra = {"train": ["--vocab-size", "300", "-o", str(tmp_path / "v.tiktoken")],
             "split": ["--max-tokens", "5", "-o", str(tmp_path / "windows")]}  # fmt: skip
    assert main([command, specials[kind], *extra.get(command, [])]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"streamcodec: error: {specials[kind]}: ") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "sock"]


def test_explain_refuses_an_input_without_end(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``explain /dev/zero`` held it whole until memory ran out."""
    import streamcodec.cli.explain as explain

    monkeypatch.setattr(explain, "MAX_TEXT", 1 << 20)
    assert main(["explain", "/dev/zero"]) == 1
    assert capsys.readouterr().err == (
        "streamcodec: error: explain reads its input whole: /dev/zero holds more than 1 MiB of "
        "text; explain a part (head -c 1000000 FILE | streamcodec explain -)\n"
    )


def test_a_vocab_folder_named_with_a_trailing_slash_names_the_encoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--vocab folder/`` (as a shell completes a folder's name) named the encoding "" once
    its name was taken with ``os.path`` instead of ``Path(...).stem``: "into 3 tokens ()"."""
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    folder = tmp_path / "myvocab"
    save_vocabulary(Vocabulary({bytes([b]): b for b in range(256)}), folder / "tokenizer.json")
    src = tmp_path / "x.txt"
    src.write_text("abc")
    for vocab in (str(folder), f"{folder}{os.sep}"):
        out = tmp_path / "x.ids"
        assert main(["encode", "--vocab", vocab, str(src), "-o", str(out)]) == 0
        assert "into 3 tokens (myvocab)" in capsys.readouterr().err, vocab
