"""A command a test starts never outlives the test: ``with reaped(subprocess.Popen(...)) as
proc:`` kills the child, and its process group where it leads one (``start_new_session``), if
it still runs when the block ends. ``proc.communicate(timeout=...)`` and ``proc.wait(timeout=...)``
raise when the time is up and leave the child running, and so does a failed assertion before
them: a command that hung then ran on for minutes past its failed test (as one did in CI), its
CPU taken from the next tests. Popen's own ``with`` waits for the child instead of ending it.
:func:`alive` tells whether a process (a worker the child started) still runs."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

Child = TypeVar("Child", bound="subprocess.Popen[Any]")


def _leads_a_group(process: subprocess.Popen[Any]) -> bool:
    """Whether the child leads its own process group (asked while it runs)."""
    try:
        return hasattr(os, "getpgid") and os.getpgid(process.pid) == process.pid
    except ProcessLookupError:  # already ended and reaped: nothing of its group to tell
        return False


def alive(pid: int) -> bool:
    """Running (Linux: reads /proc): a zombie has ended (only its parent, maybe not init in a
    container, reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@contextmanager
def reaped(process: Child) -> Iterator[Child]:
    """``process`` for the block; killed (its group too, where it leads one: the workers it
    started) and waited for if it still runs at the block's end, whatever ended the block."""
    group = _leads_a_group(process)
    try:
        yield process
    finally:
        if group:
            with suppress(ProcessLookupError):  # the workers, even with the leader gone
                os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
        process.wait()  # not communicate(): a grandchild outside the group may hold a pipe open
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with suppress(OSError):  # stdin's unwritten bytes, the reader gone
                    stream.close()
