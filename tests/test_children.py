"""tests/children.py: a child still running when its test's block ends is killed, with the
process group it leads, whatever ended the block; one that ended is only reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress

import pytest

from tests.children import alive, reaped

# A child that starts a grandchild (printing its pid) and sleeps as long.
PARENT = (
    "import subprocess, sys, time\n"
    "grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "print(grandchild.pid, flush=True)\n"
    "time.sleep(300)\n"
)


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("session", [True, False])
def test_a_child_that_times_out_is_killed_with_its_group(session: bool) -> None:
    command = [sys.executable, "-c", PARENT]
    popen = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=session)
    with pytest.raises(subprocess.TimeoutExpired), reaped(popen) as proc:
        assert proc.stdout is not None
        grandchild = int(proc.stdout.readline())
        proc.wait(timeout=0.5)
    try:
        assert proc.returncode == -signal.SIGKILL and proc.stdout is not None and proc.stdout.closed
        # The group it leads ends with it; a child in the caller's group has no group to end.
        assert _gone(grandchild) if session else alive(grandchild)
    finally:
        with suppress(ProcessLookupError):
            os.kill(grandchild, signal.SIGKILL)


def test_a_child_that_ended_is_only_reaped() -> None:
    with reaped(
        subprocess.Popen([sys.executable, "-c", "print('done')"], stdout=subprocess.PIPE)
    ) as proc:
        out, _ = proc.communicate(timeout=60)
    assert out == b"done\n" and proc.returncode == 0
