"""The corpus pipeline's ends on threads of their own (``corpus.overlap``): order, errors at
their place, stopping, and the main thread left only scheduling."""

from __future__ import annotations

import hashlib
import io
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec.corpus.job as job_module
import streamcodec.corpus.overlap as overlap
import streamcodec.corpus.tasks as tasks_module
from streamcodec.corpus.overlap import HashBehind, OnThread, read_ahead, write_behind
from streamcodec.corpus.shards import TokenShard
from streamcodec.corpus.tokenize import tokenize
from streamcodec.registry import get_encoding


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers()), st.integers(1, 4), st.integers(0, 30))
def test_read_ahead_gives_the_items_in_order_and_an_error_at_its_place(
    items: list[int], depth: int, fail_at: int
) -> None:
    def source() -> Iterator[int]:
        for n, item in enumerate(items):
            if n == fail_at:
                raise OSError("read failed")
            yield item

    got: list[int] = []
    if fail_at < len(items):
        with pytest.raises(OSError, match="read failed"):
            got.extend(read_ahead(source(), depth=depth))
        assert got == items[:fail_at]
    else:
        assert list(read_ahead(source(), depth=depth)) == items


def test_read_ahead_closed_early_ends_its_thread_and_closes_the_source() -> None:
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            yield from range(1000)
        finally:
            closed.set()

    ahead = read_ahead(source(), depth=2)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()
    assert closed.is_set() and not _threads_named("streamcodec-reader")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers()), st.integers(1, 4))
def test_write_behind_consumes_every_item_in_order(items: list[int], depth: int) -> None:
    got: list[int] = []
    write_behind(got.extend, items, depth=depth)
    assert got == items and not _threads_named("streamcodec-writer")


def test_write_behind_raises_the_consumers_error_here_and_stops_feeding_it() -> None:
    taken: list[int] = []

    def consume(items: Iterator[int]) -> None:
        for item in items:
            taken.append(item)
            if item == 3:
                raise OverflowError("id 70000 does not fit in uint16")

    with pytest.raises(OverflowError, match="does not fit"):
        write_behind(consume, range(10_000), depth=1)
    assert taken == [0, 1, 2, 3] and not _threads_named("streamcodec-writer")


def test_write_behind_stopped_unwinds_the_consumer_before_going_on() -> None:
    """A signal (here its exception) in the items: the consumer's ``with`` blocks unwind as on
    an error (a shard's temporary files removed) before the caller goes on."""
    unwound: list[BaseException] = []

    def consume(items: Iterator[int]) -> None:
        try:
            for _ in items:
                pass
        except BaseException as exc:
            unwound.append(exc)
            raise

    def items() -> Iterator[int]:
        yield from range(5)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_behind(consume, items(), depth=1)
    assert len(unwound) == 1 and not isinstance(unwound[0], Exception)
    assert not _threads_named("streamcodec-writer")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.binary(max_size=300))), st.integers(1, 3))
def test_hash_behind_gives_each_digest_of_its_own_updates(
    updates: list[tuple[int, bytes]], depth: int
) -> None:
    """Three digests fed in turn on one thread: each equals hashlib's of its own bytes."""
    with HashBehind(depth=depth) as hashes:
        digests = [hashes.sha256() for _ in range(3)]
        for which, data in updates:
            digests[which].update(data)
        got = [d.hexdigest() for d in digests]
    expected = [
        hashlib.sha256(b"".join(data for w, data in updates if w == which)).hexdigest()
        for which in range(3)
    ]
    assert got == expected and not _threads_named("streamcodec-hasher")


def test_hash_behind_ended_before_its_thread_ran_still_hashes_every_update(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A block that ends (normally) before its just-started thread has run: the end waits for
    the thread, which hashes the updates queued before it (given up, it hashed none, and a
    ``hexdigest`` after the block waited for ever); after the block a digest answers at once,
    and an update, which nobody would hash, is refused."""
    run = overlap._Owned.run

    def late(thread: overlap._Owned) -> None:
        time.sleep(0.2)  # started, not yet running its work
        run(thread)

    monkeypatch.setattr(overlap._Owned, "run", late)
    with HashBehind(depth=4) as hashes:
        digest = hashes.sha256()
        digest.update(b"abc")
    got: list[str] = []
    asking = threading.Thread(target=lambda: got.append(digest.hexdigest()), daemon=True)
    asking.start()
    asking.join(5)
    assert got == [hashlib.sha256(b"abc").hexdigest()]
    with pytest.raises(RuntimeError, match="after its HashBehind block ended"):
        digest.update(b"more")
    assert not _threads_named("streamcodec-hasher")


@pytest.mark.parametrize(("jobs", "stdin"), [(1, False), (2, False), (1, True), (2, True)])
def test_jobs_are_the_cores_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, stdin: bool
) -> None:
    """``jobs`` is the cores used (issue 28): one job reads, hashes, encodes and writes on the
    main thread, in turn; with several, the input's reading and hashing and the shards' writing
    and hashing, which capped a run on many cores on the main thread (~1.9 ms per MB), are on
    the reader and writer threads (the input's SHA-256 on a third) and the encoding on the
    workers (but the first tasks, encoded on the main thread before they start); with standard
    input (a read that may wait for ever, not to be joined), the reading and writing stay on the
    main thread."""
    lines = "".join(f'{{"text": "document {n}"}}\n' for n in range(3000))
    source = tmp_path / "docs.jsonl"
    source.write_text(lines)
    if stdin:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines.encode())))
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 4000)
    reading: set[str] = set()
    writing: set[str] = set()
    line_blocks, add_flat = tasks_module.line_blocks, TokenShard.add_flat

    def read(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for block in line_blocks(*args, **kwargs):
            reading.add(threading.current_thread().name)
            yield block

    def write(self: TokenShard, *args: Any) -> None:
        writing.add(threading.current_thread().name)
        add_flat(self, *args)

    encoding: list[str] = []  # in the order the tasks began
    parsing: set[str] = set()
    encode_task, json_column = job_module.encode_task, tasks_module.json_column

    def encode(*args: Any) -> Any:
        encoding.append(threading.current_thread().name.rstrip("0123456789"))
        return encode_task(*args)

    def parse(*args: Any) -> Any:
        parsing.add(threading.current_thread().name.rstrip("0123456789"))
        return json_column(*args)

    monkeypatch.setattr(tasks_module, "line_blocks", read)
    monkeypatch.setattr(TokenShard, "add_flat", write)
    monkeypatch.setattr(job_module, "encode_task", encode)
    monkeypatch.setattr(tasks_module, "json_column", parse)
    named = "-" if stdin else source
    kind = {"stdin_kind": "jsonl"} if stdin else {}
    manifest = tokenize([named], tmp_path / "out", jobs=jobs, shard_bytes=20_000, **kind)
    assert manifest["complete"] and manifest["shards"][-1]["documents"] > 0
    main = threading.main_thread().name
    native = get_encoding("cl100k_base").backend == "native"  # threads, not processes
    threads = native and not stdin and jobs > 1
    expected = ({"streamcodec-reader"}, {"streamcodec-writer"}) if threads else ({main}, {main})
    assert (reading, writing) == expected
    if native:  # (the pure path's workers are processes)
        if jobs == 1:
            assert set(encoding) == parsing == {main}
        else:  # the first tasks alone, here: a cold word cache learns the common words once
            solo = job_module.SOLO_TASKS
            assert encoding[:solo] == [main] * solo
            assert set(encoding[solo:]) == {"streamcodec-worker-"}
            assert parsing == {main, "streamcodec-worker-"}


def test_one_job_encodes_its_tasks_unwatched_on_its_own_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's batch runs on the thread that read it, signals checked between tasks
    (``watch=False``: no thread started and joined a task to watch them, 13-18 ms of a 45 MB
    run); a task larger than ``WATCHED`` (a long line) is watched as it runs (None)."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "short"}\n' + '{"text": "%s"}\n' % ("long " * 2000))
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 100)
    monkeypatch.setattr(tasks_module, "FIRST_TASK", 0)
    monkeypatch.setattr(tasks_module, "WATCHED", 5000)
    manifest, watched = _one_job_watching(source, tmp_path / "out", monkeypatch)
    assert manifest["shards"][0]["documents"] == 2
    assert watched == [False, None]


def test_a_line_of_a_few_megabytes_is_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (review10): a task of up to 16 MB ran unwatched, and Ctrl-C waited for it: a
    15 MB line of random words kept a one-job o200k run going 0.9-1.7 s after SIGINT (its
    encode alone 2.1 s; 0.1-0.2 s watched) on the 2-core host. Only an ordinary task (about
    ``BATCH_SIZE``) goes unwatched; a line of 3 MB is watched."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "%s"}\n' % ("long " * 600_000))
    assert _one_job_watching(source, tmp_path / "out", monkeypatch)[1] == [None]


def _one_job_watching(
    source: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[Any]]:
    """A one-job run of ``source`` into ``out``: its manifest, and each task's ``watch``."""
    watched: list[Any] = []
    encode_flat_uint32 = tasks_module.encode_flat_uint32

    def encode(*args: Any, **kwargs: Any) -> Any:
        watched.append(kwargs["watch"])
        return encode_flat_uint32(*args, **kwargs)

    monkeypatch.setattr(tasks_module, "encode_flat_uint32", encode)
    return tokenize([source], out, jobs=1), watched


def _stop_inside_start(monkeypatch: pytest.MonkeyPatch) -> list[threading.Event]:
    """``Thread.start`` stopped (Ctrl-C) once the new thread is made but before it runs: it
    raises, and the thread runs once its gate (returned) is opened, after the caller's ending."""
    gates: list[threading.Event] = []

    def start(thread: threading.Thread) -> None:
        gate = threading.Event()
        gates.append(gate)
        bootstrap = thread._bootstrap  # type: ignore[attr-defined]
        with threading._active_limbo_lock:  # type: ignore[attr-defined]
            threading._limbo[thread] = thread  # type: ignore[attr-defined]
        threading._start_new_thread(lambda: (gate.wait(), bootstrap()), ())  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start)
    return gates


@pytest.mark.parametrize("which", ["reader", "on thread"])
def test_a_stop_inside_start_leaves_no_work_running_late(
    monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """A thread made by a ``start`` that a stop interrupted runs after its owner has ended:
    given up, it does nothing (a reader read its source with nobody taking the blocks, its
    generator then closed under it; a manifest's save ran after the run had ended)."""
    done: list[str] = []

    def source() -> Iterator[int]:
        done.append("read")
        yield 1

    runs: dict[str, Callable[[], object]] = {
        "reader": lambda: list(read_ahead(source(), depth=1)),
        "on thread": lambda: OnThread(lambda: done.append("work")),
    }
    gates = _stop_inside_start(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        runs[which]()
    monkeypatch.undo()
    for gate in gates:
        gate.set()
    time.sleep(0.2)  # the late threads run, and end
    assert done == [] and not _threads_named("streamcodec-reader")
