"""One shard's work: read its documents, encode each alone, write the shard.

:func:`make_shard` is the whole of it, a plain function of a :class:`Job` (what every shard
shares: the inputs, the encoding, the options) and a :class:`~streamcodec.corpus.plan.ShardPlan`,
so a thread, a process or a Dask worker runs it alike. Documents are read in order, in batches of
about a megabyte, and the batches are encoded by ``jobs`` threads on the native path (the compiled
core releases the GIL) or processes on the pure path, then written in order: the shard's bytes
do not depend on ``jobs``. Each document is encoded exactly as ``encode_ordinary`` encodes it
alone; a large plain-text file is streamed (``Encoding.iter_encode_chunks``), in bounded memory.
"""

from __future__ import annotations

import array
import dataclasses
import functools
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeAlias

from streamcodec.batch import encode_each_uint32
from streamcodec.corpus.inputs import (
    Document,
    Input,
    Reading,
    documents,
    invalid_utf8,
    open_input,
    where_in,
)
from streamcodec.corpus.plan import ShardPlan
from streamcodec.corpus.shards import Layout, file_records
from streamcodec.corpus.writers import shard_format
from streamcodec.encoding import Encoding
from streamcodec.stream.workers import ordered_map
from streamcodec.text.specials import DisallowedSpecialTokenError, refuse_disallowed
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = ["LARGE_DOCUMENT", "Job", "make_shard", "shard_documents"]

#: A plain-text file larger than this (or compressed, or standard input) is streamed.
LARGE_DOCUMENT = 8 << 20
_BATCH_CHARS = 1 << 20
Progress = Callable[[int, int], object]  # (input bytes, tokens) done since the last call


@dataclasses.dataclass(frozen=True)
class Job:
    """What every shard of a corpus shares."""

    inputs: tuple[Input, ...]
    reading: Reading
    out_dir: str
    encoding: Encoding  # pickles by name when registered: a Dask worker loads its own
    layout: Layout  # the format, the ids' type, the boundary tokens
    special_as_text: bool
    record: dict[str, Any]  # the encoding's name and hash, the version: in each shard's entry


@dataclasses.dataclass(frozen=True)
class _Streamed:
    """A document too large to hold: encoded from its input, as a stream."""

    input: Input


def _is_streamed(inp: Input, reading: Reading) -> bool:
    whole = inp.kind == "text" and reading.separator is None
    return whole and (inp.compression is not None or inp.size < 0 or inp.size > LARGE_DOCUMENT)


def shard_documents(
    job: Job, shard: ShardPlan, digests: list[Any] | None = None
) -> Iterator[Document | _Streamed]:
    """The documents of ``shard`` in order (large files as :class:`_Streamed`); ``digests``
    gets a SHA-256 of what each range's documents were read from (None for a streamed one)."""
    for part in shard.ranges:
        inp = job.inputs[part.input]
        if _is_streamed(inp, job.reading):
            if digests is not None:
                digests.append(None)
            yield _Streamed(inp)
        else:
            digest = None if digests is None else hashlib.sha256()
            if digests is not None:
                digests.append(digest)
            yield from documents(inp, part, job.reading, digest=digest)


def _batches(docs: Iterator[Document | _Streamed]) -> Iterator[list[Document] | _Streamed]:
    batch: list[Document] = []
    size = 0
    for doc in docs:
        if isinstance(doc, _Streamed):
            if batch:
                yield batch
            yield doc
            batch, size = [], 0
            continue
        batch.append(doc)
        size += len(doc.text)
        if size >= _BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


# each document's ids, span and kept fields (a string: array.array takes no [] before 3.12)
Encoded: TypeAlias = "list[tuple[array.array[int], int, dict[str, Any] | None]]"


def _encode_batch(
    enc: Encoding, as_text: bool, batch: list[Document] | _Streamed
) -> Encoded | _Streamed:
    """Each document's ids, its span on disk and its kept fields (a streamed one is left to
    the consumer)."""
    if isinstance(batch, _Streamed):
        return batch
    if not as_text:
        for doc in batch:
            _refuse_special(enc, doc)
    # The whole batch in one call, the GIL released once (each document's ids those of
    # encode_ordinary alone), as packed uint32s: picklable for the pure path's processes.
    encoded = encode_each_uint32(enc, [doc.text for doc in batch])
    return [(ids, doc.span, doc.fields) for ids, doc in zip(encoded, batch, strict=True)]


def _refuse_special(enc: Encoding, doc: Document) -> None:
    """Refuse a special token in ``doc``, naming where it is."""
    try:
        refuse_disallowed(doc.text, frozenset(enc.special_tokens))
    except DisallowedSpecialTokenError as exc:
        where = doc.where
        if doc.input.kind == "text":
            inside = len(doc.text[: doc.text.find(exc.token)].encode("utf-8", "surrogatepass"))
            where = f"{doc.input.shown} at byte offset {doc.offset + inside}"
        raise ValueError(_special_message(where, exc.token)) from None


def _special_message(where: str, token: str) -> str:
    return (
        f"{where}: the document contains the special token {token!r}; pass --special-as-text "
        "to encode it as text (special_as_text=True)"
    )


def make_shard(
    job: Job, shard: ShardPlan, jobs: int = 1, progress: Progress | None = None
) -> dict[str, Any]:
    """Write shard ``shard`` of ``job`` and return its manifest entry."""
    enc = job.encoding
    work = functools.partial(_encode_batch, enc, job.special_as_text)
    digests: list[Any] = []
    batches = _batches(shard_documents(job, shard, digests))
    native = enc.backend == "native"
    results: Iterator[Encoded | _Streamed] = map(work, batches)
    if jobs > 1:
        results = ordered_map(work, batches, jobs=jobs, processes=not native)
    reported = 0
    with shard_format(job.layout.format)(job.out_dir, shard.index, job.layout) as writer:
        try:
            for result in results:
                before, span = writer.tokens, 0
                if isinstance(result, _Streamed):
                    _write_streamed(job, result.input, writer, jobs)
                else:
                    writer.add_documents([r[0] for r in result], [r[2] for r in result])
                    span = sum(r[1] for r in result)
                span = min(span, shard.size - reported)  # a last line may run past the range
                if progress is not None:
                    progress(span, writer.tokens - before)
                reported += span
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
    if progress is not None:
        progress(shard.size - reported, 0)  # compressed and streamed inputs: at the end
    return _entry(job, shard, writer, digests)


def _write_streamed(job: Job, inp: Input, writer: Any, jobs: int) -> None:
    """Encode a whole input as one document, as a stream."""
    enc = job.encoding
    policy: dict[str, Any] = {"errors": job.reading.errors}
    policy["disallowed_special"] = () if job.special_as_text else "all"
    plain = inp.compression is None and inp.size >= 0
    try:
        with open_input(inp) as f:
            source: Any = Path(inp.path) if plain else f
            chunks = enc.iter_encode_chunks(source, jobs=jobs if plain else 1, **policy)
            try:
                for ids in chunks:
                    writer.add(ids)
            finally:
                chunks.close()  # type: ignore[attr-defined]  # a generator: ends the workers
    except InvalidUTF8Error as exc:
        raise invalid_utf8(inp.shown, exc.offset, exc.reason) from None
    except DisallowedSpecialTokenError as exc:
        raise ValueError(_special_message(where_in(inp, exc.token.encode()), exc.token)) from None
    writer.end_document()


def _entry(job: Job, shard: ShardPlan, writer: Any, digests: list[Any]) -> dict[str, Any]:
    return {
        "index": shard.index,
        "files": file_records(writer.paths),
        "sources": source_records(job.inputs, shard),
        # of each source, what its documents were read from (None: streamed, not hashed)
        "read_sha256": [None if d is None else d.hexdigest() for d in digests],
        "tokens": writer.tokens,
        "documents": writer.documents,
        **job.record,
    }


def source_records(inputs: tuple[Input, ...], shard: ShardPlan) -> list[dict[str, Any]]:
    """The shard's sources as the manifest lists them: input, path, range and its unit."""
    records = []
    for part in shard.ranges:
        inp = inputs[part.input]
        unit = "row_groups" if inp.kind == "parquet" else "bytes"
        # to the end: its size, but a compressed input's decompressed length is not known
        # before it is read (its size on disk is not that): -1
        whole = part.end < 0 and inp.kind != "parquet" and inp.compression is None
        end = inp.size if whole else part.end
        records.append(
            {"input": part.input, "path": inp.path, "unit": unit, "start": part.start, "end": end}
        )
    return records
