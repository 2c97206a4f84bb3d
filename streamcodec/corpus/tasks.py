"""A shard's tasks: its inputs read in order as tasks of about a megabyte, and each task read into
documents and encoded by a worker (:mod:`streamcodec.corpus.job` runs them through its pipeline).

A task is whole lines of a JSON Lines input (their bytes only, :class:`Block`), a batch of Parquet
rows (decoded by pyarrow), plain-text documents, a document too large to hold (streamed by the
writer), or a shard's end. A worker reads a block by
the native reader into one run of UTF-8 (:mod:`streamcodec.corpus.columns`, the GIL released)
that the batch pass encodes in place, or by the Python reader where the native one differs, and
Parquet rows from their Arrow strings likewise: each document's ids those of ``encode_ordinary``
of it alone. A task's error becomes its result (:class:`Failed`), raised where the shards are
written, at its place."""

from __future__ import annotations

import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, TypeAlias

from streamcodec.batch import FlatTexts, encode_flat_uint32
from streamcodec.corpus.columns import holds_special, json_column, json_reads, parquet_column
from streamcodec.corpus.document import Document, Input, Reading, reading_input, span
from streamcodec.corpus.inputs import Rows, documents, parquet_batches, row_documents
from streamcodec.corpus.jsonlines import Lines, json_documents, line_blocks
from streamcodec.corpus.plan import ShardPlan
from streamcodec.corpus.shards import Layout
from streamcodec.encoding import Encoding
from streamcodec.text.specials import DisallowedSpecialTokenError, refuse_disallowed
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = [
    "BATCH_SIZE",
    "LARGE_DOCUMENT",
    "End",
    "Failed",
    "Job",
    "Result",
    "Streamed",
    "Task",
    "encode_task",
    "is_streamed",
    "shard_tasks",
    "special_message",
]

#: A plain-text file larger than this (or compressed, or standard input) is streamed.
LARGE_DOCUMENT = 8 << 20
BATCH_SIZE = 1 << 20  # a task: about this many bytes (JSON Lines, Parquet) or characters
# A JSON Lines range's first task, the next ones doubling to BATCH_SIZE: the second worker
# starts after 64 kB are read, not 1 MB, and the first result is written sooner (the
# pipeline's filling was 12-18 ms of a 350 ms run on two cores)
FIRST_TASK = 64 << 10
# A task's batch runs on the thread that read it, signals checked between tasks: watching them
# while it ran took a thread started and joined a task, and the text encoded on the core that
# did not read it (13-18 ms of CPU a 45 MB run with one job). A larger task (a long line, a
# large row) is watched as it runs, so that Ctrl-C stops it within a second: 2 MB of the
# slowest text (cold multilingual o200k, 2.3 MB/s) takes under one (15 MB of random words
# took 2.1 s, and Ctrl-C waited for them).
WATCHED = 2 << 20


class Job(NamedTuple):
    """What every shard of a corpus shares."""

    inputs: tuple[Input, ...]
    reading: Reading
    out_dir: str
    encoding: Encoding  # pickles by name when registered: a Dask worker loads its own
    layout: Layout  # the format, the ids' type, the boundary tokens
    special_as_text: bool
    record: dict[str, Any]  # the encoding's name and hash, the version: in each shard's entry


class Streamed(NamedTuple):
    """A document too large to hold: encoded from its input, as a stream."""

    input: Input


class Block(NamedTuple):
    """Whole lines of a JSON Lines input, read but not parsed (the worker parses them)."""

    input: Input
    lines: Lines


class End:
    """The end of a shard's tasks."""


class Failed(NamedTuple):
    """A task's reading or encoding failed: its error, raised where the shards are written at
    the task's place, so the shards before it are finished and listed first, whichever thread
    read or encoded it (the pipeline's threads would raise it ahead of the results before it)."""

    error: Exception


# A task: documents read, a block of lines, Parquet rows, a document to stream, a shard's end
Task: TypeAlias = "list[Document] | Block | Rows | Streamed | End | Failed"
Result: TypeAlias = "Encoded | Streamed | End | Failed"


class Encoded(NamedTuple):
    """A task's documents encoded: their ids in one run (uint32s: an ``array.array``, picklable,
    on the pure path, whose workers are processes; else a view of the engine's array) and where
    each starts (int64, then the end), their kept fields (None: none kept) and their bytes on
    disk."""

    ids: memoryview | array.array[int]
    offsets: array.array[int]
    fields: Sequence[dict[str, Any] | None] | None
    span: int


def is_streamed(inp: Input, reading: Reading) -> bool:
    """Whether ``inp`` is one document too large to hold (or of unknown size): streamed."""
    whole = inp.kind == "text" and reading.separator is None
    return whole and (inp.compression is not None or inp.size < 0 or inp.size > LARGE_DOCUMENT)


def shard_tasks(
    job: Job, shard: ShardPlan, digests: list[Any], sha256: Callable[[], Any]
) -> Iterator[Task]:
    """The tasks of ``shard`` in order, then its end; ``digests`` gets a SHA-256 (a new
    ``sha256()``) of what each range's documents were read from (None for a streamed one)."""
    for part in shard.ranges:
        inp = job.inputs[part.input]
        if is_streamed(inp, job.reading):
            digests.append(None)
            yield Streamed(inp)
            continue
        digest = sha256()
        digests.append(digest)
        if inp.kind == "jsonl":
            with reading_input(inp) as f:
                blocks = line_blocks(f, part, digest=digest, size=BATCH_SIZE, first=FIRST_TASK)
                yield from (Block(inp, lines) for lines in blocks)
        elif inp.kind == "parquet":
            yield from parquet_batches(inp, part, job.reading, digest, size=BATCH_SIZE)
        else:
            yield from _batches(documents(inp, part, job.reading, digest=digest))
    yield End()


def _batches(docs: Iterator[Document]) -> Iterator[list[Document]]:
    batch: list[Document] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.text)
        if size >= BATCH_SIZE:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def encode_task(enc: Encoding, as_text: bool, reading: Reading, task: Task) -> Result:
    """A task's documents read (a block or rows: natively or by pyarrow where that reads them as
    the Python reader does, else by that reader) and encoded; a streamed document and a shard's
    end are left to the consumer."""
    if isinstance(task, (Streamed, End, Failed)):
        return task
    if isinstance(task, list):
        return _encode_documents(enc, as_text, task)
    specials = frozenset() if as_text else frozenset(enc.special_tokens)
    if isinstance(task, Block):
        inp, lines = task.input, task.lines
        column = _json_column(lines, reading, specials)
        if column is not None:
            ids, offsets = encode_flat_uint32(enc, column, watch=_watch(len(column.data)))
            return Encoded(ids, offsets, None, span(inp, lines.data))
        return _encode_documents(enc, as_text, list(json_documents(inp, lines, reading)))
    column = parquet_column(task.values)
    if column is not None and not holds_special(column, specials):
        try:
            watch = _watch(column.nbytes)
            ids, offsets = encode_flat_uint32(enc, column, errors=reading.errors, watch=watch)
            return Encoded(ids, offsets, task.kept, 0)
        except InvalidUTF8Error:
            pass  # the Python reader names the row
    return _encode_documents(enc, as_text, list(row_documents(task, reading)))


def _json_column(lines: Lines, reading: Reading, specials: frozenset[str]) -> FlatTexts | None:
    """:func:`json_column`, where the native reader reads ``reading``'s blocks (else None)."""
    return json_column(lines, reading, specials) if json_reads(reading) else None


def _encode_documents(enc: Encoding, as_text: bool, batch: list[Document]) -> Encoded:
    """Documents read by the Python readers, encoded (special tokens refused first)."""
    if not as_text:
        for doc in batch:
            _refuse_special(enc, doc)
    # The whole batch in one call, the GIL released once (each document's ids those of
    # encode_ordinary alone).
    texts = [doc.text for doc in batch]
    ids, offsets = encode_flat_uint32(enc, texts, watch=_watch(sum(map(len, texts))))
    fields = [doc.fields for doc in batch] if any(d.fields is not None for d in batch) else None
    return Encoded(ids, offsets, fields, sum(doc.span for doc in batch))


def _watch(size: int) -> bool | None:
    """Whether a batch of ``size`` bytes (or characters) is watched for signals as it runs
    (None: by the main thread, as any batch) or left to the caller between tasks (False)."""
    return None if size > WATCHED else False


def _refuse_special(enc: Encoding, doc: Document) -> None:
    """Refuse a special token in ``doc``, naming where it is."""
    try:
        refuse_disallowed(doc.text, frozenset(enc.special_tokens))
    except DisallowedSpecialTokenError as exc:
        where = doc.where
        if doc.input.kind == "text":
            inside = len(doc.text[: doc.text.find(exc.token)].encode("utf-8", "surrogatepass"))
            where = f"{doc.input.shown} at byte offset {doc.offset + inside}"
        raise ValueError(special_message(where, exc.token)) from None


def special_message(where: str, token: str) -> str:
    """The refusal of a special token found at ``where``, naming the option that allows it."""
    return (
        f"{where}: the document contains the special token {token!r}; pass --special-as-text "
        "to encode it as text (special_as_text=True)"
    )
