"""The scanner's block step (``streamcodec/text/_scan_block.h``): a 1-byte str's pieces cut 64
code points at a time from class bitmaps must be ``regex``'s, for every shape it takes (gpt2,
cl100k_base, o200k_base and the open models' patterns), wherever a piece, a hard code point or
the text's end falls in a block; the fused pass, which walks the same bitmaps, must give
tiktoken's ids. Skipped unless the compiled code is built.
"""

from __future__ import annotations

import functools

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


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _scanner(pattern: str) -> native.NativeScanner:
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    return scanner


def _check(pattern: str, text: str, start: int = 0) -> None:
    assert text.isascii() or max(text) <= "\xff"  # a 1-byte str: the block step reads it
    expected = _compiled(pattern).findall(text, start)
    assert _scanner(pattern).pieces(text, start, len(text)) == expected, (text, start)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("base", [PROSE, CODE], ids=["prose", "code"])
def test_every_code_point_at_every_block_offset(pattern: str, base: str) -> None:
    for at in range(0, 140):
        for c in CODE_POINTS:
            _check(pattern, base[:at] + c + base[at:])


RUNS = ("a", "A", "aB", "7", " ", "\t", "\n", "\r\n", " \n", "\n ", ".", "/", "'", "\n/", ".\n")
LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 31, 32, 33, *range(60, 68))


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("run", RUNS)
def test_runs_straddling_block_ends(pattern: str, run: str) -> None:
    """A run of each class, of lengths about the block's, starting at every offset of the first
    block, then a word and more text (so that blocks follow)."""
    head = PROSE * 2
    for length in LENGTHS:
        for at in range(0, 67):
            _check(pattern, head[:at] + run * length + " x" + PROSE)
            _check(pattern, head[:at] + run * length + PROSE)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_texts_ending_and_starting_at_every_offset(pattern: str) -> None:
    for base in (PROSE, CODE, PROSE.replace(" ", "  ")):
        for end in range(len(base) + 1):
            _check(pattern, base[:end])
        for start in range(0, 70):
            _check(pattern, base, start)


@settings(max_examples=300, deadline=None)
@given(text=block_texts(), data=st.data())
def test_block_texts_equal_regex(text: str, data: st.DataObject) -> None:
    latin1 = "".join(c for c in text if c <= "\xff")
    pattern = data.draw(st.sampled_from(PATTERNS))
    _check(pattern, latin1, data.draw(st.integers(0, 3)))


@functools.cache
def _encodings() -> tuple[tuple[streamcodec.Encoding, object], ...]:
    ours = [streamcodec.get_encoding(name) for name in ("r50k_base", "cl100k_base", "o200k_base")]
    return tuple((enc, tiktoken_twin(enc)) for enc in ours)


@settings(max_examples=150, deadline=None)
@given(text=block_texts())
def test_the_fused_pass_gives_tiktokens_ids(text: str) -> None:
    """list, numpy and count through the fused pass, which walks the block bitmaps itself."""
    latin1 = "".join(c for c in text if c <= "\xff")
    for ours, theirs in _encodings():
        expected = theirs.encode_ordinary(latin1)  # type: ignore[attr-defined]
        assert ours.encode_ordinary(latin1) == expected
        assert ours.encode_to_numpy(latin1).tolist() == expected
        assert ours.ordinary.count(latin1) == len(expected)


def test_the_fused_pass_at_every_start_offset() -> None:
    for ours, theirs in _encodings():
        for base in (PROSE, CODE):
            for start in range(0, 70):
                text = base[start:] + base
                assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)  # type: ignore[attr-defined]


CONTRACTIONS = ("don't's", "x's's's", "it'S'LL've", "''s", " 's", ".'s", "\t's", "x'll'll", "'re'")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_contractions_in_a_row_at_every_offset(pattern: str) -> None:
    """gpt2's and cl100k's contractions are alternatives of their own (one after another, each
    starts a piece); o200k's is a word's suffix (one a word: the next apostrophe starts a piece
    of its own, which may take one)."""
    for contraction in CONTRACTIONS:
        for at in range(0, 67):
            _check(pattern, PROSE[:at] + contraction + PROSE)
