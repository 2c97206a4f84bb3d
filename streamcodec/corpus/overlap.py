"""The corpus pipeline's two serial ends on threads of their own, so the main thread only
schedules.

With many workers, whatever one thread does for every megabyte caps the run (Amdahl): reading
the input and hashing it (SHA-256) before the workers, writing the shards and hashing them after.
:func:`read_ahead` runs an iterator (the tasks: the input read, hashed and cut into blocks) on a
reader thread a few items ahead; :class:`HashBehind` feeds the input's SHA-256s on a thread of
their own (the reader's largest step); :func:`write_behind` hands items, in order, to a
consumer on a writer thread (the shards written, hashed and listed). Each does its bulk work in
calls that release the GIL (file reads, ``hashlib`` on large buffers, writes), so all overlap
the workers.

Each queue holds at most ``depth`` items, so memory stays bounded. Order is kept: one thread
per end. Stopping is the main thread's: a signal raises there, and the ``finally`` of each end
stops its thread and waits for it (a step in hand: a block read or written), so the writer's
files are discarded as an error would discard them, before the signal goes on. The reader must
not block for long on its input (a regular file, not a pipe): it is joined, not abandoned.

    >>> list(read_ahead(iter(range(5)), depth=2))
    [0, 1, 2, 3, 4]
    >>> got = []
    >>> write_behind(lambda items: got.extend(items), range(3), depth=2)
    >>> got
    [0, 1, 2]
"""

from __future__ import annotations

import functools
import hashlib
import queue
import threading
import weakref
from collections.abc import Callable, Generator, Iterable, Iterator
from types import TracebackType
from typing import Any, TypeVar

from streamcodec.stream.workers import IDLE_CHECK_SECONDS, surely

__all__ = ["HashBehind", "OnThread", "read_ahead", "write_behind"]

T = TypeVar("T")
_END = object()  # the items' end
_ABANDON = object()  # the main thread stopped: the consumer unwinds


class _Abandoned(BaseException):
    """Raised in the consumer when the main thread stops: its ``with`` blocks unwind as they
    would on an error (a shard's temporary files removed). A ``BaseException``: no ``except
    Exception`` of the consumer takes it."""


def read_ahead(items: Iterator[T], *, depth: int) -> Generator[T, None, None]:
    """``items``, computed on a thread of their own up to ``depth`` ahead of the caller; an
    exception of ``items`` is raised here at its place. Closing this ends the thread (and
    closes ``items`` on it)."""
    box: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(depth)
    stop = threading.Event()

    def run() -> None:
        try:
            for item in items:
                box.put((item, None))  # the caller drains the box while stopping: never stuck
                if stop.is_set():
                    return
            box.put((_END, None))
        except BaseException as exc:  # raised again on the caller's thread
            box.put((_END, exc))
        finally:
            getattr(items, "close", lambda: None)()

    thread = _Owned(run, name="streamcodec-reader")
    try:  # started inside: a stop just after the start still ends it
        thread.start()
        while True:
            item, error = box.get()  # a signal to the main thread interrupts the wait
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        surely(_drain_until_ended, thread, box)


def write_behind(
    consume: Callable[[Iterator[T]], object], items: Iterable[T], *, depth: int
) -> None:
    """``consume(iterator)`` on a thread of its own, given ``items`` (taken here, on the
    caller's thread) in order through a queue of ``depth``; returns once it has consumed them
    all, raising its exception here. If this stops (an exception of ``items``, a signal), the
    consumer's iterator raises a ``BaseException`` at its next item and this waits for it to
    unwind before going on."""
    box: queue.Queue[Any] = queue.Queue(depth)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            consume(_received(box))
        except _Abandoned:
            pass
        except BaseException as exc:  # raised again on the caller's thread
            failed.append(exc)
        finally:
            done.set()

    done = threading.Event()
    thread = _Owned(run, name="streamcodec-writer")
    try:  # started inside: a stop just after the start still ends it
        thread.start()
        for item in items:
            if not _hand(box, item, done):
                break  # the consumer failed: its error is raised below
        _hand(box, _END, done)
        done.wait()
    except BaseException:
        surely(_abandon, thread, box)
        raise
    thread.join()
    if failed:
        raise failed[0]


class HashBehind:
    """SHA-256s fed on a thread of their own, each in the order of its updates, within a
    ``with`` block (the thread ends with it): :meth:`sha256` gives a digest whose ``update``
    queues the bytes (never changed after: ``bytes``) and whose ``hexdigest`` waits for them
    (after the block, the thread has hashed them all: it answers at once). At most ``depth``
    updates wait, so memory stays bounded.

        >>> with HashBehind(depth=2) as hashes:
        ...     digest = hashes.sha256()
        ...     digest.update(b"abc")
        ...     digest.hexdigest() == hashlib.sha256(b"abc").hexdigest()
        True
    """

    def __init__(self, *, depth: int) -> None:
        self._box: queue.Queue[tuple[Any, bytes | threading.Event] | None] = queue.Queue(depth)
        fed = functools.partial(_hash_fed, self._box, weakref.ref(self))
        self._thread = _Owned(fed, name="streamcodec-hasher")
        self._state = _Hashing()

    def __enter__(self) -> HashBehind:
        try:  # a stop before the with block takes charge still ends the thread
            self._thread.start()
            # started: its work runs whole, so the end waits for it (given up instead, just
            # made, it would leave the updates queued before the end unhashed)
            self._state.started = True
            return self
        except BaseException:
            surely(self._end)
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        surely(self._end)

    def _end(self) -> None:
        if not self._state.ending:  # once: the thread takes one end
            self._box.put(None)
            self._state.ending = True
        if self._state.started:
            self._thread.join()
        else:
            _join_started(self._thread)
        self._state.ended = True

    def sha256(self) -> _Fed:
        """A new SHA-256, fed on the thread."""
        return _Fed(self._box, self._state)


class _Hashing:
    """Where a :class:`HashBehind` stands, shared with its digests (not the owner itself,
    whose end its thread watches for)."""

    def __init__(self) -> None:
        self.started = False  # its thread started: its work runs whole
        self.ending = False  # the end put in its box: no update may follow
        self.ended = False  # its thread ended (having hashed every update, if started)


def _hash_fed(box: queue.Queue[Any], owner: weakref.ref[HashBehind]) -> None:
    """The hasher's thread: each update in turn, until the end its owner puts, or until the
    owner is gone (a stop at the very call of its ``__exit__`` left it waiting)."""
    while True:
        try:
            item = box.get(timeout=IDLE_CHECK_SECONDS)
        except queue.Empty:
            if owner() is None:
                return
            continue
        if item is None:
            return
        digest, data = item
        if isinstance(data, threading.Event):
            data.set()  # the updates before it are done
        else:
            digest.update(data)  # hashlib releases the GIL for a large buffer


class _Fed:
    """A SHA-256 whose updates a :class:`HashBehind` thread makes, in order."""

    def __init__(self, box: queue.Queue[Any], state: _Hashing) -> None:
        self._digest = hashlib.sha256()
        self._box = box
        self._state = state

    def update(self, data: bytes) -> None:
        if self._state.ending:  # nobody would hash it
            raise RuntimeError("a SHA-256 updated after its HashBehind block ended")
        self._box.put((self._digest, data))

    def hexdigest(self) -> str:
        if self._state.ended:  # every update hashed, or none if the thread never ran
            if not self._state.started:
                raise RuntimeError("a SHA-256 of a HashBehind stopped before its thread ran")
            return self._digest.hexdigest()
        done = threading.Event()
        self._box.put((None, done))
        done.wait()
        return self._digest.hexdigest()


class OnThread:
    """``work()`` run at once on a thread of its own (slow I/O off the run's path: a file read
    back and hashed, the first manifest's save): :meth:`wait` until it has ended, :meth:`result`
    its value, its exception raised on the caller's thread. ``daemon=False`` for work that must
    end whole even if the caller is stopped first (the interpreter's exit waits for it).

        >>> OnThread(lambda: 6 * 7).result()
        42
    """

    def __init__(self, work: Callable[[], Any], *, daemon: bool = True) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = _Owned(functools.partial(self._run, work), daemon=daemon)
        try:
            self._thread.start()
        except BaseException:  # a stop inside start: the work runs whole, or never
            surely(_join_started, self._thread)
            raise

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # handed to result(), on the caller's thread
            self._error = exc

    def wait(self) -> None:
        """Until the thread has ended."""
        self._thread.join()

    def result(self) -> Any:
        """``work()``'s value, once it has ended (its error, raised here)."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value


def _received(box: queue.Queue[Any]) -> Iterator[Any]:
    while (item := box.get()) is not _END:
        if item is _ABANDON:
            raise _Abandoned
        yield item


def _hand(box: queue.Queue[Any], item: Any, done: threading.Event) -> bool:
    """Put ``item`` in ``box`` unless the consumer has ended (then False: nobody takes it)."""
    while not done.is_set():
        try:
            box.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _abandon(thread: _Owned, box: queue.Queue[Any]) -> None:
    """Stop the consumer at its next item and wait for it to unwind (idempotent)."""
    _drain(box)
    box.put_nowait(_ABANDON)  # only this thread puts: the box has room
    _join_started(thread)


def _drain_until_ended(thread: _Owned, box: queue.Queue[Any]) -> None:
    """Take what the reader puts until it has ended (it checks its stop after each put)."""
    if thread.given_up():
        return
    while thread.is_alive():
        _drain(box)
        thread.join(0.01)


def _join_started(thread: _Owned) -> None:
    """Wait for ``thread`` to end, if its work has begun; else it never will begin."""
    if not thread.given_up():
        thread.join()


class _Owned(threading.Thread):
    """A thread that its owner can always end, even after a stop inside ``start``: the new
    thread may then be made and run later, after ``start`` has raised (``ident`` and
    ``is_alive`` do not say so yet, and ``join`` refuses it), left running with no owner (a
    reader still reading, nobody taking its blocks). Its work runs whole, or not at all once
    the owner has given it up (:meth:`given_up`). The two claim it by appending to a list
    (atomic), the first claim wins: no lock, which a stop could leave held."""

    def __init__(self, work: Callable[[], object], *, name: str | None = None, daemon: bool = True):
        super().__init__(name=name, daemon=daemon)
        self._work = work
        self._claims: list[str] = []

    def run(self) -> None:
        self._claims.append("thread")
        if self._claims[0] == "thread":
            self._work()

    def given_up(self) -> bool:
        """Give the thread up unless its work has begun: whether it was given up (True: its
        work never runs; False: it runs whole, and ``join`` waits for it). Idempotent."""
        if "owner" not in self._claims:  # once, even if a stop came after the append
            self._claims.append("owner")
        return self._claims[0] == "owner"


def _drain(box: queue.Queue[Any]) -> None:
    while True:
        try:
            box.get_nowait()
        except queue.Empty:
            return
