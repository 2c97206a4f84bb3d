"""The shards' work: read their documents, encode each alone, write the shards in order.

:func:`make_shards` makes shards one after another through one pipeline, so the next shard is read
and encoded while the last is written; :func:`make_shard` is one shard alone, a plain function of a
:class:`Job` (what every shard shares: the inputs, the encoding, the options) and a
:class:`~streamcodec.corpus.plan.ShardPlan`, so a thread, a process or a Dask worker runs it alike.
The inputs are read here, in order, as tasks of about a megabyte: JSON Lines as blocks of whole
lines (their bytes only), Parquet as batches of rows (decoded by pyarrow), plain text as documents.
``jobs`` threads (native path) or processes (pure path) each take a task, read it into documents
and encode them: a JSON Lines block by the native reader into one run of UTF-8
(:mod:`streamcodec.corpus.columns`: the GIL released; beside one job, on the reader thread) that
the batch pass encodes in place, or by the Python reader where the native one differs. The results
are written in the tasks' order, so the shards' bytes do not depend on ``jobs``; the reading (and
the input's hash) and the writing (and the shards' hashes) run on threads of their own
(:mod:`streamcodec.corpus.overlap`) beside the ``jobs`` that encode, so the main thread, which
would cap the run on many cores, only schedules. At most ``2 * jobs`` tasks are in flight and 8
more in the hands and queues of those threads (``2 * jobs + 8`` of about a megabyte each), so
memory is bounded. Each document is encoded exactly as ``encode_ordinary`` encodes it alone; a
large plain-text file is streamed (``Encoding.iter_encode_chunks``). A task's error is raised where
the shards are written, at its place, so the shards before it are listed first."""

from __future__ import annotations

import array
import contextlib
import dataclasses
import functools
import hashlib
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from streamcodec.batch import FlatTexts, encode_flat_uint32
from streamcodec.corpus.columns import holds_special, json_column, json_reads, parquet_column
from streamcodec.corpus.document import (
    STDIN,
    Document,
    Input,
    Reading,
    invalid_utf8,
    open_input,
    reading_input,
    span,
)
from streamcodec.corpus.inputs import Rows, documents, parquet_batches, row_documents, where_in
from streamcodec.corpus.jsonlines import Lines, json_documents, line_blocks
from streamcodec.corpus.manifest import lists_shard
from streamcodec.corpus.overlap import HashBehind, read_ahead, write_behind
from streamcodec.corpus.plan import ShardPlan, source_records
from streamcodec.corpus.shards import Layout, file_records
from streamcodec.corpus.writers import shard_format
from streamcodec.encoding import Encoding
from streamcodec.stream.workers import ordered_map
from streamcodec.text.specials import DisallowedSpecialTokenError, refuse_disallowed
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = ["LARGE_DOCUMENT", "Job", "make_shard", "make_shards"]

#: A plain-text file larger than this (or compressed, or standard input) is streamed.
LARGE_DOCUMENT = 8 << 20
_BATCH_SIZE = 1 << 20  # a task: about this many bytes (JSON Lines, Parquet) or characters
# A JSON Lines range's first task, the next ones doubling to _BATCH_SIZE: the second worker
# starts after 64 kB are read, not 1 MB, and the first result is written sooner (the
# pipeline's filling was 12-18 ms of a 350 ms run on two cores)
_FIRST_TASK = 64 << 10
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


@dataclasses.dataclass(frozen=True)
class _Block:
    """Whole lines of a JSON Lines input, read but not parsed; beside one job, parsed by the
    reader thread where the native reader reads them (``column``; else the worker's)."""

    input: Input
    lines: Lines
    column: FlatTexts | None = None


@dataclasses.dataclass(frozen=True)
class _End:
    """The end of a shard's tasks."""


@dataclasses.dataclass(frozen=True)
class _Failed:
    """A task's reading or encoding failed: its error, raised where the shards are written at
    the task's place, so the shards before it are finished and listed first, whichever thread
    read or encoded it (the pipeline's threads would raise it ahead of the results before it)."""

    error: Exception


# A task: documents read, a block of lines, Parquet rows, a document to stream, a shard's end
Task: TypeAlias = "list[Document] | _Block | Rows | _Streamed | _End | _Failed"
Result: TypeAlias = "_Encoded | _Streamed | _End | _Failed"


@dataclasses.dataclass(frozen=True)
class _Encoded:
    """A task's documents encoded: their ids in one run (uint32s: an ``array.array``, picklable,
    on the pure path, whose workers are processes; else a view of the engine's array) and where
    each starts (int64, then the end), their kept fields (None: none kept) and their bytes on
    disk."""

    ids: memoryview | array.array[int]
    offsets: array.array[int]
    fields: Sequence[dict[str, Any] | None] | None
    span: int


def _is_streamed(inp: Input, reading: Reading) -> bool:
    whole = inp.kind == "text" and reading.separator is None
    return whole and (inp.compression is not None or inp.size < 0 or inp.size > LARGE_DOCUMENT)


def _tasks(
    job: Job, shard: ShardPlan, digests: list[Any], sha256: Callable[[], Any], read_json: bool
) -> Iterator[Task]:
    """The tasks of ``shard`` in order, then its end; ``digests`` gets a SHA-256 (a new
    ``sha256()``) of what each range's documents were read from (None for a streamed one).
    With ``read_json``, JSON Lines blocks are parsed here too (:func:`_json_column`)."""
    specials = frozenset() if job.special_as_text else frozenset(job.encoding.special_tokens)
    for part in shard.ranges:
        inp = job.inputs[part.input]
        if _is_streamed(inp, job.reading):
            digests.append(None)
            yield _Streamed(inp)
            continue
        digest = sha256()
        digests.append(digest)
        if inp.kind == "jsonl":
            with reading_input(inp) as f:
                blocks = line_blocks(f, part, digest=digest, size=_BATCH_SIZE, first=_FIRST_TASK)
                for lines in blocks:
                    parsed = _json_column(lines, job.reading, specials) if read_json else None
                    yield _Block(inp, lines, parsed)
        elif inp.kind == "parquet":
            yield from parquet_batches(inp, part, job.reading, digest, size=_BATCH_SIZE)
        else:
            yield from _batches(documents(inp, part, job.reading, digest=digest))
    yield _End()


def _batches(docs: Iterator[Document]) -> Iterator[list[Document]]:
    batch: list[Document] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.text)
        if size >= _BATCH_SIZE:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _encode_task(enc: Encoding, as_text: bool, reading: Reading, task: Task) -> Result:
    """A task's documents read (a block or rows: natively or by pyarrow where that reads them as
    the Python reader does, else by that reader) and encoded; a streamed document and a shard's
    end are left to the consumer."""
    if isinstance(task, (_Streamed, _End, _Failed)):
        return task
    if isinstance(task, list):
        return _encode_documents(enc, as_text, task)
    specials = frozenset() if as_text else frozenset(enc.special_tokens)
    if isinstance(task, _Block):
        inp, lines = task.input, task.lines
        column = _json_column(lines, reading, specials) if task.column is None else task.column
        if column is not None:
            return _Encoded(*encode_flat_uint32(enc, column), None, span(inp, lines.data))
        return _encode_documents(enc, as_text, list(json_documents(inp, lines, reading)))
    column = parquet_column(task.values)
    if column is not None and not holds_special(column, specials):
        try:
            return _Encoded(*encode_flat_uint32(enc, column, errors=reading.errors), task.kept, 0)
        except InvalidUTF8Error:
            pass  # the Python reader names the row
    return _encode_documents(enc, as_text, list(row_documents(task, reading)))


def _json_column(lines: Lines, reading: Reading, specials: frozenset[str]) -> FlatTexts | None:
    """:func:`json_column`, where the native reader reads ``reading``'s blocks (else None)."""
    return json_column(lines, reading, specials) if json_reads(reading) else None


def _encode_documents(enc: Encoding, as_text: bool, batch: list[Document]) -> _Encoded:
    """Documents read by the Python readers, encoded (special tokens refused first)."""
    if not as_text:
        for doc in batch:
            _refuse_special(enc, doc)
    # The whole batch in one call, the GIL released once (each document's ids those of
    # encode_ordinary alone).
    ids, offsets = encode_flat_uint32(enc, [doc.text for doc in batch])
    fields = [doc.fields for doc in batch] if any(d.fields is not None for d in batch) else None
    return _Encoded(ids, offsets, fields, sum(doc.span for doc in batch))


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
    entries: list[dict[str, Any]] = []
    make_shards(job, [shard], entries.append, jobs=jobs, progress=progress)
    return entries[0]


def make_shards(
    job: Job,
    shards: Sequence[ShardPlan],
    finished: Callable[[dict[str, Any]], object],
    *,
    jobs: int = 1,
    progress: Progress | None = None,
) -> None:
    """Write ``shards`` of ``job`` in order, through one pipeline of ``jobs`` workers;
    ``finished(entry)`` with each one's manifest entry once it is whole. The input is read and
    hashed on a reader thread and a hasher thread, and the shards written, hashed and listed on
    a writer thread (:mod:`streamcodec.corpus.overlap`), beside the workers, whatever ``jobs``
    (they are the cores that encode: with one, the input's I/O and hashing take the second
    core, a third of a run's work), so this thread only schedules; not with an input that can
    block (standard input, a pipe) or a document streamed (its own pipeline), nor beside worker
    processes (the pure path): then all of it is this thread's, one job encoding here."""
    digests: list[list[Any]] = [[] for _ in shards]
    work = functools.partial(_numbered, functools.partial(
        _encode_task, job.encoding, job.special_as_text, job.reading))  # fmt: skip
    native = job.encoding.backend == "native"
    write = functools.partial(_write_results, job, shards, digests, finished, jobs, progress)
    # threads beside the workers: not where they are processes (forked: a thread's lock held)
    overlapped = native and _overlaps(job)
    with contextlib.ExitStack() as stack:
        sha256: Callable[[], Any] = hashlib.sha256
        if overlapped:  # the input's hash off the reader too, ended after it
            sha256 = stack.enter_context(HashBehind(depth=2)).sha256
        # the reader parses JSON beside one job (a tenth of its work), not beside several
        tasks: Generator[tuple[int, Task], None, None] = _numbered_tasks(
            job, shards, digests, sha256, overlapped and jobs == 1
        )
        stack.callback(tasks.close)  # the input in hand closed, after the reader and workers
        if overlapped:
            tasks = read_ahead(tasks, depth=1)
            stack.callback(tasks.close)  # the reader ended, after the workers
        results: Iterator[tuple[int, Result]] = map(work, tasks)
        # one job too on the pool, where the ends are: it runs each batch itself (the main
        # thread would start a native thread for each, to watch for signals), and this schedules
        if jobs > 1 or overlapped:
            pool = ordered_map(work, tasks, jobs=jobs, processes=not native)
            stack.callback(pool.close)  # the workers ended
            results = pool
        if overlapped:
            write_behind(write, results, depth=1)
        else:
            write(results)


def _overlaps(job: Job) -> bool:
    """Whether the pipeline's ends may run on threads: every input a regular file (a read
    never waits on a writer; one gone is left to the reading to name), none streamed."""
    return all(
        inp.path != STDIN and not _is_streamed(inp, job.reading) and os.path.isfile(inp.path)
        for inp in job.inputs
    )


def _write_results(
    job: Job,
    shards: Sequence[ShardPlan],
    digests: list[list[Any]],
    finished: Callable[[dict[str, Any]], object],
    jobs: int,
    progress: Progress | None,
    results: Iterator[tuple[int, Result]],
) -> None:
    """Write the encoded ``results`` into the shards, in order, each listed once whole."""
    writer: Any = None
    reported = 0
    with contextlib.ExitStack() as shard_files:
        for n, result in results:
            if isinstance(result, _Failed):
                raise result.error  # the shard in hand's files discarded, those before listed
            shard = shards[n]
            if writer is None:
                writer = shard_files.enter_context(
                    shard_format(job.layout.format)(job.out_dir, shard.index, job.layout)
                )
                reported = 0
            before, spanned = writer.tokens, 0
            if isinstance(result, _End):
                _finish_shard(job, shard, writer, digests[n], shard_files, finished)
                if progress is not None:
                    progress(shard.size - reported, 0)  # compressed, streamed: at the end
                writer = None
                continue
            if isinstance(result, _Streamed):
                _write_streamed(job, result.input, writer, jobs)
            else:
                writer.add_flat(result.ids, result.offsets, result.fields)
                spanned = min(result.span, shard.size - reported)  # a last line runs past
            if progress is not None:
                progress(spanned, writer.tokens - before)
            reported += spanned


def _finish_shard(
    job: Job,
    shard: ShardPlan,
    writer: Any,
    digests: list[Any],
    files: contextlib.ExitStack[Any],
    finished: Callable[[dict[str, Any]], object],
) -> None:
    """Put the shard's files in place and list it (``finished``); stopped on the way (a signal
    while its files are hashed for the entry, or between two of them renamed), it leaves none
    of its files: a shard not listed is not kept, so it is made again. Stopped once the
    manifest on disk lists it (the save's last steps), its files are kept: they are listed."""
    entry = None
    try:
        files.close()
        entry = _entry(job, shard, writer, digests)
        finished(entry)
    except BaseException:
        if entry is None or not lists_shard(job.out_dir, entry):
            for path in writer.paths:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        raise


def _numbered_tasks(
    job: Job, shards: Sequence[ShardPlan], digests: list[list[Any]], sha256: Callable[[], Any],
    read_json: bool,
) -> Generator[tuple[int, Task], None, None]:  # fmt: skip
    n = 0
    try:
        for n, shard in enumerate(shards):
            for task in _tasks(job, shard, digests[n], sha256, read_json):
                yield n, task
    except Exception as exc:  # the reading's error, at its place: the last task
        yield n, _Failed(exc)


def _numbered(work: Callable[[Task], Result], task: tuple[int, Task]) -> tuple[int, Result]:
    try:
        return task[0], work(task[1])
    except Exception as exc:  # raised at its place by the writing (a signal: at once)
        return task[0], _Failed(exc)


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
        "files": file_records(writer.paths, writer.sha256),
        "sources": source_records(job.inputs, shard),
        # of each source, what its documents were read from (None: streamed, not hashed)
        "read_sha256": [None if d is None else d.hexdigest() for d in digests],
        "tokens": writer.tokens,
        "documents": writer.documents,
        **job.record,
    }
