"""The fused pass (``streamcodec.engine._fused``): each piece cut by the native scanner is looked
up whole, then in the word cache, then merged by the compiled core. ``FusedEncoder.encode`` must
equal ``Core.encode_pieces`` of ``regex``'s pieces (the steps it fuses), errors included, with
the word cache off, small (so that it evicts) and large; ``encode_array`` and ``count`` must
agree with it. Skipped unless the compiled code is built.
"""

from __future__ import annotations

import functools
import itertools
import pickle
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from fuzz.strategies import class_texts
from streamcodec.pieces import LONG_PIECE
from streamcodec.text import native
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from tests.children import reaped
from tests.conftest import tiktoken_twin

core_module = pytest.importorskip("streamcodec.pieces._core")
fused_module = pytest.importorskip("streamcodec.engine._fused")
NAMED = (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN)
pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None, reason="the native scanner is not built"
)


@functools.cache
def _core() -> object:
    """cl100k_base's ranks in the core (any ranks do: every pattern is checked with them)."""
    return core_module.Core(
        streamcodec.get_encoding("cl100k_base").mergeable_ranks, long_piece=LONG_PIECE
    )


# The caches off; a first level of 2 lines and no word cache; 8 lines and a set (both evicting at
# every turn); the default.
CACHE_SIZES = (0, 300, 2000, 40 << 10, 32 << 20)  # off, tiny, a long store of one segment, full


@functools.cache
def _fused(pattern: str, cache_bytes: int) -> Any:
    """One encoder per pattern and cache size, kept across examples: its cache fills and evicts."""
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    return fused_module.FusedEncoder(_core(), scanner.number, cache_bytes=cache_bytes)


def _outcome(run: Callable[[], object]) -> tuple[str, object]:
    try:
        return ("ok", run())
    except UnicodeEncodeError as exc:
        return ("raises", str(exc))


def _both(pattern: str, text: str, start: int, end: int, errors: str) -> tuple[object, object]:
    """(the fused pass, the pieces then the core), each as ("ok", ids) or ("raises", error);
    the fused pass's three outputs and three cache sizes must all agree."""
    pieces = regex.compile(pattern).findall(text, start, end)
    two_steps = _outcome(lambda: _core().encode_pieces(pieces, errors=errors))  # type: ignore[attr-defined]
    outcomes = set()
    for size in CACHE_SIZES:
        fused = _fused(pattern, size)
        ids = _outcome(lambda f=fused: f.encode(text, start, end, errors))
        array = _outcome(lambda f=fused: list(memoryview(f.encode_array(text, start, end, errors))))
        count = _outcome(lambda f=fused: f.count(text, start, end, errors, -1))
        assert array == ids
        assert count == (ids if ids[0] == "raises" else ("ok", len(ids[1])))  # type: ignore[arg-type]
        outcomes.add(repr(ids))
    assert len(outcomes) == 1, outcomes
    return ids, two_steps


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(class_texts(), class_texts().map(lambda t: t * 40)),
    data=st.data(),
    errors=st.sampled_from(["strict", "surrogateescape"]),
)
def test_the_fused_pass_equals_pieces_then_core(
    text: str, data: st.DataObject, errors: str
) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for pattern in NAMED:
        one_pass, two_steps = _both(pattern, text, start, end, errors)
        assert one_pass == two_steps, (pattern, text[start:end], errors)


@pytest.mark.parametrize(
    ("text", "errors", "raises"),
    [
        ("ok \udc80 escaped", "surrogateescape", False),
        ("ok \udc80 refused", "strict", True),
        ("high \ud800 never escaped", "surrogateescape", True),
        ("a" * 5000 + " long piece: backtracking", "strict", False),
    ],
)
def test_surrogates_and_long_pieces(text: str, errors: str, raises: bool) -> None:
    one_pass, two_steps = _both(CL100K_PATTERN, text, 0, len(text), errors)
    assert one_pass == two_steps
    assert (one_pass[0] == "raises") == raises


@pytest.mark.parametrize(
    "text",
    [
        "caf\xe9 and the cat's tokens, 1234567 times",  # 1-byte kind, not ASCII
        "ASCII words: the cat sat on the mat, 1234567 times",
        "\u20ac words, then ASCII: the cat sat",  # 2-byte kind
    ],
)
def test_pieces_read_in_place_and_at_the_end_of_the_text(text: str) -> None:
    """A 1-byte string's ASCII pieces are read in place, with one 8-byte load for their head
    while eight bytes are left in the text (a byte loop nearer the end): every end of the text,
    so that each piece is the last one, and each start."""
    for pattern in NAMED:
        for end in range(len(text) + 1):
            for start in (0, end // 2, max(end - 9, 0)):
                one_pass, two_steps = _both(pattern, text, start, end, "strict")
                assert one_pass == two_steps, (pattern, text[start:end])


@pytest.mark.parametrize("wide", ["\u20ac", "\U0001f600"], ids=["2-byte", "4-byte"])
@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_a_wider_strs_pieces_ascii_first_then_the_rest(wide: str, errors: str) -> None:
    """A 2- or 4-byte str's pieces are encoded to UTF-8 before the lookup: ASCII words of every
    length about the head's 8 bytes and the slot's 12, alone or followed by a letter, an
    escaped or refused lone surrogate, or a wide character."""
    for n in range(1, 14):
        word = "abcdefghijklm"[:n]
        for tail in ("", "\xe9", "\u0101x", "\udc80", "\ud800", wide):
            text = f"{wide} {word}{tail} {word}, {word}{tail}"
            for pattern in NAMED:
                one_pass, two_steps = _both(pattern, text, 0, len(text), errors)
                assert one_pass == two_steps, (pattern, text, errors)


# A 2- or 4-byte str's stretches below U+0100 are read as 1-byte strings, WINDOW code units at
# most at a time, each cut at the last safe cut before a wider code point or the window's end.
WINDOW = fused_module.WINDOW
LATIN1_TEXT = "The caf\xe9's  1234567 cats\r\n  sat \u00bfon\n\n the mat--  don't (x) /y \t\n"


@pytest.mark.parametrize(
    "wide", ["\u20ac", "\u0301", "\U0001f600", "\udc80", "\u0100", "\u0100\U0001f600"]
)
def test_a_wider_strs_stretches_below_256_about_every_boundary(wide: str) -> None:
    """A wider code point (a symbol, a combining mark, which no safe cut may precede, an emoji,
    a lone surrogate, U+0100 alone and in a 4-byte str: the first past a byte) at every offset
    about the window's end and the copy's 16-unit steps,
    and texts ending there: the stretch before it, cut at a safe cut, then the units read as
    they are."""
    filler = LATIN1_TEXT * (2 * WINDOW // len(LATIN1_TEXT) + 2)
    offsets = [
        *range(0, 40),
        *range(WINDOW - 40, WINDOW + 40),
        *range(2 * WINDOW - 20, 2 * WINDOW + 20),
    ]
    for at in offsets:
        text = filler[:at] + wide + filler[at:]
        for pattern in NAMED:
            for end in (len(text), at + 1, at + 3):
                one_pass, two_steps = _both(pattern, text, 0, end, "surrogateescape")
                assert one_pass == two_steps, (pattern, at, end)


@pytest.mark.parametrize("wide", ["\u20ac", "\U0001f600"], ids=["2-byte", "4-byte"])
def test_a_latin1_code_point_at_every_offset_of_an_ascii_window(wide: str) -> None:
    """The copy of a window, 16 code units a step, tells whether one past ASCII is in it (its
    pieces are then not read in place as ASCII): one at every offset of the first steps and
    about the window's end, in ASCII text."""
    filler = "The cat sat on the mat, then ran. " * (WINDOW // 30)
    for at in (*range(0, 70), *range(WINDOW - 40, WINDOW + 10)):
        text = filler[:at] + "\xe9" + filler[at:] + wide
        for pattern in NAMED:
            one_pass, two_steps = _both(pattern, text, 0, len(text), "strict")
            assert one_pass == two_steps, (pattern, at)


@pytest.mark.parametrize(
    "run",
    [
        "a" * (WINDOW + 50),
        " " * (WINDOW + 50),
        "\n" * (WINDOW + 5),
        "1" * (WINDOW + 7),
        "\xe9" * (WINDOW + 3),
    ],
    ids=["letters", "spaces", "newlines", "digits", "latin-1 letters"],
)
@pytest.mark.parametrize("wide", ["\u20ac", "\U0001f600"], ids=["2-byte", "4-byte"])
def test_a_stretch_with_no_safe_cut_is_read_as_it_is(run: str, wide: str) -> None:
    """A window with no safe cut (one piece longer than the window, or runs no rule cuts):
    its code units are read as they are, then the next window starts past the wide one."""
    for text in (wide + run + " x", run + wide + " x" + run, "x " + run + wide):
        for pattern in NAMED:
            one_pass, two_steps = _both(pattern, text, 0, len(text), "strict")
            assert one_pass == two_steps, (pattern, text[:20])


@settings(max_examples=60, deadline=None)
@given(
    wide=st.lists(class_texts(), min_size=1, max_size=3),
    at=st.lists(st.integers(0, WINDOW + 64), min_size=1, max_size=3),
    size=st.integers(WINDOW - 64, WINDOW + 64),
)
def test_wide_fragments_anywhere_in_a_window_of_latin1(
    wide: list[str], at: list[int], size: int
) -> None:
    """Random class samples (contractions, whitespace and CR/LF runs, marks, emoji...) put at
    random offsets of Latin-1 text about one window long: where the stretches end, their safe
    cuts, the window's end and the text's."""
    text = (LATIN1_TEXT * (size // len(LATIN1_TEXT) + 1))[:size]
    for fragment, offset in zip(wide, at, strict=False):
        text = text[:offset] + fragment + text[offset:]
    for pattern in NAMED:
        one_pass, two_steps = _both(pattern, text, 0, len(text), "surrogateescape")
        assert one_pass == two_steps, (pattern, text)


def test_a_wider_strs_blocks_end_inside_a_window() -> None:
    """A text past the pass's block of 2**20 code units (the GIL and signals between blocks):
    the blocks end inside windows, and the ids are tiktoken's."""
    text = ("\u20ac " + LATIN1_TEXT * 37) * (2**20 // (37 * len(LATIN1_TEXT)) + 2)
    encoding = streamcodec.get_encoding("cl100k_base")
    expected = tiktoken_twin(encoding).encode_ordinary(text)
    assert encoding.encode_ordinary(text) == expected
    assert encoding.encode_to_numpy(text).tolist() == expected
    assert encoding.ordinary.count(text) == len(expected)


def test_real_text_equals_tiktoken(real_encoding: streamcodec.Encoding) -> None:
    scanner = native.native_scanner(real_encoding.pat_str)
    assert scanner is not None
    core = core_module.Core(real_encoding.mergeable_ranks, long_piece=LONG_PIECE)
    theirs = tiktoken_twin(real_encoding)
    for size in CACHE_SIZES:
        fused = fused_module.FusedEncoder(core, scanner.number, cache_bytes=size)
        for _ in range(2):  # cold, then warm: the second pass reads what the first cached
            for text in samples().values():
                expected = theirs.encode_ordinary(text)
                assert fused.encode(text, 0, len(text), "strict") == expected
                assert fused.count(text, 0, len(text), "strict", -1) == len(expected)
        info = fused.cache_info()
        assert (info["hits"] > 0) == (size > 0), info
        assert info["bytes"] <= size


def test_the_first_level_tells_short_pieces_apart() -> None:
    """The first level's key is a piece's first 15 bytes, zero-padded, and its length: pieces that
    differ only past byte 8, by trailing NUL bytes, or in length about 8 and 15 bytes, and pieces
    of one to many tokens, each get their own ids, from a cache that holds them or evicts."""
    rng = random.Random(5)
    pieces = [" " + "!" * n + "\x00" * k for n in range(1, 17) for k in range(4)]
    tails = ("".join(rng.choices("hijé€😀", k=n)) for n in range(12) for _ in range(9))
    pieces += [" abcdefg" + tail for tail in tails]
    pieces += ["".join(rng.choices("qzx\x00é😀", k=n)) for n in range(1, 18) for _ in range(9)]
    text = " ".join(pieces * 3)  # repeated: cached the first time, answered by the cache after
    expected = _core().encode_pieces(regex.findall(CL100K_PATTERN, text))  # type: ignore[attr-defined]
    for size in (*CACHE_SIZES, 1 << 16):
        fused = _fused(CL100K_PATTERN, size)
        for _ in range(2):
            assert fused.encode(text, 0, len(text), "strict") == expected, size
            assert fused.count(text, 0, len(text), "strict", -1) == len(expected)


def _twice_every_output(
    pattern: str, text: str, expected: list[int], sizes: tuple[int, ...] = CACHE_SIZES
) -> None:
    """The ids of text, twice (cold, then from what the first pass cached), each output, an
    encoder of each cache size."""
    for size in sizes:
        fused = _fused(pattern, size)
        for _ in range(2):
            assert fused.encode(text, 0, len(text), "strict") == expected, size
            assert list(memoryview(fused.encode_array(text, 0, len(text), "strict"))) == expected
            assert fused.count(text, 0, len(text), "strict", -1) == len(expected)


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, O200K_PATTERN])
def test_the_first_level_packs_five_and_six_ids(pattern: str) -> None:
    """A piece of up to 15 bytes and 5 or 6 tokens has them packed in its first-level entry (24
    or 19 bits each after the first, across three words): CJK and emoji of 4-5 characters, each
    met three times, with the caches off, tiny and large; 7 tokens are not packed."""
    rng = random.Random(8)
    wide = "中文字漢語한국어문장👍🏽🤖ภาษาไทย"
    pieces = [" " + "".join(rng.choices(wide, k=rng.randint(2, 5))) for _ in range(3000)]
    kept = [
        p for p in pieces if len(p.encode()) <= 15 and 5 <= len(_core().encode_pieces([p])) <= 7
    ]  # type: ignore[attr-defined]
    text = " x".join(kept * 3)
    expected = _core().encode_pieces(regex.findall(pattern, text))  # type: ignore[attr-defined]
    counts = {len(_core().encode_pieces([p])) for p in kept}  # type: ignore[attr-defined]
    assert counts == {5, 6, 7} and max(expected) >= 1 << 16  # fields across the 64-bit boundary
    _twice_every_output(pattern, text, expected, (*CACHE_SIZES, 1 << 16))


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, O200K_PATTERN])
def test_the_common_blocks_pieces_of_five_and_six_ids(pattern: str) -> None:
    """An ASCII text's blocks are walked by a loop of their own (engine/_fused_hits.h), which
    unpacks a first-level entry of 5 or 6 ids itself: pieces of a space and control characters
    (a token each), 5 to 7 ids, met three times among one-token words, each output."""
    rng = random.Random(11)
    controls = "".join(map(chr, [*range(1, 9), *range(14, 32)]))
    pieces = [" " + "".join(rng.choices(controls, k=rng.randint(4, 6))) for _ in range(400)]
    pieces = [piece + " the" for piece in pieces]
    text = "".join(pieces * 3)
    expected = _core().encode_pieces(regex.findall(pattern, text))  # type: ignore[attr-defined]
    lengths = {len(_core().encode_pieces([p[:-4]])) for p in pieces}  # type: ignore[attr-defined]
    assert lengths == {5, 6, 7} and text.isascii()
    _twice_every_output(pattern, text, expected)


def _whole_pieces(strings: list[str], pattern: str) -> list[str]:
    """Those of strings that the pattern cuts as one piece."""
    return [s for s in strings if regex.findall(pattern, s) == [s]]


def test_tokens_and_cached_pieces_past_the_first_level() -> None:
    """The slow path asks the word cache before the vocabulary's table for a piece with a
    first-level key or a long one ending past ASCII, after it for a long ASCII piece
    (engine/_fused.c, fused_slow): tokens of more than 15 bytes ending past ASCII and in ASCII,
    short tokens that lose their first-level line (a first level of 2 lines), pieces of 7 ids and
    more and of 16-56 bytes, each met three times: their ids, any cache size, every output."""
    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    decoded = [s for t in ranks if (s := t.decode(errors="ignore")).encode() == t]  # UTF-8 only
    rng = random.Random(27)
    tokens = _whole_pieces([t for t in decoded if len(t.encode()) > 15], CL100K_PATTERN)
    wide = [t for t in tokens if not t.isascii()]
    short = rng.sample(
        _whole_pieces([t for t in decoded if 3 <= len(t.encode()) <= 15], CL100K_PATTERN), 400
    )
    letters = "中文字漢語한국어пользоватείναι"
    merged = [" " + "".join(rng.choices(letters, k=rng.randint(3, 14))) for _ in range(400)]
    pieces = [*tokens, *short, *merged]
    rng.shuffle(pieces)
    text = "\n".join(pieces * 3)
    found = regex.findall(CL100K_PATTERN, text)
    assert len(set(wide) & set(found)) >= 15 and set(merged) <= set(found)  # punctuation joins
    expected = _core().encode_pieces(found)  # type: ignore[attr-defined]
    _twice_every_output(CL100K_PATTERN, text, expected)


def _line_of_two(piece: bytes) -> int:
    """The line of a piece in a first level of two lines (_first_level.h: fl_hash, fl_line)."""
    padded = piece.ljust(15, b"\0")
    k0 = int.from_bytes(padded[:8], "little")
    k1 = int.from_bytes(padded[8:15], "little") | len(piece) << 56
    return ((k0 ^ k1) * 0x9E3779B97F4A7C15 % (1 << 64)) >> 63


def test_a_piece_whose_line_is_full_is_kept_in_its_pair_line() -> None:
    """A first level of two lines (cache_bytes=300: no sets, no long store), each line's first
    way a token: of two pieces of several tokens with the same line, the second takes the other
    line's second way (its pair line, fl_pair), and passes after the first merge neither, each
    output. Without the pair line it was merged again at every pass."""
    words = [" " + "".join(w) for w in itertools.product("qxzj", repeat=4)]
    multi = [w for w in words if len(_core().encode_pieces([w])) > 1]  # type: ignore[attr-defined]
    same = [w for w in multi if _line_of_two(w.encode()) == _line_of_two(multi[0].encode())][:2]
    text = "".join(same)
    expected = _core().encode_pieces(same)  # type: ignore[attr-defined]
    scanner = native.native_scanner(CL100K_PATTERN)
    assert scanner is not None
    fused = fused_module.FusedEncoder(_core(), scanner.number, cache_bytes=300)  # its own cache
    assert regex.findall(CL100K_PATTERN, text) == same and len(same) == 2
    assert fused.encode(text, 0, len(text), "strict") == expected  # each merged once, learned
    merged = fused.cache_info()["merges"]
    for _ in range(3):
        assert fused.encode(text, 0, len(text), "strict") == expected
        assert list(memoryview(fused.encode_array(text, 0, len(text), "strict"))) == expected
        assert fused.count(text, 0, len(text), "strict", -1) == len(expected)
    assert fused.cache_info()["merges"] == merged


def test_indices_too_wide_to_pack_are_not_packed() -> None:
    """Indices of 19 bits or more (a vocabulary of 600,000 tokens): a piece of 6 such tokens is
    not packed in 19-bit fields (it is answered by the sets), one of 5 is, in 24 bits."""
    ranks = {bytes([b]): b for b in range(256)}
    filler = (
        bytes([0xF8 + i % 8, i >> 8 & 0xFF, i & 0xFF]) + bytes([i >> 16]) for i in range(600_000)
    )
    ranks.update(zip(filler, range(256, 600_256), strict=True))
    ranks.update({b"xy": 700_000, b"zw": 700_001})
    scanner = native.native_scanner(CL100K_PATTERN)
    assert scanner is not None
    core = core_module.Core(ranks, long_piece=LONG_PIECE)
    text = " ".join(["xyzwxyzwxy", "xyzwxyzwx", "xyzwxyzwxyzw"] * 3)
    expected = core.encode_pieces(regex.findall(CL100K_PATTERN, text))
    assert max(expected) >= 1 << 19
    for size in (0, 2000, 1 << 20):
        fused = fused_module.FusedEncoder(core, scanner.number, cache_bytes=size)
        for _ in range(3):
            assert fused.encode(text, 0, len(text), "strict") == expected, size


def test_count_stops_past_its_limit() -> None:
    text = "one two three" * 1000
    fused = _fused(CL100K_PATTERN, 32 << 20)
    total = len(fused.encode(text, 0, len(text), "strict"))
    assert fused.count(text, 0, len(text), "strict", -1) == total
    assert fused.count(text, 0, len(text), "strict", total) == total
    assert 10 < fused.count(text, 0, len(text), "strict", 10) < total


def test_the_array_is_numpy_without_a_copy() -> None:
    numpy = pytest.importorskip("numpy")
    text = "hello world " * 100
    ids = _fused(CL100K_PATTERN, 0).encode_array(text, 0, len(text), "strict")
    array = numpy.frombuffer(ids, dtype=numpy.uint32)
    assert array.tolist() == _fused(CL100K_PATTERN, 0).encode(text, 0, len(text), "strict")
    array[0] = 7  # writable, and the same memory: the buffer is shared, not copied
    assert memoryview(ids)[0] == 7
    assert len(ids) == len(array) and memoryview(ids).format == "I"


@pytest.mark.parametrize("order", ["shuffled", "sparse"])
def test_the_array_maps_indices_to_ranks(order: str) -> None:
    """tiktoken's ranks are the tokens' indices (0..n-1 in order), and the array skips mapping
    them; ranks in another order, or with gaps, must still be mapped."""
    ranks = dict(streamcodec.get_encoding("cl100k_base").mergeable_ranks)
    items = list(ranks.items())
    random.Random(7).shuffle(items)
    mapped = dict(items) if order == "shuffled" else {k: 3 * r + 1 for k, r in ranks.items()}
    scanner = native.native_scanner(CL100K_PATTERN)
    assert scanner is not None
    fused = fused_module.FusedEncoder(
        core_module.Core(mapped, long_piece=LONG_PIECE), scanner.number, cache_bytes=0
    )
    text = "".join(samples().values())[:20_000]
    listed = fused.encode(text, 0, len(text), "strict")
    assert list(memoryview(fused.encode_array(text, 0, len(text), "strict"))) == listed
    expected = [r if order == "shuffled" else 3 * r + 1 for r in tiktoken_twin_ids(text)]
    assert listed == expected


def tiktoken_twin_ids(text: str) -> list[int]:
    return tiktoken_twin(streamcodec.get_encoding("cl100k_base")).encode_ordinary(text)


def test_threads_encode_at_once() -> None:
    text = "".join(samples().values())
    fused = _fused(O200K_PATTERN, 1 << 16)
    expected = fused.encode(text, 0, len(text), "strict")
    results: list[list[int]] = []
    threads = [
        threading.Thread(target=lambda: results.append(fused.encode(text, 0, len(text), "strict")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 3
    assert 1 <= fused.cache_info()["caches"] <= 4  # one cache per call running at once


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="Core"):
        fused_module.FusedEncoder(object(), 1, cache_bytes=0)
    with pytest.raises(ValueError, match="pattern number"):
        fused_module.FusedEncoder(_core(), 99, cache_bytes=0)
    with pytest.raises(ValueError, match="cache_bytes"):
        fused_module.FusedEncoder(_core(), 1, cache_bytes=-1)
    with pytest.raises(TypeError, match="cache_bytes"):  # its one home: engine.ordinary
        fused_module.FusedEncoder(_core(), 1)
    with pytest.raises(ValueError, match="errors must be"):
        _fused(CL100K_PATTERN, 0).encode("text", 0, 4, "replace")


def _multi_token_words(count: int, seed: int) -> list[str]:
    """Words of random letters: most are several tokens, so they go through the word cache."""
    rng = random.Random(seed)
    return [" " + "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=7)) for _ in range(count)]


def test_a_scan_of_unseen_words_does_not_flush_the_words_that_repeat() -> None:
    # 64 KiB: its full size from the start, so the doorkeeper guards it.
    fused = fused_module.FusedEncoder(_core(), 1, cache_bytes=1 << 16)
    common = "".join(_multi_token_words(300, seed=1))
    scan = "".join(_multi_token_words(50_000, seed=2))
    for _ in range(6):  # the doorkeeper forgets some words a pass: give them a few chances
        fused.encode(common, 0, len(common), "strict")

    def hits_of(text: str) -> int:
        before = fused.cache_info()["hits"]
        fused.encode(text, 0, len(text), "strict")
        return int(fused.cache_info()["hits"] - before)

    warm = hits_of(common)
    assert warm >= 200  # most of the 300 words are cached
    hits_of(scan)
    after = fused.cache_info()
    assert hits_of(common) >= 0.9 * warm, after
    assert after["bytes"] <= 1 << 16


def test_the_cache_stays_within_its_bound() -> None:
    fused = fused_module.FusedEncoder(_core(), 1, cache_bytes=1 << 20)
    for seed in range(4):
        text = "".join(_multi_token_words(40_000, seed=seed))
        assert fused.encode(text, 0, len(text), "strict") == _core().encode_pieces(  # type: ignore[attr-defined]
            regex.findall(CL100K_PATTERN, text)
        )
    info = fused.cache_info()
    assert (1 << 19) <= info["bytes"] <= 1 << 20, info  # it grew to its bound, not past it


def test_encoding_takes_cache_bytes() -> None:
    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    text = "".join(_multi_token_words(2000, seed=3)) * 2
    off = streamcodec.Encoding(
        "off", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={}, cache_bytes=0
    )
    on = streamcodec.Encoding(
        "on", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={}, cache_bytes=1 << 20
    )
    assert off.encode_ordinary(text) == on.encode_ordinary(text)
    assert off.ordinary.cache_info()["hits"] == 0 < on.ordinary.cache_info()["hits"]
    assert pickle.loads(pickle.dumps(on)).ordinary.cache_info()["bytes_each"] == 1 << 20
    with pytest.raises(ValueError, match="cache_bytes"):
        streamcodec.Encoding(
            "bad", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={}, cache_bytes=-1
        )


def test_ctrl_c_stops_a_long_encode_between_blocks() -> None:
    """SIGINT during one long native count is raised within a block (2^20 code points), not
    after the whole text: it once waited for the end (17 s for 100 MB)."""
    code = """
import signal, sys, time, streamcodec
enc = streamcodec.get_encoding("cl100k_base")
text = "ab cd ef gh " * 25_000_000
print("ready", flush=True)
try:
    enc.ordinary.count(text)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    popen = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    with reaped(popen) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    assert out.strip() == "interrupted"
