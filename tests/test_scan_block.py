"""The scanner's block step (``streamcodec/text/_scan_block.h``): a str's pieces cut 64
code points at a time from class bitmaps must be ``regex``'s, for every shape it takes (gpt2,
cl100k_base, o200k_base and the open models' patterns), wherever a piece, a hard code point or
the text's end falls in a block; the fused pass, which walks the same bitmaps, must give
tiktoken's ids. Each check runs at every level of the block step this machine has (AVX-512,
SSE2, none: ``simd()``), so one machine proves them all. Skipped unless the compiled code is
built.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.strategies import block_texts
from streamcodec.text import native
from streamcodec.text.known_patterns import KNOWN_PATTERNS
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from tests.conftest import tiktoken_twin

pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None, reason="the native scanner is not built"
)

# Every pattern the native scanner cuts, the shapes without a block step included (they must
# be unchanged).
PATTERNS = sorted(
    {GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN} | {k.pattern for k in KNOWN_PATTERNS}
)

# About three blocks of prose and of code, all ASCII and no apostrophe: the block step cuts
# all of them but where a test puts something else.
PROSE = (
    "The quick brown Fox jumps over 12345 lazy dogs, then rests.\n\nIn 1999 the HTMLParser "
    "read  two   spaces and a tab\there; (see section 3.14) for more -- or less!\r\nEnd of it"
)
CODE = (
    "def scan(text, start=0):\n    for i in range(start, len(text)):\n        if text[i] == "
    "'\\n':  # newline\n            yield i\n\treturn None  \n\n/* c */ x = a/b + 0x1F;\n"
)
# Every ASCII byte, and Latin-1 code points of each class (letter, \s, digit, symbol, mark-less
# letters of both cases).
CODE_POINTS = [chr(b) for b in range(128)] + list("\xa0\x85\xb2\xd7\xe9\xc9\xaa\xff")

# Code points past U+00FF of each class a 2- or 4-byte str's block sorts by its Unicode class:
# lower and upper case (Cyrillic, Greek), Lt, Lm, Lo (CJK, Bengali), marks (combining acute,
# a Bengali vowel sign), digits (Arabic-Indic, a Roman numeral), whitespace (em space,
# ideographic space, line separator, NEL), symbols and punctuation (euro, curly quote), the long
# s (a contraction's s, folded), the Kelvin sign (a folded k), a Hangul syllable and a fullwidth
# comma (past U+7FFF: negative as 16-bit lanes), an astral emoji and a lone surrogate (in no
# class).
WIDE_POINTS = list(
    "\u0436\u0416\u03c9\u01c5\u02b0\u4e2d\u09ac\u0301\u09be\u0663\u216b"
    "\u2003\u3000\u2028\x85\u20ac\u201c\u017f\u212a\uac00\uff0c\U0001f600\ud800"
)


LEVELS = ("none", "sse2", "avx512")  # the block step's levels, lowest first
MODULES = ("text._scan", "engine._fused")


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _scanner(pattern: str) -> native.NativeScanner:
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    return scanner


def _check(pattern: str, text: str, start: int = 0) -> None:
    assert text.isascii() or max(text) <= "\xff"  # a 1-byte str: the block step reads it
    _check_wide(pattern, text, start)


def _check_wide(pattern: str, text: str, start: int = 0) -> None:
    """Any str: a 2- or 4-byte one's block sorts its code points past ASCII by their class."""
    expected = _compiled(pattern).findall(text, start)
    for level in _every_level():
        assert _scanner(pattern).pieces(text, start, len(text)) == expected, (text, start, level)


def _every_level() -> Iterator[str]:
    """Each instruction set the block step can use here (``simd()``: AVX-512, SSE2, none),
    set in turn in the scanner and the fused pass, which include the block step each."""
    modules = [importlib.import_module(f"streamcodec.{name}") for name in MODULES]
    best = modules[0].simd()
    try:
        for level in LEVELS[: LEVELS.index(best) + 1]:
            for module in modules:
                module.simd(level)
            yield level
    finally:
        for module in modules:
            module.simd(best)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("base", [PROSE, CODE], ids=["prose", "code"])
def test_every_code_point_at_every_block_offset(pattern: str, base: str) -> None:
    for at in range(0, 140):
        for c in CODE_POINTS:
            _check(pattern, base[:at] + c + base[at:])


RUNS = ("a", "A", "aB", "7", " ", "\t", "\n", "\r\n", " \n", "\n ", ".", "/", "'", "\n/", ".\n")
LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 31, 32, 33, *range(60, 68))


# Runs of code points past U+00FF (a 2- or 4-byte str, whose block sorts them by their class;
# a dense block is left to the step of one piece): each case, CJK, Lm, marks alone and after
# letters, Lt, digits, whitespace, symbols, capitals after Lo and Lo after capitals.
WIDE_RUNS = (
    "\u0436", "\u0416", "\u0436\u0416", "\u0416\u0436", "\u4e2d", "\u02b0", "\u0301", "a\u0301",
    "\u0416\u0301", "\u0301\u0416", "\u01c5", "\u0663", "\u3000", " \u3000", "\u3000\n", "\u20ac",
    "\U0001f600", "\u09ac\u09be", "\u0416.", "\u4e2dA", "A\u4e2d",
)  # fmt: skip


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("run", RUNS + WIDE_RUNS)
def test_runs_straddling_block_ends(pattern: str, run: str) -> None:
    """A run of each class, of lengths about the block's, starting at every offset of the first
    block, then a word and more text (so that blocks follow)."""
    head = PROSE * 2
    for length in LENGTHS:
        for at in range(0, 67):
            _check_wide(pattern, head[:at] + run * length + " x" + PROSE)
            _check_wide(pattern, head[:at] + run * length + PROSE)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_texts_ending_and_starting_at_every_offset(pattern: str) -> None:
    lazy = "\u043b\u0435\u043d\u0438\u0432\u044b\u0445"  # a 2-byte str
    for base in (
        PROSE,
        CODE,
        PROSE.replace(" ", "  "),
        PROSE.replace("lazy", lazy),
        CODE + "\u201c",
    ):
        for end in range(len(base) + 1):
            _check_wide(pattern, base[:end])
        for start in range(0, 70):
            _check_wide(pattern, base, start)


@settings(max_examples=300, deadline=None)
@given(text=block_texts(), data=st.data())
def test_block_texts_equal_regex(text: str, data: st.DataObject) -> None:
    """The text as drawn (a 2- or 4-byte str when it has a wide fragment) and its Latin-1 part."""
    latin1 = "".join(c for c in text if c <= "\xff")
    pattern = data.draw(st.sampled_from(PATTERNS))
    start = data.draw(st.integers(0, 3))
    _check(pattern, latin1, start)
    _check_wide(pattern, text, start)


@functools.cache
def _encodings() -> tuple[tuple[streamcodec.Encoding, object], ...]:
    """r50k_base, cl100k_base and o200k_base; and cl100k_base's ranks with Llama 3's and Tekken's
    patterns (the open models' own vocabularies are not offline), whose 2- and 4-byte strs the
    fused pass cuts with the block step throughout (the named ones through 1-byte windows)."""
    ours = [streamcodec.get_encoding(name) for name in ("r50k_base", "cl100k_base", "o200k_base")]
    ranks = ours[1].mergeable_ranks
    for name in ("llama3", "tekken"):
        pattern = next(k.pattern for k in KNOWN_PATTERNS if k.name == name)
        ours.append(
            streamcodec.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        )
    return tuple((enc, tiktoken_twin(enc)) for enc in ours)


@settings(max_examples=150, deadline=None)
@given(text=block_texts())
def test_the_fused_pass_gives_tiktokens_ids(text: str) -> None:
    """list, numpy and count through the fused pass, which walks the block bitmaps itself: of the
    text's Latin-1 part, and of the text as drawn (a 2- or 4-byte str's stretches past U+00FF are
    cut by the block step too)."""
    for chosen in ("".join(c for c in text if c <= "\xff"), text):
        for ours, theirs in _encodings():
            expected = theirs.encode_ordinary(chosen)  # type: ignore[attr-defined]
            for level in _every_level():
                assert ours.encode_ordinary(chosen) == expected, level
                assert ours.encode_to_numpy(chosen).tolist() == expected, level
                assert ours.ordinary.count(chosen) == len(expected), level


def test_the_fused_pass_at_every_start_offset() -> None:
    for ours, theirs in _encodings():
        for base in (PROSE, CODE):
            for start in range(0, 70):
                text = base[start:] + base
                expected = theirs.encode_ordinary(text)  # type: ignore[attr-defined]
                for level in _every_level():
                    assert ours.encode_ordinary(text) == expected, level


@pytest.mark.parametrize("name", MODULES)
def test_simd_names_and_lowers_the_level(name: str) -> None:
    module = importlib.import_module(f"streamcodec.{name}")
    best = module.simd()
    assert best in LEVELS
    try:
        assert module.simd("none") == best and module.simd() == "none"
        assert _scanner(CL100K_PATTERN).pieces(PROSE, 0, len(PROSE)) == regex.findall(
            CL100K_PATTERN, PROSE
        )
    finally:
        module.simd(best)
    with pytest.raises(ValueError, match="one of none, sse2, avx512"):
        module.simd("avx2")
    for above in LEVELS[LEVELS.index(best) + 1 :]:
        with pytest.raises(ValueError, match=f"run {best} at most"):
            module.simd(above)
    with pytest.raises(TypeError):
        module.simd(3)
    assert module.simd() == best


CONTRACTIONS = ("don't's", "x's's's", "it'S'LL've", "''s", " 's", ".'s", "\t's", "x'll'll", "'re'")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_contractions_in_a_row_at_every_offset(pattern: str) -> None:
    """gpt2's and cl100k's contractions are alternatives of their own (one after another, each
    starts a piece); o200k's is a word's suffix (one a word: the next apostrophe starts a piece
    of its own, which may take one)."""
    for contraction in CONTRACTIONS:
        for at in range(0, 67):
            _check(pattern, PROSE[:at] + contraction + PROSE)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("base", [PROSE, CODE], ids=["prose", "code"])
@pytest.mark.parametrize("tail", ["", "\U0001f600"], ids=["2-byte", "4-byte"])
def test_every_wide_code_point_at_every_block_offset(pattern: str, base: str, tail: str) -> None:
    """One code point past U+00FF in ASCII text (a 2-byte str, or with an astral one at the end
    a 4-byte str): the block sorts it by its class, at every offset of three blocks, alone, before
    a letter, after one, and before CR/LF."""
    for at in range(0, 140):
        for c in WIDE_POINTS:
            for around in (c, c + "x", "x" + c, c + "\r\n", "'" + c):
                _check_wide(pattern, base[:at] + around + base[at:] + tail)


def test_the_fused_pass_on_wide_text_at_every_offset() -> None:
    for ours, theirs in _encodings():
        for c in WIDE_POINTS[:-1]:  # the lone surrogate has no UTF-8
            for at in range(0, 140):
                text = PROSE[:at] + c + "\u0436" + PROSE[at:] + PROSE
                expected = theirs.encode_ordinary(text)  # type: ignore[attr-defined]
                for level in _every_level():
                    assert ours.encode_ordinary(text) == expected, level


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
@pytest.mark.parametrize("lone", ["\udc80", "\ud800"], ids=["escapable", "never"])
def test_a_lone_surrogate_in_a_wide_block(errors: str, lone: str) -> None:
    """A piece the wide block cut (Llama 3's pattern: no 1-byte windows) with a lone surrogate:
    refused, or escaped, as the pieces then the core do it, at every offset of a block."""
    from tests.test_fused import _both

    llama3 = next(k.pattern for k in KNOWN_PATTERNS if k.name == "llama3")
    for at in range(0, 70):
        text = PROSE[:at] + lone + "\u0436" + PROSE[at:] + PROSE
        one_pass, two_steps = _both(llama3, text, 0, len(text), errors)
        assert one_pass == two_steps, (at, errors)


def test_the_fused_pass_on_latin1_text_at_every_offset() -> None:
    """A 1-byte str past ASCII: its blocks are cut with their Latin-1 code points sorted by class
    (sc_walk_start_latin1), the pieces with one of them encoded, the others read in place. Each
    class's code point alone, after a space, before an apostrophe's contraction, and in a run of
    them dense enough to leave the block to K(next) (SC_WIDE_MOST), at every offset of a block;
    ids, arrays and counts against tiktoken's, encoded twice (the second from the caches)."""
    latin1 = "\xa0\x85\xb2\xd7\xe9\xc9\xaa\xff\xa1"
    for ours, theirs in _encodings():
        for c in latin1:
            for around in (c, " " + c, c + "'s", c * 20, "x" + c + "\r\n"):
                for at in range(0, 140, 3 if len(around) > 3 else 1):
                    text = PROSE[:at] + around + PROSE[at:] + "\xe9t\xe9 " + PROSE
                    expected = theirs.encode_ordinary(text)  # type: ignore[attr-defined]
                    for _ in range(2):
                        assert ours.encode_ordinary(text) == expected, (c, at)
                        assert ours.encode_to_numpy(text).tolist() == expected, (c, at)
                        assert ours.ordinary.count(text) == len(expected), (c, at)
