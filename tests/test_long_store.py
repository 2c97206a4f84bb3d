"""The word cache's store for long pieces (``engine/_long_store.h``): pieces of more than 16 ids
or 56 bytes, up to 256 bytes, which the sets' fixed entries cannot hold. Its answers must equal
the core's merge of regex's pieces (and tiktoken's ids) with the store absent, of one segment
(every record soon replaced), of a few, and large; it must answer the pieces only it can hold,
resist a scan once full, and stay within ``cache_bytes``. Skipped unless the compiled code is
built.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec.pieces import LONG_PIECE
from streamcodec.text import native
from streamcodec.vocab import CL100K_PATTERN, O200K_PATTERN
from tests.conftest import tiktoken_twin

core_module = pytest.importorskip("streamcodec.pieces._core")
fused_module = pytest.importorskip("streamcodec.engine._fused")
pytestmark = pytest.mark.skipif(
    native.native_scanner(CL100K_PATTERN) is None, reason="the native scanner is not built"
)

# No store (0, 32 KiB), a store of one segment (40 KiB), of a few (160 KiB), a large one.
SIZES = (0, 32 << 10, 40 << 10, 160 << 10, 32 << 20)

# Characters of several tokens each in cl100k_base (CJK, Hangul, emoji, Devanagari, Thai), and
# some of one token, so pieces of 17 to 300 bytes have 6 to 200 ids.
WIDE = "中文字漢語한국어문장👍🏽🤖🇫🇷नमस्तेภาษาไทย"
NARROW = "abcxyzéüЖж"
# Letters of 2-3 tokens each in both encodings (Hangul syllables, CJK Extension A): a word of
# them is one piece.
LETTERS = "".join(chr(0xAC00 + 37 * k) + chr(0x3400 + 13 * k) for k in range(60))


@functools.cache
def _core() -> Any:
    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    return core_module.Core(ranks, long_piece=LONG_PIECE)


def _fused(pattern: str, cache_bytes: int) -> Any:
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    return fused_module.FusedEncoder(_core(), scanner.number, cache_bytes=cache_bytes)


def _expected(pattern: str, text: str) -> list[int]:
    return list(_core().encode_pieces(regex.findall(pattern, text)))


def _long_words(count: int, seed: int, lengths: range = range(9, 40)) -> list[str]:
    """Words of LETTERS after a space: one piece each, of 28 bytes or more and, nearly always,
    more than 16 ids (the sets' most; the first level holds 15 bytes)."""
    rng = random.Random(seed)
    return [" " + "".join(rng.choices(LETTERS, k=rng.choice(lengths))) for _ in range(count)]


def _hits(fused: Any, text: str) -> int:
    before = fused.cache_info()["hits"]
    fused.encode(text, 0, len(text), "strict")
    return int(fused.cache_info()["hits"] - before)


def test_pieces_about_every_bound_are_stored_and_served_exactly() -> None:
    """Pieces of 17 to 300 bytes (every remainder modulo 8, about the sets' 56 bytes and the
    store's 256), pieces that differ only in their last byte or by one character at the end,
    each met three times: the same ids from every size of store, cold and warm."""
    rng = random.Random(1)
    stems = ["".join(rng.choices(WIDE + NARROW, k=n)) for n in range(5, 100, 3)]
    pieces = [" " + stem + tail for stem in stems for tail in ("", "a", "b", "ab", "中", "中a")]
    pieces += [" " + "中" * n for n in range(5, 100)]  # 3 bytes a character: every length
    text = "".join(rng.sample(pieces * 3, 3 * len(pieces)))
    for pattern in (CL100K_PATTERN, O200K_PATTERN):
        expected = _expected(pattern, text)
        for size in SIZES:
            fused = _fused(pattern, size)
            for _ in range(2):
                assert fused.encode(text, 0, len(text), "strict") == expected, size
                assert fused.count(text, 0, len(text), "strict", -1) == len(expected)
                array = fused.encode_array(text, 0, len(text), "strict")
                assert list(memoryview(array)) == expected
            assert fused.cache_info()["bytes"] <= size


def test_the_store_answers_the_pieces_only_it_can_hold() -> None:
    """Each piece has more than 16 ids and 15 bytes: neither the first level nor the sets hold
    it, so every hit of a second pass is the store's, and the ids are tiktoken's."""
    words = [w for w in _long_words(300, seed=2) if len(_core().encode_pieces([w])) > 16]
    text = "".join(words)
    encoding = streamcodec.get_encoding("cl100k_base")
    expected = tiktoken_twin(encoding).encode_ordinary(text)
    pieces = regex.findall(CL100K_PATTERN, text)
    assert pieces == words and len(pieces) > 250
    fused = _fused(CL100K_PATTERN, 32 << 20)
    assert fused.encode(text, 0, len(text), "strict") == expected
    assert _hits(fused, text) == len(pieces)  # all of them, from the store
    assert fused.count(text, 0, len(text), "strict", -1) == len(expected)
    assert _hits(_fused(CL100K_PATTERN, 32 << 10), text) == 0  # no store at this size


def test_pieces_longer_than_the_store_holds_are_merged_each_time() -> None:
    text = " " + "中" * 86 + " " + "中" * 85  # 259 and 256 bytes
    fused = _fused(CL100K_PATTERN, 1 << 20)
    for _ in range(3):
        assert fused.encode(text, 0, len(text), "strict") == _expected(CL100K_PATTERN, text)
    assert _hits(fused, text) == 1  # the 256-byte piece only


def test_a_scan_of_unseen_long_pieces_does_not_flush_the_ones_that_repeat() -> None:
    # 160 KiB: a store of four segments (16 KiB); the scan alone is some 10 times as much.
    fused = _fused(CL100K_PATTERN, 160 << 10)
    first_scan = "".join(_long_words(2000, seed=3))
    fused.encode(first_scan, 0, len(first_scan), "strict")  # the store has been round once
    common = "".join(_long_words(20, seed=4, lengths=range(9, 16)))  # a quarter of the store
    for _ in range(6):  # admitted on a second miss; the doorkeeper forgets some: a few chances
        fused.encode(common, 0, len(common), "strict")
    warm = _hits(fused, common)
    assert warm >= 18
    scan = "".join(_long_words(2000, seed=5))
    assert fused.encode(scan, 0, len(scan), "strict") == _expected(CL100K_PATTERN, scan)
    assert _hits(fused, common) >= 0.9 * warm
    assert fused.cache_info()["bytes"] <= 160 << 10


@pytest.mark.parametrize("size", [1 << 15, 40 << 10, 100_000, 160 << 10, 1 << 20, 5_000_000])
def test_the_cache_with_its_store_stays_within_its_bound(size: int) -> None:
    fused = _fused(O200K_PATTERN, size)
    for seed in range(3):
        text = "".join(_long_words(3000, seed=10 + seed))
        assert fused.encode(text, 0, len(text), "strict") == _expected(O200K_PATTERN, text)
    assert fused.cache_info()["bytes"] <= size


@functools.cache
def _kept(size: int) -> Any:
    """One encoder per size, kept across examples: its store fills and replaces records."""
    return _fused(CL100K_PATTERN, size)


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(WIDE + NARROW + " ", min_size=1, max_size=120), max_size=12),
    repeat=st.integers(1, 3),
)
def test_any_text_of_long_pieces_equals_the_merge(words: list[str], repeat: int) -> None:
    text = " ".join(words) * repeat
    expected = _expected(CL100K_PATTERN, text)
    for size in SIZES[1:]:
        fused = _kept(size)
        assert fused.encode(text, 0, len(text), "strict") == expected, size
        assert fused.count(text, 0, len(text), "strict", -1) == len(expected)


def test_an_entry_a_full_set_gives_up_goes_to_the_store() -> None:
    """While the sets grow, a full set evicts its last entry at once (one set in twenty has
    overflowed by the time they grow); an entry of more than 16 bytes goes to the store, so a
    second pass finds every piece, and the ids are tiktoken's."""
    rng = random.Random(6)
    words = [
        " " + "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=rng.randint(16, 40)))
        for _ in range(3000)
    ]
    pieces = [p for p in dict.fromkeys(words) if 1 < len(_core().encode_pieces([p])) <= 16]
    text = "".join(pieces)
    assert regex.findall(CL100K_PATTERN, text) == pieces and len(pieces) > 1400
    encoding = streamcodec.get_encoding("cl100k_base")
    fused = _fused(CL100K_PATTERN, 32 << 20)
    assert fused.encode(text, 0, len(text), "strict") == tiktoken_twin(encoding).encode_ordinary(
        text
    )
    assert _hits(fused, text) == len(pieces)
