"""The shards' pipeline: their tasks read, encoded by ``jobs`` workers and written in order.

:func:`make_shards` makes shards one after another through one pipeline; :func:`make_shard` is one
shard alone, a plain function of a :class:`~streamcodec.corpus.tasks.Job` (what every shard
shares: the inputs, the encoding, the options) and a :class:`~streamcodec.corpus.plan.ShardPlan`,
so a thread, a process or a Dask worker runs it alike. The inputs are read in order as tasks
(:mod:`streamcodec.corpus.tasks`: what a task is, and how a worker reads and encodes one), encoded
and written in the tasks' order, so the shards' bytes do not depend on ``jobs``.

``jobs`` is the cores used (issue 28). One job runs the whole pipeline on the calling thread, one
task after another. Several are ``jobs`` threads (native path) or processes (pure path) that each
take a task and encode it, while the reading (and the input's hash) and the writing (and the
shards' hashes) run on threads of their own (:mod:`streamcodec.corpus.overlap`), so the next
shard is read and encoded while the last is written and the main thread, which would cap the
run on many cores, only schedules (on the native path it first encodes the run's first few tasks
itself, before the workers start: ``SOLO_TASKS``). At most ``2 * jobs`` tasks are in flight and
8 more in the hands and queues of those threads (``2 * jobs + 8`` of about a megabyte each), so
memory is bounded. A large plain-text file is streamed (``Encoding.iter_encode_chunks``). A
task's error is raised where the shards are written, at its place, so the shards before it are
listed first."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from streamcodec.corpus.document import STDIN, Input, invalid_utf8, open_input
from streamcodec.corpus.inputs import where_in
from streamcodec.corpus.manifest import lists_shard
from streamcodec.corpus.overlap import HashBehind, read_ahead, write_behind
from streamcodec.corpus.plan import ShardPlan, source_records
from streamcodec.corpus.shards import file_records
from streamcodec.corpus.tasks import (
    LARGE_DOCUMENT,
    End,
    Failed,
    Job,
    Result,
    Streamed,
    Task,
    encode_task,
    is_streamed,
    shard_tasks,
    special_message,
)
from streamcodec.corpus.writers import shard_format
from streamcodec.stream.workers import ordered_map
from streamcodec.text.specials import DisallowedSpecialTokenError
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = ["LARGE_DOCUMENT", "Job", "make_shard", "make_shards"]

Progress = Callable[[int, int], object]  # (input bytes, tokens) done since the last call
# Beside several workers, a run's first tasks (about 2 MB of JSON Lines: 64 kB doubling) are
# encoded by one call at a time, before the workers start: a call alone writes the encoder's word
# cache, while calls at once each learn what it lacks in a private cache, taught to it only when
# all are out at once, which busy workers seldom are; so a cold run's common words are learned
# once, first.
SOLO_TASKS = 5


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
    ``finished(entry)`` with each one's manifest entry once it is whole. ``jobs`` is the cores
    used: one job reads, hashes, encodes and writes here, in turn; several encode on worker
    threads (processes on the pure path) while the input is read and hashed on a reader thread
    and a hasher thread and the shards written, hashed and listed on a writer thread
    (:mod:`streamcodec.corpus.overlap`), so this thread only schedules; not with an input that
    can block (standard input, a pipe) or a document streamed (its own pipeline), nor beside
    worker processes (forked: a thread's lock held): then the reading and writing are this
    thread's."""
    digests: list[list[Any]] = [[] for _ in shards]
    work = functools.partial(_numbered, functools.partial(
        encode_task, job.encoding, job.special_as_text, job.reading))  # fmt: skip
    native = job.encoding.backend == "native"
    write = functools.partial(_write_results, job, shards, digests, finished, jobs, progress)
    overlapped = native and jobs > 1 and _overlaps(job)
    with contextlib.ExitStack() as stack:
        sha256: Callable[[], Any] = hashlib.sha256
        if overlapped:  # the input's hash off the reader too, ended after it
            sha256 = stack.enter_context(HashBehind(depth=2)).sha256
        tasks: Generator[tuple[int, Task], None, None] = _numbered_tasks(
            job, shards, digests, sha256
        )
        stack.callback(tasks.close)  # the input in hand closed, after the reader and workers
        if overlapped:
            tasks = read_ahead(tasks, depth=1)
            stack.callback(tasks.close)  # the reader ended, after the workers
        results: Iterator[tuple[int, Result]] = map(work, tasks)
        if jobs > 1:
            pool = ordered_map(work, tasks, jobs=jobs, processes=not native)
            stack.callback(pool.close)  # the workers ended
            results = pool
            if native:  # the first tasks here, alone; the workers start after them
                results = itertools.chain(map(work, itertools.islice(tasks, SOLO_TASKS)), pool)
        if overlapped:
            write_behind(write, results, depth=1)
        else:
            write(results)


def _overlaps(job: Job) -> bool:
    """Whether the pipeline's ends may run on threads: every input a regular file (a read
    never waits on a writer; one gone is left to the reading to name), none streamed."""
    return all(
        inp.path != STDIN and not is_streamed(inp, job.reading) and os.path.isfile(inp.path)
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
            if isinstance(result, Failed):
                raise result.error  # the shard in hand's files discarded, those before listed
            shard = shards[n]
            if writer is None:
                writer = shard_files.enter_context(
                    shard_format(job.layout.format)(job.out_dir, shard.number, job.layout)
                )
                reported = 0
            before, spanned = writer.tokens, 0
            if isinstance(result, End):
                _finish_shard(job, shard, writer, digests[n], shard_files, finished)
                if progress is not None:
                    progress(shard.size - reported, 0)  # compressed, streamed: at the end
                writer = None
                continue
            if isinstance(result, Streamed):
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
    job: Job, shards: Sequence[ShardPlan], digests: list[list[Any]], sha256: Callable[[], Any]
) -> Generator[tuple[int, Task], None, None]:
    n = 0
    try:
        for n, shard in enumerate(shards):
            for task in shard_tasks(job, shard, digests[n], sha256):
                yield n, task
    except Exception as exc:  # the reading's error, at its place: the last task
        yield n, Failed(exc)


def _numbered(work: Callable[[Task], Result], task: tuple[int, Task]) -> tuple[int, Result]:
    try:
        return task[0], work(task[1])
    except Exception as exc:  # raised at its place by the writing (a signal: at once)
        return task[0], Failed(exc)


def _write_streamed(job: Job, inp: Input, writer: Any, jobs: int) -> None:
    """Encode a whole input as one document, as a stream."""
    enc = job.encoding
    policy: dict[str, Any] = {"errors": job.reading.errors}
    policy["disallowed_special"] = () if job.special_as_text else "all"
    plain = inp.compression is None and inp.size >= 0
    from pathlib import Path  # here: a streamed document is rare, pathlib 5% of a start

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
        raise ValueError(special_message(where_in(inp, exc.token.encode()), exc.token)) from None
    writer.end_document()


def _entry(job: Job, shard: ShardPlan, writer: Any, digests: list[Any]) -> dict[str, Any]:
    return {
        "index": shard.number,
        "files": file_records(writer.paths, writer.sha256),
        "sources": source_records(job.inputs, shard),
        # of each source, what its documents were read from (None: streamed, not hashed)
        "read_sha256": [None if d is None else d.hexdigest() for d in digests],
        "tokens": writer.tokens,
        "documents": writer.documents,
        **job.record,
    }
