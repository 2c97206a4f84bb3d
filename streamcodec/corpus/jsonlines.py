"""JSON Lines: an input's lines in blocks, and the Python reader of a block.

:func:`line_blocks` cuts the lines of a :class:`~streamcodec.corpus.document.Range` of an input
into :class:`Lines` of about a megabyte, whole lines only: a line belongs to the range it
starts in, so ranges cut anywhere never split or repeat a line. A block is read by pyarrow where
it can be (:mod:`streamcodec.corpus.columns`, off the GIL), else by :func:`json_documents`,
the reference: each line ``json.loads``-ed, its text in the field, every refusal naming
``file:line`` (no JSON, no field, not a string, invalid UTF-8, a lone surrogate).

    >>> import io
    >>> from streamcodec.corpus.document import Input, Range, Reading
    >>> inp = Input("a.jsonl", "jsonl", None, 32, 0)
    >>> f = io.BytesIO(b'{"text": "one"}\\n{"text": "two"}\\n')
    >>> [(block.start, block.number, block.line_count) for block in line_blocks(f, Range(0, 0, -1))]
    [(0, 1, 2)]
    >>> block = next(line_blocks(io.BytesIO(f.getvalue()), Range(0, 16, -1)))
    >>> [doc.text for doc in json_documents(inp, block, Reading())]
    ['two']
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple

from streamcodec.corpus.document import Document, Input, Reading, decode, line_place, span
from streamcodec.stream.sources import CHUNK_SIZE
from streamcodec.text.unicode import has_surrogates, replace_lone_surrogates

__all__ = ["Lines", "json_documents", "line_blocks"]


class Lines(NamedTuple):
    """Whole lines of an input: ``data``, from byte ``start`` of the (decompressed) input,
    its first line ``number`` (0: not counted, for a range that starts inside the file), and
    how many lines it holds, ``line_count`` (the last may lack its newline: the input's end)."""

    data: bytes | bytearray  # never changed once made
    start: int
    number: int
    line_count: int  # not "count": a tuple's method


def line_blocks(
    f: IO[bytes], part: Any, *, digest: Any = None, size: int = CHUNK_SIZE, first: int = 0
) -> Iterator[Lines]:
    """The lines starting in ``part``'s byte range (a ``Range``) of the stream ``f``, in blocks
    of whole lines of about ``size`` bytes (a longer line is a block alone); with ``first``,
    the first about ``first`` bytes and each next twice the last, up to ``size`` (so workers
    waiting on the first block start sooner). ``digest`` is fed the bytes read for the range:
    the rest of the line that started before it, then its lines."""
    position = part.start
    number = 0 if position > 0 else 1  # lines counted from the start (standard input's too)
    if position > 0:
        f.seek(position - 1)
        rest = f.readline()  # the rest of the line that started before
        if digest is not None:
            digest.update(rest)
        position += len(rest) - 1
    # each block read straight into a buffer of its own (no copy joins it), after what the
    # last read held of a line it did not end (carried: a long line doubles the next read)
    carried: bytes | bytearray = b""
    ended = False
    step = min(first, size) if first > 0 else size
    while not ended and (part.end < 0 or position < part.end):
        held = len(carried)
        data = bytearray(held + max(step, held))
        data[:held] = carried
        with memoryview(data) as view:
            got = f.readinto(view[held:])  # type: ignore[attr-defined]  # IO's stub lacks it
        del data[held + got :]
        step = min(2 * step, size)
        ended = not got
        # a line ends in what was read (each byte searched once), or none does: read on
        cut = len(data) if ended else data.rfind(b"\n", held) + 1
        if part.end >= 0 and part.end - position <= len(data):
            # the range ends in what is held: to the end of the line holding its last byte
            last = data.find(b"\n", part.end - position - 1)
            if last >= 0 or ended:
                cut, ended = (last + 1 if last >= 0 else len(data)), True
        if not cut:
            carried = data
            continue
        carried = bytes(data[cut:])
        del data[cut:]
        if digest is not None:
            digest.update(data)
        count = newlines(data) + (not data.endswith(b"\n"))
        yield Lines(data, position, number, count)
        position += len(data)
        number += count if number else 0


@functools.cache
def _native_newlines() -> Callable[[bytes | bytearray], int] | None:
    try:
        from streamcodec.corpus import _jsonl  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _jsonl.newlines  # type: ignore[no-any-return]


def newlines(data: bytes | bytearray) -> int:
    """``data.count(b"\\n")``, by the native reader where it is built (memchr, the GIL released:
    bytes.count holds it, at a quarter of a millisecond a megabyte)."""
    native = _native_newlines()
    return native(data) if native is not None else data.count(b"\n")


def json_documents(inp: Input, lines: Lines, reading: Reading) -> Iterator[Document]:
    """The documents of ``lines`` by the Python reader: each line a JSON object with the
    field (blank lines skipped)."""
    start, number = lines.start, lines.number
    data = lines.data
    begin = 0
    while begin < len(data):
        end = data.find(b"\n", begin) + 1 or len(data)
        line = data[begin:end]
        if line.strip():
            where = functools.partial(line_place, inp, start, number)
            record = _record(decode(line, inp, start, reading), reading.field, where)
            kept = None
            if reading.keep:
                kept = {
                    k: _no_lone_surrogates(record.get(k), k, reading, where) for k in reading.keep
                }
            text = _no_lone_surrogates(record[reading.field], reading.field, reading, where)
            yield Document(text, inp, start, span(inp, line), kept, number)
        start += len(line)
        number += number > 0
        begin = end


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


def _record(line: str, field: str, where: Callable[[], str]) -> dict[str, Any]:
    """The JSON object of a line, with text in ``field``."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at")  # json's "Invalid control character at"
        raise ValueError(f"{where()}: not a JSON line ({what} at column {exc.colno})") from None
    if isinstance(record, dict) and isinstance(record.get(field), str):
        return record
    if not isinstance(record, dict) or field not in record:
        keys = ", ".join(map(str, record)) if isinstance(record, dict) else type(record).__name__
        raise ValueError(
            f"{where()}: no field {field!r} in this JSON line (it has: {keys or 'nothing'}); "
            "pass --field NAME"
        )
    raise ValueError(f"{where()}: the field {field!r} is {type(record[field]).__name__}, not text")
