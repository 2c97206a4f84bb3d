"""``--format nanogpt``: nanoGPT's ``.bin``, raw little-endian ``uint16`` ids and nothing else.

nanoGPT's ``data/openwebtext/prepare.py`` writes each document's ``encode_ordinary`` ids then
the end-of-text token, as ``uint16``, into one file with no header, and ``train.py`` maps it with
``np.memmap(path, dtype=np.uint16, mode="r")``. ``shard_00000.bin`` is that; shards joined
(``cat shard_*.bin > train.bin``) are too. Only a vocabulary of at most 65,536 ids fits
(GPT-2's r50k_base, not cl100k_base). ``shard_00000.offsets.npy`` is ours: where each document
starts, for :func:`~streamcodec.corpus.read_documents` and ``check-corpus``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from streamcodec.corpus.shards import Layout, TokenShard
from streamcodec.corpus.writers import SUFFIXES
from streamcodec.corpus.writers.npy import load_offsets, map_ids, offsets_file

__all__ = ["Shard"]


class Shard(TokenShard):
    """``shard_NNNNN.bin`` (nanoGPT's) and ``shard_NNNNN.offsets.npy``."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["nanogpt"]
    holds = "uint16 (at most 65,536 ids)"

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "uint16" if n_vocab <= 1 << 16 else None

    def index_files(self) -> Iterator[bytes]:
        yield offsets_file(self.ends)

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        ids = map_ids(paths[0], "uint16", 0)
        return ids, load_offsets(paths[1], len(ids))
