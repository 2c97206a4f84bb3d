"""The Unicode classes of the named pre-tokenizer patterns, independent of the installed ``regex``.

Which characters are letters, numbers, marks or spaces changes between Unicode versions, and with
it the pieces and so the ids. tiktoken 0.14 classifies with Unicode 16.0. The classes the named
patterns (``streamcodec.vocab.PATTERNS``) use were taken from the pinned ``regex`` once, over every
code point (astral ones and surrogates included), by ``tools/unicode_tables.py``, which writes them
to ``streamcodec/data/unicode_classes.txt`` (read here) and to the native scanner's C header
``streamcodec/text/_unicode_tables.h``. The suite regenerates both byte for byte and walks every
code point against ``regex``.

A class is named by its ``regex`` spelling; :func:`class_ranges` gives the union of several as
sorted, inclusive, non-adjacent code point ranges:

    >>> class_ranges(r"\\p{N}")[:2]
    ((48, 57), (178, 179))
    >>> class_ranges("(?i:s)")
    ((83, 83), (115, 115), (383, 383))
    >>> class_ranges(*LETTER) == class_ranges(r"\\p{L}")
    True
"""

from __future__ import annotations

import functools

__all__ = ["CLASSES", "LETTER", "UNICODE_VERSION", "class_ranges"]

UNICODE_VERSION = "16.0"
# The classes in the data file (disjoint but for the contraction letters), by regex spelling.
CLASSES = (
    r"\p{Lu}",
    r"\p{Lt}",
    r"\p{Ll}",
    r"\p{Lm}",
    r"\p{Lo}",
    r"\p{M}",
    r"\p{N}",
    r"\s",
    r"\p{P}",  # DeepSeek V3's pattern
    r"\p{S}",
    *(f"(?i:{letter})" for letter in "delmrstv"),
)
# \p{L} is the union of the five letter categories.
LETTER = (r"\p{Lu}", r"\p{Lt}", r"\p{Ll}", r"\p{Lm}", r"\p{Lo}")

Range = tuple[int, int]


def class_ranges(*spellings: str) -> tuple[Range, ...]:
    """The code points matched by any of ``spellings`` (each in :data:`CLASSES`, or ``\\p{L}``),
    as sorted inclusive ``(first, last)`` ranges, adjacent ranges joined."""
    table = _table()
    names = [name for s in spellings for name in (LETTER if s == r"\p{L}" else (s,))]
    unknown = [name for name in names if name not in table]
    if unknown:
        raise ValueError(f"unknown Unicode class {unknown[0]!r}; known: {', '.join(CLASSES)}")
    return _join(sorted(r for name in names for r in table[name]))


def _join(ranges: list[Range]) -> tuple[Range, ...]:
    joined: list[Range] = []
    for first, last in ranges:
        if joined and first <= joined[-1][1] + 1:
            joined[-1] = (joined[-1][0], max(last, joined[-1][1]))
        else:
            joined.append((first, last))
    return tuple(joined)


@functools.cache
def _table() -> dict[str, tuple[Range, ...]]:
    # Imported here: importlib.resources brings tempfile, shutil and random (3 ms of a start).
    from importlib import resources

    text = resources.files("streamcodec").joinpath("data/unicode_classes.txt").read_text("ascii")
    table = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        spelling, *spans = line.split(" ")
        table[spelling] = tuple(_range(span) for span in spans)
    return table


def _range(span: str) -> Range:
    first, _, last = span.partition("-")
    return int(first, 16), int(last or first, 16)
