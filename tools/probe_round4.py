"""The hostile probe of issue 31 (outside the corpus tool), rerun: each family of cases, counted.

Each trial runs ``python -m streamcodec`` as a user does (or the library in a child process)
and checks one promise; the families are those of the issue's items:

- ``full-disk``: ``encode > /dev/full`` in every format, small and large, and ``count``,
  ``explain``, ``verify``, ``decode``: exit 1, one line naming ``<stdout>`` (stdout buffered,
  as a user has it: ``PYTHONUNBUFFERED`` is dropped);
- ``closed-pipe``: ``encode -f FORMAT | head -c 10``, from a file and from stdin: exit 141,
  nothing on stderr;
- ``vocab-pattern``: ``--vocab`` of a file without a pattern (.tiktoken, GPT-2's pair, minbpe)
  refused by every command that cuts text, naming ``--pattern``; accepted with ``--pattern``,
  ``--mode bytes``, a tokenizer.json's own, and by ``decode``;
- ``empty-match``: patterns matching the empty string refused, on both backends, from the
  library and the command line; a lookaround met only in the text, refused there;
- ``backtracking``: patterns that backtrack without bound refused (or, where ``regex`` has a
  shortcut for them, encoded) within ``--bound`` seconds on both backends; a runaway match the
  probe misses ended by Ctrl-C (exit 130); patterns with groups cut as tiktoken cuts them;
- ``options``: ``-o`` suffixes naming no format refused (naming ``-f``); ``-`` twice refused;
  every option ``split --help`` offers accepted by the parser;
- ``dropin``: tiktoken's modules as attributes of ``import streamcodec as tiktoken``, fresh;
- ``explain``: a 5 MB file within ``--bound`` seconds, a long piece without every merge, an
  ``--html`` page past 1 MiB refused, ``/dev/zero`` refused;
- ``api-counts``: ``cache_bytes``, ``cache_size``, ``jobs``, ``limit``, ``max_tokens``,
  ``overlap`` of the wrong type (TypeError) or too small (ValueError), each naming itself;
- ``no-file``: every command given a folder, a socket, ``/dev/null``; ``--vocab``/``--codes``
  given a device, a socket, a folder: one line or a clean empty run, never a hang.

    python -m tools.probe_round4             # all families (some minutes on a busy machine)
    python -m tools.probe_round4 --only explain,dropin

It prints ``family: N trials, M failed`` for each and the total, each failure with its reason,
and exits 1 if any trial failed. The suite keeps one small case of each (tests/
test_cli_round4.py, tests/test_custom_patterns.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.children import reaped

ROOT = Path(__file__).resolve().parents[1]
# stdout buffered, as a user has it: PYTHONUNBUFFERED hid Python's own flush at exit
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | {"PYTHONPATH": str(ROOT)}
FORMATS = ["ids", "jsonl", "u32", "u16", "npy"]
BACKENDS = ["native", "python"]
Check = Callable[[], str | None]  # None: held; else what went wrong


def cli(
    *args: str, stdin: bytes | None = None, stdout: int = subprocess.PIPE, env: dict[str, str]
    | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args],
        input=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout, env=env or ENV,
    )  # fmt: skip


def python(code: str, *, backend: str = "native", timeout: float = 300) -> str | None:
    """Run ``code`` in a fresh process; its failure (exit status and last line) or None."""
    env = {**ENV, "STREAMCODEC_BACKEND": backend}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )
    return None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-300:]}"


def one_line(done: subprocess.CompletedProcess[bytes], *, says: str, status: int = 1) -> str | None:
    err = done.stderr.decode(errors="replace")
    if done.returncode != status:
        return f"exit {done.returncode} (want {status}): {err[-200:]!r}"
    if err.count("\n") != 1 or "Traceback" in err or says not in err:
        return f"want one line with {says!r}, got {err[-300:]!r}"
    return None


# ---------------------------------------------------------------------- the families


def full_disk(work: Path) -> Iterator[tuple[str, Check]]:
    small, large = work / "small.txt", work / "large.txt"
    for fmt in FORMATS:
        for src in (small, large):
            extra = ["-e", "gpt2"] if fmt == "u16" else []

            def check(fmt: str = fmt, src: Path = src, extra: list[str] = extra) -> str | None:
                with open("/dev/full", "wb") as full:
                    done = cli("encode", str(src), "-f", fmt, *extra, stdout=full.fileno())
                return one_line(done, says="<stdout>: No space left on device")

            yield f"{fmt} {src.name} > /dev/full", check
    for command in ("count", "explain", "verify", "decode"):
        source = work / ("small.ids" if command == "decode" else "small.txt")

        def printed(command: str = command, source: Path = source) -> str | None:
            with open("/dev/full", "wb") as full:
                done = cli(command, str(source), stdout=full.fileno())
            err = done.stderr.decode()
            last = "streamcodec: error: <stdout>: No space left on device\n"
            if done.returncode != 1 or not err.endswith(last) or "Exception ignored" in err:
                return f"exit {done.returncode}: {err[-300:]!r}"  # (explain notes its pattern)
            return None

        yield f"{command} > /dev/full", printed


def closed_pipe(work: Path) -> Iterator[tuple[str, Check]]:
    large = work / "large.txt"
    for fmt in FORMATS:
        for via in ("file", "stdin"):
            extra = ["-e", "gpt2"] if fmt == "u16" else []

            def check(fmt: str = fmt, via: str = via, extra: list[str] = extra) -> str | None:
                source = "-" if via == "stdin" else str(large)
                command = [sys.executable, "-m", "streamcodec", "encode", source, "-f", fmt]
                popen = subprocess.Popen(
                    [*command, *extra], stdin=subprocess.PIPE if via == "stdin" else None,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                )  # fmt: skip
                with reaped(popen) as process:
                    assert process.stdout is not None and process.stderr is not None
                    if process.stdin is not None:
                        process.stdin.write(large.read_bytes())
                        process.stdin.close()
                    process.stdout.read(10)
                    process.stdout.close()
                    status, err = process.wait(timeout=300), process.stderr.read()
                return None if (status, err) == (141, b"") else f"exit {status}, {err[-200:]!r}"

            yield f"-f {fmt} from {via} | head -c 10", check


def vocab_pattern(work: Path) -> Iterator[tuple[str, Check]]:
    files = _vocab_files(work)
    src = str(work / "small.txt")
    cuts = {"encode": [], "count": [], "verify": [], "split": ["--max-tokens", "5", "-o", ""]}
    for kind in ("tiktoken", "gpt2", "minbpe"):
        for command, extra in cuts.items():
            vocab = files[kind]

            def refused(command: str = command, extra: list[str] = extra, vocab: str = vocab):
                extra = [str(work / f"w{time.monotonic_ns()}") if e == "" else e for e in extra]
                done = cli(command, src, "--vocab", vocab, *extra)
                return one_line(done, says="does not say its pre-tokenizer pattern; pass --pattern")

            yield f"{command} --vocab {kind}: refused", refused
        for extra in (["--pattern", "gpt2"], ["--mode", "bytes"]):
            yield (
                f"encode --vocab {kind} {' '.join(extra)}: accepted",
                lambda vocab=files[kind], extra=extra: _status(
                    cli("encode", src, "--vocab", vocab, *extra), 0
                ),
            )
    yield (
        "encode --vocab tokenizer.json: its own pattern",
        lambda: _status(cli("encode", src, "--vocab", files["huggingface"]), 0),
    )
    ids = work / "small.ids"
    yield (
        "decode --vocab tiktoken: no pattern needed",
        lambda: _status(cli("decode", str(ids), "--vocab", files["tiktoken"]), 0),
    )


EMPTY = [r"\b", "x|", "a*", r"\s*", "(?:)", "^", "$", r"\B", "a?", r"[a-z]*|\s", r"(?=x)", "(a*)*"]


def empty_match(work: Path) -> Iterator[tuple[str, Check]]:
    for backend in BACKENDS:
        for pattern in EMPTY:
            code = _encoding_code(pattern, backend) + (
                "except ValueError as e: assert 'matches the empty string' in str(e), e\n"
                "else: raise SystemExit('accepted')\n"
            )
            yield f"{pattern!r} on {backend}", lambda code=code: python(code)
        code = _encoding_code(r"(?<=xyz)|\S+|\s+", backend, "hello xyz world") + (
            "except ValueError as e: assert 'at character 9 of' in str(e), e\n"
            "else: raise SystemExit('accepted')\n"
        )
        yield f"a lookbehind met in the text, on {backend}", lambda code=code: python(code)
    files = _vocab_files(work)
    for pattern in EMPTY[:4]:
        yield f"--pattern {pattern!r} on the command line", lambda pattern=pattern: one_line(
            cli("encode", str(work / "small.txt"), "--vocab", files["tiktoken"], "--pattern",
                pattern),
            says="matches the empty string",
        )  # fmt: skip


BACKTRACKING = [r"(a|aa)+$", r"(x|xx)+$", r"(a+)+$", r"(a|a)+$", r"(\w+\s?)+$", r"(a|aa)+$|."]


def backtracking(work: Path, bound: float) -> Iterator[tuple[str, Check]]:
    for backend in BACKENDS:
        for pattern in BACKTRACKING:
            code = _encoding_code(pattern, backend, "a" * 40 + "b") + (
                "except ValueError as e: assert 'backtracks without bound' in str(e), e\n"
            )  # refused, or (regex's own shortcut: (a+)+$) encoded at once
            yield (
                f"{pattern!r} on {backend}",
                lambda code=code, backend=backend: _timed(
                    lambda: python(code, backend=backend), bound
                ),
            )
    for backend in BACKENDS:
        for pattern in [r"(ab)+|.", r"([a-z])+|\s+|.", r"(\w+)(\s?)|.", r"(\w)\1|."]:
            code = (
                "import streamcodec, tiktoken\nranks = streamcodec.get_encoding('gpt2')"
                ".mergeable_ranks\ntext = 'ababx hello  aabb it\\'s 123'\n"
                f"ours = streamcodec.Encoding('x', pat_str={pattern!r}, mergeable_ranks=ranks, "
                f"special_tokens={{}}, backend={backend!r}).encode(text)\n"
                f"assert ours == tiktoken.Encoding('t', pat_str={pattern!r}, mergeable_ranks="
                "ranks, special_tokens={}).encode(text)\n"
            )
            yield f"groups {pattern!r} on {backend}", lambda code=code: python(code)
    files = _vocab_files(work)
    runaway = work / "xy.txt"
    runaway.write_text("xy" * 40 + "z")
    for backend in BACKENDS:
        yield (
            f"Ctrl-C ends a runaway match on {backend}",
            lambda backend=backend: _ctrl_c(
                ["encode", str(runaway), "--vocab", files["tiktoken"], "--pattern", "(?:xy|x|y)+$"],
                backend,
            ),
        )


def options(work: Path) -> Iterator[tuple[str, Check]]:
    src = str(work / "small.txt")
    for suffix in ("bin", "dat", "u8", "tokens", "i32"):
        yield (
            f"-o x.{suffix} refused",
            lambda suffix=suffix: one_line(
                cli("encode", src, "-o", str(work / f"x.{suffix}")), says="pass -f"
            ),
        )
    for suffix in ("txt", "ids", "npy", "jsonl", "u32"):
        yield (
            f"-o x.{suffix} written",
            lambda suffix=suffix: _status(cli("encode", src, "-o", str(work / f"x.{suffix}")), 0),
        )
    yield (
        "tokenize-corpus - - refused",
        lambda: one_line(
            cli("tokenize-corpus", "-", "-", "-o", str(work / "twice"), stdin=b"hi"),
            says="standard input (-) is named twice",
        ),
    )
    help_text = cli("split", "--help").stdout.decode()
    for offered in ("--mode word", "--codes", "--separator", "surrogateescape"):
        yield (
            f"split --help leaves out {offered}",
            lambda offered=offered: (
                f"offered: {offered}" if offered.split()[-1] in help_text else None
            ),
        )


def dropin(work: Path) -> Iterator[tuple[str, Check]]:
    for expression in [
        "tiktoken.model.MODEL_TO_ENCODING['gpt-4'] == 'cl100k_base'",
        "'gpt2' in tiktoken.registry.list_encoding_names()",
        "callable(tiktoken.load.load_tiktoken_bpe)",
        "tiktoken.core.Encoding is tiktoken.Encoding",
    ]:
        code = f"import streamcodec as tiktoken\nassert {expression}\n"
        yield expression, lambda code=code: python(code)


def explain(work: Path, bound: float) -> Iterator[tuple[str, Check]]:
    five = work / "five.txt"
    line = "the quick brown fox jumps over the lazy dog, 1234 times!\n"
    five.write_text(line * (5_000_000 // len(line)))
    yield (
        f"a 5 MB file within {bound:.0f} s",
        lambda: _timed(
            lambda: _status(cli("explain", str(five), stdout=subprocess.DEVNULL), 0), bound
        ),
    )
    long_piece = work / "long.txt"
    long_piece.write_text("=" * 300_000)

    def long_check() -> str | None:
        done = cli("explain", str(long_piece))
        shown = done.stdout.decode()
        fine = done.returncode == 0 and "too long to show every merge" in shown
        return None if fine and len(shown) < 10_000 else f"exit {done.returncode}, {len(shown)}"

    yield "a 300,000-byte piece without every merge", long_check
    yield (
        "--html past 1 MiB refused",
        lambda: one_line(
            cli("explain", str(five), "--html", str(work / "page.html")), says="explain a part"
        ),
    )
    yield "/dev/zero refused", lambda: one_line(cli("explain", "/dev/zero"), says="explain a part")


def api_counts(work: Path) -> Iterator[tuple[str, Check]]:
    calls = {
        "cache_bytes": "make(cache_bytes=V)",
        "cache_size": "make(cache_size=V)",
        "jobs": "list(enc.iter_encode_chunks(io.StringIO('hi'), jobs=V))",
        "limit": "enc.count_tokens('hello world', limit=V)",
        "max_tokens": "list(enc.split('hello world', V))",
        "overlap": "list(enc.split('hello world', 5, overlap=V))",
    }
    lows = {"cache_bytes": -1, "cache_size": -1, "jobs": 0, "limit": -1, "max_tokens": 0,
            "overlap": -1}  # fmt: skip
    setup = (
        "import io, streamcodec\nenc = streamcodec.get_encoding('cl100k_base')\n"
        "def make(**o): return streamcodec.Encoding('x', pat_str=enc.pat_str, "
        "mergeable_ranks=enc.mergeable_ranks, special_tokens=enc.special_tokens, **o)\n"
    )
    for name, call in calls.items():
        for value, error in [("'32'", "TypeError"), ("1.5", "TypeError"), ("True", "TypeError"),
                             (str(lows[name]), "ValueError")]:  # fmt: skip
            code = setup + (
                f"try: {call.replace('V', value)}\n"
                f"except {error} as e: assert str(e).startswith('{name}='), e\n"
                "else: raise SystemExit('accepted')\n"
            )
            yield f"{name}={value}: {error}", lambda code=code: python(code)


def no_file(work: Path) -> Iterator[tuple[str, Check]]:
    folder = work / "a-folder"
    folder.mkdir(exist_ok=True)
    sock = work / "a-socket"
    if not sock.exists():
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(sock))
        server.close()
    extra = {"train": ["--vocab-size", "300", "-o", "OUT.tiktoken"],
             "split": ["--max-tokens", "5", "-o", "OUT"]}  # fmt: skip
    commands = ["encode", "count", "decode", "verify", "explain", "train", "split"]
    for command in commands:
        for path in (folder, sock):

            def check(command: str = command, path: Path = path) -> str | None:
                out = str(work / f"out{time.monotonic_ns()}")
                args = [a.replace("OUT", out) for a in extra.get(command, [])]
                return one_line(cli(command, str(path), *args, timeout=60), says=str(path))

            yield f"{command} {path.name}", check
        yield f"{command} /dev/null", lambda command=command: _status(
            cli(command, "/dev/null", *[a.replace("OUT", str(work / f"n{command}"))
                                        for a in extra.get(command, [])], timeout=60),
            0,
        )  # fmt: skip
    src = str(work / "small.txt")
    for flag, extra_flag in (("--vocab", ["--pattern", "gpt2"]), ("--codes", ["--mode", "word"])):
        for path in ("/dev/zero", "/dev/urandom", str(sock), str(folder)):
            if flag == "--vocab" and path == str(folder):
                continue  # GPT-2's two files, in their folder
            yield (
                f"{flag} {Path(path).name}",
                lambda flag=flag, path=path, x=extra_flag: one_line(
                    cli("encode", src, flag, path, *x, timeout=60), says="not a file"
                ),
            )


# ---------------------------------------------------------------------- helpers


def _status(done: subprocess.CompletedProcess[bytes], status: int) -> str | None:
    if done.returncode == status:
        return None
    return f"exit {done.returncode} (want {status}): {done.stderr.decode()[-300:]!r}"


def _timed(check: Check, bound: float) -> str | None:
    started = time.monotonic()
    failure = check()
    took = time.monotonic() - started
    return failure or (f"took {took:.1f} s (bound {bound:.0f} s)" if took > bound else None)


def _ctrl_c(args: list[str], backend: str) -> str | None:
    env = {**ENV, "STREAMCODEC_BACKEND": backend}
    popen = subprocess.Popen(
        [sys.executable, "-m", "streamcodec", *args], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    with reaped(popen) as process:
        time.sleep(4)
        if process.poll() is not None:
            return f"ended before the signal: exit {process.returncode}"
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = process.communicate(timeout=60)
    took = time.monotonic() - sent
    if process.returncode != 130 or not err.startswith(b"streamcodec: interrupted"):
        return f"exit {process.returncode}, {err[-200:]!r}"
    return None if took < 5 else f"ended {took:.1f} s after Ctrl-C"


def _encoding_code(pattern: str, backend: str, text: str = "hello world") -> str:
    return (
        "import streamcodec\nranks = streamcodec.get_encoding('gpt2').mergeable_ranks\n"
        f"try: streamcodec.Encoding('x', pat_str={pattern!r}, mergeable_ranks=ranks, "
        f"special_tokens={{}}, backend={backend!r}).encode({text!r})\n"
    )


_FILES: dict[str, str] = {}


def _vocab_files(work: Path) -> dict[str, str]:
    """GPT-2's ranks in each format, once (only tokenizer.json says its pattern)."""
    if not _FILES:
        sys.path.insert(0, str(ROOT))
        import streamcodec
        from streamcodec.formats import save_vocabulary
        from streamcodec.vocab import GPT2_PATTERN, Vocabulary

        ranks = streamcodec.get_encoding("gpt2").mergeable_ranks
        # minbpe holds byte b at id b: a toy vocabulary of that shape
        toy = {bytes([b]): b for b in range(256)} | {b"he": 256, b"ll": 257, b"hell": 258}
        (work / "gpt2").mkdir(exist_ok=True)
        names = {"tiktoken": "gpt2.tiktoken", "gpt2": "gpt2/encoder.json",
                 "minbpe": "toy.model", "huggingface": "tokenizer.json"}  # fmt: skip
        for kind, name in names.items():
            pattern = GPT2_PATTERN if kind == "huggingface" else None
            vocabulary = Vocabulary(toy if kind == "minbpe" else ranks, {}, pattern)
            save_vocabulary(vocabulary, work / name)
            _FILES[kind] = str(work / name)
    return _FILES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated families (default: all)")
    parser.add_argument("--bound", type=float, default=120, help="seconds a bounded case may take")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "small.txt").write_text("hello world\nagain\n")
        (work / "large.txt").write_text("".join(f"line {i}: a quick fox\n" for i in range(8000)))
        (work / "small.ids").write_text("31373\n995\n198\n39363\n198\n")  # gpt2's
        families: dict[str, Iterator[tuple[str, Check]]] = {
            "full-disk": full_disk(work),
            "closed-pipe": closed_pipe(work),
            "vocab-pattern": vocab_pattern(work),
            "empty-match": empty_match(work),
            "backtracking": backtracking(work, args.bound),
            "options": options(work),
            "dropin": dropin(work),
            "explain": explain(work, args.bound),
            "api-counts": api_counts(work),
            "no-file": no_file(work),
        }
        chosen = args.only.split(",") if args.only else list(families)
        total = failed = 0
        for family in chosen:
            trials = fails = 0
            for name, check in families[family]:
                trials += 1
                try:
                    failure = check()
                except Exception as exc:  # a hang (TimeoutExpired) or a broken probe
                    failure = f"{type(exc).__name__}: {exc}"
                if failure is not None:
                    fails += 1
                    print(f"  FAILED {family}: {name}: {failure}", flush=True)
            print(f"{family}: {trials} trials, {fails} failed", flush=True)
            total, failed = total + trials, failed + fails
        print(f"total: {total} trials, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
