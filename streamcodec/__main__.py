"""``python -m streamcodec`` and the ``streamcodec`` command: the command line.

Stop signals are handled before the rest of the package is imported (``import streamcodec``
itself loads nothing), so Ctrl-C, SIGTERM or SIGHUP at any moment, even while Python is still
loading the command line, ends the run with one line and status 128 + N, never a traceback.
"""

import sys

from streamcodec.interrupts import Stopped, disarm, stop_signals, stopped_by


def run() -> int:
    """Run the command line with stop signals handled; return the exit status."""
    with stop_signals(restore=False):
        try:
            from streamcodec.cli import main

            status = main()
            late = disarm()  # from here on a signal is only recorded
        except BaseException as exc:  # a signal before the command started, or after it ended
            disarm()
            stopped = stopped_by(exc)
            if stopped is None:
                raise
            late, status = stopped.signum, 0
    if late is None:
        return status
    print(f"streamcodec: {Stopped(late)}", file=sys.stderr)
    return 128 + late


if __name__ == "__main__":
    raise SystemExit(run())
