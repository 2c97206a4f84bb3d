"""The one ``.npy`` header of the project: written with a fixed size, so data can stream first.

A one-dimensional ``.npy`` (version 1.0) array whose length is known only at the end: reserve
:data:`HEADER_SIZE` bytes, write the data, then :func:`npy_header` over the start. 128 bytes
hold any length and keep the data aligned. ``numpy.load(path, mmap_mode="r")`` reads the file;
:func:`read_npy_header` reads the header back without numpy. The corpus's shards
(``streamcodec.corpus.writers.npy``) and ``encode -f npy`` write it.

    >>> npy_header("uint16", 3)[:10], len(npy_header("uint16", 3))
    (b'\\x93NUMPY\\x01\\x00v\\x00', 128)
"""

from __future__ import annotations

import struct
from typing import BinaryIO

__all__ = ["HEADER_SIZE", "MAGIC", "npy_header", "read_npy_header"]

MAGIC = b"\x93NUMPY"
HEADER_SIZE = 128  # magic, version, length and the dict, padded
_DESCR = {"uint16": "<u2", "uint32": "<u4", "int32": "<i4", "int64": "<i8"}


def npy_header(dtype: str, length: int) -> bytes:
    """The ``.npy`` (version 1.0) header of a one-dimensional array of ``length`` items."""
    text = f"{{'descr': '{_DESCR[dtype]}', 'fortran_order': False, 'shape': ({length},), }}"
    body = text.encode("latin-1").ljust(HEADER_SIZE - 10 - 1) + b"\n"
    return MAGIC + b"\x01\x00" + struct.pack("<H", len(body)) + body


def read_npy_header(f: BinaryIO) -> tuple[str, int]:
    """The dtype and length of a one-dimensional ``.npy`` file (the file is left at the start
    of the data); ``ValueError`` for anything else."""
    start = f.read(10)
    if start[:8] != MAGIC + b"\x01\x00":
        raise ValueError("not a .npy file of version 1.0")
    (size,) = struct.unpack("<H", start[8:10])
    try:
        import ast  # only a reader needs it: not imported at a writing command's start

        header = ast.literal_eval(f.read(size).decode("latin-1"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        raise ValueError("a .npy header that is not a dict") from None
    dtypes = {descr: name for name, descr in _DESCR.items()}
    shape = header.get("shape", ()) if isinstance(header, dict) else ()
    if not isinstance(header, dict) or header.get("descr") not in dtypes or \
            header.get("fortran_order") or len(shape) != 1:  # fmt: skip
        raise ValueError(f"not a one-dimensional array of {', '.join(_DESCR)}: {header}")
    return dtypes[header["descr"]], int(header["shape"][0])
