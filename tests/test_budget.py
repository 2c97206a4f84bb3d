"""Offsets, token budgets (count up to a limit, truncate, split) against ``encode``.

Property tests on the real vocabularies (the ``real_encoding`` fixture) with texts made to break
tokenizers (fuzz.strategies: emoji split over tokens, surrogates, special tokens, long runs),
the stream variants under adversarial chunking (cut anywhere, also inside a character's bytes).
"""

from __future__ import annotations

import functools
import io
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.strategies import SPECIALS, texts
from streamcodec import Encoding
from streamcodec.stream.windows import Window
from streamcodec.text.unicode import replace_lone_surrogates
from streamcodec.vocab import BYTE_MODE_PATTERN

examples = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
cuts = st.lists(st.integers(min_value=0, max_value=5_000), max_size=10)
any_text = texts(specials=SPECIALS, surrogates=True)
valid_text = texts(specials=SPECIALS)


def chunked(data: str | bytes, positions: list[int]) -> list[str | bytes]:
    bounds = [0, *sorted({p % (len(data) + 1) for p in positions}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def group_starts(enc: Encoding, ids: list[int]) -> list[int]:
    """Indexes of the tokens that start between characters, and ``len(ids)``."""
    data = enc.decode_tokens_bytes(ids)
    return [i for i, b in enumerate(data) if not 0x80 <= b[0] < 0xC0] + [len(ids)]


# ---------------------------------------------------------------------- offsets


@examples
@given(text=any_text)
def test_offsets_slice_back_to_each_token(real_encoding: Encoding, text: str) -> None:
    enc = real_encoding
    ids, offsets = enc.encode_with_offsets(text, allowed_special="all")
    assert ids == enc.encode(text, allowed_special="all")
    ends = [*offsets, len(text)]
    assert offsets == sorted(offsets) and all(0 <= o <= len(text) for o in offsets)
    starts = group_starts(enc, ids)
    for i, j in itertools.pairwise(starts):
        # A token starting inside a character has that character's offset, within the group.
        assert all(ends[i] <= o < ends[j] for o in offsets[i + 1 : j])
        piece = replace_lone_surrogates(text[ends[i] : ends[j]])
        assert piece == enc.decode(ids[i:j], errors="strict")


@examples
@given(text=any_text)
def test_byte_offsets(real_encoding: Encoding, text: str) -> None:
    ids, offsets = real_encoding.encode_with_offsets(text, allowed_special="all", unit="byte")
    data = replace_lone_surrogates(text).encode("utf-8")
    for token, offset in zip(real_encoding.decode_tokens_bytes(ids), offsets, strict=True):
        assert data[offset : offset + len(token)] == token


@examples
@given(text=valid_text)
def test_char_offsets_equal_tiktoken_decode_with_offsets(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    enc, twin = real_pair
    ids, offsets = enc.encode_with_offsets(text, disallowed_special=())
    assert twin.decode_with_offsets(ids) == (text, offsets)


@examples
@given(
    text=valid_text, positions=cuts, as_bytes=st.booleans(), unit=st.sampled_from(["char", "byte"])
)
def test_stream_offsets_equal_whole_text(
    real_encoding: Encoding, text: str, positions: list[int], as_bytes: bool, unit: str
) -> None:
    enc = real_encoding
    source = chunked(text.encode("utf-8") if as_bytes else text, positions)
    pairs = list(enc.iter_encode_with_offsets(source, disallowed_special=(), unit=unit))  # type: ignore[arg-type]
    ids, offsets = enc.encode_with_offsets(text, disallowed_special=(), unit=unit)  # type: ignore[arg-type]
    assert pairs == list(zip(ids, offsets, strict=True))


def test_offsets_of_surrogates_index_the_callers_string(real_encoding: Encoding) -> None:
    text = "a\ud83d\ude00b\udc80c"  # a pair (one character to encode) and a lone surrogate
    ids, offsets = real_encoding.encode_with_offsets(text)
    assert real_encoding.decode(ids) == "a😀b\ufffdc"
    assert [offsets[i] for i in group_starts(real_encoding, ids)[:-1]][-1] <= len(text) - 1
    assert text[offsets[-1] :].endswith("c")


def test_offset_options_are_checked(real_encoding: Encoding) -> None:
    with pytest.raises(ValueError, match="unit must be 'char' or 'byte'"):
        real_encoding.encode_with_offsets("x", unit="chars")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use unit='byte'"):
        list(real_encoding.iter_encode_with_offsets(b"x", errors="surrogateescape"))


# ---------------------------------------------------------------------- count_tokens(limit)


@examples
@given(text=any_text, limit=st.integers(0, 40), positions=cuts)
def test_count_with_limit(
    real_encoding: Encoding, text: str, limit: int, positions: list[int]
) -> None:
    n = len(real_encoding.encode(text, allowed_special="all"))
    got = real_encoding.count_tokens(chunked(text, positions), allowed_special="all", limit=limit)
    assert got == (n if n <= limit else None)


class CountingReader(io.RawIOBase):
    """A binary file of ``size`` bytes of English-like text that counts what was read."""

    def __init__(self, size: int) -> None:
        self.data = io.BytesIO(b"the quick brown fox jumps over it. " * (size // 35))
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = self.data.readinto(buffer)
        self.read_bytes += n
        return n


def test_count_stops_reading_past_the_limit(real_encoding: Encoding, tmp_path: Path) -> None:
    reader = CountingReader(20_000_000)
    assert real_encoding.count_tokens(io.BufferedReader(reader), limit=1000) is None
    assert reader.read_bytes <= 4 << 20  # a few blocks of the 20 MB

    read: list[int] = []

    def chunks() -> Iterator[str]:
        for i in range(10_000):
            read.append(i)
            yield "hello world " * 100

    assert real_encoding.count_tokens(chunks(), limit=500) is None
    assert len(read) < 10
    path = tmp_path / "small.txt"
    path.write_text("hello world", encoding="utf-8")
    assert real_encoding.count_tokens(path, limit=2) == 2


# ---------------------------------------------------------------------- truncate


@examples
@given(text=any_text, max_tokens=st.integers(0, 30))
def test_truncate_is_the_longest_exact_prefix(
    real_encoding: Encoding, text: str, max_tokens: int
) -> None:
    enc = real_encoding
    policy = {"allowed_special": "all"}
    ids, offsets = enc.encode_with_offsets(text, **policy)  # type: ignore[arg-type]
    prefix = enc.truncate(text, max_tokens, **policy)  # type: ignore[arg-type]
    assert text.startswith(prefix)
    got = enc.encode(prefix, **policy)  # type: ignore[arg-type]
    assert got == ids[: len(got)] and len(got) <= max_tokens
    if len(ids) <= max_tokens:
        assert prefix == text
        return
    # No longer prefix that ends between characters, within the budget, would do.
    for k in group_starts(enc, ids):
        if len(got) < k <= max_tokens:
            assert enc.encode(text[: offsets[k]], **policy) != ids[:k]  # type: ignore[arg-type]


def test_truncate_examples(real_encoding: Encoding) -> None:
    enc = real_encoding
    assert enc.truncate("", 3) == "" and enc.truncate("hello", 0) == ""
    assert enc.truncate("hello world", 1) == "hello"
    assert enc.truncate("🦙🦙", 2) == ""  # one llama is three tokens: no cut fits in two
    with pytest.raises(ValueError, match="max_tokens=-1: expected a whole number of at least 0"):
        enc.truncate("x", -1)
    with pytest.raises(TypeError, match="max_tokens='3'"):  # it failed comparing str and int
        enc.truncate("x", "3")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- split


def check_windows(enc: Encoding, text: str, windows: list[Window], max_tokens: int) -> None:
    """Windows without overlap: each exact alone, joined the text and its ids."""
    whole = replace_lone_surrogates(text)
    assert "".join(w.text for w in windows) == whole
    assert [i for w in windows for i in w.ids] == enc.encode(text, allowed_special="all")
    position = 0
    for w in windows:
        assert 0 < len(w.ids) <= max_tokens and w.start == position
        assert enc.encode(w.text, allowed_special="all") == w.ids
        position += len(w.text)


@examples
@given(text=any_text, max_tokens=st.integers(4, 12), positions=cuts)
def test_split_windows_join_to_the_whole(
    real_encoding: Encoding, text: str, max_tokens: int, positions: list[int]
) -> None:
    source = chunked(text, positions)
    windows = list(real_encoding.split(source, max_tokens, allowed_special="all"))
    check_windows(real_encoding, text, windows, max_tokens)


@examples
@given(text=valid_text, max_tokens=st.integers(4, 12), overlap=st.integers(0, 11), positions=cuts)
def test_split_with_overlap(
    real_encoding: Encoding, text: str, max_tokens: int, overlap: int, positions: list[int]
) -> None:
    overlap %= max_tokens
    enc = real_encoding
    ids, offsets = enc.encode_with_offsets(text, allowed_special="all")
    source = chunked(text.encode("utf-8"), positions)  # bytes cut inside characters too
    windows = list(enc.split(source, max_tokens, overlap=overlap, allowed_special="all"))
    covered = 0  # tokens covered so far
    for w in windows:
        assert text[w.start : w.start + len(w.text)] == w.text
        assert enc.encode(w.text, allowed_special="all") == w.ids and len(w.ids) <= max_tokens
        first = offsets.index(w.start) if w.ids else len(ids)
        assert ids[first : first + len(w.ids)] == w.ids
        assert covered - overlap <= first <= covered < first + len(w.ids)
        covered = first + len(w.ids)
    assert covered == len(ids)


@functools.cache
def other_cuts(pattern: str) -> Encoding:
    """cl100k's ranks with another pattern: the stream finds its cuts otherwise."""
    base = streamcodec.get_encoding("cl100k_base")
    return Encoding(
        f"cl100k-{pattern}",
        pat_str=pattern,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens=base.special_tokens,
    )


@examples
@given(
    pattern=st.sampled_from([BYTE_MODE_PATTERN, r"\S+|\s+", r"[^\n]+|\n"]),
    text=any_text,
    max_tokens=st.integers(4, 12),
    positions=cuts,
)
def test_split_with_unproven_patterns_and_byte_mode(
    pattern: str, text: str, max_tokens: int, positions: list[int]
) -> None:
    enc = other_cuts(pattern)
    windows = list(enc.split(chunked(text, positions), max_tokens, allowed_special="all"))
    check_windows(enc, text, windows, max_tokens)


def test_split_a_file_with_long_pieces(real_encoding: Encoding, tmp_path: Path) -> None:
    # Long runs have no safe cut inside: windows are cut between their tokens.
    text = ("word " * 3000 + "a" * 5000 + "\n" + " " * 3000 + "🦙" * 400 + "1234567" * 300) * 2
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    seen: list[int] = []
    windows = list(real_encoding.split(path, 100, progress=seen.append))
    check_windows(real_encoding, text, windows, 100)
    assert sum(seen) == len(text.encode("utf-8"))
    assert sum(len(w.ids) >= 75 for w in windows) >= 0.9 * len(windows)  # near the budget


def test_split_options_are_checked(real_encoding: Encoding) -> None:
    for max_tokens, overlap, said in [
        (0, 0, "max_tokens=0: expected a whole number of at least 1"),
        (3, 3, "overlap=3: expected below max_tokens=3"),
        (3, -1, "overlap=-1: expected a whole number of at least 0"),
    ]:
        with pytest.raises(ValueError, match=said):
            list(real_encoding.split("x", max_tokens, overlap=overlap))
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        list(real_encoding.split(b"x", 3, errors="surrogateescape"))
    with pytest.raises(ValueError, match="disallowed special token"):
        list(real_encoding.split("a <|endoftext|>", 3))
    assert list(real_encoding.split("", 3)) == []
    # A character of three tokens cannot be cut, nor fit in two tokens.
    with pytest.raises(ValueError, match="offset 2 is made of more than max_tokens=2 tokens"):
        list(real_encoding.split("ab🦙", 2))
