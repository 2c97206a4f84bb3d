"""``--format datatrove``: datatrove's tokenized files, ``.ds``, ``.ds.index``, ``.ds.metadata``.

As its ``DocumentTokenizer``'s ``TokenizedFile`` writes them (unshuffled): ``.ds`` the ids, raw,
``uint16`` (2 bytes) when the vocabulary has at most 65,536 ids, else ``uint32`` (4 bytes);
``.ds.index`` each document's end, in ids, as little-endian uint64; ``.ds.metadata`` three
lines: ``NAME|TOKEN_SIZE``, the count of ids, and that count as ``humanize.metric`` writes it
with the unit ``T``. datatrove's ``DatatroveFolderDataset`` reads the folder's ``.ds`` files
(with ``token_size`` 2 or 4).

    >>> _metric(0), _metric(512), _metric(1_234), _metric(999_999), _metric(465_000_000)
    ('0.00 T', '512 T', '1.23 kT', '1.00 MT', '465 MT')
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, ClassVar

from streamcodec.corpus.shards import Layout, TokenShard, as_bytes
from streamcodec.corpus.writers import SUFFIXES
from streamcodec.corpus.writers.npy import map_ids

__all__ = ["Shard"]

_SIZE = {"uint16": 2, "uint32": 4}


def _metric(count: int, precision: int = 3) -> str:
    """``humanize.metric(count, unit="T")`` for a count of ids (a non-negative int)."""
    exponent = math.floor(math.log10(count)) if count else 0
    value = count / 10 ** (exponent // 3 * 3)
    digits = max(0, precision - exponent % 3 - 1)
    if round(value, digits) >= 10 ** (exponent % 3 + 1):  # 999,999 rounds up to 1.00 M
        exponent += 1
        value /= 10 ** (exponent // 3 * 3 - (exponent - 1) // 3 * 3)
        digits = max(0, precision - exponent % 3 - 1)
    prefix = "kMGTPEZYRQ"[exponent // 3 - 1] if exponent >= 3 else ""
    return f"{value:.{digits}f} {prefix}T"


class Shard(TokenShard):
    """``shard_NNNNN.ds``, ``shard_NNNNN.ds.index`` and ``shard_NNNNN.ds.metadata``."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["datatrove"]
    holds = "uint16 or uint32 (at most 4,294,967,296 ids)"

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "uint16" if n_vocab <= 1 << 16 else "uint32" if n_vocab <= 1 << 32 else None

    def index_files(self) -> Iterator[bytes]:
        yield as_bytes(self.ends, "uint64")
        size = _SIZE[self.layout.dtype]
        lines = [f"{self.layout.label}|{size}", str(self.tokens), _metric(self.tokens)]
        yield "\n".join(lines).encode("utf-8")

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        import numpy

        ends = map_ids(paths[1], "uint64", 0)
        ids = map_ids(paths[0], layout.dtype, 0, int(ends[-1]) if len(ends) else 0)
        offsets = numpy.concatenate([[0], ends]).astype(numpy.int64)
        if not bool(numpy.all(offsets[1:] >= offsets[:-1])):
            raise ValueError(f"{paths[1]}: the document ends do not rise")
        return ids, offsets
