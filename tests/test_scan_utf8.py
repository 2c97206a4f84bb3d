"""The block step over a str's own UTF-8 (``streamcodec/text/_scan_utf8.h``), which the fused
pass takes for a 2- or 4-byte str encoded again (``K(fused_utf8)``, engine/_fused_kind.h): its
pieces, cut 64 bytes at a time with the classes of the code points whose bytes they are, must
be ``regex``'s, so the ids, arrays and counts must be tiktoken's, wherever a code point of each
class falls in a block's bytes. Each text is encoded three times: the first call reads the str as
it is, the others through its UTF-8. Skipped unless the compiled code is built.
"""

from __future__ import annotations

import functools

import pytest

import streamcodec
from streamcodec.text import native
from streamcodec.text.known_patterns import KNOWN_PATTERNS
from streamcodec.vocab import GPT2_PATTERN
from tests.conftest import tiktoken_twin

pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None, reason="the native scanner is not built"
)

# About two blocks of ASCII prose: the block step cuts all of it but where a test puts a code
# point past ASCII.
PROSE = (
    "The quick brown Fox jumps over 12345 lazy dogs, then rests.\n\nIn 1999 the HTMLParser "
    "read  two   spaces and a tab\there; (see section 3.14) for more -- or less!\r\nEnd of it"
)

# Code points of 2, 3 and 4 UTF-8 bytes of each class the UTF-8 block sorts: letters of both
# cases (Cyrillic, Greek), Lt, Lm, Lo (CJK, Bengali), marks, Latin-1 letters, digits (Arabic-
# Indic: hard), whitespace (NBSP, em and ideographic space, line separator, NEL: hard), symbols
# and punctuation (euro, curly quote, em dash, fullwidth comma), the long s (a contraction's s,
# folded: hard after an apostrophe), an astral emoji.
WIDE = (
    "\u0436\u0416\u03c9\u01c5\u02b0\u4e2d\u09ac\u0301\u09be\xe9\xc9\u0663\xa0\u2003\u3000"
    "\u2028\x85\u20ac\u201c\u2014\uff0c\u017f\U0001f600"
)
# Around each: alone, after a space, a run of it, before and after letters, before an
# apostrophe's contraction, after an apostrophe, and after punctuation (the letter prefix).
AROUND = ("{}", " {}", "{}{}{}{}", "ab{}cd", "{}'s", "x'{}", ".{}x", "{}{}.x", "\n{}")


@functools.cache
def _encodings() -> tuple[tuple[streamcodec.Encoding, object], ...]:
    """r50k_base, cl100k_base and o200k_base; cl100k_base's ranks with Llama 3's pattern."""
    ours = [streamcodec.get_encoding(name) for name in ("r50k_base", "cl100k_base", "o200k_base")]
    llama3 = next(k.pattern for k in KNOWN_PATTERNS if k.name == "llama3")
    ours.append(
        streamcodec.Encoding(
            "llama3", pat_str=llama3, mergeable_ranks=ours[1].mergeable_ranks, special_tokens={}
        )
    )
    return tuple((enc, tiktoken_twin(enc)) for enc in ours)


@pytest.mark.parametrize("wide", list(WIDE), ids=[f"U+{ord(c):04X}" for c in WIDE])
def test_the_utf8_block_step_at_every_offset(wide: str) -> None:
    """Each code point in each surrounding at every byte offset of a block's first two blocks,
    in a 2-byte and a 4-byte str (an emoji at the end)."""
    for ours, theirs in _encodings():
        for around in AROUND:
            piece = around.format(wide, wide, wide, wide)
            for at in range(0, 130):
                for tail in ("\u0416" * 24, "\U0001f642" * 24):
                    text = PROSE[:at] + piece + PROSE[at:] + PROSE + tail
                    expected = theirs.encode_ordinary(text)  # type: ignore[attr-defined]
                    for _ in range(3):
                        assert ours.encode_ordinary(text) == expected, (piece, at)
                        assert ours.encode_to_numpy(text).tolist() == expected, (piece, at)
                        assert ours.ordinary.count(text) == len(expected), (piece, at)


def test_wide_text_through_utf8() -> None:
    """Text dense in code points past ASCII (every block's classes from its UTF-8), in runs of
    each length, each text encoded three times."""
    words = [
        "\u0436\u0416\u0436",
        "\u4e2d\u6587",
        "\u03c9\u03a9",
        "e\u0301",
        "\U0001f600",
        "\u0663",
    ]
    for ours, theirs in _encodings():
        for k in range(1, 40):
            text = " ".join(words[j % len(words)] * (1 + j % 5) for j in range(k * 7)) + "\u0416"
            text = text[: 20 + 9 * k] + " x's \u2014" + text
            expected = theirs.encode_ordinary(text)  # type: ignore[attr-defined]
            for _ in range(3):
                assert ours.encode_ordinary(text) == expected, k
                assert ours.ordinary.count(text) == len(expected), k
