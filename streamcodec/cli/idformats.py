"""Token ids on disk: ``ids`` (decimal, one per line), ``u32``, ``npy``; ``jsonl`` is per line.

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
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from streamcodec.cli.inputs import binary_input, blocks
from streamcodec.cli.progress import Progress

__all__ = ["FORMATS", "READERS", "WRITERS", "read_jsonl"]

FORMATS = ["ids", "jsonl", "u32", "npy"]
NPY_PREAMBLE = 128  # bytes before the data of a .npy we write: room for any length, aligned


def write_ids(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """Decimal ids, one per line."""
    count = 0
    for ids in chunks:
        if ids:
            out.write(("\n".join(map(str, ids)) + "\n").encode())
            count += len(ids)
    return count


def write_u32(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """Little-endian uint32s."""
    count = 0
    for ids in chunks:
        data = array("I", ids)
        if sys.byteorder == "big":
            data.byteswap()
        out.write(data.tobytes())
        count += len(ids)
    return count


def write_npy(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    """A ``.npy`` uint32 vector; ``out`` must be seekable."""
    # The length is known only at the end: reserve the header, write the data, then the header.
    out.write(_npy_header(0))
    count = write_u32(chunks, out)
    out.seek(0)
    out.write(_npy_header(count))
    out.seek(0, os.SEEK_END)
    return count


def _npy_header(count: int) -> bytes:
    """The ``.npy`` (version 1.0) header of a uint32 vector of ``count`` items."""
    header = f"{{'descr': '<u4', 'fortran_order': False, 'shape': ({count},), }}"
    header += " " * (NPY_PREAMBLE - 10 - len(header) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")


def read_ids(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Whitespace-separated decimal ids; a number split across blocks waits for its end."""
    rest = b""
    for block in blocks(path, progress):
        numbers = (rest + block).split()
        rest = numbers.pop() if numbers and not block[-1:].isspace() else b""
        yield [int(number) for number in numbers]
    if rest:
        yield [int(rest)]


def read_u32(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Little-endian uint32s; a partial one at the end is an error."""
    rest = b""
    for block in blocks(path, progress):
        data = rest + block
        whole = len(data) - len(data) % 4
        yield _u32_ids(data[:whole])
        rest = data[whole:]
    if rest:
        raise ValueError(f"{path}: {len(rest)} bytes at the end are not a whole uint32")


def _u32_ids(data: bytes) -> list[int]:
    ids = array("I")
    ids.frombytes(data)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids.tolist()


def read_npy(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """A ``.npy`` vector of integers, memory-mapped."""
    import numpy

    if path == "-":  # numpy needs a seekable file: read standard input whole
        data = numpy.load(io.BytesIO(sys.stdin.buffer.read()))
    else:
        data = numpy.load(path, mmap_mode="r")
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise ValueError(f"{path}: expected a vector of integer ids, got {data.dtype} {data.shape}")
    step = 1 << 18
    for start in range(0, len(data), step):
        part = data[start : start + step]
        if progress is not None:
            progress(part.nbytes)
        yield part.tolist()


def read_jsonl(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """One JSON list of ids per line."""
    with binary_input(path) as f:
        for number, line in enumerate(f, start=1):
            if progress is not None:
                progress(len(line))
            try:
                yield [int(token) for token in json.loads(line)]
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a JSON list of ids ({exc})") from None


WRITERS: dict[str, Callable[[Iterable[list[int]], BinaryIO], int]] = {
    "ids": write_ids,
    "u32": write_u32,
    "npy": write_npy,
}
READERS: dict[str, Callable[[str, Progress | None], Iterator[list[int]]]] = {
    "ids": read_ids,
    "u32": read_u32,
    "npy": read_npy,
}
