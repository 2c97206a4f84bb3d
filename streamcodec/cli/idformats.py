"""Token ids on disk: ``ids`` (decimal, one per line), ``u32``, ``u16``, ``npy``; ``jsonl`` is
per line. Without ``-f`` the format is the file name's suffix (:func:`format_for`).

Writers take the encoder's chunks of ids and return how many they wrote; readers yield chunks of
ids from a path (``-`` is standard input)::

    >>> import io
    >>> out = io.BytesIO()
    >>> write_ids([[9906, 11], [1917]], out), out.getvalue()
    (3, b'9906\\n11\\n1917\\n')
"""

from __future__ import annotations

import io
import json
import os
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NoReturn

from streamcodec.cli.inputs import binary_input, blocks, is_regular_file, shown_name
from streamcodec.cli.progress import Progress
from streamcodec.formats.jsondoc import TOO_DEEP
from streamcodec.npyfile import MAGIC as NPY_MAGIC
from streamcodec.npyfile import npy_header

__all__ = ["FORMATS", "READERS", "WRITERS", "format_for", "read_jsonl"]

FORMATS = ["ids", "jsonl", "u32", "u16", "npy"]
MAX_DIGITS = 10  # ids are uint32: 4294967295 has 10 digits
WRITE_IDS = 1 << 16  # ids turned into text at a time


def write_ids(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """Decimal ids, one per line, a slice of a chunk at a time: the chunk of one huge piece
    holds millions of ids, whose digits at once took 60 bytes an id more."""
    count = 0
    for ids in chunks:
        for start in range(0, len(ids), WRITE_IDS):
            out.write(("\n".join(map(str, ids[start : start + WRITE_IDS])) + "\n").encode())
        count += len(ids)
    return count


def format_for(path: str | None, given: str | None) -> str:
    """``given`` (``-f``), else the format ``path``'s suffix names: ``ids`` for no suffix (a
    FIFO, ``/dev/stdout``) or ``.txt``; another suffix (``.bin``: which of u16, u32?) is
    refused, naming ``-f``.

    >>> format_for("big.npy", None), format_for("big.npy", "ids"), format_for("-", None)
    ('npy', 'ids', 'ids')
    """
    if given is not None:
        return given
    suffix = os.path.splitext(path or "")[1].lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    if suffix in ("", "txt"):
        return "ids"
    raise ValueError(
        f"{path}: the suffix .{suffix} names no format of ids; pass -f with one of "
        f"{', '.join(FORMATS)} (or name the file .{', .'.join(FORMATS)} or .txt)"
    )


def write_u32(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """Little-endian uint32s."""
    return _write_fixed(chunks, out, "I")


def write_u16(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """Little-endian uint16s (nanoGPT's GPT-2 files); an id past 65,535 is an error."""
    return _write_fixed(chunks, out, "H")


def _write_fixed(chunks: Iterable[list[int]], out: BinaryIO, code: str) -> int:
    count = 0
    for ids in chunks:
        try:
            data = array(code, ids)
        except OverflowError:
            big = next(i for i in ids if i > 0xFFFF)
            raise ValueError(
                f"id {big} does not fit in 16 bits (u16 holds ids up to 65,535): use -f u32"
            ) from None
        if sys.byteorder == "big":
            data.byteswap()
        out.write(data.tobytes())
        count += len(ids)
    return count


def write_npy(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """A ``.npy`` uint32 vector; ``out`` must be seekable."""
    # The length is known only at the end: reserve the header, write the data, then the header.
    out.write(npy_header("uint32", 0))
    count = write_u32(chunks, out)
    out.seek(0)
    out.write(npy_header("uint32", count))
    out.seek(0, os.SEEK_END)
    return count


def read_ids(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Whitespace-separated decimal ids, read in whole lines; anything else names its line."""
    rest, line = b"", 1
    for block in blocks(path, progress):
        data = rest + block
        if line == 1 and data.startswith(NPY_MAGIC):
            raise ValueError(f"{shown_name(path)} is a NumPy .npy file: pass -f npy")
        end = data.rfind(b"\n") + 1 or _after_last_space(data)
        yield _parse_ids(data[:end], path, line)
        line += data.count(b"\n", 0, end)
        rest = data[end:]
    yield _parse_ids(rest, path, line)


def _after_last_space(data: bytes) -> int:
    """Where a line without its end may be cut between numbers (a number longer than any id
    is cut anyway, to be refused rather than held)."""
    end = max(data.rfind(space) for space in (b" ", b"\t", b"\r", b"\v", b"\f")) + 1
    return end or (len(data) if len(data) > MAX_DIGITS else 0)


def _parse_ids(data: bytes, path: str, line: int) -> list[int]:
    numbers = data.split()
    if all(number.isdigit() and len(number) <= MAX_DIGITS for number in numbers):
        return list(map(int, numbers))
    for offset, text in enumerate(data.split(b"\n")):
        for number in text.split():
            if not number.isdigit() or len(number) > MAX_DIGITS:
                shown = number.decode("utf-8", "replace")
                raise ValueError(f"{shown_name(path)}:{line + offset}: {_not_an_id(shown)}")
    raise AssertionError("unreachable: some number was refused above")


def _not_an_id(shown: str) -> str:
    if shown.isascii() and shown.isdigit():
        return f"an id of {len(shown):,} digits is too large (ids have at most {MAX_DIGITS})"
    if len(shown) > 40:
        shown = shown[:40] + "..."
    return f"{shown!r} is not a token id (ids are decimal integers such as 15339)"


def read_u32(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Little-endian uint32s; a partial one at the end is an error."""
    return _read_fixed(path, progress, "I")


def read_u16(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Little-endian uint16s; a partial one at the end is an error."""
    return _read_fixed(path, progress, "H")


def _read_fixed(path: str, progress: Progress | None, code: str) -> Iterator[list[int]]:
    rest, size = b"", array(code).itemsize
    for block in blocks(path, progress):
        data = rest + block
        whole = len(data) - len(data) % size
        yield _fixed_ids(data[:whole], code)
        rest = data[whole:]
    if rest:
        name = f"uint{size * 8}"
        raise ValueError(f"{shown_name(path)}: {len(rest)} bytes at the end are not a whole {name}")


def _fixed_ids(data: bytes, code: str) -> list[int]:
    ids = array(code)
    ids.frombytes(data)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids.tolist()


def read_npy(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """A ``.npy`` vector of non-negative integers, memory-mapped when it is a file."""
    try:
        import numpy
    except ImportError:
        raise ValueError("-f npy needs numpy: pip install numpy") from None
    name = shown_name(path)
    try:
        if is_regular_file(path):
            data = numpy.load(path, mmap_mode="r", allow_pickle=False)
        else:  # numpy needs a seekable file: read a stream whole
            with binary_input(path) as f:
                data = numpy.load(io.BytesIO(f.read()), allow_pickle=False)
    except (ValueError, EOFError, OSError) as exc:
        if isinstance(exc, OSError) and exc.filename is not None:
            raise
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: not a valid .npy file ({reason})") from None
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected a vector of integer ids, got {data.dtype} {data.shape}")
    step = 1 << 18
    for start in range(0, len(data), step):
        part = data[start : start + step]
        if progress is not None:
            progress(part.nbytes)
        yield part.tolist()


def read_jsonl(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """One JSON list of ids per line; blank lines only at the end."""
    blank = 0  # the first of the blank lines seen so far
    with binary_input(path) as f:
        for number, line in enumerate(f, start=1):
            if progress is not None:
                progress(len(line))
            if not line.strip():
                blank = blank or number
                continue
            where = f"{shown_name(path)}:{blank or number}"
            if blank:
                raise ValueError(f"{where}: a blank line, where a JSON list of ids is due")
            yield _json_ids(line, where)


def _json_ids(line: bytes, where: str) -> list[int]:
    try:
        ids = json.loads(line, parse_int=_json_id, parse_float=_refuse, parse_constant=_refuse)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{where}: {TOO_DEEP}") from None
    if not isinstance(ids, list):
        raise ValueError(f"{where}: expected a JSON list of ids, got {type(ids).__name__}")
    for token in ids:
        if type(token) is not int:  # True is an int to Python, not an id
            raise ValueError(f"{where}: {_not_an_id(json.dumps(token))}")
    return ids


def _json_id(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
        raise ValueError(_not_an_id(text))
    return int(text)


def _refuse(text: str) -> NoReturn:
    raise ValueError(_not_an_id(text))


WRITERS: dict[str, Callable[[Iterable[list[int]], BinaryIO], int]] = {
    "ids": write_ids,
    "u32": write_u32,
    "u16": write_u16,
    "npy": write_npy,
}
READERS: dict[str, Callable[[str, Progress | None], Iterator[list[int]]]] = {
    "ids": read_ids,
    "u32": read_u32,
    "u16": read_u16,
    "npy": read_npy,
}
