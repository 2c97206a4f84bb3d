"""``--format parquet``: one Parquet file a shard, one row per document, as ``datasets`` reads.

Hugging Face ``datasets`` loads it with ``load_dataset("parquet", data_files=...)``: a column
``input_ids``, a list of ``int32`` (the type ``datasets`` itself gives ``input_ids``), each
document's ids between the boundary tokens; the fields of ``--keep`` as columns of their own.
Rows are written in row groups of about a million ids (``pyarrow``), so memory holds one group.
"""

from __future__ import annotations

import array
import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, BinaryIO, ClassVar

from streamcodec.atomicfile import atomic_output
from streamcodec.corpus.shards import Fields, Fields_, Ids, Layout, close_whole, split_flat
from streamcodec.corpus.writers import SUFFIXES

__all__ = ["COLUMN", "Shard"]

COLUMN = "input_ids"
_GROUP_IDS = 1 << 20


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError("--format parquet needs pyarrow: pip install pyarrow") from None
    return pyarrow


class Shard:
    """``shard_NNNNN.parquet``: the protocol of :class:`~streamcodec.corpus.shards.TokenShard`
    over rows."""

    suffixes: ClassVar[tuple[str, ...]] = SUFFIXES["parquet"]
    holds = "int32 (at most 2,147,483,648 ids)"
    sha256 = None  # pyarrow writes the file: it is read back for the manifest

    def __init__(self, folder: str, index: int, layout: Layout) -> None:
        self.paths = (os.path.join(folder, f"shard_{index:05d}.parquet"),)
        self.layout = layout
        self.tokens = self.documents = 0
        self._ids = array.array("i")  # the rows in hand, one after another
        self._ends = array.array("i", [0])
        self._fields: dict[str, list[Any]] = {name: [] for name in layout.keep}
        self._doc = array.array("i")  # the document in hand (add), bos first
        self._stack = contextlib.ExitStack()
        self._writer: Any = None

    @staticmethod
    def dtype(n_vocab: int) -> str | None:
        return "int32" if n_vocab <= 1 << 31 else None

    def __enter__(self) -> Shard:
        _pyarrow()
        out: BinaryIO = self._stack.enter_context(atomic_output(self.paths[0]))
        self._out = out
        return self

    def add(self, ids: Iterable[int]) -> None:
        if not self._doc:
            self._doc.extend(self.layout.bos)
        self._doc.extend(array.array("i", list(ids)))

    def end_document(self, fields: Fields | None = None) -> None:
        doc, self._doc = self._doc, array.array("i")
        self.add_documents([doc[len(self.layout.bos) :]] if doc else [[]], [fields])

    def add_documents(
        self, documents: Iterable[Sequence[int]], fields: Iterable[Fields | None] | None = None
    ) -> None:
        kept = iter(fields) if fields is not None else None
        for ids in documents:
            self._ids.extend(self.layout.bos)
            self._ids.extend(ids if getattr(ids, "typecode", None) == "i" else list(ids))
            self._ids.extend(self.layout.eos)
            self._ends.append(len(self._ids))
            self.tokens += self._ends[-1] - self._ends[-2]
            record = (next(kept) if kept is not None else None) or {}
            for name, values in self._fields.items():
                values.append(record.get(name))
            self.documents += 1
        if len(self._ids) >= _GROUP_IDS:
            self._flush()

    def add_flat(self, ids: Ids, offsets: array.array[int], fields: Fields_ = None) -> None:
        """:meth:`add_documents` of each document of one run of ids (``TokenShard.add_flat``)."""
        self.add_documents(split_flat(ids, offsets), fields)

    def _flush(self) -> None:
        pa = _pyarrow()
        ids = self._ids
        if sys.byteorder == "big":
            ids = array.array("i", ids)
            ids.byteswap()
        values = pa.Array.from_buffers(pa.int32(), len(self._ids), [None, pa.py_buffer(ids)])
        offsets = pa.Array.from_buffers(
            pa.int32(), len(self._ends), [None, pa.py_buffer(self._ends)]
        )
        columns = {COLUMN: pa.ListArray.from_arrays(offsets, values)}
        for name, items in self._fields.items():
            kept = pa.array(items)  # all null: typed as text, which later values may cast to
            columns[name] = kept.cast(pa.string()) if pa.types.is_null(kept.type) else kept
        table = pa.table(columns)
        if self._writer is None:
            self._writer = pa.parquet.ParquetWriter(self._out, table.schema)
        elif not table.schema.equals(self._writer.schema):
            try:
                table = table.cast(self._writer.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise ValueError(
                    f"{self.paths[0]}: a --keep field changed type ({table.schema} after "
                    f"{self._writer.schema}); a Parquet column has one type"
                ) from None
        self._writer.write_table(table)
        self._ids, self._ends = array.array("i"), array.array("i", [0])
        for values_ in self._fields.values():
            values_.clear()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None and self._writer is not None:
            with contextlib.suppress(Exception):  # its file is discarded: only let go of it
                self._writer.close()
        close_whole(self._stack, kind, exc, tb, self._finish)

    def _finish(self) -> None:
        if len(self._ends) > 1 or self._writer is None:
            self._flush()
        self._writer.close()

    @staticmethod
    def read(paths: list[str], layout: Layout) -> tuple[Any, Any]:
        import numpy

        pa = _pyarrow()
        try:
            column = pa.parquet.read_table(paths[0], columns=[COLUMN]).column(COLUMN)
        except (OSError, pa.ArrowException) as exc:
            raise ValueError(f"{paths[0]}: not a readable Parquet file ({exc})") from None
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if not pa.types.is_list(column.type) or column.type.value_type != pa.int32():
            raise ValueError(f"{paths[0]}: {COLUMN} is {column.type}, not list<int32>")
        offsets = numpy.asarray(column.offsets).astype(numpy.int64)
        ids = numpy.asarray(column.values)[offsets[0] : offsets[-1]]
        return ids, offsets - offsets[0]
