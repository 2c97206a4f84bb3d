"""The corpus tool's hostile probe (issue 31): four families, rerun at will, counts printed.

- **truncated**: every compressed format (``.gz``, ``.xz``, ``.zst``; plain text and JSON Lines
  in each) cut at random points: ``tokenize-corpus`` must refuse it in one line naming the file
  and the byte offset, exit 1, and list no shard (it was a shorter document, exit 0).
- **changed**: an input appended to, truncated, or rewritten at the same size (its time moved
  on) at every stage of a run: after the plan and before any read, after a shard's first
  document, between two shards, after the run before a rerun, after the run before
  ``check-corpus --text``: each must fail naming the input, and no finished shard may hold ids
  of a file that is not the one its manifest lists (between two shards, an input the reader had
  already read whole, ahead, may instead be listed as read, with the SHA-256 of the bytes before
  the change, if the rerun then refuses it, naming it).
- **manifest**: every field of a real manifest removed, or given each wrong type: ``check-corpus``,
  ``read_documents`` and the rerun must each refuse it in one line naming the field; a shard
  listed twice and a file name outside the folder too.
- **special**: every command given a FIFO, a folder, a character device or a socket where a file
  is expected (and a FIFO or folder inside an input folder, and as ``manifest.json``): each run
  must end within its deadline (no hang) with exit 0 (a stream read as one: a fed FIFO,
  ``/dev/null``) or exit 1 and one line naming the path, never a traceback.

    python -m tools.corpus_probe                 # every family (a minute or two on 2 cores)
    python -m tools.corpus_probe --cuts 40       # more random cuts per compressed file
    python -m tools.corpus_probe --family special

It prints one line per family (trials, failures) and each failure, and exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import hashlib
import io
import itertools
import json
import lzma
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from streamcodec.cli import main
from streamcodec.corpus import check_corpus, read_documents, tokenize
from streamcodec.corpus import job as job_module
from streamcodec.corpus import tasks as tasks_module

Failures = list[str]
LINES = "".join(
    json.dumps({"text": f"document {i} " + "word " * (i % 60)}) + "\n" for i in range(4000)
)


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "xz": lzma.compress,
    "zst": _zstd,
}


def cli(*args: str) -> tuple[int, str]:
    """``streamcodec ARGS`` in this process: the exit status and what it printed on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(list(args))
    return status, err.getvalue()


def one_line(status: int, err: str, *needles: str) -> str | None:
    """Why a refusal is not one line with exit 1 naming ``needles``, or None."""
    if status != 1:
        return f"exit {status}, not 1"
    if err.count("\n") != 1 or not err.startswith("streamcodec: error: ") or "Traceback" in err:
        return f"not one error line: {err[-300:]!r}"
    missing = [n for n in needles if n not in err]
    return f"{missing} not in {err.strip()!r}" if missing else None


def truncated(folder: Path, cuts: int, rng: random.Random) -> tuple[int, Failures]:
    trials, failures = 0, []
    for codec, compress in sorted(COMPRESS.items()):
        for kind in ("txt", "jsonl"):
            data = compress(LINES.encode())
            path = folder / f"cut.{kind}.{codec}"
            for cut in sorted(rng.sample(range(1, len(data)), min(cuts, len(data) - 1))):
                path.write_bytes(data[:cut])
                out = folder / "out"
                status, err = cli("tokenize-corpus", str(path), "-o", str(out), "-q", "--restart")
                trials += 1
                why = one_line(status, err, path.name, f"byte offset {cut}", "truncated")
                manifest = json.loads((out / "manifest.json").read_text())
                if why is None and manifest["shards"]:
                    why = "a shard was listed"
                if why:
                    failures.append(f"truncated {path.name} at {cut}: {why}")
    return trials, failures


def _append(path: Path) -> None:
    with open(path, "a") as f:
        f.write(json.dumps({"text": "appended"}) + "\n")


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _same_size(path: Path) -> None:
    before = path.stat().st_mtime_ns
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8] = b"CHANGED!"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before, before + 1_000_000_000))


def _same_size_and_time(path: Path) -> None:
    """Bytes rewritten with the size and time kept (``touch -r``, or a clock coarser than the
    write): only the hash of what the run read tells."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


CHANGES = {"append": _append, "truncate": _truncate, "same size": _same_size,
           "same size and time": _same_size_and_time}  # fmt: skip
AFTER = ("before a rerun", "before check-corpus --text")  # the stages after the run


@contextlib.contextmanager
def hooked(stage: str, change: Callable[[], None]) -> Iterator[None]:
    """Make ``change`` at ``stage`` of the next run (in this process)."""
    blocks, make_shards = tasks_module.line_blocks, job_module.make_shards
    done = threading.Event()

    def blocks_then_change(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for n, block in enumerate(blocks(*args, **kwargs)):
            yield block
            if n == 0 and stage == "after a shard's first document" and not done.is_set():
                done.set()
                change()

    def shards_then_change(job: Any, shards: Any, finished: Any, **kwargs: Any) -> None:
        if stage == "after the plan, before any read" and not done.is_set():
            done.set()
            change()

        def finished_then_change(entry: Any) -> None:
            finished(entry)
            if stage == "between two shards" and not done.is_set():
                done.set()
                change()

        make_shards(job, shards, finished_then_change, **kwargs)

    tasks_module.line_blocks = blocks_then_change  # type: ignore[assignment]
    tokenize_module = sys.modules["streamcodec.corpus.tokenize"]
    tokenize_module.make_shards = shards_then_change  # type: ignore[attr-defined]
    try:
        yield
    finally:
        tasks_module.line_blocks = blocks
        tokenize_module.make_shards = make_shards  # type: ignore[attr-defined]


def changed(folder: Path) -> tuple[int, Failures]:
    trials, failures = 0, []
    stages = ["after the plan, before any read", "after a shard's first document",
              "between two shards", "before a rerun", "before check-corpus --text"]  # fmt: skip
    kinds = {
        ".jsonl": LINES.encode(),
        ".txt": LINES.encode(),
        ".txt.gz": gzip.compress(LINES.encode()),
    }
    for stage, (name, change), (suffix, data) in itertools.product(
        stages, CHANGES.items(), kinds.items()
    ):
        if stage == "after a shard's first document" and suffix != ".jsonl":
            continue  # a whole file is one document: read whole before any change
        if name == "same size and time" and (stage not in AFTER or suffix == ".txt.gz"):
            continue  # during a run it is read once; a compressed text is streamed, unhashed
        trials += 1
        work = Path(tempfile.mkdtemp(dir=folder))
        inputs = [work / f"a{suffix}", work / f"b{suffix}"]
        for path in inputs:
            path.write_bytes(data)
        target = inputs[1] if stage == "between two shards" else inputs[0]
        out = work / "out"
        options: dict[str, Any] = {"shard_bytes": len(data) // 2, "special_as_text": True}
        why = None
        try:
            if stage in AFTER:
                tokenize(inputs, out, **options)
                change(target)
                if stage == "before a rerun":
                    tokenize(inputs, out, **options, verify=True)
                else:
                    check_corpus(out, text=10_000, inputs=True)
            else:
                with hooked(stage, functools.partial(change, target)):
                    tokenize(inputs, out, **options)
                if stage == "between two shards" and _read_before(out, inputs, target, data,
                                                                   options):  # fmt: skip
                    continue  # read whole (ahead) before the change, listed as read, then named
            why = "no error"
        except ValueError as exc:
            if target.name not in str(exc) or not ("changed" in str(exc) or "content" in str(exc)):
                why = f"the error does not name the changed input: {exc}"
        if why is None:
            why = _shards_of_their_inputs(out)
        if why:
            failures.append(f"changed ({name}, {suffix}) {stage}: {why}")
    return trials, failures


def _read_before(
    out: Path, inputs: list[Path], target: Path, data: bytes, options: dict[str, Any]
) -> bool:
    """Whether ``target`` was read whole before it changed (the reader runs ahead of the
    shards' ends: a small input is read while the shard before it is written), so the run could
    not see the change: its shards list the SHA-256 of the bytes before it, and the rerun
    refuses the input, naming it."""
    from streamcodec.corpus.manifest import load_manifest

    manifest = load_manifest(str(out)) or {"shards": []}
    before = hashlib.sha256(data).hexdigest()
    read = [digest for entry in manifest["shards"]
            for source, digest in zip(entry["sources"], entry["read_sha256"], strict=True)
            if Path(out, source["path"]).resolve() == target.resolve()]  # fmt: skip
    if not read or any(digest != before for digest in read):
        return False
    try:
        tokenize(inputs, out, **options)
    except ValueError as exc:
        return target.name in str(exc) and "changed" in str(exc)
    return False


def _shards_of_their_inputs(out: Path) -> str | None:
    """Whether every listed shard still holds what its manifest says (its files' hashes)."""
    from streamcodec.corpus.manifest import load_manifest, shard_problem

    manifest = load_manifest(str(out))
    for entry in manifest["shards"] if manifest else []:
        problem = shard_problem(str(out), entry, verify=True)
        if problem:
            return f"a listed shard is not as listed: {problem}"
    return None


def _fields(value: Any, where: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if where:
        yield where
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, inner in items:
        yield from _fields(inner, (*where, key))


def manifests(folder: Path) -> tuple[int, Failures]:
    trials, failures = 0, []
    source = folder / "m.jsonl"
    source.write_text(LINES)
    out = folder / "mout"
    good = tokenize([source], out, shard_bytes=len(LINES) // 3)
    text = json.dumps(good)
    for path in _fields(good):
        if not isinstance(path[-1], str) or path[0] == "options" or path == ("format",):
            continue  # list items are checked by their keys; options are compared whole
        wrongs: tuple[Any, ...] = ("missing", [], "7", -1, True, None, {})
        for wrong in wrongs:
            manifest = json.loads(text)
            parent = manifest
            for key in path[:-1]:
                parent = parent[key]
            if wrong == "missing":
                del parent[path[-1]]
            elif type(parent[path[-1]]) is type(wrong) or (
                wrong == -1 and path[-1] in ("end", "size", "mtime_ns")
            ):
                continue
            else:
                parent[path[-1]] = wrong
            field = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)[1:]
            failures += _refused(out, manifest, source, f"the field {field} ", trials)
            trials += 3
    repeated = json.loads(text)
    repeated["shards"].append(repeated["shards"][0])
    failures += _refused(out, repeated, source, "lists shard 0 again", trials)
    outside = json.loads(text)
    outside["shards"][0]["files"][0]["name"] = "../m.jsonl"
    failures += _refused(out, outside, source, "not a file of this folder", trials)
    for shape in ([1, 2], "text", 7, None):
        failures += _refused(out, shape, source, "not a manifest", trials)
    return trials + 18, failures


def _refused(out: Path, manifest: Any, source: Path, needle: str, _: int) -> Failures:
    (out / "manifest.json").write_text(json.dumps(manifest))
    failures = []
    for name, run in [
        ("check-corpus", lambda: cli("check-corpus", str(out))),
        ("rerun", lambda: cli("tokenize-corpus", str(source), "-o", str(out), "-q",
                              "--shard-size", str(len(LINES) // 3))),
    ]:  # fmt: skip
        why = one_line(*run(), needle)
        if why:
            failures.append(f"manifest {needle!r} in {name}: {why}")
    try:
        list(read_documents(out))
        failures.append(f"manifest {needle!r} in read_documents: no error")
    except ValueError as exc:
        if needle not in str(exc):
            failures.append(f"manifest {needle!r} in read_documents: {exc}")
    return failures


def special(folder: Path, deadline: float) -> tuple[int, Failures]:
    """Every command given a FIFO, folder, device or socket, each in a process of its own."""
    trials, failures = 0, []
    fifo, sock_path, empty = folder / "pipe.txt", folder / "sock.txt", folder / "empty"
    os.mkfifo(fifo)
    empty.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    with_fifo = folder / "with_fifo"
    with_fifo.mkdir()
    (with_fifo / "a.txt").write_text("hello")
    os.mkfifo(with_fifo / "b.txt")
    corpus = folder / "corpus"
    (folder / "c.txt").write_text("hello world")
    tokenize([folder / "c.txt"], corpus)
    fifo_manifest = folder / "fifo_manifest"
    fifo_manifest.mkdir()
    os.mkfifo(fifo_manifest / "manifest.json")
    dir_manifest = folder / "dir_manifest"
    (dir_manifest / "manifest.json").mkdir(parents=True)
    out = str(folder / "out")
    stream_commands = {
        "encode": ["encode", "{}"], "count": ["count", "{}"], "decode": ["decode", "{}"],
        "split": ["split", "{}", "--max-tokens", "100", "-o", "{out}"],
        "explain": ["explain", "{}"], "verify": ["verify", "{}"],
        "train": ["train", "{}", "--vocab-size", "300", "-o", "{out}.tiktoken"],
    }  # fmt: skip
    cases: list[tuple[list[str], str, bool]] = []  # args, the path named, whether 0 is right
    for args in stream_commands.values():
        cases.append(([a.replace("{}", str(empty)) for a in args], str(empty), False))
        cases.append(([a.replace("{}", str(fifo)) for a in args], "fed FIFO", True))
        cases.append(([a.replace("{}", "/dev/null") for a in args], "/dev/null", True))
        cases.append(([a.replace("{}", str(sock_path)) for a in args], str(sock_path), False))
    for name in (fifo, "/dev/null", sock_path, empty, with_fifo):
        cases.append((["tokenize-corpus", str(name), "-o", out, "-q"], str(name), False))
    for name in (fifo, "/dev/null", empty, fifo_manifest, dir_manifest):
        cases.append((["check-corpus", str(name)], str(name), False))
    cases.append((["check-corpus", str(corpus), "--text"], "", True))
    for n, (args, named, zero_ok) in enumerate(cases):
        args = [a.replace("{out}", str(folder / f"out{n}")) for a in args]
        trials += 1
        feeder = _feed(fifo) if named == "fed FIFO" else None
        try:
            command = [sys.executable, "-m", "streamcodec", *args]
            done = subprocess.run(command, capture_output=True, text=True, timeout=deadline,
                                  stdin=subprocess.DEVNULL)  # fmt: skip
        except subprocess.TimeoutExpired:
            failures.append(f"special {' '.join(args)}: no end within {deadline} s (a hang)")
            _unblock(fifo)
            continue
        finally:
            if feeder is not None:
                feeder.join(5)
        err = done.stderr
        if "Traceback" in err:
            failures.append(f"special {' '.join(args)}: a traceback: {err[-300:]!r}")
        elif done.returncode == 0 and not zero_ok:
            failures.append(f"special {' '.join(args)}: exit 0 for {named}")
        elif done.returncode not in (0, 1) or (done.returncode == 1 and err.count("\n") != 1):
            failures.append(f"special {' '.join(args)}: exit {done.returncode}: {err[-300:]!r}")
        elif done.returncode == 1 and named not in ("fed FIFO",) and named not in err:
            why = "" if zero_ok else f"{named} not named: "
            failures.append(f"special {' '.join(args)}: {why}{err.strip()!r}")
    sock.close()
    return trials, failures


def _feed(fifo: Path) -> threading.Thread:
    """A writer for ``fifo`` (a reader opening it blocks until one comes)."""

    def write() -> None:
        with contextlib.suppress(OSError), open(fifo, "w") as f:
            f.write("hello world\n")

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _unblock(fifo: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)


def run(families: list[str], cuts: int, seed: int, deadline: float) -> int:
    rng = random.Random(seed)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        found = {
            "truncated": lambda: truncated(folder, cuts, rng),
            "changed": lambda: changed(folder),
            "manifest": lambda: manifests(folder),
            "special": lambda: special(folder, deadline),
        }
        for family in families:
            trials, failures = found[family]()
            failed += len(failures)
            print(f"{family}: {trials} trials, {len(failures)} failures", flush=True)
            for failure in failures:
                print(f"  FAILED {failure}", flush=True)
    return 1 if failed else 0


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ["truncated", "changed", "manifest", "special"]
    parser.add_argument("--family", choices=names, action="append", help="one family (repeatable)")
    parser.add_argument("--cuts", type=int, default=12, help="random cuts per compressed file")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--deadline", type=float, default=30.0, help="seconds a command may take")
    args = parser.parse_args()
    args.family = args.family or names
    return args


if __name__ == "__main__":
    options = parse()
    sys.exit(run(options.family, options.cuts, options.seed, options.deadline))
