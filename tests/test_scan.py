"""The native scanner (streamcodec.text._scan) cuts exactly as ``regex`` does, and finds the
stream's safe cuts exactly as the SAFE_CUTS regexes do.

Texts are built from a character of every class the named patterns tell apart (astral letters
and digits, marks, ``ſ`` and the Kelvin sign, whitespace ``regex`` and ``re`` disagree on, lone
surrogates, ZWJ emoji), so every class boundary, whitespace run and contraction at the text's end
is reached; so is every 7th code point, in contexts where each class changes the cut.
"""

from __future__ import annotations

import threading

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.strategies import CLASS_SAMPLES, class_texts
from streamcodec import Encoding
from streamcodec.stream import SAFE_CUTS
from streamcodec.stream.cuts import cuts_for
from streamcodec.text import native
from streamcodec.text.known_patterns import KNOWN_PATTERNS
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

BYTES = {bytes([b]): b for b in range(256)}

NAMED = (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN)
COMPILED = {pattern: regex.compile(pattern) for pattern in NAMED}

pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None,
    reason="the native scanner is not built (python setup.py build_ext --inplace) or"
    " STREAMCODEC_BACKEND=python",
)


def _scanner(pattern: str) -> native.NativeScanner:
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    return scanner


def _expected_cut(pattern: str, text: str, lo: int, hi: int) -> int | None:
    """The last safe cut in [lo, hi) by the stream's regex (lookbehinds see all of text)."""
    cut = SAFE_CUTS[pattern]
    return next((p for p in range(hi - 1, lo - 1, -1) if cut.match(text, p)), None)


@settings(max_examples=400, deadline=None)
@given(text=class_texts(), data=st.data())
def test_pieces_equal_regex(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for pattern in NAMED:
        expected = COMPILED[pattern].findall(text, start, end)
        assert _scanner(pattern).pieces(text, start, end) == expected, (pattern, text)


@settings(max_examples=300, deadline=None)
@given(text=class_texts(), data=st.data())
def test_last_cut_equals_the_safe_cut_regexes(text: str, data: st.DataObject) -> None:
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    for pattern in NAMED:
        expected = _expected_cut(pattern, text, lo, hi)
        assert _scanner(pattern).last_cut(text, lo, hi) == expected, (pattern, text, lo, hi)


@settings(max_examples=300, deadline=None)
@given(text=class_texts(), data=st.data())
def test_words_equal_the_re_path(text: str, data: st.DataObject) -> None:
    from streamcodec.text.pretokenize import _word_pattern

    start = data.draw(st.integers(0, len(text)))
    expected = _word_pattern().findall(text, start, len(text))
    assert _scanner(O200K_PATTERN).words(text, start, len(text)) == expected


@pytest.mark.parametrize("pattern", NAMED, ids=["gpt2", "cl100k", "o200k"])
def test_every_triple_of_class_samples(pattern: str) -> None:
    samples = sorted(set(CLASS_SAMPLES))
    triples = [a + b + c for a in samples for b in samples for c in samples]
    scanner, compiled = _scanner(pattern), COMPILED[pattern]
    differing = [t for t in triples if scanner.pieces(t, 0, len(t)) != compiled.findall(t)]
    assert not differing, differing[:5]
    for text in triples[::7]:
        assert scanner.last_cut(text, 0, 3) == _expected_cut(pattern, text, 0, 3), text


TEKKEN = next(k.pattern for k in KNOWN_PATTERNS if k.name == "tekken")


@pytest.mark.parametrize("pattern", [O200K_PATTERN, TEKKEN], ids=["o200k", "tekken"])
def test_every_four_letters_of_the_case_classes(pattern: str) -> None:
    """o200k's case alternatives (U*W+|U+W*, Lm/Lo/marks in both U and W) decide where a word
    ends from several letters back: every four of a letter of each class, ASCII and not, a
    space, a full stop and a contraction (K(cased_word) takes a capital then a lower-case letter
    at once, and a run of letters and marks in both classes (Lm, Lo, M; "\u00aa" in a 1-byte
    str) unless a capital follows it: "A\u0301Bc" and "\u4e2dBc" are one piece)."""
    letters = "aZ\u01c5\u02b0\u4e2d\u00aa\u0436\u0416\u0301\u0903 .'s"
    scanner, compiled = _scanner(pattern), regex.compile(pattern)
    words = [a + b + c + d for a in letters for b in letters for c in letters for d in letters]
    differing = [w for w in words if scanner.pieces(w, 0, len(w)) != compiled.findall(w)]
    assert not differing, differing[:5]


@pytest.mark.parametrize("pattern", NAMED, ids=["gpt2", "cl100k", "o200k"])
def test_every_latin1_character_after_a_long_run(pattern: str) -> None:
    # A 1-byte string's runs are skipped 8 bytes at a time (_scan_ascii.h), and a run that stops
    # on an ASCII byte is taken to end there: every Latin-1 character after runs of each class,
    # of every length past 8 (so every alignment in a word), then more text.
    scanner, compiled = _scanner(pattern), COMPILED[pattern]
    runs = ["abcdefghijklmnopq", "ABCDEFGHIJKLMNOPQ", "aBcDeFgHiJkLmNoPq", "0123456789012345",
            " " * 17, "!#$%&()*+,-./:;<=>", "Hello there world"]  # fmt: skip
    texts = [
        f"{run[:length]}{chr(byte)}{tail}"
        for run in runs
        for length in range(8, 18)
        for byte in range(256)
        for tail in ("", "x yz 12 ,.\n")
    ]
    differing = [t for t in texts if scanner.pieces(t, 0, len(t)) != compiled.findall(t)]
    assert not differing, differing[:5]


# Code points past U+00FF of every class the patterns tell apart: letters of both cases and
# other letters, marks, digits, spaces, punctuation, symbols, CJK, a surrogate, the last ones.
WIDE_SAMPLES = (
    "\u0100\u0101\u01c5\u02b0\u05d0\u0301\u0663\u2003\u2014\u20ac\u3000\u4e00\uff10\udc80\uffff"
)


@pytest.mark.parametrize("pattern", NAMED, ids=["gpt2", "cl100k", "o200k"])
def test_every_character_after_a_long_run_in_a_2_byte_str(pattern: str) -> None:
    # The walk above in a 2-byte string (made so by a character before it), with code points
    # past U+00FF after the runs as well: a 2-byte string's runs are scanned code point by code
    # point (a SWAR skip of 8 narrowed units was measured slower: docs/performance.md).
    scanner, compiled = _scanner(pattern), COMPILED[pattern]
    runs = ["abcdefghijklmnopq", "ABCDEFGHIJKLMNOPQ", "aBcDeFgHiJkLmNoPq", "0123456789012345",
            " " * 17, "!#$%&()*+,-./:;<=>", "Hello there world"]  # fmt: skip
    after = [chr(b) for b in range(256)] + list(WIDE_SAMPLES)
    texts = [
        f"{lead}{run[:length]}{c}{tail}"
        for lead in ("\u0100", "\u0100 ", "\u2014x")
        for run in runs
        for length in range(8, 18)
        for c in after
        for tail in ("", "x yz 12 ,.\n", "\u0101 \u2014")
    ]
    differing = [t for t in texts if scanner.pieces(t, 0, len(t)) != compiled.findall(t)]
    assert not differing, differing[:5]


@pytest.mark.parametrize("pattern", [O200K_PATTERN, CL100K_PATTERN], ids=["o200k", "cl100k"])
def test_code_points_in_context(pattern: str) -> None:
    # Every 7th code point between letters of both cases, a digit, a space and a newline: a
    # wrong class changes the pieces (o200k_base tells the cases apart, cl100k_base letters from
    # marks). The text is long, so the GIL is released. tests/test_unicode_classes.py checks the
    # C table on every code point.
    scanner, compiled = _scanner(pattern), COMPILED[pattern]
    text = "".join(f"a{c}A{c}a{c}1{c} {c}\n" for c in map(chr, range(3, 0x110000, 7)))
    assert scanner.pieces(text, 0, len(text)) == compiled.findall(text)
    assert scanner.last_cut(text, 0, len(text)) == _expected_cut(pattern, text, 0, len(text))


def test_threads_scan_at_once() -> None:
    text = "It's 12345 words\r\n  and\u0301 ſ'S \U0001d400\U0001f600\u200d\U0001f600 " * 4000
    expected = COMPILED[O200K_PATTERN].findall(text)
    scanner = _scanner(O200K_PATTERN)
    results: list[list[str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(scanner.pieces(text, 0, len(text))))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_slices_are_clamped_as_regex_clamps_them() -> None:
    scanner = _scanner(CL100K_PATTERN)
    for start, end in ((-5, 3), (2, 100), (4, 2), (-9, -1)):
        expected = COMPILED[CL100K_PATTERN].findall("hello world", start, end)
        assert scanner.pieces("hello world", start, end) == expected, (start, end)


def test_bad_arguments_are_errors() -> None:
    from streamcodec.text import _scan  # type: ignore[attr-defined]

    with pytest.raises(TypeError, match="needs a str"):
        _scan.pieces(b"bytes", 0, 0, 5)
    with pytest.raises(ValueError, match="unknown pattern number 99"):
        _scan.pieces("text", 99, 0, 4)
    with pytest.raises(ValueError, match="unknown pattern number 3"):  # words' number
        _scan.pieces("text", 3, 0, 4)
    with pytest.raises(ValueError, match="no proven safe cuts for pattern 4"):
        _scan.last_cut("text", 4, 0, 4)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        _scan.last_cut("text", 0)
    assert _scan.UNICODE_VERSION == "16.0"


def test_other_patterns_and_the_python_backend_have_no_scanner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert native.native_scanner(r"\S+|\s+") is None
    # The backend chosen for an encoding reaches every compiled part: the pre-tokenizer and the
    # stream's safe-cut search (which once asked for the scanner whatever the backend).
    enc = Encoding(
        "x", pat_str=GPT2_PATTERN, mergeable_ranks=BYTES, special_tokens={}, backend="python"
    )
    assert enc.ordinary.pretokenizer.scanner is None
    assert cuts_for(enc.ordinary.pretokenizer)._native is None  # type: ignore[attr-defined]
    monkeypatch.setenv("STREAMCODEC_BACKEND", "python")
    assert (
        Encoding(
            "y", pat_str=GPT2_PATTERN, mergeable_ranks=BYTES, special_tokens={}
        ).ordinary.pretokenizer.scanner
        is None
    )
