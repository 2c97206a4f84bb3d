"""An ordered map over worker threads or processes: bounded in flight, cancelled when closed.

:func:`ordered_map` yields ``work(task)`` for each task, in the tasks' order, while ``jobs``
workers compute the next ones. At most ``jobs * ahead`` tasks are in flight, so memory stays
bounded however many tasks there are; the tasks are read lazily, in the consumer's thread.

    >>> list(ordered_map(abs, range(-3, 3), jobs=2))
    [3, 2, 1, 0, 1, 2]

**Threads** (the default) suit work that releases the GIL, as the compiled core and scanner do on
long texts: the work shares the caller's objects, nothing is pickled. **Processes**
(``processes=True``) suit pure-Python work: ``work`` and each task are sent to the worker (pickled
unless the process is forked) and each result comes back pickled. Each worker process has a pipe
of its own, so no lock is ever shared with a process that can die: a dead worker is seen as the
end of its pipe (:class:`WorkerDied`), never as a hang.

Closing the iterator (``close()``, dropping it, an exception or a signal in the consumer) ends
the run: worker processes are killed at once (they hold nothing worth saving), worker threads
finish the step they are in; long work in a thread asks :func:`cancelled` between steps and
stops early. Workers ignore SIGINT, SIGTERM and SIGHUP: the consumer alone decides, so a signal
to the whole process group cannot kill a worker under its feet. On Linux a worker process also
dies with its parent (``PR_SET_PDEATHSIG``), even one killed with SIGKILL.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import queue
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Generator, Iterable
from typing import Any, Generic, NoReturn, TypeVar

from streamcodec.engine.batch import CAN_THREAD
from streamcodec.interrupts import STOP_SIGNALS

__all__ = ["WorkerDied", "cancelled", "ordered_map", "surely"]

T = TypeVar("T")
R = TypeVar("R")
PR_SET_PDEATHSIG = 1  # prctl(2)
# How long an idle worker waits for a task before it checks that its map is still there.
IDLE_CHECK_SECONDS = 1.0


class WorkerDied(ChildProcessError):
    """A worker process ended without answering (killed, or out of memory)."""


def ordered_map(
    work: Callable[[T], R],
    tasks: Iterable[T],
    *,
    jobs: int,
    processes: bool = False,
    ahead: int = 2,
) -> Generator[R, None, None]:
    """``work(task)`` for each of ``tasks``, in order, computed by ``jobs`` threads or processes.

    An exception raised by ``work`` is raised again here, at that task's place. See the module
    docstring for what closing the iterator does.
    """
    if jobs < 1 or ahead < 1:
        raise ValueError(f"jobs and ahead must be at least 1, not {jobs} and {ahead}")
    if not CAN_THREAD:  # Pyodide: in turn, here
        return (work(task) for task in tasks)
    run = _process_map if processes else _thread_map
    return run(work, tasks, jobs, jobs * ahead)


class _ThreadState(threading.local):
    """Each worker thread's own state. Pickled (dill pickles a module by value when it is not
    installed in site-packages: an editable install, as in a Hugging Face ``datasets``
    generator) as a new, empty one: what a thread holds is never another process's."""

    def __reduce__(self) -> tuple[type[_ThreadState], tuple[()]]:
        return type(self), ()


_local = _ThreadState()


def cancelled() -> bool:
    """In a worker thread of :func:`ordered_map`: whether the map was closed (the result of the
    work in hand will be dropped). Elsewhere, False."""
    stop: threading.Event | None = getattr(_local, "stop", None)
    return stop is not None and stop.is_set()


class _Slot(Generic[R]):
    """The result of one task, filled by a worker thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: R | None = None
        self.error: BaseException | None = None

    def get(self) -> R:
        self.done.wait()  # a signal to the main thread interrupts the wait
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set with done


def _thread_map(
    work: Callable[[T], R], tasks: Iterable[T], jobs: int, limit: int
) -> Generator[R, None, None]:
    inbox: queue.SimpleQueue[tuple[_Slot[R], T] | None] = queue.SimpleQueue()
    stop = threading.Event()
    threads: list[threading.Thread] = []
    pending: collections.deque[_Slot[R]] = collections.deque()
    owner = _Map()
    try:
        for task in tasks:
            if len(pending) >= limit:
                yield pending.popleft().get()
            if len(threads) < jobs:
                thread = threading.Thread(
                    target=_serve_thread, args=(work, inbox, stop, weakref.ref(owner)),
                    daemon=True,
                    name=f"streamcodec-worker-{len(threads)}",
                )  # fmt: skip
                threads.append(thread)
                thread.start()
            slot: _Slot[R] = _Slot()
            inbox.put((slot, task))
            pending.append(slot)
        while pending:
            yield pending.popleft().get()
    finally:
        stop.set()
        surely(_end_threads, threads, inbox)


class _Map:
    """Held by a thread map's frame alone: its workers see it gone (a weak reference) if a stop
    at the first lines of its end skipped telling them to end (:func:`_next_task`)."""


def _serve_thread(
    work: Callable[[T], R],
    inbox: queue.SimpleQueue[tuple[_Slot[R], T] | None],
    stop: Any,
    owner: weakref.ref[_Map],
) -> None:
    _local.stop = stop
    while (item := _next_task(inbox, owner)) is not None and not stop.is_set():
        slot, task = item
        try:
            slot.value = work(task)
        except BaseException as exc:  # the consumer raises it at the task's place
            slot.error = exc
        slot.done.set()


def _next_task(inbox: queue.SimpleQueue[Any], owner: weakref.ref[_Map]) -> Any:
    """The next item of ``inbox``; None (the end) once its map is gone: a stop at its end's
    first lines (its ``stop.set()``, the call of :func:`surely`) left the workers waiting."""
    while True:
        try:
            return inbox.get(timeout=IDLE_CHECK_SECONDS)
        except queue.Empty:
            if owner() is None:
                return None


def _end_threads(threads: list[threading.Thread], inbox: queue.SimpleQueue[Any]) -> None:
    for _ in threads:
        inbox.put(None)
    for thread in threads:
        with contextlib.suppress(RuntimeError):  # a signal stopped start(): it ends on its own
            thread.join()  # the step in hand: the work asks cancelled() between steps


def surely(end: Callable[..., None], *args: Any) -> None:
    """Run the idempotent ``end`` to completion: a signal that interrupts it (a second Ctrl-C,
    ``timeout`` sending SIGTERM to the child and then to its group) is raised again after."""
    interrupted: KeyboardInterrupt | None = None
    while True:
        try:
            end(*args)
            break
        except KeyboardInterrupt as exc:  # what signal handlers raise (interrupts.Stopped too)
            interrupted = interrupted or exc
    if interrupted is not None:
        raise interrupted


class _Process:
    """One worker process and the parent's end of its own pipe."""

    def __init__(self, context: Any, work: Callable[[Any], Any]) -> None:
        self.conn, self._child = context.Pipe()
        self.owner = os.getpid()
        parent = self.owner if context.get_start_method() != "forkserver" else None
        self.process = context.Process(target=_serve_process, args=(self._child, work, parent))
        self.process.daemon = True

    def start(self) -> None:
        """Start the worker; the caller has listed it already, so that whatever interrupts
        this (a signal held back meanwhile arrives as the mask is restored) ends it too."""
        _LIVE.add(self.process)
        if not _LIVE_ENDED_AT_EXIT:  # after multiprocessing's own exit hook: runs before it
            atexit.register(_kill_live)
            _LIVE_ENDED_AT_EXIT.append(True)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # the child starts with them blocked, until it ignores them
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            self._child.close()

    def send(self, task: Any) -> None:
        try:
            self.conn.send(task)
        except OSError:  # BrokenPipeError: it is gone
            self._died()

    def receive(self) -> Any:
        try:
            ok, value = self.conn.recv()
        except (EOFError, OSError):
            self._died()
        if not ok:
            raise value
        return value

    def _died(self) -> NoReturn:
        self.process.join(1)
        code = self.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        raise WorkerDied(f"a worker process ended without answering ({how})") from None

    def end(self) -> None:
        if self.process.pid is not None:
            self.process.join()
        _LIVE.discard(self.process)
        self.conn.close()


# Worker processes started and not yet ended. They ignore SIGTERM, so multiprocessing's exit
# hook (SIGTERM, then wait) would wait forever for one a signal kept from being ended: this kills
# any such worker first.
_LIVE: set[Any] = set()
_LIVE_ENDED_AT_EXIT: list[bool] = []


def _kill_live() -> None:
    for process in list(_LIVE):
        if process.pid is not None:
            process.kill()


def _process_map(
    work: Callable[[T], R], tasks: Iterable[T], jobs: int, limit: int
) -> Generator[R, None, None]:
    import multiprocessing  # here: the import costs every start-up 7 ms, most runs use none

    context = multiprocessing.get_context()
    workers: list[_Process] = []
    pending: collections.deque[_Process] = collections.deque()
    try:
        for n, task in enumerate(tasks):
            if len(pending) >= limit:
                yield pending.popleft().receive()
            if len(workers) < jobs:
                workers.append(_Process(context, work))
                workers[-1].start()
            worker = workers[n % jobs]  # each answers its own tasks in the order they came
            worker.send(task)
            pending.append(worker)
        while pending:
            yield pending.popleft().receive()
    finally:
        surely(_end_processes, workers)


def _end_processes(workers: list[_Process]) -> None:
    if workers and workers[0].owner != os.getpid():
        return  # a forked copy of the map: the workers are its parent's
    for worker in workers:
        if worker.process.pid is not None:
            worker.process.kill()  # first all, at once
    for worker in workers:
        worker.end()


def _serve_process(conn: Any, work: Callable[[Any], Any], parent: int | None) -> None:
    """A worker process: answer each task on ``conn`` until its parent closes it or dies."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:
        return  # the parent died before the line above
    # Tasks are read on a thread of their own: the parent may send the next task while this
    # worker sends its last result, and with both larger than the pipe's buffer, each waited
    # for the other to read (the parent holds at most ``ahead`` tasks here: memory is bounded).
    tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
    threading.Thread(target=_read_tasks, args=(conn, tasks), daemon=True).start()
    while (task := tasks.get()) is not _NO_MORE:
        try:
            reply = (True, work(task))
        except Exception as exc:
            reply = (False, _picklable(exc))
        conn.send(reply)


_NO_MORE = object()  # the parent closed the pipe, or died


def _read_tasks(conn: Any, tasks: queue.SimpleQueue[Any]) -> None:
    """Put each task from ``conn`` in ``tasks`` as it comes, then ``_NO_MORE`` (after any
    error too: the worker ends, and the parent sees it gone, never a hang)."""
    try:
        while True:
            tasks.put(conn.recv())
    except (EOFError, OSError):
        pass
    finally:
        tasks.put(_NO_MORE)


def _picklable(exc: Exception) -> Exception:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
