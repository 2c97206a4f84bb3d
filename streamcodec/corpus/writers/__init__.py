"""The trainers' shard formats: one module each, one protocol (``shards.TokenShard``).

========================  =====================================================  ===============
``--format``              files of shard N (``shard_0000N`` +)                    ids
========================  =====================================================  ===============
``streamcodec``           ``.npy``, ``.offsets.npy`` (NumPy)                      uint16 / uint32
``nanogpt``               ``.bin`` (raw, nanoGPT's ``prepare.py``), ``.offsets.npy``  uint16
``llmc``                  ``.bin`` (llm.c: 256 x int32 header), ``.offsets.npy``  uint16 / uint32
``megatron``              ``.bin``, ``.idx`` (Megatron-Core's indexed dataset)    uint16 / int32
``datatrove``             ``.ds``, ``.ds.index``, ``.ds.metadata``                uint16 / uint32
``parquet``               ``.parquet``: one row per document, ``input_ids``       int32 lists
========================  =====================================================  ===============

Each chooses its ids' type from the vocabulary's size as its owner's writer does
(:func:`dtype_for`); a vocabulary no type of a format holds is refused with the formats that
hold it. ``.offsets.npy`` (where each document starts, then the end) is ours, beside formats that
keep no document index, so that every format reads back into documents
(:func:`read_shard`).
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Protocol

from streamcodec.corpus.shards import Layout

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "ShardFormat",
    "dtype_for",
    "manifest_layout",
    "read_entry",
    "shard_format",
]

#: Each format and the module that writes it.
FORMATS = {
    "streamcodec": "npy",
    "nanogpt": "nanogpt",
    "llmc": "llmc",
    "megatron": "megatron",
    "datatrove": "datatrove",
    "parquet": "parquet",
}
#: Each format's files, after ``shard_NNNNN`` (the ids' first): its ``Shard.suffixes``, here so
#: that telling a shard's file from another needs none of the formats' modules.
SUFFIXES: dict[str, tuple[str, ...]] = {
    "streamcodec": (".npy", ".offsets.npy"),
    "nanogpt": (".bin", ".offsets.npy"),
    "llmc": (".bin", ".offsets.npy"),
    "megatron": (".bin", ".idx"),
    "datatrove": (".ds", ".ds.index", ".ds.metadata"),
    "parquet": (".parquet",),
}


class ShardFormat(Protocol):
    """A format's shard class: built as ``cls(folder, index, layout)``, a context manager."""

    suffixes: tuple[str, ...]
    holds: str  # the types it writes, in words, for the refusal

    def __call__(self, folder: str, index: int, layout: Layout) -> Any: ...

    def dtype(self, n_vocab: int) -> str | None:
        """The ids' type for a vocabulary of ``n_vocab`` ids, or None when none holds it."""

    def read(self, paths: list[str], layout: Layout) -> tuple[Any, Any]:
        """A shard's ids (numpy, mapped) and offsets (int64, one more than the documents);
        ``ValueError`` naming the file when its layout is not the format's."""


def shard_format(name: str) -> ShardFormat:
    """The shard class of format ``name``; ``ValueError`` naming the formats for another."""
    if name not in FORMATS:
        raise ValueError(f"no shard format {name!r}; --format takes {', '.join(FORMATS)}")
    module = importlib.import_module(f"streamcodec.corpus.writers.{FORMATS[name]}")
    shard: ShardFormat = module.Shard
    return shard


def dtype_for(name: str, n_vocab: int, encoding: str = "the vocabulary") -> str:
    """The ids' type of format ``name`` for ``n_vocab`` ids; ``ValueError`` naming the formats
    that hold them when this one cannot.

    >>> dtype_for("megatron", 50257), dtype_for("megatron", 100277)
    ('uint16', 'int32')
    >>> dtype_for("nanogpt", 100277, "cl100k_base")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: nanogpt stores ids as uint16 (at most 65,536 ids) and cl100k_base has 100,277: ...
    """
    dtype = shard_format(name).dtype(n_vocab)
    if dtype is not None:
        return dtype
    fit = [other for other in FORMATS if shard_format(other).dtype(n_vocab) is not None]
    use = f"use --format {', '.join(fit[:-1])} or {fit[-1]}" if len(fit) > 1 else (
        f"use --format {fit[0]}" if fit else "no format holds it")  # fmt: skip
    raise ValueError(
        f"{name} stores ids as {shard_format(name).holds} and {encoding} has {n_vocab:,}: {use}"
    )


def manifest_layout(manifest: dict[str, Any]) -> Layout:
    """The layout of the shards a manifest lists."""
    record = manifest["layout"]
    bos, eos, keep = (tuple(record[key]) for key in ("bos", "eos", "keep"))
    return Layout(record["format"], record["dtype"], bos, eos, keep, manifest["encoding"]["name"])


def read_entry(out: str, manifest: dict[str, Any], entry: dict[str, Any]) -> tuple[Any, Any]:
    """Shard ``entry`` of the manifest of folder ``out`` read back: its ids (numpy, mapped) and
    its document offsets (int64, one more than its documents); ``ValueError`` naming the file
    whose layout is not the format's."""
    layout = manifest_layout(manifest)
    paths = [os.path.join(out, record["name"]) for record in entry["files"]]
    return shard_format(layout.format).read(
        paths[: len(shard_format(layout.format).suffixes)], layout
    )
