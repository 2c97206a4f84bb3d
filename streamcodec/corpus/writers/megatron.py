"""``--format megatron``: Megatron-Core's indexed dataset, ``.bin`` and ``.idx``.

As ``megatron/core/datasets/indexed_dataset.py``'s ``IndexedDatasetBuilder`` writes it, each
document one sequence (``preprocess_data.py`` without sentence splitting; ``--eos`` is its
``--append-eod``): ``.bin`` the ids, raw; ``.idx`` the header ``MMIDIDX\\x00\\x00``, u64 version 1,
u8 type code (8 = uint16 when the vocabulary has under 65,500 ids, as its ``optimal_dtype``
chooses, else 4 = int32), u64 sequence count, u64 document count (plus one), then each
sequence's length (int32), each sequence's byte offset in ``.bin`` (int64), and the document
indices (int64, 0 to the count). Megatron reads the pair by its prefix: ``tokens/shard_00000``.

    >>> _index([3, 5], "uint16")[:26]
    b'MMIDIDX\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x08\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, ClassVar

from streamcodec.corpus.shards import Layout, TokenShard, as_bytes
from streamcodec.corpus.writers import SUFFIXES
from streamcodec.corpus.writers.npy import map_ids

__all__ = ["CODES", "Shard"]

MAGIC = b"MMIDIDX\x00\x00"
CODES = {"uint16": 8, "int32": 4}  # Megatron's DType values
_ITEM = {"uint16": 2, "int32": 4}
_FIXED = len(MAGIC) + 8 + 1 + 8 + 8


def _index(ends: list[int], dtype: str) -> bytes:
    starts = [0, *ends][:-1]
    lengths = [end - start for start, end in zip(starts, ends, strict=True)]
    head = MAGIC + struct.pack("<QBQQ", 1, CODES[dtype], len(ends), len(ends) + 1)
    pointers = [start * _ITEM[dtype] for start in starts]
    return b"".join([head, as_bytes(lengths, "int32"), as_bytes(pointers, "int64"),
                     as_bytes(range(len(ends) + 1), "int64")])  # fmt: skip


class Shard(TokenShard):
    """``shard_NNNNN.bin`` and ``shard_NNNNN.idx``."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["megatron"]
    holds = "uint16 or int32 (at most 2,147,483,648 ids)"

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "uint16" if n_vocab < 65500 else "int32" if n_vocab <= 1 << 31 else None

    def index_files(self) -> Iterator[bytes]:
        yield _index(self.ends, self.layout.dtype)

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        import numpy

        with open(paths[1], "rb") as f:
            data = f.read()
        if len(data) < _FIXED or data[: len(MAGIC)] != MAGIC:
            raise ValueError(f"{paths[1]}: not a Megatron index (no MMIDIDX header)")
        version, code, sequences, documents = struct.unpack("<QBQQ", data[len(MAGIC) : _FIXED])
        want = _FIXED + sequences * (4 + 8) + documents * 8
        if (version, code) != (1, CODES[layout.dtype]) or len(data) != want or \
                documents != sequences + 1:  # fmt: skip
            raise ValueError(
                f"{paths[1]}: version {version}, type code {code}, {sequences} sequences, "
                f"{documents} document indices in {len(data)} bytes: not the index of "
                f"{layout.dtype} documents this corpus writes"
            )
        lengths = numpy.frombuffer(data, "<i4", sequences, _FIXED)
        offsets = numpy.concatenate([[0], numpy.cumsum(lengths, dtype=numpy.int64)])
        pointers = numpy.frombuffer(data, "<i8", sequences, _FIXED + 4 * sequences)
        indices = numpy.frombuffer(data, "<i8", documents, _FIXED + 12 * sequences)
        if not (numpy.array_equal(pointers, offsets[:-1] * _ITEM[layout.dtype])
                and numpy.array_equal(indices, numpy.arange(documents))):  # fmt: skip
            raise ValueError(f"{paths[1]}: the pointers or document indices do not follow "
                             "the lengths")  # fmt: skip
        return map_ids(paths[0], layout.dtype, 0, int(offsets[-1])), offsets
