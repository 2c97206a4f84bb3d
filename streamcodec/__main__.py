"""``python -m streamcodec`` and the ``streamcodec`` command: the command line.

Stop signals are handled before the rest of the package is imported (``import streamcodec``
itself loads nothing), so Ctrl-C, SIGTERM or SIGHUP at any moment, even while Python is still
loading the command line or already exiting, ends the run with one line and status 128 + N,
never a traceback and never a silent death.
"""

import atexit
import os
import sys

from streamcodec.interrupts import Stopped, disarm, stop_signals, stopped_by


class _End:
    status = 1  # an uncaught exception's (Python has printed it), until the command says
    pid = 0


def run() -> int:
    """Run the command line with stop signals handled; return the exit status."""
    _End.pid = os.getpid()
    atexit.register(_end)  # registered first, so it runs after every other exit hook
    with stop_signals(restore=False):
        try:
            from streamcodec.cli import main

            _End.status = main()
            disarm()  # from here on a signal is only recorded, and reported by _end
        except BaseException as exc:  # a signal before the command started, or after it ended
            disarm()
            stopped = stopped_by(exc)
            if stopped is None:
                if isinstance(exc, SystemExit) and isinstance(exc.code, int):  # argparse
                    _End.status = exc.code
                raise
            print(f"streamcodec: {stopped}", file=sys.stderr)
            _End.status = stopped.status
    return _End.status


def _end() -> None:
    """The last exit hook: report a stop signal that came after the command ended, then end the
    process here. Python's own finalization, which would follow, restores the signals' default
    actions before it frees the modules, and a signal there killed the run without a word."""
    if os.getpid() != _End.pid:  # a forked worker that ran the exit hooks
        return
    late, status = disarm(), _End.status
    if late is not None:
        print(f"streamcodec: {Stopped(late)}", file=sys.stderr)
        status = 128 + late
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # what a closed or broken stream says: nothing to keep
            pass
    os._exit(status)


if __name__ == "__main__":
    raise SystemExit(run())
