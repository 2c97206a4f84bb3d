"""Atomic output: the target appears whole or not at all, with the usual permissions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from streamcodec.atomicfile import atomic_output
from tests.children import reaped
from tests.stops import run_stopped


def test_failure_leaves_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write(b"half")
        raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.bin"]


@pytest.mark.parametrize("old", [None, b"old"])
def test_a_stop_signal_at_any_line_leaves_the_file_whole_or_as_it_was(
    tmp_path: Path, old: bytes | None
) -> None:
    """Ctrl-C raises KeyboardInterrupt at whichever line runs: at each line (and call) of the
    write in turn, the target is its old or its new content, and no temporary is left. A
    signal just after ``tempfile.mkstemp`` had made the temporary, before it returned its name,
    left it behind (test_corpus_cli's Ctrl-C test saw a ``.shard_*.tmp`` once in ~80 runs)."""
    watched = ("atomicfile.py", "tempfile.py", "contextlib.py")

    def write(folder: Path, stop_at: int) -> int:
        folder.mkdir()
        if old is not None:
            (folder / "out.bin").write_bytes(old)

        def run() -> None:
            with atomic_output(folder / "out.bin") as f:
                f.write(b"new")

        return run_stopped(run, watched, stop_at)

    lines = write(tmp_path / "all", 0)
    assert lines > 50
    for n in range(1, lines + 1):
        folder = tmp_path / str(n)
        write(folder, n)
        files = {p.name: p.read_bytes() for p in folder.iterdir()}
        assert files in ({}, {"out.bin": b"new"}, {"out.bin": old}), f"stopped at line {n}"


def test_new_file_gets_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with atomic_output(tmp_path / "new.bin") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.bin").stat().st_mode & 0o777 == 0o644


def test_temporaries_of_dead_writers_are_removed_by_the_next(tmp_path: Path) -> None:
    """A writer killed with SIGKILL (a Dask worker, the out-of-memory killer) leaves its
    temporary; the next write to the same path removes it (issue 23, section 5)."""
    import signal
    import socket
    import subprocess
    import sys

    target = tmp_path / "out.ids"
    popen = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from streamcodec.atomicfile import atomic_output\n"
            "with atomic_output(sys.argv[1]) as f:\n"
            "    f.write(b'half'); f.flush(); print('ready', flush=True); time.sleep(60)\n"
        ), str(target)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    with reaped(popen) as writer:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    host = socket.gethostname()
    (left,) = os.listdir(tmp_path)
    assert left.startswith(f".out.ids.{writer.pid}@{host}.") and left.endswith(".tmp")
    kept = [
        f".out.ids.{os.getpid()}@{host}.abcdefgh.tmp",  # a live writer's (this one)
        f".out.ids.{writer.pid}@other-{host}.abcdefgh.tmp",  # another machine's
        f".other.ids.{writer.pid}@{host}.abcdefgh.tmp",  # another path's
        "notes.txt",
    ]
    for name in kept:
        (tmp_path / name).write_text("x")
    (tmp_path / f".out.ids.{writer.pid}@{host}.folder12").mkdir()  # a dead split's folder
    with atomic_output(target) as f:
        f.write(b"whole")
    assert target.read_bytes() == b"whole"
    assert sorted(os.listdir(tmp_path)) == sorted([*kept, "out.ids"])


def test_start_writeback_changes_nothing_on_a_file_or_a_pipe(tmp_path: Path) -> None:
    from streamcodec.atomicfile import _sync_file_range, start_writeback

    if sys.platform.startswith("linux"):
        assert _sync_file_range() is not None  # the call is made where it exists
    path = tmp_path / "out.bin"
    with atomic_output(path) as f:
        f.write(b"a" * 100_000)
        f.flush()
        start_writeback(f.fileno())
        f.write(b"b")
    assert path.read_bytes() == b"a" * 100_000 + b"b"
    read, write = os.pipe()
    try:
        os.write(write, b"x")
        start_writeback(write)  # not a file: nothing, no error
        assert os.read(read, 1) == b"x"
    finally:
        os.close(read)
        os.close(write)
