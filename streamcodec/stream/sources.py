"""Sources: whatever the user hands over, read as text in chunks of bounded size.

A source is a ``str`` (text), an ``os.PathLike`` (a UTF-8 file), ``bytes``, a text or binary
file object, or an iterable of ``str`` or ``bytes`` chunks. :func:`text_chunks` turns any of them
into text chunks; every byte source is read by the one block reader (:func:`read_blocks`) and
decoded by the one UTF-8 reader (:func:`streamcodec.text.unicode.decode_utf8`).

    >>> list(text_chunks([b"caf\\xc3", b"\\xa9!"]))
    ['caf', 'é!', '']
    >>> list(line_blocks(["a\\nb", "c", "\\r\\nd"]))
    ['a\\n', 'bc\\r\\n', 'd']
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import IO, Any, TypeVar, Union

from streamcodec.text.unicode import decode_utf8

__all__ = [
    "CHUNK_SIZE",
    "Source",
    "SourceChangedError",
    "file_blocks",
    "find_in",
    "line_blocks",
    "read_blocks",
    "text_chunks",
    "version",
]

#: Characters or bytes read at a time.
CHUNK_SIZE = 1 << 20
#: What the streaming methods read: text, a path, bytes, a file object, or chunks.
Source = Union[
    str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[str], IO[bytes], Iterable[str | bytes]
]
AnyStr = TypeVar("AnyStr", str, bytes)


def read_blocks(
    f: IO[AnyStr], *, size: int = CHUNK_SIZE, limit: int | None = None
) -> Iterator[AnyStr]:
    """Read ``f`` in blocks of at most ``size``, up to ``limit`` in all (None: to the end)."""
    while limit is None or limit > 0:
        block = f.read(size if limit is None else min(size, limit))
        if not block:
            return
        if limit is not None:
            limit -= len(block)
        yield block


def find_in(f: IO[bytes], needle: bytes, *, size: int = CHUNK_SIZE) -> int | None:
    """The offset from where ``f`` stands of the first ``needle`` in it, read in blocks (a
    match may straddle two), or None."""
    offset, tail = 0, b""
    for block in read_blocks(f, size=size):
        data = tail + block
        if (found := data.find(needle)) >= 0:
            return offset - len(tail) + found
        tail = data[-(len(needle) - 1) :] if len(needle) > 1 else b""
        offset += len(block)
    return None


class SourceChangedError(ValueError):
    """A file changed (truncated, rewritten, grown) while it was read: the ids would be of
    neither version."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"{name}: the file changed while it was read (truncated or written to); "
            "encode it again once nothing writes to it"
        )
        self.name = name

    def __reduce__(self) -> tuple[type[SourceChangedError], tuple[str]]:
        return type(self), (self.name,)  # from a worker process, as it was raised


def file_blocks(
    f: IO[bytes], name: str, *, size: int = CHUNK_SIZE, limit: int | None = None
) -> Iterator[bytes]:
    """:func:`read_blocks` of a file, raising :class:`SourceChangedError` at its end when it
    ended short of ``limit``, or (a regular file read to its end) when its size or modification
    time is not what they were when the reading began."""
    before = os.fstat(f.fileno())
    read = 0
    for block in read_blocks(f, size=size, limit=limit):
        read += len(block)
        yield block
    if limit is not None:
        if read < limit:
            raise SourceChangedError(name)
    elif stat.S_ISREG(before.st_mode) and version(os.fstat(f.fileno())) != version(before):
        raise SourceChangedError(name)


def version(info: os.stat_result) -> tuple[int, int]:
    """What says a file changed: its size and modification time."""
    return info.st_size, info.st_mtime_ns


def text_chunks(
    source: Source,
    *,
    errors: str = "strict",
    progress: Callable[[int], object] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> Generator[str, None, None]:
    """The text of ``source`` in chunks of about ``chunk_size``.

    Bytes are decoded as UTF-8 incrementally with ``errors`` (``"strict"`` raises
    :class:`~streamcodec.text.unicode.InvalidUTF8Error` naming the byte offset); ``progress``
    is called with each count of bytes read.
    """
    if isinstance(source, str):
        yield from (source[i : i + chunk_size] for i in range(0, len(source), chunk_size))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        yield from decode_utf8([bytes(source)], errors=errors, name="<bytes>", progress=progress)
    elif isinstance(source, os.PathLike):
        with open(source, "rb") as f:
            name = os.fspath(source)
            blocks = file_blocks(f, name, size=chunk_size)
            yield from decode_utf8(blocks, errors=errors, name=name, progress=progress)
    elif hasattr(source, "read"):
        name = str(getattr(source, "name", "<file>"))
        blocks = read_blocks(source, size=chunk_size)  # type: ignore[arg-type]  # has read()
        yield from _decoded(blocks, errors, name, progress)
    else:
        yield from _decoded(iter(source), errors, "<chunks>", progress)


def _decoded(
    chunks: Iterator[Any], errors: str, name: str, progress: Callable[[int], object] | None
) -> Iterator[str]:
    """``chunks`` as text: as they are if the first is a ``str``, else decoded."""
    first = next(chunks, "")
    if isinstance(first, str):
        yield first
        yield from chunks
    else:
        blocks = _prepend(bytes(first), chunks)
        yield from decode_utf8(blocks, errors=errors, name=name, progress=progress)


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def line_blocks(chunks: Iterable[str]) -> Iterator[str]:
    """Streamed text in blocks of whole lines: each block but the last ends with LF.

    Line-based work gives the same result on the blocks as on the whole text, and only the
    longest line is held at once.
    """
    held: list[str] = []
    for chunk in chunks:
        cut = chunk.rfind("\n") + 1
        if not cut:
            held.append(chunk)
            continue
        yield "".join([*held, chunk[:cut]])
        held = [chunk[cut:]]
    rest = "".join(held)
    if rest:
        yield rest
