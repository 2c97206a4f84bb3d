"""Where a command's input comes from: a path, or ``-`` for standard input.

    $ streamcodec encode - < book.txt

Every command reads its input through here, so all take the same kinds.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from streamcodec.cli.progress import Progress
from streamcodec.stream.sources import CHUNK_SIZE, line_blocks, read_blocks, text_chunks

__all__ = [
    "Recorder",
    "binary_input",
    "blocks",
    "find_bytes",
    "is_regular_file",
    "shown_name",
    "source",
    "word_blocks",
]


def source(args: argparse.Namespace) -> Path | Recorder:
    """The input as the streaming encoder takes it: a path, or standard input's bytes.

    Anything readable is read as a stream: a FIFO, ``<(zcat f)``, ``/dev/stdin``; ``/dev/null``
    is empty. A folder or a missing path fails here, before any work (and before workers start).
    ``--jobs`` needs a regular file to split: with anything else it falls back to one job, and
    says so.
    """
    if args.input != "-" and stat.S_ISDIR(os.stat(args.input).st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", args.input)
    if getattr(args, "jobs", 1) > 1 and not is_regular_file(args.input):
        print(
            f"streamcodec: note: --jobs {args.jobs} splits regular files only; "
            f"reading {shown_name(args.input)} with one job",
            file=sys.stderr,
        )
        args.jobs = 1
    if is_regular_file(args.input):
        return Path(args.input)
    if args.input == "-":
        return Recorder(stdin_bytes(), "<stdin>")
    return Recorder(open(args.input, "rb"), args.input)


class Recorder:
    """A stream that keeps the bytes it read last: a stream cannot be read again to find where
    something was (``find``), and what the encoder reports is in its last blocks."""

    def __init__(self, stream: BinaryIO, name: str, *, keep: int = 4 << 20) -> None:
        self._stream = stream
        self.name = name
        self._keep = keep
        self._recent = b""
        self._start = 0  # the offset of _recent in the stream

    def read(self, size: int = -1) -> bytes:
        """Read as the stream does, keeping the last ``keep`` bytes."""
        block = self._stream.read(size)
        recent = self._recent + block
        self._start += max(0, len(recent) - self._keep)
        self._recent = recent[-self._keep :]
        return block

    def __iter__(self) -> Iterator[bytes]:
        return iter(functools.partial(self.read, CHUNK_SIZE), b"")

    def find(self, needle: bytes) -> int | None:
        """The offset in the stream of the first ``needle`` among the bytes kept."""
        found = self._recent.find(needle)
        return None if found < 0 else self._start + found


def is_regular_file(name: str) -> bool:
    """Whether the input ``name`` is a regular file (it has a size, and can be split)."""
    return name != "-" and stat.S_ISREG(os.stat(name).st_mode)


@contextlib.contextmanager
def binary_input(path: str) -> Iterator[BinaryIO]:
    """The file at ``path`` opened for reading bytes, or standard input for ``-``."""
    if path == "-":
        yield stdin_bytes()
    else:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", path)
        with open(path, "rb") as f:
            yield f


def blocks(path: str, progress: Progress | None, size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The bytes of ``path`` in blocks, each counted by ``progress``."""
    with binary_input(path) as f:
        for block in read_blocks(f, size=size):
            if progress is not None:
                progress(len(block))
            yield block


def stdin_bytes() -> BinaryIO:
    """Standard input as bytes; ``OSError`` when it is closed (``<&-``: Python then has no
    ``sys.stdin``), so the command says so in one line instead of failing on ``None``."""
    if sys.stdin is None:
        raise OSError(errno.EBADF, "standard input is closed", "<stdin>")
    return sys.stdin.buffer


def shown_name(name: str) -> str:
    """The input's name in messages: ``-`` is ``<stdin>``."""
    return "<stdin>" if name == "-" else name


def find_bytes(name: str | os.PathLike[str], needle: bytes, size: int = 1 << 20) -> int | None:
    """The byte offset of the first ``needle`` in the file ``name`` (read in blocks)."""
    with open(name, "rb") as f:
        offset, tail = 0, b""
        while block := f.read(size):
            data = tail + block
            if (found := data.find(needle)) >= 0:
                return offset - len(tail) + found
            tail = data[-(len(needle) - 1) :] if len(needle) > 1 else b""
            offset += len(block)
    return None


def word_blocks(args: argparse.Namespace, progress: Progress | None) -> Iterator[str]:
    """The input text in blocks of whole lines (word mode works line by line)."""
    errors = getattr(args, "errors", "strict")
    return line_blocks(text_chunks(source(args), errors=errors, progress=progress))
