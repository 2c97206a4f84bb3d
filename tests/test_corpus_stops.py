"""A corpus run stopped (Ctrl-C) at each line of its start, where another job's files are moved
aside and the first manifest is saved on a thread: nothing is left behind, and the manifest on
disk (if any) lists only shards whose files are there, whole (tests/stops.py)."""

from __future__ import annotations

import gc
import shutil
import threading
from pathlib import Path

import pytest

from streamcodec.corpus import overlap, read_documents, tokenize
from streamcodec.corpus.manifest import load_manifest, shard_problem
from streamcodec.registry import get_encoding
from streamcodec.stream import workers
from tests.stops import heap_set_aside, run_stopped

WATCHED = ("corpus/tokenize.py", "corpus/overlap.py")


def _another_job(root: Path) -> list[Path]:
    """A finished job of three shards in root/out, and the new job's input."""
    shutil.rmtree(root / "out", ignore_errors=True)
    olds = [root / f"{n}.txt" for n in range(3)]
    for path in olds:
        path.write_text("one " * 3000)
    tokenize(olds, root / "out", shard_bytes=4000)
    (root / "b.txt").write_text("two")
    return [root / "b.txt"]


def test_a_restart_stopped_at_any_line_leaves_nothing_behind(tmp_path: Path) -> None:
    new = _another_job(tmp_path)
    restart = lambda: tokenize(new, tmp_path / "out", restart=True)  # noqa: E731
    lines = run_stopped(restart, WATCHED, 0)
    for stop_at in range(1, lines + 1):
        _another_job(tmp_path)
        run_stopped(restart, WATCHED, stop_at)
        for thread in threading.enumerate():  # what the interpreter's exit would wait for
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
        out = tmp_path / "out"
        left = sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp"))
        assert not left, (stop_at, left)
        manifest = load_manifest(str(out))
        for entry in manifest["shards"] if manifest else []:
            assert shard_problem(str(out), entry, verify=True) is None, stop_at
    tokenize(new, tmp_path / "out", restart=True)
    enc = get_encoding("cl100k_base")
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [enc.encode("two")]


def test_a_run_on_threads_stopped_at_any_line_of_its_pipeline_ends_its_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stop just after the reader's, the writer's or the hasher's thread started, before the
    # code that ends it took charge, left it running: the reader inside the input's generator,
    # whose closing then raised ValueError, not the stop; the writer or the hasher waiting.
    # A hasher or worker left so ends at its next idle check: checked often here.
    for module in (overlap, workers):
        monkeypatch.setattr(module, "IDLE_CHECK_SECONDS", 0.01)
    inputs = []
    for n in range(2):
        inputs.append(tmp_path / f"{n}.jsonl")
        inputs[-1].write_text(
            "".join(f'{{"text": "doc {n} {k} {"word " * 20}"}}\n' for k in range(99))
        )
    run = lambda: tokenize(inputs, tmp_path / "out", shard_bytes=8000, jobs=2)  # noqa: E731
    lines = run_stopped(run, ("corpus/overlap.py",), 0)
    with heap_set_aside():
        for stop_at in range(1, lines + 1):
            shutil.rmtree(tmp_path / "out", ignore_errors=True)
            run_stopped(run, ("corpus/overlap.py",), stop_at)
            gc.collect()  # a hasher whose end a stop skipped (at its very call) ends with its owner
            for thread in threading.enumerate():
                if thread.name.startswith("streamcodec-"):
                    thread.join(5)
                    assert not thread.is_alive(), (stop_at, thread.name)
