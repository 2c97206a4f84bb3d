"""JSON Lines and Parquet as Arrow string columns, read off the GIL and encoded in place.

pyarrow's readers turn a block of JSON lines (:func:`json_column`: ``pyarrow.json``, on the
calling thread, the GIL released) or a batch of Parquet rows (:func:`parquet_column`) into an
Arrow string column, which the batch pass encodes straight from its UTF-8 buffers: no Python
object per document, so blocks on several threads run on several cores.

The Python readers (:func:`~streamcodec.corpus.jsonlines.json_documents`,
:func:`~streamcodec.corpus.inputs.row_documents`) are the reference. Wherever pyarrow could read
a block otherwise than ``json.loads`` does, or the block holds anything they refuse, these
return None and the block is left to them, so every id and every message is theirs:

- bytes that are not UTF-8 anywhere in the block (the Python reader decodes each whole line;
  pyarrow reads the fields it skips unchecked);
- a line that starts with a UTF-8 byte order mark (``json.loads`` refuses one; pyarrow skips
  it), a blank line, or not one object per line (pyarrow reads two objects on one line, and a
  lone ``\\r`` as a line's end): the column must have a row for each line;
- anything pyarrow refuses: not JSON, a line that is not an object, a field given twice, a
  field that is not a string (the schema says string, so pyarrow infers nothing), a lone
  surrogate escape, a number beyond a double (``json.loads`` reads it, in a skipped field);
- a missing or null field (a null row);
- the text of a special token in any document (unless the caller encodes them as text;
  :func:`holds_special`), and, for Parquet, invalid UTF-8 (the batch pass refuses it).
"""

from __future__ import annotations

import functools
import re
import struct
from typing import Any

from streamcodec.corpus.document import Reading
from streamcodec.corpus.jsonlines import Lines

__all__ = ["arrow_reads", "holds_special", "json_column", "parquet_column"]

_BOM = b"\xef\xbb\xbf"
_MOST = (1 << 31) - 2  # pyarrow's block size is 32-bit: a longer line is the Python reader's
_SPACE = b" \t\r\x0b\x0c"  # what bytes.strip() takes away, less the newline
_BLANK_INSIDE = re.compile(rb"\n[ \t\r\x0b\x0c]*\n")
_BLANK_FIRST = re.compile(rb"[ \t\r\x0b\x0c]*\n")


def arrow_reads(reading: Reading) -> bool:
    """Whether pyarrow reads JSON Lines blocks: installed, and no field kept (the kept
    fields are the Python reader's values, of any shape)."""
    if reading.keep:
        return False
    try:
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return True


def json_column(lines: Lines, reading: Reading) -> Any:
    """The text field of each line of ``lines`` as an Arrow string array, or None where the
    block is the Python reader's (the module docstring)."""
    import pyarrow
    import pyarrow.json

    data = lines.data
    if len(data) >= _MOST or data.startswith(_BOM) or b"\n" + _BOM in data:
        return None
    if _has_blank_line(data):
        return None
    try:
        _valid_utf8(data)
        table = pyarrow.json.read_json(
            pyarrow.BufferReader(data),
            read_options=pyarrow.json.ReadOptions(use_threads=False, block_size=len(data) + 1),
            parse_options=_parse_options(reading.field),
        )
    except (pyarrow.ArrowException, UnicodeDecodeError):
        return None
    if table.num_rows != lines.count:
        return None
    column = table.column(0).combine_chunks()
    return None if column.null_count else column


def _has_blank_line(data: bytes) -> bool:
    """Whether a line of ``data`` is blank as ``bytes.strip()`` sees it (the Python reader
    skips it, pyarrow too, and the rows would no longer be counted by lines)."""
    last = data[data.rfind(b"\n") + 1 :]
    if last and not last.strip(_SPACE):
        return True
    return bool(_BLANK_FIRST.match(data) or _BLANK_INSIDE.search(data))


@functools.lru_cache(maxsize=16)
def _parse_options(field: str) -> Any:
    import pyarrow
    import pyarrow.json

    schema = pyarrow.schema([pyarrow.field(field, pyarrow.string())])
    return pyarrow.json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")


def _valid_utf8(data: bytes) -> None:
    """``pyarrow.ArrowInvalid`` unless ``data`` is all UTF-8 (Arrow's check, as Python's:
    no surrogates, no overlong forms), without a copy (and without ``pyarrow.array``, whose
    first call imports pandas)."""
    import pyarrow

    bounds = pyarrow.py_buffer(struct.pack("<qq", 0, len(data)))
    whole = pyarrow.Array.from_buffers(
        pyarrow.large_string(), 1, [None, bounds, pyarrow.py_buffer(data)]
    )
    whole.validate(full=True)


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
    not be UTF-8, by ``re`` over its data, searched whole (a sliced array's other bytes can
    only say yes)."""
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
