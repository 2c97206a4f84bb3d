"""The pure path cuts the open models' patterns on the shipped Unicode tables (text/pinned.py):
the pinned pattern cuts as ``regex`` does on every code point where ``regex`` is Unicode 16.0
(the pinned release), and no ``regex`` is compiled for a pattern the native scanner knows.
With the newest ``regex`` (other Unicode): tests/test_newest_regex.py."""

from __future__ import annotations

import pytest
import regex

from streamcodec.formats.gguf_pre import PRE
from streamcodec.formats.split_gaps import GAPS
from streamcodec.text.known_patterns import (
    HF_BYTE_LEVEL_PATTERN,
    KNOWN_PATTERNS,
    QWEN35_PATTERN,
    native_name,
)
from streamcodec.text.pinned import pinned_pattern, pinned_re
from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.vocab import PATTERNS
from tests.test_newest_regex import probe


def _split_patterns() -> list[str]:
    steps = [p.pre_tokenizer.get("pretokenizers", [p.pre_tokenizer]) for p in PRE.values()]
    found = [s["pattern"]["Regex"] for ss in steps for s in ss if s.get("type") == "Split"]
    return list(dict.fromkeys(found))


#: Every pattern an open model's file may bring (the grammar's, Qwen 3.5's, each Split of the
#: GGUF table, as a Split cuts: with its gaps).
COVERED = [
    *dict.fromkeys(k.pattern for k in KNOWN_PATTERNS),
    QWEN35_PATTERN,
    HF_BYTE_LEVEL_PATTERN,
    *(GAPS.format(p.replace("\r", r"\r").replace("\n", r"\n")) for p in _split_patterns()),
]
TEXT = probe([c for c in range(0, 0x10000, 3) if not 0xD800 <= c <= 0xDFFF])
TEXT += probe(list(range(0x10000, 0x110000, 997)))


@pytest.mark.parametrize("pattern", COVERED, ids=range(len(COVERED)))
def test_the_pinned_pattern_cuts_as_regex(pattern: str) -> None:
    assert pinned_pattern(pattern) is not None
    pinned = pinned_re(pattern)
    assert pinned is not None
    assert pinned.findall(TEXT) == regex.findall(pattern, TEXT)


def test_a_known_pattern_compiles_no_regex_on_the_pure_path() -> None:
    for known in KNOWN_PATTERNS:
        pretokenizer = Pretokenizer(known.pattern, native=False)
        pinned = pretokenizer._pinned is not None or pretokenizer._fast_known  # named: templates
        assert pretokenizer._regex is None and pinned, known.name


@pytest.mark.parametrize(
    "pattern", [r"\w+", r"\d+|\s", r"\bx", r"(?i:q)", r"\p{Han}+", r"(?x) a", r"a."]
)
def test_what_cannot_be_pinned_is_left_to_regex(pattern: str) -> None:
    assert pinned_pattern(pattern) is None


def test_a_pinned_pattern_with_groups_gives_whole_matches() -> None:
    pattern = r"(a|b)+|\s|[^ab\s]+"
    assert pinned_pattern(pattern) is not None
    assert Pretokenizer(pattern, native=False).pieces("ab cab") == ["ab", " ", "c", "ab"]


@pytest.mark.parametrize(
    "spelling",
    [k.pattern for k in KNOWN_PATTERNS if native_name(k.pattern) in PATTERNS]
    + [HF_BYTE_LEVEL_PATTERN],
)
def test_every_spelling_of_a_named_pattern_is_that_pattern(spelling: str) -> None:
    """One notion of a known pattern (the grammar's shape): any spelling of a named pattern
    takes its templates and words on the pure path, and its proven stream cuts."""
    from streamcodec.stream.cuts import ProvenCuts, cuts_for

    pretokenizer = Pretokenizer(spelling, native=False)
    assert pretokenizer.named == PATTERNS[native_name(spelling) or ""]
    assert pretokenizer.pieces(TEXT) == regex.findall(spelling, TEXT)
    assert pretokenizer.words(TEXT) is not None
    assert isinstance(cuts_for(pretokenizer), ProvenCuts)
