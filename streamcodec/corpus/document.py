"""What every reader of a corpus's inputs shares: an input, a part of it, how it is read, a
document, the input's bytes, and where a place in it is, for a message.

The readers of each kind build on these: :mod:`streamcodec.corpus.jsonlines` (JSON Lines, by
the Python reader or pyarrow's), :mod:`streamcodec.corpus.inputs` (plain text, Parquet, and
:func:`~streamcodec.corpus.inputs.documents`, the one entry). An input is read through
:mod:`streamcodec.corpus.files`: the file the run planned, decompressed to its proper end.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import IO, Any, Literal, NamedTuple

from streamcodec.corpus.files import Decompressed, Fingerprinted
from streamcodec.stream.sources import CHUNK_SIZE, read_blocks

__all__ = [
    "STDIN",
    "Document",
    "Input",
    "Kind",
    "Range",
    "Reading",
    "decode",
    "invalid_utf8",
    "line_number",
    "line_place",
    "open_input",
    "reading_input",
    "span",
]

STDIN = "-"
Kind = Literal["text", "jsonl", "parquet"]


class Input(NamedTuple):
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


class Range(NamedTuple):
    """Part of input ``input``: bytes (JSON Lines) or row groups (Parquet) ``[start, end)``;
    ``end == -1`` is to the end."""

    input: int
    start: int
    end: int


class Reading(NamedTuple):
    """How documents are read: the JSON field, the Parquet column, the plain-text separator
    (None: a file is one document), what invalid UTF-8 does (``strict`` or ``replace``), and
    the other fields (JSON) or columns (Parquet) kept with each document."""

    field: str = "text"
    column: str = "text"
    separator: bytes | None = None
    errors: str = "strict"
    stdin_kind: Kind = "text"
    keep: tuple[str, ...] = ()


class Document(NamedTuple):
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
            return line_place(self.input, self.offset, self.line)
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
def reading_input(inp: Input) -> Iterator[IO[bytes]]:
    """:func:`open_input`, checked again once read: a part of a file read while it changed
    (not read to its end, where the reader checks it) fails too."""
    with open_input(inp) as f:
        yield f
        layer = getattr(f, "raw", None)
        if isinstance(layer, Decompressed):
            layer = layer.source
        if isinstance(layer, Fingerprinted):
            layer.check_unchanged()


def span(inp: Input, data: bytes | bytearray) -> int:
    """The bytes on disk that ``data`` read from ``inp`` spans (0 when compressed)."""
    return 0 if inp.compression is not None else len(data)


def decode(
    data: bytes | bytearray, inp: Input, offset: int, reading: Reading, *, where: str | None = None
) -> str:
    """``data`` (at byte ``offset`` of ``inp``) as text, or the refusal naming where."""
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


def line_place(inp: Input, offset: int, number: int) -> str:
    """``file:line`` of the line at ``offset``: ``number`` when it was counted, else counted
    now (never for standard input, which cannot be read again)."""
    if number:
        return f"{inp.shown}:{number}"
    if inp.path == STDIN:
        return f"{inp.shown} at byte offset {offset}"
    return f"{inp.shown}:{line_number(inp, offset)}"


def line_number(inp: Input, offset: int) -> int:
    """The 1-based line that starts at ``offset`` (newlines before it counted)."""
    if offset == 0:
        return 1
    count = 0
    with open_input(inp) as f:
        for block in read_blocks(f, limit=offset):
            count += block.count(b"\n")
    return count + 1
