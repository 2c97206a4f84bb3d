"""``streamcodec tokenize-corpus`` and ``check-corpus`` as a user runs them, ``kill -9`` included.

The resumability test kills the command with SIGKILL at random moments, at least 20 times, and
checks after each kill that the manifest lists only whole shards; the rerun must then give the
bytes of a run never interrupted.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

import streamcodec
from streamcodec.corpus.manifest import shard_problem

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args], input=stdin, capture_output=True, timeout=120
    )


def shards(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("shard_*.npy"))}


def test_tokenize_check_and_read_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n---\ntwo\n---\n", encoding="utf-8")
    done = run("tokenize-corpus", str(tmp_path / "a.txt"), "-o", str(tmp_path / "out"),
               "--separator", r"\n---\n", "--separator-token", "none")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        b"1 shards, 2 documents, 2 tokens (streamcodec, uint32)" in done.stderr
    )  # none after the last
    checked = run("check-corpus", str(tmp_path / "out" / "manifest.json"), "--text")
    assert checked.returncode == 0 and b"2 documents, 2 tokens" in checked.stdout
    ids = np.load(tmp_path / "out" / "shard_00000.npy", mmap_mode="r")
    enc = streamcodec.get_encoding("cl100k_base")
    assert ids.tolist() == enc.encode("one") + enc.encode("two")


def test_standard_input_as_json_lines(tmp_path: Path) -> None:
    lines = b'{"t": "hello"}\n{"t": "world"}\n'
    done = run("tokenize-corpus", "-", "-o", str(tmp_path / "out"), "--field", "t", stdin=lines)
    assert done.returncode == 0, done.stderr
    enc = streamcodec.get_encoding("cl100k_base")
    ids = np.load(tmp_path / "out" / "shard_00000.npy").tolist()
    assert ids == [*enc.encode("hello"), enc.eot_token, *enc.encode("world"), enc.eot_token]
    again = run("tokenize-corpus", "-", "-o", str(tmp_path / "out"), "--field", "t", stdin=lines)
    assert again.returncode == 1
    assert b"standard input cannot be read again to resume it; pass --restart" in again.stderr


def test_bad_input_is_one_line_naming_file_and_flag(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    done = run("tokenize-corpus", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "out"))
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f"streamcodec: error: {tmp_path / 'a.jsonl'}:2: no field 'text' in this JSON line "
        "(it has: body); pass --field NAME\n"
    )
    missing = run("tokenize-corpus", str(tmp_path / "nothing*.txt"), "-o", str(tmp_path / "o"))
    assert missing.stderr.decode().endswith("nothing*.txt: no file matches this pattern\n")


def _whole_shards_only(out: Path) -> int:
    """The manifest (if any) lists only whole shards; how many it lists."""
    if not (out / "manifest.json").exists():
        return 0
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["shards"]:
        assert shard_problem(str(out), entry, verify=True) is None
    return len(manifest["shards"])


def test_kill_9_at_random_moments_then_the_same_command_gives_the_same_bytes(
    tmp_path: Path,
) -> None:
    inputs = [str(p) for p in sorted(STDLIB.glob("[a-m]*.py"))]
    command = [sys.executable, "-m", "streamcodec", "tokenize-corpus", *inputs, "-q",
               "-e", "streamcodec_py4k", "--shard-size", "24K", "--special-as-text"]  # fmt: skip
    clean = tmp_path / "clean"
    start = time.monotonic()
    assert subprocess.run([*command, "-o", str(clean)], timeout=120).returncode == 0
    took = time.monotonic() - start
    out = tmp_path / "out"
    rng = random.Random(21)
    kills = mid_job = runs = 0
    while kills < 20:
        # Moments inside a whole run, however fast the machine: fixed ones (0.3-1.0 s) outlasted
        # the run on a fast one, where the loop then went on for many minutes.
        runs += 1
        assert runs < 200, f"{kills} kills in {runs} runs"
        process = subprocess.Popen([*command, "-o", str(out)])
        time.sleep(rng.uniform(0.2, 0.9) * took)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
            kills += 1
        listed = _whole_shards_only(out)
        if listed and not json.loads((out / "manifest.json").read_text())["complete"]:
            mid_job += 1
        if process.returncode == 0:  # it finished first: compare, then start over
            assert shards(out) == shards(clean)
            shutil.rmtree(out)
    assert subprocess.run([*command, "-o", str(out)], timeout=120).returncode == 0
    assert shards(out) == shards(clean)
    assert not list(out.glob(".*")), "temporary files left behind"
    assert mid_job >= 5  # the kills did land inside the work, between shards


@pytest.mark.parametrize("jobs", [1, 2])  # one job: every stage on the main thread, in turn
def test_ctrl_c_leaves_whole_shards_and_no_temporary_file(tmp_path: Path, jobs: int) -> None:
    inputs = [str(p) for p in sorted(STDLIB.glob("*.py"))]  # about 2 s of work
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "streamcodec", "tokenize-corpus", *inputs, "-o", str(out),
         "--shard-size", "24K", "--special-as-text", "-j", str(jobs)],
        stderr=subprocess.PIPE,
    )  # fmt: skip
    # Interrupt once a shard is finished (the manifest lists it): a fixed delay was too short on
    # a loaded machine, where start-up alone took over a second.
    deadline = time.monotonic() + 60
    while _whole_shards_only(out) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err == (
        b"streamcodec: interrupted (SIGINT); the finished shards are kept: the same command "
        b"makes the others\n"
    )
    assert (
        0 < _whole_shards_only(out) < len(json.loads((out / "manifest.json").read_text())["plan"])
    )
    assert not list(out.glob(".*")), "temporary files left behind"


def test_a_json_lines_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    """The command's start (issue 28): the other commands' modules are not imported (each is
    imported only when it runs), nor pyarrow (the native reader reads JSON Lines), nor the
    readers of model files and word BPE (a shipped encoding needs none: they were 10-20% of
    the start), nor ``random``."""
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "hello world"}\n')
    command = ["tokenize-corpus", "-q", str(path), "-o", str(tmp_path / "out")]
    script = (
        "import json, sys; from streamcodec.cli import main; "
        f"status = main({command!r}); print(json.dumps([status, sorted(sys.modules)]))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    status, modules = json.loads(done.stdout)
    assert status == 0
    others = ["count", "decode", "encode", "explain", "split", "train", "verify", "check_corpus"]
    formats = ["streamcodec.formats.huggingface", "streamcodec.formats.gpt2"]
    formats += ["streamcodec.formats.minbpe", "streamcodec.wordbpe"]
    unwanted = {f"streamcodec.cli.{name}" for name in others} | {"pyarrow", "streamcodec.audit"}
    unwanted.add("random")  # check-corpus --text's sample (0.9 ms)
    unwanted |= set(formats)
    assert not unwanted & set(modules)
