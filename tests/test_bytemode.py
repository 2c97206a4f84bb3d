"""Byte mode: no pre-tokenization, the whole text is one piece (minbpe's BasicTokenizer)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding
from streamcodec.pieces.bytemode import ByteMode
from streamcodec.reference import merge_steps, rank_merge, train_naive
from streamcodec.vocab import BYTE_MODE_PATTERN, GPT2_PATTERN

BYTES = {bytes([b]): b for b in range(256)}
# The article's table: Z = aa (256), Y = ab (257), X = ZY (258).
ARTICLE_RANKS = BYTES | {b"aa": 256, b"ab": 257, b"aaab": 258}


def byte_mode(ranks: dict[bytes, int], specials: dict[str, int] | None = None) -> Encoding:
    return Encoding(
        "bytes", pat_str=BYTE_MODE_PATTERN, mergeable_ranks=ranks, special_tokens=specials or {}
    )


def test_article_example_encodes_to_XdXac() -> None:
    enc = byte_mode(ARTICLE_RANKS)
    assert enc.encode("aaabdaaabac") == [258, ord("d"), 258, ord("a"), ord("c")]
    # The rounds of the article: each rank merges all its occurrences, left to right.
    steps = [b" ".join(parts).decode() for parts in merge_steps(b"aaabdaaabac", ARTICLE_RANKS)]
    assert "aa a b d aa a b a c" in steps  # ZabdZabac
    assert "aa ab d aa ab a c" in steps  # ZYdZYac
    assert steps[-1] == "aaab d aaab a c"  # XdXac


def test_merges_cross_spaces_and_lines() -> None:
    ranks = BYTES | {b" t": 256, b"e t": 257, b".\n": 258, b".\nT": 259}
    text = "the tree.\nThe end"
    ids = byte_mode(ranks).encode(text)
    assert [ranks[b"e t"], ranks[b".\nT"]] == [i for i in ids if i >= 256]
    split = Encoding("pretokenized", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert all(i < 256 or i == ranks[b" t"] for i in split.encode(text))
    assert byte_mode(ranks).decode(ids) == text


def test_special_tokens_still_cut_the_text() -> None:
    enc = byte_mode(ARTICLE_RANKS, {"<|end|>": 259})
    ids = enc.encode("aa<|end|>ab", allowed_special="all")
    assert ids == [256, 259, 257]
    assert enc.encode("") == []


def test_long_input_is_one_piece() -> None:
    # One piece of 4,000 bytes with no safe cut: the backtracking encoder takes it whole.
    ranks = BYTES | {b"ab": 256, b"abab": 257, b"ba": 258}
    text = "ab" * 2000 + "a"
    ids = byte_mode(ranks).encode(text)
    assert ids == [257] * 1000 + [ord("a")]
    assert ByteMode(ranks).cuts(text.encode()) == []  # 'ab' and 'ba' are inside tokens


@st.composite
def vocabularies(draw: st.DrawFn) -> dict[bytes, int]:
    """Random ranks over a small alphabet: most new tokens join two existing ones; some are
    arbitrary strings, which their own merges may never build (unreachable tokens)."""
    tokens = [b"a", b"b", b" ", b"\n", "é".encode()]
    ranks = dict(BYTES)
    for _ in range(draw(st.integers(0, 30))):
        if draw(st.integers(0, 5)):
            merged = draw(st.sampled_from(tokens)) + draw(st.sampled_from(tokens))
        else:
            merged = draw(st.text(alphabet="ab \né", min_size=2, max_size=5)).encode()
        if merged not in ranks:
            ranks[merged] = len(ranks)
            tokens.append(merged)
    return ranks


TEXTS = st.text(alphabet="ab \né", max_size=60)


@settings(max_examples=200, deadline=None)
@given(ranks=vocabularies(), text=TEXTS)
def test_byte_mode_is_rank_merge_of_the_whole_text(ranks: dict[bytes, int], text: str) -> None:
    ids = byte_mode(ranks).encode_ordinary(text)
    assert ids == (rank_merge(text.encode(), ranks) if text else [])
    assert byte_mode(ranks).decode(ids) == text
    for whole_piece in (True, False):
        expected = rank_merge(text.encode(), ranks, whole_piece=whole_piece) if text else []
        assert ByteMode(ranks).encode(text.encode(), whole_piece=whole_piece) == expected


@settings(max_examples=100, deadline=None)
@given(ranks=vocabularies(), data=st.binary(max_size=40))
def test_encode_bytes_in_byte_mode(ranks: dict[bytes, int], data: bytes) -> None:
    ids = byte_mode(ranks).encode_bytes(data)
    assert ids == (rank_merge(data, ranks) if data else [])
    assert byte_mode(ranks).decode_bytes(ids) == data


@settings(max_examples=200, deadline=None)
@given(ranks=vocabularies(), chunks=st.lists(TEXTS, min_size=1, max_size=5))
def test_a_stream_cutting_at_safe_cuts_gives_the_whole_text_ids(
    ranks: dict[bytes, int], chunks: list[str]
) -> None:
    """Emit what lies before the last safe cut after every chunk, the rest at the end."""
    mode = ByteMode(ranks)
    ids: list[int] = []
    pending = ""
    emitted = False
    for chunk in chunks:
        pending += chunk
        cut = mode.last_cut(pending)
        if cut:
            ids += mode.encode(pending[:cut].encode(), whole_piece=False)
            pending = pending[cut:]
            emitted = True
    ids += mode.encode(pending.encode(), whole_piece=not emitted) if pending else []
    text = "".join(chunks)
    assert ids == (rank_merge(text.encode(), ranks) if text else [])


def test_safe_cuts_keep_streams_and_pieces_short_with_real_merges() -> None:
    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    mode = ByteMode(ranks)
    for text in samples().values():
        data = text[:50_000].encode()
        cuts = mode.cuts(data)
        assert max(b - a for a, b in itertools.pairwise([0, *cuts, len(data)])) < 100
        sample = data[:1000]
        assert mode.encode(sample) == rank_merge(sample, ranks)


tiktoken = pytest.importorskip("tiktoken")


@settings(max_examples=100, deadline=None)
@given(ranks=vocabularies(), text=TEXTS)
def test_byte_mode_equals_tiktoken(ranks: dict[bytes, int], text: str) -> None:
    theirs = tiktoken.Encoding(
        "bytes", pat_str=BYTE_MODE_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    assert byte_mode(ranks).encode_ordinary(text) == theirs.encode_ordinary(text)


def test_command_line_bytes_mode() -> None:
    text = "def f():\r\n    return 1\r\n"
    done = subprocess.run(
        [sys.executable, "-m", "streamcodec", "encode", "-", "--mode", "bytes"],
        input=text.encode(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    enc = streamcodec.get_encoding("cl100k_base")
    ids = [int(token) for token in done.stdout.split()]
    assert ids == rank_merge(text.encode(), enc.mergeable_ranks)
    assert ids != enc.encode(text)  # cl100k_base cuts "    return" into "   " and " return"


def test_article_example_trains_in_byte_mode() -> None:
    enc = streamcodec.train("aaabdaaabac", vocab_size=259, pat_str="bytes", min_frequency=1)
    assert enc.pat_str == BYTE_MODE_PATTERN
    assert {token: rank for token, rank in enc.mergeable_ranks.items() if rank >= 256} == {
        b"aa": 256,  # Z
        b"ab": 257,  # Y: ties with Za (2 each); (97, 98) < (256, 97)
        b"aaab": 258,  # X = ZY
    }
    assert enc.encode("aaabdaaabac") == [258, ord("d"), 258, ord("a"), ord("c")]


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet="ab \n", max_size=80), merges=st.integers(0, 20))
def test_byte_mode_training_equals_the_naive_trainer(text: str, merges: int) -> None:
    enc = streamcodec.train(text, vocab_size=256 + merges, pat_str=BYTE_MODE_PATTERN)
    assert enc.mergeable_ranks == train_naive(
        text, 256 + merges, pat_str=BYTE_MODE_PATTERN, min_frequency=2
    )
    assert enc.encode(text) == (rank_merge(text.encode(), enc.mergeable_ranks) if text else [])


def test_command_line_trains_and_encodes_in_byte_mode(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("aaabdaaabac", encoding="utf-8")
    vocab = tmp_path / "bytes.tiktoken"
    cli = [sys.executable, "-m", "streamcodec"]
    train = [*cli, "train", str(corpus), "--mode", "bytes"]
    done = subprocess.run(
        [*train, "--vocab-size", "259", "--min-frequency", "1", "-o", str(vocab), "-q"],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    encoded = subprocess.run(
        [*cli, "encode", str(corpus), "--mode", "bytes", "--vocab", str(vocab)],
        capture_output=True,
        timeout=120,
    )
    assert encoded.returncode == 0, encoded.stderr
    assert [int(i) for i in encoded.stdout.split()] == [258, ord("d"), 258, ord("a"), ord("c")]
    mixed = subprocess.run(
        [*train, "--pattern", "gpt2", "--vocab-size", "300", "-o", str(vocab)],
        capture_output=True,
        timeout=120,
    )
    assert mixed.returncode == 1 and b"leave out --pattern" in mixed.stderr


SPECIALS = {"<|end|>": 100_000}


@settings(max_examples=150, deadline=None)
@given(
    ranks=vocabularies(),
    parts=st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "ab a", "<|end|>", "\ud800"])),
    cuts=st.lists(st.integers(0, 200), max_size=8),
)
def test_stream_in_byte_mode_equals_encode(
    ranks: dict[bytes, int], parts: list[str], cuts: list[int]
) -> None:
    enc = byte_mode(ranks, SPECIALS)
    text = "".join(parts)
    bounds = [0, *sorted(c for c in cuts if c < len(text)), len(text)]
    stream = enc.stream_encoder(allowed_special="all")
    ids = [i for a, b in itertools.pairwise(bounds) for i in stream.feed(text[a:b])]
    assert ids + stream.close() == enc.encode(text, allowed_special="all")


def test_stream_in_byte_mode_holds_little_on_real_text() -> None:
    cl100k = streamcodec.get_encoding("cl100k_base")
    enc = byte_mode(cl100k.mergeable_ranks)
    text = "".join(text[:30_000] for text in samples().values())
    stream = enc.stream_encoder()
    ids, held = [], []
    for start in range(0, len(text), 1000):
        ids += stream.feed(text[start : start + 1000])
        held.append(stream.pending)
    assert ids + stream.close() == enc.encode(text)
    assert max(held) < 200


def test_stream_in_byte_mode_holds_everything_when_nothing_splits() -> None:
    enc = byte_mode(BYTES | {b"aa": 256})
    stream = enc.stream_encoder()
    assert [stream.feed("a" * 100) for _ in range(10)] == [[]] * 10
    assert stream.pending == 1000
    assert stream.close() == [256] * 500


def test_stream_parts_do_not_take_the_whole_piece_rule() -> None:
    """'abc' is a token its own merges never build: only the whole text may be it."""
    enc = byte_mode(BYTES | {b"abc": 256})
    for chunks in (["z", "abc"], ["abc", "z"], ["abc"]):
        stream = enc.stream_encoder()
        ids = [i for chunk in chunks for i in stream.feed(chunk)] + stream.close()
        assert ids == enc.encode("".join(chunks))
    assert enc.encode("abc") == [256] and enc.encode("zabc") == [ord(c) for c in "zabc"]
