"""The command line: ``streamcodec COMMAND``, one module per command (``COMMANDS`` lists them).

Only this package prints or touches the terminal. Errors from the library become one line on
stderr and exit status 1; Ctrl-C exits with 130, SIGTERM with 143, SIGHUP with 129. Output files
are written atomically (a temporary file renamed at the end), so an interrupted run leaves no file
that looks complete. A progress bar (bytes read) is shown on stderr when it is a terminal, unless
``--quiet``.

Each command module has an ``add(commands)`` that declares its options and the function that
runs it; add a command by writing another module and naming it in ``COMMANDS`` (a command's
module is imported only when it runs).
Shared pieces: ``options`` (the options several commands take, and the encoding they build),
``inputs`` (where input comes from), ``idformats`` (ids on disk: ids, jsonl, u32, u16, npy),
``output`` (the one output writer), ``progress`` (the bars) and ``heap`` (flat memory on glibc).

    $ streamcodec encode book.txt -o book.ids && streamcodec decode book.ids | cmp - book.txt

``--mode`` picks the kind of BPE: ``bytelevel`` (the encoding's pre-tokenizer pattern, as
tiktoken), ``bytes`` (no pre-tokenization: the whole text is one piece) or ``word`` (Sennrich's
word-level BPE with a subword-nmt codes file: text in, ``@@``-marked segments out).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence

import streamcodec
from streamcodec.atomicfile import naming
from streamcodec.cli.heap import keep_heap_flat
from streamcodec.cli.output import ClosedStdout
from streamcodec.interrupts import Stopped, stop_signals, stopped_by
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = ["build_parser", "main"]

# The commands, each declared by the module of its name (``tokenize-corpus``: ``tokenize_corpus``,
# its ``add(commands)``), imported only when that command runs, so a command's start does not
# load the others' imports (``--help`` loads all).
COMMANDS = (
    "encode",
    "decode",
    "count",
    "split",
    "train",
    "verify",
    "explain",
    "tokenize-corpus",
    "check-corpus",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (128 + N after signal N: SIGINT, SIGTERM
    and SIGHUP all unwind as Ctrl-C does, see :mod:`streamcodec.interrupts`)."""
    if sys.stdout is None:  # started with stdout closed: writing to it must fail, not vanish
        sys.stdout = ClosedStdout()
    if sys.stderr is None:  # started with stderr closed: messages and progress go nowhere, the
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (work goes on, as in coreutils)
    args = argparse.Namespace()
    keep_heap_flat()
    with stop_signals():
        try:
            words = sys.argv[1:] if argv is None else list(argv)
            named = words[0] if words and words[0] in COMMANDS else None
            with _uncollected(process=argv is None):
                args = build_parser(named).parse_args(argv)
            command: Callable[[argparse.Namespace], int] = args.run
            status = command(args)
            with naming("<stdout>", writing=True):  # here, not in Python's flush at exit
                sys.stdout.flush()
            return status
        except KeyboardInterrupt as exc:  # Stopped, or Ctrl-C where no handler was installed
            return _interrupted(exc if isinstance(exc, Stopped) else Stopped(signal.SIGINT), args)
        except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as cat does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        # ImportError: the backend; OverflowError: an id past a format's or the vocabulary's limit
        except (OSError, ValueError, KeyError, ImportError, OverflowError) as exc:
            print(f"streamcodec: error: {_message(exc, args)}", file=sys.stderr)
            _drop_stdout()
            return 1
        except BaseException as exc:  # a signal wrapped by the code it stopped (an import)
            stopped = stopped_by(exc)
            if stopped is None:
                raise
            return _interrupted(stopped, args)


@contextlib.contextmanager
def _uncollected(*, process: bool) -> Iterator[None]:
    """The command's imports with the garbage collector off, where this call is the process
    (``process``: no argv given; a caller's own objects are never frozen): their objects live
    to the end, so collections walked them for nothing, 3.5 ms of a start; then frozen out of
    every later collection (``gc.freeze``), which the first one would otherwise walk at once
    (the imports' few cycles of garbage, some 160 objects, stay with them)."""
    if not (process and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _drop_stdout() -> None:
    """After an error, what stdout could not take (a full disk) is dropped: Python's flush at
    exit would fail on it again ("Exception ignored", status 120)."""
    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _interrupted(stopped: Stopped, args: argparse.Namespace) -> int:
    # what was left on disk: a command may say it in its own words (tokenize-corpus: resume)
    left = getattr(args, "interrupted_note", "-o files are as they were")
    print(f"streamcodec: {stopped}; {left}", file=sys.stderr)
    return stopped.status


def _message(exc: BaseException, args: argparse.Namespace | None = None) -> str:
    if isinstance(exc, InvalidUTF8Error):  # the library's words name errors=, ours the flag
        where = f"{exc.source}: invalid UTF-8 at byte offset {exc.offset} ({exc.reason})"
        accept = getattr(args, "accept_invalid", None)  # the command's own flags, if any
        return f"{where}; pass {accept} to accept it" if accept else where
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def version() -> str:
    """``streamcodec 0.1.0 (backend: python)``: the version, and which core encodes."""
    backend: Callable[[], str] | None = getattr(streamcodec, "backend", None)
    try:
        chosen = backend() if backend else "python"
    except (ImportError, ValueError) as exc:  # a bad STREAMCODEC_BACKEND: say so, do not fail
        chosen = f"none: {_message(exc)}"
    return f"streamcodec {streamcodec.__version__} (backend: {chosen})"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (docs/hooks/cli_reference.py renders the CLI page from it),
    or of ``command`` alone (only its module imported)."""
    parser = argparse.ArgumentParser(
        prog="streamcodec",
        description="Exact, streaming byte-level BPE (tiktoken-compatible).",
        epilog="Every named encoding ships in the package: no command needs a network.",
    )
    parser.add_argument("--version", action="version", version=version())
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        if command in (None, name):
            module = importlib.import_module(f"streamcodec.cli.{name.replace('-', '_')}")
            module.add(commands)
    return parser
