"""A corpus's inputs cut into documents: :func:`documents`, whatever the kind.

An :class:`~streamcodec.corpus.document.Input` (found by
:func:`streamcodec.corpus.finding.find_inputs`) has a *kind*: JSON Lines (one document per line,
the text in a field: :mod:`streamcodec.corpus.jsonlines`), Parquet (one document per row, the
text in a column; ``pyarrow``: here) or plain text (the file is one document, or documents split
by a separator: here). ``.gz``, ``.xz`` and ``.zst`` are read as streams (``zstandard`` for the
last), each file checked as :mod:`streamcodec.corpus.files` says (a regular file, the one
planned, decompressed to its proper end). Bad text is refused where it is (file:line, byte
offset, row) unless ``errors="replace"``: invalid UTF-8, and lone surrogates from JSON escapes.

:func:`documents` yields the documents of a :class:`~streamcodec.corpus.document.Range` of an
input, read by the Python readers (the reference; the corpus tool reads most JSON Lines blocks
and Parquet batches by pyarrow instead, :mod:`streamcodec.corpus.columns`): bytes ``[start,
end)`` of an uncompressed JSON Lines file (a line belongs to the range it starts in, so ranges
cut anywhere never split or repeat a line), row groups ``[start, end)`` of a Parquet file, or
the whole input.

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
from collections.abc import Iterator
from typing import IO, Any, NamedTuple, cast

from streamcodec.corpus.document import (
    STDIN,
    Document,
    Input,
    Range,
    Reading,
    decode,
    open_input,
    reading_input,
    span,
)
from streamcodec.corpus.files import Fingerprinted
from streamcodec.corpus.jsonlines import json_documents, line_blocks
from streamcodec.stream.sources import CHUNK_SIZE, find_in, read_blocks

__all__ = [
    "Rows",
    "documents",
    "parquet_batches",
    "parquet_row_groups",
    "row_documents",
    "where_in",
]


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
        for rows in parquet_batches(inp, part, reading, digest):
            yield from row_documents(rows, reading)
        return
    with reading_input(inp) as raw:
        if inp.kind == "jsonl":
            for lines in line_blocks(raw, part, digest=digest):
                yield from json_documents(inp, lines, reading)
            return
        f = raw if digest is None else cast(IO[bytes], _Hashed(raw, digest))
        if reading.separator is None:
            data = f.read()
            yield Document(decode(data, inp, 0, reading), inp, 0, span=span(inp, data))
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
                decode(piece, inp, offset + start, reading), inp, offset + start,
                span=span(inp, piece) + len(sep) * (inp.compression is None),
            )  # fmt: skip
            start = found + len(sep)
        del pending[:start]
        offset += start
    if pending or offset == 0:
        rest = bytes(pending)
        yield Document(decode(rest, inp, offset, reading), inp, offset, span=span(inp, rest))


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


class Rows(NamedTuple):
    """Rows of a Parquet input read together: the text column's ``values`` (an Arrow array,
    as read), the first ``row``'s number, and each row's kept columns (None: none kept)."""

    input: Input
    row: int
    values: Any
    kept: list[dict[str, Any]] | None


def parquet_batches(
    inp: Input, part: Range, reading: Reading, digest: Any, *, size: int = CHUNK_SIZE
) -> Iterator[Rows]:
    """The rows of ``part``'s row groups in batches of about ``size`` bytes (by the row
    group's size), decoded by pyarrow on this thread; ``digest`` is fed each row's text."""
    with _parquet_file(inp) as parquet:
        wanted = [(reading.column, "pass --column NAME")]
        wanted += [(name, "check --keep") for name in reading.keep]
        for name, advice in wanted:
            if name not in parquet.schema_arrow.names:
                columns = ", ".join(parquet.schema_arrow.names)
                raise ValueError(f"{inp.path}: no column {name!r} (it has: {columns}); {advice}")
        metadata = parquet.metadata
        end = metadata.num_row_groups if part.end < 0 else part.end
        row = sum(metadata.row_group(i).num_rows for i in range(part.start))
        for group in range(part.start, end):
            info = metadata.row_group(group)
            rows = max(1, info.num_rows * size // max(1, info.total_byte_size))
            batches = parquet.iter_batches(rows, row_groups=[group], use_threads=False,
                                           columns=[reading.column, *reading.keep])  # fmt: skip
            while (batch := _next_batch(batches, inp, group)) is not None:
                values = batch.column(reading.column)
                if digest is not None:
                    for value in _as_bytes(values).to_pylist():
                        if isinstance(value, bytes):
                            digest.update(len(value).to_bytes(8, "little") + value)
                kept = batch.select(list(reading.keep)).to_pylist() if reading.keep else None
                yield Rows(inp, row, values, kept)
                row += batch.num_rows


def _next_batch(batches: Iterator[Any], inp: Input, group: int) -> Any:
    """The next batch of rows (None at the end), or the error naming the row group."""
    import pyarrow

    try:
        return next(batches, None)
    except (OSError, pyarrow.ArrowException) as exc:
        raise ValueError(f"{inp.path}: row group {group} is unreadable ({exc})") from None


def row_documents(rows: Rows, reading: Reading) -> Iterator[Document]:
    """The documents of ``rows`` by the Python reader: each row's bytes decoded here, so
    invalid UTF-8 is refused naming the row and byte offset (or replaced), and a value that is
    not text names its row."""
    for i, value in enumerate(_as_bytes(rows.values).to_pylist()):
        text = _row_text(value, rows.input, rows.row + i, reading)
        fields = None if rows.kept is None else rows.kept[i]
        yield Document(text, rows.input, rows.row + i, fields=fields)


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
        return decode(value, inp, 0, reading, where=f"{inp.path} at row {row}")
    if not isinstance(value, str):
        raise ValueError(
            f"{inp.path} at row {row}: the column {reading.column!r} is "
            f"{type(value).__name__}, not text"
        )
    return value
