"""No hang on any signal (issue 23, section 1): the loops of tools/signal_soak.py, a few of each.

Every run of ``encode --jobs 2`` gets SIGINT, SIGTERM or SIGHUP at a random moment, to the
parent, to its process group or through ``timeout``, on both backends, and must end within the
budget with one line and 128 + N, leaving ``-o`` and the folder as they were and no process
behind. The long loops (100 of each, 1,000 abandoned generators):
``python -m tools.signal_soak --count 100 --abandon 1000``.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import streamcodec
from streamcodec.interrupts import Stopped, disarm, stop_signals
from tools.signal_soak import (
    LATEST_PART,
    SIGNALS,
    TARGETS,
    TIMEOUT_EARLIEST,
    abandon,
    big_file,
    big_lines,
    run_seconds,
    signal_once,
)

pytestmark = pytest.mark.skipif(
    not Path("/proc").is_dir() or shutil.which("timeout") is None,
    reason="reads /proc to find what is left; runs coreutils' timeout",
)
BACKENDS = ["native", "python"] if streamcodec.backend() == "native" else ["python"]
BUDGET = 2.0  # seconds from the signal to the end (the soak holds 1 s on a quiet machine)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return big_file(tmp_path_factory.mktemp("signals"), megabytes=36)


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # long enough to outlast RUNS' latest moment (48 MB ended before it once the reading got faster)
    return big_lines(tmp_path_factory.mktemp("corpus"), megabytes=144)


@functools.cache
def _run_seconds(source: Path, backend: str, enough: float) -> float:
    """An unsignalled run's length (up to ``enough``), measured once: the moments stay inside
    the work on a faster machine (a CI run of tokenize-corpus ended before a signal at 1.0 s,
    with status 0)."""
    return run_seconds(source, backend, enough=enough)


# encode --jobs 2, and tokenize-corpus --jobs 2 (about ten shards through one pipeline: it
# must leave only the manifest and the whole shards it lists); the latest moment still in
# the run, and the runs of each target
RUNS = {"encode": ("big", 1.2, 2), "tokenize-corpus": ("lines", 1.0, 1)}


@pytest.mark.parametrize("command", sorted(RUNS))
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_at_a_random_moment_ends_the_run_cleanly(
    request: pytest.FixtureRequest, command: str, backend: str, signum: int
) -> None:
    fixture, latest, repeat = RUNS[command]
    source = request.getfixturevalue(fixture)
    latest = LATEST_PART * _run_seconds(source, backend, latest / LATEST_PART)
    for target in TARGETS * repeat:
        # From streamcodec's first line (timeout's clock includes Python's start) into the work.
        at = random.uniform(TIMEOUT_EARLIEST if target == "timeout" else 0, latest)
        problems = signal_once(source, backend, signum, target, at, budget=BUDGET)
        assert not problems, (
            f"{signal.Signals(signum).name} to the {target} at {at:.2f} s: {problems}"
        )


@pytest.mark.parametrize("at", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_an_early_ctrl_c_prints_one_line(big: Path, at: float) -> None:
    # Before: a KeyboardInterrupt traceback while Python loaded the command line (0-0.45 s).
    assert not signal_once(big, BACKENDS[0], signal.SIGINT, "parent", at, budget=BUDGET)


@pytest.mark.parametrize("backend", BACKENDS)
def test_abandoned_generators_neither_hang_nor_leak(big: Path, backend: str) -> None:
    # Small parts: every generator has both workers busy when it is dropped.
    assert not abandon(big, backend, 20, part_bytes=1 << 16)


@pytest.mark.parametrize("backend", BACKENDS)
def test_count_limit_with_jobs_under_timeout_ends(big: Path, backend: str) -> None:
    command = ["timeout", "-k", "5", "20", sys.executable, "-m", "streamcodec", "count",
               str(big), "--limit", "8192", "--jobs", "2"]  # fmt: skip
    env = {**os.environ, "STREAMCODEC_BACKEND": backend}
    done = subprocess.run(command, capture_output=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode().strip().endswith("has more than 8,192 tokens")


def test_later_signals_do_not_cut_the_unwinding_short() -> None:
    caught: list[str] = []
    with stop_signals():
        try:
            signal.raise_signal(signal.SIGTERM)
        except Stopped as first:
            signal.raise_signal(signal.SIGTERM)  # timeout's second SIGTERM, to the group
            signal.raise_signal(signal.SIGINT)
            caught.append(str(first))
        assert disarm() is None  # the run reports the first signal only
    assert caught == ["interrupted (SIGTERM)"]


def test_a_signal_after_the_work_is_reported() -> None:
    with stop_signals():
        disarm()
        signal.raise_signal(signal.SIGHUP)
        assert disarm() == signal.SIGHUP


class _SignalledWhileFinalized:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)  # the signal lands while a finalizer runs


def test_a_signal_a_finalizer_swallowed_is_raised_again() -> None:
    # Before: Python printed "Exception ignored in ...", and the run went on to exit 0.
    with stop_signals(), pytest.raises(Stopped, match="SIGTERM"):
        _SignalledWhileFinalized()  # dropped at once
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.001)


def test_an_ignored_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with stop_signals():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            signal.raise_signal(signal.SIGHUP)
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_worker_killed_from_outside_is_one_line_not_a_hang(big: Path) -> None:
    env = {**os.environ, "STREAMCODEC_BACKEND": "python"}  # worker processes: the pure path's
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamcodec", "count", str(big), "--jobs", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (workers := _children(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.decode().splitlines() == [
        "streamcodec: error: a worker process ended without answering (killed by signal 9)"
    ]


def _children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:
            continue
    return found


# A run whose command has ended: one exit hook of its own sends SIGTERM (as a signal just after the
# work would land), or an object freed in Python's teardown of the modules does.
_AT_THE_END = """
import atexit, os, signal, sys, time
import streamcodec.cli
from streamcodec.__main__ import run

def main():
    if when == "hook":
        atexit.register(os.kill, os.getpid(), signal.SIGTERM)
    return command()

class Teardown:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)

command, streamcodec.cli.main = streamcodec.cli.main, main
when = sys.argv.pop(1)
if when == "teardown":
    freed_last = Teardown()
raise SystemExit(run())
"""


@pytest.mark.parametrize("when", ["hook", "teardown"])
def test_a_signal_while_python_exits_is_reported_or_never_lands(tmp_path: Path, when: str) -> None:
    # Before: a signal in the exit hooks went unreported (status 0), and one in the teardown,
    # after Python had restored the default actions, killed the run without a word (-15).
    (tmp_path / "in.txt").write_text("hello world\n")
    done = subprocess.run(
        [sys.executable, "-c", _AT_THE_END, when, "count", "in.txt"],
        capture_output=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.stdout.decode().split() == ["3"]
    ended = (done.returncode, done.stderr.decode())
    if when == "hook":
        assert ended == (143, "streamcodec: interrupted (SIGTERM)\n")
    else:  # the process ended before the teardown, so the signal was never sent
        assert ended == (0, "")
