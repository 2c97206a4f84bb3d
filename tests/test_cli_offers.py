"""The command line offers only what works (issue 22 §3): each option in a --help is accepted."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from streamcodec.cli import build_parser


def _help(command: str) -> str:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return " ".join(commands.choices[command].format_help().split())


def test_verify_offers_no_word_mode() -> None:
    """verify refused --mode word and --codes, which its help offered."""
    helped = _help("verify")
    assert "{bytelevel,bytes}" in helped and "--codes" not in helped and "word" not in helped
    with pytest.raises(SystemExit):
        build_parser().parse_args(["verify", "x", "--mode", "word"])


def test_split_offers_no_jobs_and_count_no_jsonl() -> None:
    """split refused the --jobs its help offered; count's and split's --jobs help named -f
    jsonl, which they do not have."""
    assert "--jobs" not in _help("split")
    assert "--jobs" in _help("count") and "jsonl" not in _help("count")
    assert "not with -f jsonl" in _help("encode")


@pytest.mark.parametrize("suffix", ["npy", "u32", "u16", "jsonl"])
def test_the_output_suffix_gives_the_format(tmp_path: Path, suffix: str) -> None:
    """``encode x.txt -o x.npy`` wrote decimal ids; ``decode x.npy`` failed on its magic."""
    from streamcodec.cli import main

    src = tmp_path / "x.txt"
    src.write_text("hello world\nagain\n")
    out = tmp_path / f"x.{suffix}"
    assert main(["encode", str(src), "-o", str(out), "-q"]) == 0
    explicit = tmp_path / f"explicit.{suffix}"
    assert main(["encode", str(src), "-o", str(explicit), "-f", suffix, "-q"]) == 0
    assert out.read_bytes() == explicit.read_bytes()
    back = tmp_path / "back.txt"
    assert main(["decode", str(out), "-o", str(back)]) == 0
    assert back.read_text() == "hello world\nagain\n"  # jsonl: one line per line, as read


def test_decode_of_npy_as_ids_says_which_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamcodec.cli import main

    src, out = tmp_path / "x.txt", tmp_path / "x.npy"
    src.write_text("hello")
    assert main(["encode", str(src), "-o", str(out), "-q"]) == 0
    assert main(["decode", str(out), "-f", "ids"]) == 1
    assert f"{out} is a NumPy .npy file: pass -f npy" in capsys.readouterr().err


def test_u16_refuses_an_id_past_65535(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from streamcodec.cli import main

    src = tmp_path / "x.txt"
    src.write_text("<|endoftext|>")
    args = ["encode", str(src), "-o", str(tmp_path / "x.u16"), "--allowed-special", "all"]
    assert main(args) == 1
    assert "id 100257 does not fit in 16 bits" in capsys.readouterr().err
    assert main([*args[:-2], "-e", "gpt2", "--allowed-special", "all", "-q"]) == 0
    assert (tmp_path / "x.u16").read_bytes() == (50256).to_bytes(2, "little")


def test_explain_reads_a_file_or_stdin_and_text_takes_a_literal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``explain FILE`` and ``explain -`` explained the strings "FILE" and "-"."""
    import io

    from streamcodec.cli import main

    src = tmp_path / "notes.txt"
    src.write_text("hello world")
    assert main(["explain", str(src)]) == 0
    from_file = capsys.readouterr().out
    assert "piece 'hello'" in from_file and "piece '␣world'" in from_file
    assert main(["explain", "--text", "hello world"]) == 0
    assert capsys.readouterr().out == from_file
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"hello world")))
    assert main(["explain", "-"]) == 0
    assert capsys.readouterr().out == from_file
    assert main(["explain", "hello world"]) == 1
    assert "hello world: no such file; to explain the text itself, pass --text 'hello world'" in (
        capsys.readouterr().err
    )
    assert main(["explain", str(src), "--text", "x"]) == 1
    assert "(one)" in capsys.readouterr().err


def test_decode_offers_no_pattern() -> None:
    """decode refused the --pattern its help offered (ids need no pre-tokenizer)."""
    assert "--pattern" not in _help("decode") and "--pattern" in _help("count")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["decode", "x", "--pattern", "gpt2"])
