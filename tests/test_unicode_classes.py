"""The generated Unicode tables regenerate byte for byte and equal ``regex`` on every code point.

Both need the installed ``regex`` to have the tables' Unicode version (pyproject.toml pins it);
with another version they skip, naming the two versions.
"""

from __future__ import annotations

import functools

import pytest
import regex

from streamcodec.text.unicode_classes import CLASSES, UNICODE_VERSION, class_ranges
from tools import unicode_tables

CODE_POINTS = 0x110000
# Every class the named patterns spell (streamcodec.vocab.PATTERNS), as regex spells it, and the
# same class from the tables: (spellings whose union it is, extra code points, negated).
PATTERN_CLASSES = {
    r"\p{L}": ((r"\p{L}",), "", False),
    r"\p{N}": ((r"\p{N}",), "", False),
    r"\s": ((r"\s",), "", False),
    r"\S": ((r"\s",), "", True),
    r"[^\s\p{L}\p{N}]": ((r"\s", r"\p{L}", r"\p{N}"), "", True),
    r"[^\r\n\p{L}\p{N}]": ((r"\p{L}", r"\p{N}"), "\r\n", True),
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]": (
        (r"\p{Lu}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"),
        "",
        False,
    ),
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]": ((r"\p{Ll}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"), "", False),
    **{f"(?i:{letter})": ((f"(?i:{letter})",), "", False) for letter in "sdmtlver"},
    # DeepSeek V3's (streamcodec.formats.hf_sequences)
    r"[\p{P}\p{S}]": ((r"\p{P}", r"\p{S}"), "", False),
    r"[^\r\n\p{L}\p{P}\p{S}]": ((r"\p{L}", r"\p{P}", r"\p{S}"), "\r\n", True),
    r"[\p{L}\p{M}]": ((r"\p{L}", r"\p{M}"), "", False),
}


@pytest.fixture(scope="module", autouse=True)
def _pinned_unicode() -> None:
    version = unicode_tables.regex_unicode_version()
    if version != UNICODE_VERSION:
        pytest.skip(
            f"the installed regex {regex.__version__} has Unicode {version}; the tables are"
            f" Unicode {UNICODE_VERSION} (the regex pinned in pyproject.toml)"
        )


@functools.cache
def _every_code_point() -> str:
    return "".join(map(chr, range(CODE_POINTS)))


def _regex_ranges(spelling: str) -> list[tuple[int, int]]:
    runs = regex.finditer(f"(?:{spelling})+", _every_code_point())
    return [(a, b - 1) for a, b in (run.span() for run in runs)]


def _complement(ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    gaps, start = [], 0
    for first, last in ranges:
        if first > start:
            gaps.append((start, first - 1))
        start = last + 1
    return [*gaps, (start, CODE_POINTS - 1)] if start < CODE_POINTS else gaps


def test_tables_regenerate_byte_for_byte() -> None:
    assert unicode_tables.main(["--check"]) == 0


@pytest.mark.parametrize("spelling", PATTERN_CLASSES)
def test_every_code_point_classified_as_regex_does(spelling: str) -> None:
    spellings, extra, negated = PATTERN_CLASSES[spelling]
    ranges = class_ranges(*spellings)
    if extra:
        ranges = tuple(sorted([*ranges, *((ord(c), ord(c)) for c in extra)]))
    expected = _complement(ranges) if negated else list(ranges)
    assert _regex_ranges(spelling) == expected


def test_every_class_in_the_data_file_is_known() -> None:
    assert all(class_ranges(spelling) for spelling in CLASSES)
    with pytest.raises(ValueError, match="unknown Unicode class"):
        class_ranges(r"\p{Sm}")


def _c_array(header: str, name: str) -> list[int]:
    body = regex.search(rf"{name}\[[^=]*= \{{(.*?)\n\}};", header, regex.S)
    assert body is not None, name
    return [int(v) for v in regex.findall(r"\d+", body.group(1))]


def test_the_c_table_classifies_every_code_point_as_the_data_file() -> None:
    # What the native scanner's uc_class() reads, read back from the header's two arrays.
    header = unicode_tables.HEADER_OUTPUT.read_text()
    index, blocks = _c_array(header, "uc_block_index"), _c_array(header, "uc_blocks")
    size = 1 << unicode_tables.BLOCK_BITS
    flags = bytes(
        blocks[index[code >> unicode_tables.BLOCK_BITS] * size + code % size]
        for code in range(CODE_POINTS)
    )
    for bit, spellings in enumerate(unicode_tables.C_FLAGS.values()):
        assert _runs(flags, 1 << bit) == list(class_ranges(*spellings)), spellings
    folds = regex.findall(r"((?:case 0x[0-9a-f]+: )+)return '(\w)';", header)
    for cases, letter in folds:
        codes = [int(c, 16) for c in regex.findall(r"0x([0-9a-f]+)", cases)]
        assert codes == [c for a, b in class_ranges(f"(?i:{letter})") for c in range(a, b + 1)]
    assert len(folds) == len(unicode_tables.FOLDS)


def _runs(flags: bytes, bit: int) -> list[tuple[int, int]]:
    runs, start = [], None
    for code, value in enumerate(flags):
        if value & bit and start is None:
            start = code
        elif not value & bit and start is not None:
            runs.append((start, code - 1))
            start = None
    return runs if start is None else [*runs, (start, CODE_POINTS - 1)]
