"""``streamcodec verify`` and ``streamcodec explain``, and the audits behind them."""

from __future__ import annotations

from pathlib import Path

import pytest

import streamcodec
from streamcodec import Encoding, get_encoding
from streamcodec.audit import audit_text, explain_piece
from streamcodec.cli import main
from streamcodec.vocab import GPT2_PATTERN

CLASSIC = "to,ke,ken,token,iz,at,io,ion,ation,ization,tokeniz"


def toy(*tokens: bytes, pattern: str = GPT2_PATTERN) -> Encoding:
    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens:
        ranks[token] = len(ranks)
    return Encoding("toy", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def test_audit_counts_what_it_checked() -> None:
    enc = get_encoding("cl100k_base")
    audit = audit_text(enc, "hello world, hello world\n")
    assert (audit.pieces, audit.distinct_pieces) == (6, 5)
    assert audit.tokens == len(enc.encode_ordinary("hello world, hello world\n"))
    assert audit.bytes == 25 and audit.mismatch is None and audit.tiktoken_equal is True


def test_audit_finds_the_first_differing_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    enc = toy(b"ab", b"abc")
    real = Encoding.encode_ordinary
    # A broken fast path: it forgets the last token of every text.
    monkeypatch.setattr(Encoding, "encode_ordinary", lambda self, text: real(self, text)[:-1])
    audit = audit_text(enc, "x abc abc")
    assert audit.mismatch is not None
    assert (audit.mismatch.index, audit.mismatch.offset, audit.mismatch.piece) == (2, 5, " abc")
    assert audit.tiktoken_equal is False


def test_whole_piece_rule() -> None:
    enc = toy(b"abc", b" a")  # "abc" is a token that no merge of a, b, c produces
    audit = audit_text(enc, "abc abc")
    assert audit.whole_piece_pieces == 1 and audit.mismatch is None


def test_explain_the_classic_example() -> None:
    enc = toy(*(t.encode() for t in CLASSIC.split(",")))
    e = explain_piece(b"tokenization", enc.mergeable_ranks)
    assert [s.merged for s in e.steps] == [None, *range(256, 266)]
    assert e.steps[-1].parts == [b"token", b"ization"]
    assert enc.decode_tokens_bytes(e.longest) == [b"tokeniz", b"ation"]
    assert e.differs and e.whole_piece is None


def test_explain_shows_repeated_merges() -> None:
    e = explain_piece(b"aaaa", {b"a": 0, b"aa": 1})
    assert [s.parts for s in e.steps][1:] == [[b"aa", b"a", b"a"], [b"aa", b"aa"]]
    assert [s.merged for s in e.steps] == [None, 1, 1] and not e.differs


def test_verify_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "mine.txt"
    src.write_text("Some text of mine, with 12345 digits and émoji 👍🏽.\n", encoding="utf-8")
    assert main(["verify", str(src)]) == 0
    out = capsys.readouterr().out
    assert "checked 58 bytes in 2 windows cut at safe cuts -> 20 tokens" in out
    assert "compared 58 bytes (all): 13 pieces (13 distinct)" in out
    assert "specification (regex pieces, reference.rank_merge): equal" in out
    assert "tiktoken built from the same vocabulary: equal" in out
    assert "100,256 mergeable tokens, 0 unreachable" in out
    if streamcodec.backend() == "native":
        assert "  pre-tokenizer: native scanner, pattern known as cl100k_base\n" in out


def test_verify_names_the_known_pattern_or_regex(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamcodec.formats import write_tiktoken
    from streamcodec.text.known_patterns import KNOWN_PATTERNS

    src, vocab = tmp_path / "mine.txt", tmp_path / "bytes.tiktoken"
    src.write_text("Llama's 12345 words\n", encoding="utf-8")
    write_tiktoken({bytes([b]): b for b in range(256)}, vocab)
    llama3 = next(k.pattern for k in KNOWN_PATTERNS if k.name == "llama3")
    for pattern, expected in (
        (llama3, "native scanner, pattern known as llama3"),
        (r"\S+|\s+", "regex"),
    ):
        assert main(["verify", str(src), "--vocab", str(vocab), "--pattern", pattern]) == 0
        line = capsys.readouterr().out.splitlines()[1]
        if streamcodec.backend() == "native":
            assert line.startswith(f"  pre-tokenizer: {expected}"), line
        else:
            assert line == "  pre-tokenizer: regex (the pure-Python backend)"


def test_verify_command_fails_on_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "mine.txt"
    src.write_text("one two three", encoding="utf-8")
    real = Encoding.encode_ordinary
    monkeypatch.setattr(Encoding, "encode_ordinary", lambda self, text: real(self, text)[::-1])
    assert main(["verify", str(src)]) == 1
    assert "MISMATCH at piece #0 (character 0) 'one'" in capsys.readouterr().out


def test_verify_streams_in_windows_and_samples_them(tmp_path: Path) -> None:
    """Regression (issue 22 §2): verify read the whole file (5 GB of RAM for 127 MB); it now
    reads windows cut at safe cuts, compares a sample after the first ``whole`` characters,
    and its counts match a whole-text audit."""
    from streamcodec.audit import audit_source

    enc = get_encoding("cl100k_base")
    text = "".join(f"line {i}: some words, numbers {i * 7919} and  spaces\n" for i in range(60000))
    src = tmp_path / "big.txt"
    src.write_text(text, encoding="utf-8")
    read: list[int] = []
    every = audit_source(enc, src, every=1, progress=read.append)
    assert every.windows > 2 and every.compared_windows == every.windows
    assert every.tokens == len(enc.encode_ordinary(text)) and sum(read) == every.bytes
    whole = audit_text(enc, text)
    assert (every.pieces, every.bytes, every.mismatch) == (whole.pieces, whole.bytes, None)
    sampled = audit_source(enc, src, whole=0, every=2)
    assert sampled.tokens == every.tokens
    assert 0 < sampled.compared_windows < sampled.windows == every.windows
    assert sampled.compared_bytes < sampled.bytes


def test_verify_finds_a_mismatch_in_a_later_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamcodec.audit import audit_source

    enc = get_encoding("cl100k_base")
    src = tmp_path / "big.txt"
    src.write_text("hello world\n" * 200_000 + "zebra", encoding="utf-8")
    real = Encoding.encode_ordinary
    wrong = real(enc, "zebra")[0]  # the fast encoder gets only this token wrong
    broken = lambda self, text: [1 if i == wrong else i for i in real(self, text)]  # noqa: E731
    monkeypatch.setattr(Encoding, "encode_ordinary", broken)
    audit = audit_source(enc, src, every=1)
    assert audit.mismatch is not None and audit.mismatch.offset == 2_400_000
    assert audit.mismatch.index == 600_000 and audit.tiktoken_equal is False


def test_explain_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--text", "tokenization", "--tokens", CLASSIC]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "piece 'tokenization': merges in rank order"
    assert out[-3].split() == ["token|ization", "merge", "ization", "(rank", "265)"]
    assert "tokeniz|ation" in out[-1] and "DIFFERS" in out[-1]
    assert main(["explain", "--text", "Hello aaaa", "-e", "cl100k_base"]) == 0
    out = capsys.readouterr().out
    assert "piece '␣aaaa'" in out and "DIFFERS" in out and "(same)" in out


def test_verify_a_vocabulary_file_with_an_unreachable_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamcodec.formats import write_tiktoken

    vocab = tmp_path / "toy.tiktoken"
    write_tiktoken({bytes([b]): b for b in range(256)} | {b"ab": 256, b"xyz": 257}, vocab)
    src = tmp_path / "mine.txt"
    src.write_text("xyz ab xyz", encoding="utf-8")
    assert main(["verify", str(src), "--vocab", str(vocab), "--pattern", "gpt2"]) == 0
    out = capsys.readouterr().out
    assert "whole-piece rule decided 1 distinct pieces" in out
    assert "258 mergeable tokens, 1 unreachable by their own merges, e.g. b'xyz'" in out
