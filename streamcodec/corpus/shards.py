"""Shards on disk: plain ``.npy`` files that ``numpy.load(path, mmap_mode="r")`` maps.

A shard is two files: ``shard_00000.npy``, the ids of its documents one after another (each
followed by the separator token, if any), as ``uint16`` when every id of the vocabulary fits,
else ``uint32``; and ``shard_00000.offsets.npy``, ``int64``, where each document starts, plus the
end (so document ``i`` is ``ids[offsets[i]:offsets[i + 1]]``). The ids are written as they come,
so memory does not grow with the shard: the header, which holds the length, is written last
over a placeholder of the same size. Each file is replaced whole or not at all
(:mod:`streamcodec.atomicfile`).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with ShardWriter(folder, 0, "uint16") as shard:
    ...     shard.add([1, 2, 3]); shard.end_document(); shard.add([4]); shard.end_document()
    >>> shard.tokens, shard.documents
    (4, 2)
    >>> import numpy
    >>> numpy.load(os.path.join(folder, "shard_00000.offsets.npy")).tolist()
    [0, 3, 4]
"""

from __future__ import annotations

import array
import ast
import contextlib
import hashlib
import os
import struct
import sys
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import BinaryIO

from streamcodec.atomicfile import atomic_output

__all__ = ["ShardWriter", "dtype_for", "read_npy_header", "sha256_file", "shard_names"]

_TYPECODES = {"uint16": "H", "uint32": "I", "int64": "q"}
_DESCR = {"uint16": "<u2", "uint32": "<u4", "int64": "<i8"}
_HEADER_SIZE = 128  # magic, version, length and the dict, padded: room for any shape


def dtype_for(n_vocab: int) -> str:
    """``uint16`` when every id (0 to ``n_vocab - 1``) fits in it, else ``uint32``."""
    if n_vocab - 1 > 0xFFFF_FFFF:
        raise OverflowError(f"a vocabulary of {n_vocab} ids does not fit in uint32")
    return "uint16" if n_vocab - 1 <= 0xFFFF else "uint32"


def shard_names(index: int) -> tuple[str, str]:
    """The file names of shard ``index``: its ids and its document offsets."""
    return f"shard_{index:05d}.npy", f"shard_{index:05d}.offsets.npy"


def _header(dtype: str, length: int) -> bytes:
    text = f"{{'descr': '{_DESCR[dtype]}', 'fortran_order': False, 'shape': ({length},), }}"
    body = text.encode("latin-1").ljust(_HEADER_SIZE - 10 - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


def read_npy_header(f: BinaryIO) -> tuple[str, int]:
    """The dtype and length of a one-dimensional ``.npy`` file written here (the file is left at
    the start of the data); ``ValueError`` for anything else."""
    start = f.read(10)
    if start[:8] != b"\x93NUMPY\x01\x00":
        raise ValueError("not a .npy file of version 1.0")
    (size,) = struct.unpack("<H", start[8:10])
    header = ast.literal_eval(f.read(size).decode("latin-1"))
    dtypes = {descr: name for name, descr in _DESCR.items()}
    shape = header.get("shape", ())
    if header.get("descr") not in dtypes or header.get("fortran_order") or len(shape) != 1:
        raise ValueError(f"not a one-dimensional array of {', '.join(_DESCR)}: {header}")
    return dtypes[header["descr"]], int(header["shape"][0])


def _as_bytes(values: Iterable[int], dtype: str) -> bytes:
    """Little-endian bytes; ``OverflowError`` for a value the type cannot hold (never wraps)."""
    data = array.array(_TYPECODES[dtype], values)
    if sys.byteorder == "big":
        data.byteswap()
    return data.tobytes()


class ShardWriter:
    """Writes shard ``index`` into ``folder``: :meth:`add` ids, :meth:`end_document` after each
    document; both files are in place when the ``with`` block ends without an error."""

    def __init__(self, folder: str, index: int, dtype: str) -> None:
        self.paths = tuple(os.path.join(folder, name) for name in shard_names(index))
        self.dtype = dtype
        self.tokens = 0
        self.documents = 0
        self._offsets = [0]
        self._stack = contextlib.ExitStack()
        self._out: BinaryIO | None = None

    def __enter__(self) -> ShardWriter:
        self._out = self._stack.enter_context(atomic_output(self.paths[0]))
        self._out.write(_header(self.dtype, 0))
        return self

    def add(self, ids: Iterable[int]) -> None:
        """Append ids to the document in hand."""
        assert self._out is not None
        data = _as_bytes(ids, self.dtype)
        self._out.write(data)
        self.tokens += len(data) // array.array(_TYPECODES[self.dtype]).itemsize

    def end_document(self) -> None:
        """End the document in hand (its separator, if any, already added)."""
        self._offsets.append(self.tokens)
        self.documents += 1

    def add_documents(self, documents: Iterable[Sequence[int]], separator: list[int]) -> None:
        """Append whole documents, each followed by ``separator``, in one write (as many
        :meth:`add` and :meth:`end_document` calls would)."""
        assert self._out is not None
        data = array.array(_TYPECODES[self.dtype])
        for ids in documents:
            # A same-kind array is copied whole; any other is converted id by id, with an
            # OverflowError for an id the type cannot hold.
            data.extend(ids if getattr(ids, "typecode", None) == data.typecode else list(ids))
            data.extend(separator)
            self._offsets.append(self.tokens + len(data))
            self.documents += 1
        if sys.byteorder == "big":
            data.byteswap()
        self._out.write(data.tobytes())
        self.tokens += len(data)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if kind is None:
                assert self._out is not None
                with atomic_output(self.paths[1]) as offsets:
                    offsets.write(_header("int64", len(self._offsets)))
                    offsets.write(_as_bytes(self._offsets, "int64"))
                self._out.seek(0)
                self._out.write(_header(self.dtype, self.tokens))
                self._out.seek(0, os.SEEK_END)
        finally:
            self._stack.__exit__(kind, exc, tb)


def sha256_file(path: str) -> str:
    """The SHA-256 of the file at ``path``, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
