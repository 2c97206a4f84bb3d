"""Stop signals: SIGINT, SIGTERM and SIGHUP unwind the main thread as Ctrl-C does, once.

The command line installs this handling first thing, before it imports the rest of the package,
so a signal at any moment gives one line and the conventional status (128 + the signal's
number), never a traceback. The first stop signal raises :class:`Stopped` (a
``KeyboardInterrupt``, so code that cleans up after Ctrl-C cleans up after SIGTERM too); later
ones are only recorded, so the unwinding they would cut short (removing a temporary file, ending
workers) always finishes: ``timeout`` sends SIGTERM to its command and then to the whole group,
so two arrive. A signal the process was started ignoring (``nohup``, ``&`` in a script) stays
ignored. A signal that lands in a finalizer (``__del__``, a weakref callback), where Python
prints an exception and drops it, is raised again a millisecond later (``SIGALRM``).

    >>> with stop_signals():
    ...     try:
    ...         signal.raise_signal(signal.SIGTERM)
    ...     except Stopped as stopped:
    ...         print(stopped.name, stopped.status)
    SIGTERM 143
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager

TYPE_CHECKING = False  # loaded before the rest of the command line: no ``typing``
if TYPE_CHECKING:
    import types
    from collections.abc import Iterator
    from typing import Any

__all__ = ["STOP_SIGNALS", "Stopped", "disarm", "stop_signals", "stopped_by"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived: ``signum``, its ``name`` and the exit ``status`` it calls for."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.status = 128 + signum

    def __str__(self) -> str:
        return f"interrupted ({self.name})"


class _State:
    armed = False  # the next stop signal raises
    raised = False  # one was raised: the others only follow it
    pending: int | None = None  # the first that came when disarmed, if none was raised
    again: int | None = None  # one a finalizer swallowed, to raise again
    unraisable_hook = sys.unraisablehook


def _handler(signum: int, frame: types.FrameType | None) -> None:
    if _State.armed:
        _State.armed, _State.raised = False, True
        raise Stopped(signum)
    if not _State.raised and _State.pending is None:
        _State.pending = signum


def _unraisable(unraisable: Any) -> None:
    """A signal that came while a finalizer ran (``__del__``, a weakref callback) was printed
    and dropped by Python, and the run would go on: raise it again in a moment, outside."""
    if isinstance(unraisable.exc_value, Stopped) and _State.again is None:
        _State.again = unraisable.exc_value.signum
        signal.setitimer(signal.ITIMER_REAL, 0.001)
    else:
        _State.unraisable_hook(unraisable)


def _again(signum: int, frame: types.FrameType | None) -> None:
    if _State.again is not None:
        stopped, _State.again = _State.again, None
        raise Stopped(stopped)


@contextmanager
def stop_signals(*, restore: bool = True) -> Iterator[None]:
    """Within the block, the first stop signal raises :class:`Stopped` in the main thread (in any
    other thread this does nothing). ``restore=False`` leaves the handlers in place after."""
    previous = {
        signum: signal.getsignal(signum)
        for signum in STOP_SIGNALS
        if signal.getsignal(signum) not in (signal.SIG_IGN, _handler)
    }
    try:
        for signum in previous:
            signal.signal(signum, _handler)
    except ValueError:  # not the main thread: signals are the main thread's business
        previous = {}
    if previous:
        _State.armed, _State.raised, _State.pending = True, False, None
        previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, _again)
        _State.unraisable_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
    try:
        yield
    finally:
        if restore and previous:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            sys.unraisablehook = _State.unraisable_hook


def stopped_by(exc: BaseException) -> Stopped | None:
    """The :class:`Stopped` behind ``exc``: code running when a signal came may have wrapped
    it (Python 3.11 turns an exception in ``__set_name__``, during an import, into a
    ``RuntimeError``)."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, Stopped):
        seen = seen.__cause__ or seen.__context__
    return seen


def disarm() -> int | None:
    """From now on stop signals are only recorded; the first that came since, unless one was
    raised before (a run that was stopped reports that signal only)."""
    _State.armed = False
    return _State.pending
