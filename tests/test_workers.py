"""The ordered map over threads and processes (stream/workers.py): order, bounds, errors, ends."""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamcodec.stream import workers
from streamcodec.stream.workers import WorkerDied, cancelled, ordered_map
from tests.stops import heap_set_aside, run_stopped

KINDS = [False, True]  # threads, processes
ROOT = Path(__file__).resolve().parents[1]


def _square(x: int) -> int:
    return x * x


def _fail_at_3(x: int) -> int:
    if x == 3:
        raise ValueError(f"bad task {x}")
    return x


def _die(x: int) -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return x


def _slow_pid(x: int) -> int:
    time.sleep(0.01)
    return os.getpid()


@pytest.mark.parametrize("processes", KINDS)
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_come_in_the_tasks_order(processes: bool, jobs: int) -> None:
    results = ordered_map(_square, range(50), jobs=jobs, processes=processes)
    assert list(results) == [x * x for x in range(50)]


@pytest.mark.parametrize("processes", KINDS)
def test_the_work_runs_in_the_workers(processes: bool) -> None:
    pids = set(ordered_map(_slow_pid, range(12), jobs=2, processes=processes))
    assert (os.getpid() not in pids) if processes else (pids == {os.getpid()})


@pytest.mark.parametrize("processes", KINDS)
def test_tasks_are_read_lazily_and_bounded(processes: bool) -> None:
    pulled: list[int] = []

    def tasks() -> Iterator[int]:
        for x in itertools.count():
            pulled.append(x)
            yield x

    results = ordered_map(_square, tasks(), jobs=2, processes=processes, ahead=3)
    assert next(results) == 0
    assert len(pulled) <= 2 * 3 + 1  # in flight at most, and the one after
    assert next(results) == 1
    results.close()


@pytest.mark.parametrize("processes", KINDS)
def test_an_error_is_raised_at_its_place(processes: bool) -> None:
    results = ordered_map(_fail_at_3, range(10), jobs=2, processes=processes)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="bad task 3"):
        next(results)


def echo(data: bytes) -> bytes:
    return data


def test_tasks_and_results_larger_than_a_pipe_do_not_deadlock() -> None:
    """A task and a result each larger than a pipe's buffer: the parent, sending a worker its
    next task, and the worker, sending its last result, waited on each other for ever (the
    corpus tool on the pure path, ``--jobs 2``, hung on 6 MB of JSON Lines: 1 MB blocks)."""
    code = (
        "from streamcodec.stream.workers import ordered_map\n"
        "from tests.test_workers import echo\n"
        "data = [bytes([n]) * (2 << 20) for n in range(8)]\n"
        "assert list(ordered_map(echo, data, jobs=2, processes=True)) == data\n"
    )
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True, cwd=ROOT)


def test_a_dead_worker_process_is_an_error_not_a_hang() -> None:
    with pytest.raises(WorkerDied, match="killed by signal 9"):
        list(ordered_map(_die, range(4), jobs=2, processes=True))


def test_closing_ends_threads_and_tells_the_work() -> None:
    stopped: list[int] = []
    inside = threading.Semaphore(0)

    def work(x: int) -> int:
        if x:
            inside.release()
        while x and not cancelled():  # every task but the first waits to be cancelled
            time.sleep(0.001)
        stopped.append(x)
        return x

    before = threading.active_count()
    results = ordered_map(work, range(100), jobs=2)
    assert next(results) == 0
    inside.acquire()
    inside.acquire()
    results.close()  # the two workers are in work(1) and work(2): they are told, and end
    assert threading.active_count() == before
    assert sorted(stopped) == [0, 1, 2]
    assert not cancelled()  # outside a worker


def test_a_thread_map_stopped_at_any_line_ends_its_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stop at the first lines of the map's end (setting its stop, calling the end that wakes
    # the idle workers) left each worker waiting for a task forever (tests/stops.py). Such a
    # worker ends at its next idle check: checked often here, not each second.
    monkeypatch.setattr(workers, "IDLE_CHECK_SECONDS", 0.01)

    def run() -> None:
        assert list(ordered_map(_square, range(6), jobs=2)) == [x * x for x in range(6)]

    lines = run_stopped(run, ("stream/workers.py",), 0)
    with heap_set_aside():
        for stop_at in range(1, lines + 1):
            run_stopped(run, ("stream/workers.py",), stop_at)
            gc.collect()  # the map's frame, kept by the stop's traceback, is gone
            for thread in threading.enumerate():
                if thread.name.startswith("streamcodec-worker-"):
                    thread.join(5)
                    assert not thread.is_alive(), stop_at


def test_abandoned_process_maps_leave_no_process_or_descriptor() -> None:
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(5):
        results = ordered_map(_slow_pid, range(100), jobs=2, processes=True)
        next(results)
        del results
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds
    assert multiprocessing.active_children() == []


def test_jobs_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ordered_map(_square, range(3), jobs=0)


def test_doctests() -> None:
    import doctest

    from streamcodec import interrupts
    from streamcodec.stream import workers

    for module in (workers, interrupts):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
