"""``--format streamcodec``: plain NumPy files; the ``.offsets.npy`` of formats with no index.

A shard is ``shard_00000.npy``, its ids (``uint16`` when every id of the vocabulary fits, else
``uint32``), and ``shard_00000.offsets.npy``, ``int64``, where each document starts, then the
end. ``numpy.load(path, mmap_mode="r")`` reads both. The header has a fixed size
(:mod:`streamcodec.npyfile`), so the ids' file is written as the ids come and its header last.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from streamcodec.corpus.shards import Layout, TokenShard, as_bytes
from streamcodec.corpus.writers import SUFFIXES
from streamcodec.npyfile import HEADER_SIZE, npy_header, read_npy_header

__all__ = ["Shard", "load_offsets", "map_ids", "offsets_file"]


def offsets_file(ends: Sequence[int]) -> bytes:
    """``.offsets.npy``: 0, then where each document ends (int64)."""
    return npy_header("int64", len(ends) + 1) + as_bytes([0, *ends], "int64")


def map_ids(path: str, dtype: str, offset: int, count: int | None = None) -> Any:
    """The ids of a file from byte ``offset``, mapped read-only (``count`` of them, or all);
    ``ValueError`` naming the file when it is short or ends in part of an id."""
    import numpy

    kind = numpy.dtype(dtype).newbyteorder("<")
    size = os.path.getsize(path) - offset
    if size < 0 or size % kind.itemsize or (count is not None and size != count * kind.itemsize):
        want = "" if count is None else f", not {count:,} ids"
        raise ValueError(f"{path}: {size} bytes of {dtype} ids after the header{want}: truncated?")
    if size == 0:
        return numpy.zeros(0, kind)
    return numpy.memmap(path, kind, mode="r", offset=offset)


def load_offsets(path: str, tokens: int) -> Any:
    """A ``.offsets.npy`` file, checked: from 0, rising, ending at ``tokens``."""
    import numpy

    with open(path, "rb") as f:
        dtype, length = read_npy_header(f)
    offsets = map_ids(path, dtype, HEADER_SIZE, length)
    rising = bool(numpy.all(offsets[1:] >= offsets[:-1]))
    if dtype != "int64" or not (
        len(offsets) and offsets[0] == 0 and offsets[-1] == tokens and rising
    ):
        raise ValueError(f"{path}: the offsets are not 0, rising, then {tokens}")
    return numpy.asarray(offsets)


class Shard(TokenShard):
    """``shard_NNNNN.npy`` and ``shard_NNNNN.offsets.npy``."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["streamcodec"]
    holds = "uint16 or uint32 (at most 4,294,967,296 ids)"
    header_size = HEADER_SIZE

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "uint16" if n_vocab <= 1 << 16 else "uint32" if n_vocab <= 1 << 32 else None

    def header(self) -> bytes:
        return npy_header(self.layout.dtype, self.tokens)

    def index_files(self) -> Iterator[bytes]:
        yield offsets_file(self.ends)

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        with open(paths[0], "rb") as f:
            try:
                dtype, length = read_npy_header(f)
            except ValueError as exc:
                raise ValueError(f"{paths[0]}: {exc}") from None
        if dtype != layout.dtype:
            raise ValueError(f"{paths[0]}: {dtype} ids, not the manifest's {layout.dtype}")
        ids = map_ids(paths[0], dtype, HEADER_SIZE, length)
        return ids, load_offsets(paths[1], length)
