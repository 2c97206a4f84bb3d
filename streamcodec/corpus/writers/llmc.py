"""``--format llmc``: llm.c's ``.bin``, a header of 256 int32 then the ids.

As ``dev/data/data_common.py``'s ``write_datafile`` writes it: the header's first three int32s
are a magic number, a version and the count of ids, the rest zeros; then the ids. GPT-2 sized
vocabularies (at most 65,536 ids) are ``uint16`` under magic 20240520, version 1; larger ones
``uint32`` under magic 20240801, version 7 (its Llama 3 path). llm.c's own limit holds: fewer
than 2**31 ids a file (a smaller ``--shard-size`` otherwise). llm.c's loader reads files named
by a glob (``-i 'tokens/shard_*.bin'``); ``shard_00000.offsets.npy`` is ours.

    >>> import numpy
    >>> header = numpy.frombuffer(_header("uint16", 6), numpy.int32)
    >>> header[:4].tolist(), len(header)
    ([20240520, 1, 6, 0], 256)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, ClassVar

from streamcodec.corpus.shards import Layout, TokenShard
from streamcodec.corpus.writers import SUFFIXES
from streamcodec.corpus.writers.npy import load_offsets, map_ids, offsets_file

__all__ = ["HEADERS", "Shard"]

#: The ids' type: (magic, version), as llm.c's HEADERS_INFO has them.
HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
_HEADER_INTS = 256
_MOST = (1 << 31) - 1


def _header(dtype: str, tokens: int) -> bytes:
    magic, version = HEADERS[dtype]
    return struct.pack("<3i", magic, version, tokens) + bytes(4 * (_HEADER_INTS - 3))


class Shard(TokenShard):
    """``shard_NNNNN.bin`` (llm.c's) and ``shard_NNNNN.offsets.npy``."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["llmc"]
    holds = "uint16 or uint32 (at most 4,294,967,296 ids)"
    header_size = 4 * _HEADER_INTS

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "uint16" if n_vocab <= 1 << 16 else "uint32" if n_vocab <= 1 << 32 else None

    def header(self) -> bytes:
        if self.tokens > _MOST:
            raise ValueError(
                f"{self.paths[0]}: {self.tokens:,} ids, past llm.c's limit of 2**31 - 1 a "
                "file; pass a smaller --shard-size"
            )
        return _header(self.layout.dtype, self.tokens)

    def index_files(self) -> Iterator[bytes]:
        yield offsets_file(self.ends)

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        with open(paths[0], "rb") as f:
            head = f.read(4 * _HEADER_INTS)
        if len(head) < 4 * _HEADER_INTS:
            raise ValueError(f"{paths[0]}: shorter than llm.c's header of 1024 bytes")
        magic, version, count = struct.unpack("<3i", head[:12])
        if (magic, version) != HEADERS[layout.dtype]:
            raise ValueError(
                f"{paths[0]}: magic {magic}, version {version}: not llm.c's header of "
                f"{layout.dtype} ids {HEADERS[layout.dtype]}"
            )
        ids = map_ids(paths[0], layout.dtype, 4 * _HEADER_INTS, count)
        return ids, load_offsets(paths[1], count)
