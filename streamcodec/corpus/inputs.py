"""A corpus's inputs opened (compressed or not) and cut into documents.

An :class:`Input` (found by :func:`streamcodec.corpus.finding.find_inputs`) has a *kind*:
JSON Lines (one document per line, the text in a field), Parquet (one document per row, the
text in a column; ``pyarrow``) or plain text (the file is one document, or documents split by a
separator). ``.gz``, ``.xz`` and ``.zst`` are read as streams (``zstandard`` for the last),
each file checked as :mod:`streamcodec.corpus.files` says (a regular file, the one planned,
decompressed to its proper end). Bad text is refused where it is (file:line, byte offset, row)
unless ``errors="replace"``: invalid UTF-8, and lone surrogates from JSON escapes.

:func:`documents` yields the documents of a :class:`Range` of an input: bytes ``[start, end)``
of an uncompressed JSON Lines file (a line belongs to the range it starts in, so ranges cut
anywhere never split or repeat a line), row groups ``[start, end)`` of a Parquet file, or the
whole input.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"text": "one"}\\n{"text": "two"}\\n')
    >>> info = os.stat(path)
    >>> inp = Input(path, "jsonl", None, info.st_size, info.st_mtime_ns)
    >>> [doc.text for doc in documents(inp, Range(0, 0, -1), Reading())]
    ['one', 'two']
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, Literal, cast

from streamcodec.corpus.files import Decompressed, Fingerprinted
from streamcodec.stream.sources import CHUNK_SIZE, find_in, read_blocks
from streamcodec.text.unicode import has_surrogates, replace_lone_surrogates

__all__ = [
    "STDIN",
    "Document",
    "Input",
    "Range",
    "Reading",
    "documents",
    "invalid_utf8",
    "line_number",
    "open_input",
    "parquet_row_groups",
    "where_in",
]

STDIN = "-"
Kind = Literal["text", "jsonl", "parquet"]


@dataclasses.dataclass(frozen=True)
class Input:
    """One input file (or standard input): its kind, compression, size and time on disk."""

    path: str
    kind: Kind
    compression: str | None
    size: int  # bytes on disk; -1 for standard input
    mtime_ns: int

    @property
    def splittable(self) -> bool:
        """Whether byte ranges of it can be read apart (an uncompressed JSON Lines file)."""
        return self.kind == "jsonl" and self.compression is None and self.path != STDIN

    @property
    def shown(self) -> str:
        return "<stdin>" if self.path == STDIN else self.path


@dataclasses.dataclass(frozen=True)
class Range:
    """Part of input ``input``: bytes (JSON Lines) or row groups (Parquet) ``[start, end)``;
    ``end == -1`` is to the end."""

    input: int
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class Reading:
    """How documents are read: the JSON field, the Parquet column, the plain-text separator
    (None: a file is one document), what invalid UTF-8 does (``strict`` or ``replace``), and
    the other fields (JSON) or columns (Parquet) kept with each document."""

    field: str = "text"
    column: str = "text"
    separator: bytes | None = None
    errors: str = "strict"
    stdin_kind: Kind = "text"
    keep: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Document:
    """A document's text, where it starts in its input (``offset``: bytes, or the row for
    Parquet) and how many bytes of the input on disk it spans (0 when compressed)."""

    text: str
    input: Input
    offset: int
    span: int = 0
    fields: dict[str, Any] | None = None  # those of Reading.keep (None: not kept)
    line: int = 0  # JSON Lines: its line, when counted as read (0: counted for a message)

    @property
    def where(self) -> str:
        """``file:line`` (JSON Lines), ``file at byte offset N`` or ``file at row N``."""
        if self.input.kind == "jsonl":
            return _line(self.input, self.offset, self.line)
        unit = "row" if self.input.kind == "parquet" else "byte offset"
        return f"{self.input.shown} at {unit} {self.offset}"


def open_input(inp: Input) -> IO[bytes]:
    """The input's bytes as a stream, decompressed to the stream's proper end, from the file
    the run planned (:mod:`streamcodec.corpus.files`: a change is an error, not other ids)."""
    if inp.path == STDIN:
        if sys.stdin is None:
            raise OSError(9, "standard input is closed", "<stdin>")
        return sys.stdin.buffer
    raw = Fingerprinted(inp.path, (inp.size, inp.mtime_ns))
    if inp.compression is None:
        return io.BufferedReader(raw, CHUNK_SIZE)
    return io.BufferedReader(Decompressed(raw, inp.path, inp.compression), CHUNK_SIZE)


@contextlib.contextmanager
def _reading(inp: Input) -> Iterator[IO[bytes]]:
    """:func:`open_input`, checked again once read: a part of a file read while it changed
    (not read to its end, where the reader checks it) fails too."""
    with open_input(inp) as f:
        yield f
        layer = getattr(f, "raw", None)
        if isinstance(layer, Decompressed):
            layer = layer.source
        if isinstance(layer, Fingerprinted):
            layer.check_unchanged()


def where_in(inp: Input, needle: bytes) -> str:
    """Where the first ``needle`` is in the (decompressed) input, for a message: ``file at
    byte offset N``; the file alone for standard input, which cannot be read again."""
    if inp.path == STDIN:
        return inp.shown
    with open_input(inp) as f:
        offset = find_in(f, needle)
    return inp.shown if offset is None else f"{inp.shown} at byte offset {offset}"


def documents(
    inp: Input, part: Range, reading: Reading, *, digest: Any = None
) -> Iterator[Document]:
    """The documents of ``part`` of ``inp``, in order. ``digest`` (a ``hashlib`` object) is
    fed what they were read from: the bytes read for the range (decompressed), or each Parquet
    row's text; so a rerun can tell the input's content changed when its size and time did
    not."""
    if inp.kind == "parquet":
        yield from _parquet_documents(inp, part, reading, digest)
        return
    with _reading(inp) as raw:
        f = raw if digest is None else cast(IO[bytes], _Hashed(raw, digest))
        if inp.kind == "jsonl":
            yield from _json_lines(inp, f, part, reading)
        elif reading.separator is None:
            data = f.read()
            yield Document(_decode(data, inp, 0, reading), inp, 0, span=_span(inp, data))
        else:
            yield from _split_text(inp, f, reading)


class _Hashed:
    """A stream whose bytes read (``read``, ``readline``) also feed ``digest``."""

    def __init__(self, f: IO[bytes], digest: Any) -> None:
        self._f, self._digest = f, digest

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        self._digest.update(data)
        return data

    def readline(self) -> bytes:
        data = self._f.readline()
        self._digest.update(data)
        return data

    def seek(self, offset: int) -> int:
        return self._f.seek(offset)


def _span(inp: Input, data: bytes) -> int:
    return 0 if inp.compression is not None else len(data)


def _decode(
    data: bytes, inp: Input, offset: int, reading: Reading, *, where: str | None = None
) -> str:
    try:
        return data.decode("utf-8", reading.errors)
    except UnicodeDecodeError as exc:
        raise invalid_utf8(where or inp.shown, offset + exc.start, exc.reason) from None


def invalid_utf8(source: str, offset: int, reason: str) -> ValueError:
    """The refusal of invalid UTF-8, naming where it is and the option that accepts it."""
    return ValueError(
        f"{source}: invalid UTF-8 at byte offset {offset} ({reason}); pass --errors replace "
        "(errors='replace') to read it as U+FFFD"
    )


def _split_text(inp: Input, f: IO[bytes], reading: Reading) -> Iterator[Document]:
    """Plain text cut at each separator (the separators belong to no document; a file that
    ends with one has no empty document after it)."""
    sep = reading.separator
    assert sep is not None
    pending, offset = bytearray(), 0  # offset: where ``pending`` starts in the input
    for block in read_blocks(f, size=CHUNK_SIZE):
        # a long document grows in place, and only its new end is searched: linear time
        searched = max(0, len(pending) - len(sep) + 1)
        pending += block
        start = 0
        while (found := pending.find(sep, max(start, searched))) >= 0:
            piece = bytes(pending[start:found])
            yield Document(
                _decode(piece, inp, offset + start, reading), inp, offset + start,
                span=_span(inp, piece) + len(sep) * (inp.compression is None),
            )  # fmt: skip
            start = found + len(sep)
        del pending[:start]
        offset += start
    if pending or offset == 0:
        rest = bytes(pending)
        yield Document(_decode(rest, inp, offset, reading), inp, offset, span=_span(inp, rest))


def _json_lines(inp: Input, f: IO[bytes], part: Range, reading: Reading) -> Iterator[Document]:
    """The lines starting in ``part``'s byte range, each a JSON object with the field."""
    position = part.start
    number = 0 if position > 0 else 1  # lines counted from the start (standard input's too)
    if position > 0:
        f.seek(position - 1)
        position += len(f.readline()) - 1  # the rest of the line that started before
    while part.end < 0 or position < part.end:
        line = f.readline()
        if not line:
            return
        start, position = position, position + len(line)
        if line.strip():
            where = functools.partial(_line, inp, start, number)
            record = _record(_decode(line, inp, start, reading), reading.field, where)
            kept = None
            if reading.keep:
                kept = {
                    k: _no_lone_surrogates(record.get(k), k, reading, where) for k in reading.keep
                }
            text = _no_lone_surrogates(record[reading.field], reading.field, reading, where)
            yield Document(text, inp, start, _span(inp, line), kept, number)
        number += number > 0


def _line(inp: Input, offset: int, number: int) -> str:
    """``file:line`` of the line at ``offset``: ``number`` when it was counted, else counted
    now (never for standard input, which cannot be read again)."""
    if number:
        return f"{inp.shown}:{number}"
    if inp.path == STDIN:
        return f"{inp.shown} at byte offset {offset}"
    return f"{inp.shown}:{line_number(inp, offset)}"


def _no_lone_surrogates(value: Any, field: str, reading: Reading, where: Callable[[], str]) -> Any:
    """A JSON value of ``field`` (text, or a kept field of any shape) with each string refused
    (strict) or replaced as tiktoken does (U+FFFD) when it holds a lone surrogate (an escape
    such as ``"\\ud800"`` with no pair): UTF-8 cannot hold one, so it is bad text as invalid
    UTF-8 is."""
    if isinstance(value, list):
        return [_no_lone_surrogates(item, field, reading, where) for item in value]
    if isinstance(value, dict):
        return {k: _no_lone_surrogates(v, field, reading, where) for k, v in value.items()}
    if not isinstance(value, str) or value.isascii() or not has_surrogates(value):
        return value
    if reading.errors == "replace":
        return replace_lone_surrogates(value)
    raise ValueError(
        f"{where()}: the field {field!r} holds a lone surrogate (a JSON escape such as "
        "\\ud800 without its pair), which is not text; pass --errors replace to read it as "
        "U+FFFD"
    )


def line_number(inp: Input, offset: int) -> int:
    """The 1-based line that starts at ``offset`` (newlines before it counted)."""
    if offset == 0:
        return 1
    count = 0
    with open_input(inp) as f:
        for block in read_blocks(f, limit=offset):
            count += block.count(b"\n")
    return count + 1


def _record(line: str, field: str, where: Callable[[], str]) -> dict[str, Any]:
    """The JSON object of a line, with text in ``field``."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where()}: not a JSON line ({exc.msg} at column {exc.colno})") from None
    if isinstance(record, dict) and isinstance(record.get(field), str):
        return record
    if not isinstance(record, dict) or field not in record:
        keys = ", ".join(map(str, record)) if isinstance(record, dict) else type(record).__name__
        raise ValueError(
            f"{where()}: no field {field!r} in this JSON line (it has: {keys or 'nothing'}); "
            "pass --field NAME"
        )
    raise ValueError(f"{where()}: the field {field!r} is {type(record[field]).__name__}, not text")


def parquet_row_groups(inp: Input) -> list[int]:
    """The bytes on disk of each row group of a Parquet input (the plan cuts between them);
    the last has the footer too, so they add up to the file's size."""
    with _parquet_file(inp) as parquet:
        metadata = parquet.metadata
    sizes = []
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        sizes.append(sum(group.column(j).total_compressed_size for j in range(group.num_columns)))
    if sizes:
        sizes[-1] += inp.size - sum(sizes)
    return sizes


@contextlib.contextmanager
def _parquet_file(inp: Input) -> Iterator[Any]:
    """The ``pyarrow.parquet.ParquetFile`` of ``inp``, read through :class:`Fingerprinted`
    (the planned file, unchanged when it is closed after a read in full)."""
    try:
        import pyarrow.parquet
    except ImportError:
        raise ImportError(
            f"{inp.path}: reading Parquet needs pyarrow: pip install pyarrow"
        ) from None
    with Fingerprinted(inp.path, (inp.size, inp.mtime_ns)) as raw:
        try:
            parquet = pyarrow.parquet.ParquetFile(raw)
        except (OSError, pyarrow.ArrowException) as exc:
            raise ValueError(f"{inp.path}: not a readable Parquet file ({exc})") from None
        yield parquet
        raw.check_unchanged()


def _parquet_documents(
    inp: Input, part: Range, reading: Reading, digest: Any
) -> Iterator[Document]:
    import pyarrow

    with _parquet_file(inp) as parquet:
        wanted = [(reading.column, "pass --column NAME")]
        wanted += [(name, "check --keep") for name in reading.keep]
        for name, advice in wanted:
            if name not in parquet.schema_arrow.names:
                columns = ", ".join(parquet.schema_arrow.names)
                raise ValueError(f"{inp.path}: no column {name!r} (it has: {columns}); {advice}")
        end = parquet.metadata.num_row_groups if part.end < 0 else part.end
        row = sum(parquet.metadata.row_group(i).num_rows for i in range(part.start))
        for group in range(part.start, end):
            try:
                table = parquet.read_row_group(group, columns=[reading.column, *reading.keep])
            except (OSError, pyarrow.ArrowException) as exc:
                raise ValueError(f"{inp.path}: row group {group} is unreadable ({exc})") from None
            kept = table.select(list(reading.keep)).to_pylist() if reading.keep else None
            for i, value in enumerate(_as_bytes(table.column(0)).to_pylist()):
                if digest is not None and isinstance(value, bytes):
                    digest.update(len(value).to_bytes(8, "little") + value)
                text = _row_text(value, inp, row, reading)
                yield Document(text, inp, row, fields=None if kept is None else kept[i])
                row += 1


def _as_bytes(values: Any) -> Any:
    """A text column as its bytes (no copy), so each row is decoded here: invalid UTF-8 is
    refused with its row and byte offset, or replaced under ``errors='replace'``."""
    import pyarrow

    if pyarrow.types.is_string(values.type):
        return values.cast(pyarrow.binary())
    if pyarrow.types.is_large_string(values.type):
        return values.cast(pyarrow.large_binary())
    return values


def _row_text(value: object, inp: Input, row: int, reading: Reading) -> str:
    """A row's value as text, or the error that names the row."""
    if isinstance(value, bytes):
        return _decode(value, inp, 0, reading, where=f"{inp.path} at row {row}")
    if not isinstance(value, str):
        raise ValueError(
            f"{inp.path} at row {row}: the column {reading.column!r} is "
            f"{type(value).__name__}, not text"
        )
    return value
