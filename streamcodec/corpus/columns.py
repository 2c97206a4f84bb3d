"""JSON Lines and Parquet as columns of text, read off the GIL and encoded in place.

A block of JSON lines is read by the native reader (:func:`json_column`, ``corpus/_jsonl.c``,
the GIL released) into one run of UTF-8 with its offsets (``FlatTexts``), a batch of Parquet
rows by pyarrow (:func:`parquet_column`) into an Arrow string column; the batch pass encodes
either straight from its buffers: no Python object per document, so blocks on several threads
run on several cores.

The Python readers (:func:`~streamcodec.corpus.jsonlines.json_documents`,
:func:`~streamcodec.corpus.inputs.row_documents`) are the reference. Wherever a block could be
read otherwise than they read it, or holds anything they refuse, these return None and the block
is left to them, so every id and every message is theirs:

- JSON Lines: anything but UTF-8 lines of one JSON object each, read exactly as ``json.loads``
  reads them, with the field a string given once (``_jsonl.c`` lists what it leaves: a key with
  an escape, a lone surrogate, NaN, a long number, a byte order mark, ...); any field kept
  (``--keep``: the kept fields are the Python reader's values, of any shape);
- Parquet: a text column of another type, a null row, and invalid UTF-8 (the batch pass refuses
  it);
- the text of a special token in any document (unless the caller encodes them as text;
  :func:`holds_special` for Parquet, the native reader itself for JSON Lines).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from streamcodec.batch import FlatTexts
from streamcodec.corpus.document import Reading
from streamcodec.corpus.jsonlines import Lines

__all__ = ["holds_special", "json_column", "json_reads", "parquet_column"]


def json_reads(reading: Reading) -> bool:
    """Whether the native reader reads JSON Lines blocks: built, and no field kept."""
    if reading.keep:
        return False
    try:
        from streamcodec.corpus import _jsonl  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        return False
    return True


def json_column(lines: Lines, reading: Reading, specials: frozenset[str]) -> FlatTexts | None:
    """The text field of each line of ``lines`` (blank lines skipped) as one run of UTF-8, or
    None where the block is the Python reader's (the module docstring; a document holding one
    of ``specials`` too)."""
    from streamcodec.corpus import _jsonl  # type: ignore[attr-defined]

    try:  # a name no UTF-8 key spells (a lone surrogate, from argv): the Python reader's
        field = reading.field.encode("utf-8")
    except UnicodeEncodeError:
        return None
    found = _jsonl.text_column(lines.data, field, lines.line_count, _utf8_texts(specials))
    return None if found is None else FlatTexts(*found)


@functools.lru_cache(maxsize=16)
def _utf8_texts(specials: frozenset[str]) -> tuple[bytes, ...]:
    return tuple(token.encode("utf-8") for token in sorted(_in_utf8(specials)))


def parquet_column(values: Any) -> Any:
    """A Parquet batch's text column as an Arrow array the batch pass reads ((large) string or
    binary, no null), or None where the rows are the Python reader's."""
    import pyarrow

    if isinstance(values, pyarrow.ChunkedArray):
        values = values.combine_chunks()
    kind = values.type
    text = pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind)
    if not (text or pyarrow.types.is_binary(kind) or pyarrow.types.is_large_binary(kind)):
        return None
    return None if values.null_count else values


def holds_special(column: Any, specials: frozenset[str]) -> bool:
    """Whether the text of one of ``specials`` is in a value of the Arrow array ``column``
    (a yes sends the block to the Python reader, which finds where). A string column is
    searched by Arrow's RE2 with the GIL released; a binary one (Parquet), whose bytes may
    not be UTF-8, by ``re`` over its data, searched whole (a sliced array's other bytes, and a
    special across two values' bytes, can only say yes)."""
    specials = _in_utf8(specials)  # one with a lone surrogate is in no UTF-8 text
    if not specials:
        return False
    import pyarrow
    import pyarrow.compute

    if pyarrow.types.is_string(column.type) or pyarrow.types.is_large_string(column.type):
        found = pyarrow.compute.match_substring_regex(column, _re2_alternatives(specials))
        return bool(pyarrow.compute.any(found).as_py())
    data = column.buffers()[2]
    return data is not None and _special_bytes(specials).search(memoryview(data)) is not None


@functools.lru_cache(maxsize=16)
def _in_utf8(specials: frozenset[str]) -> frozenset[str]:
    return frozenset(t for t in specials if not any(0xD800 <= ord(c) <= 0xDFFF for c in t))


@functools.lru_cache(maxsize=16)
def _re2_alternatives(specials: frozenset[str]) -> str:
    """An RE2 pattern matching any of ``specials`` literally (its metacharacters escaped,
    control characters as ``\\xNN``)."""
    meta = set("\\.+*?()|[]{}^$")

    def literal(char: str) -> str:
        if char in meta:
            return "\\" + char
        return f"\\x{ord(char):02x}" if ord(char) < 0x20 or char == "\x7f" else char

    return "|".join("".join(map(literal, token)) for token in sorted(specials))


@functools.lru_cache(maxsize=16)
def _special_bytes(specials: frozenset[str]) -> re.Pattern[bytes]:
    return re.compile(b"|".join(re.escape(token.encode("utf-8")) for token in sorted(specials)))
