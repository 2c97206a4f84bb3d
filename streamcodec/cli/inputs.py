"""Where a command's input comes from: a path, or ``-`` for standard input.

    $ streamcodec encode - < book.txt

Every command reads its input through here, so all take the same kinds.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from streamcodec.cli.progress import Progress
from streamcodec.stream import text_chunks
from streamcodec.wordbpe import line_blocks

__all__ = ["binary_input", "blocks", "lines", "source", "word_blocks"]


def source(args: argparse.Namespace) -> Path | BinaryIO:
    """The input as the streaming encoder takes it: a path, or standard input's bytes."""
    if args.input == "-":
        return sys.stdin.buffer
    path = Path(args.input)
    if not path.is_file():  # fail before any work (and before workers start)
        raise FileNotFoundError(2, "No such file", args.input)
    return path


@contextlib.contextmanager
def binary_input(path: str) -> Iterator[BinaryIO]:
    """The file at ``path`` opened for reading bytes, or standard input for ``-``."""
    if path == "-":
        yield sys.stdin.buffer
    else:
        with open(path, "rb") as f:
            yield f


def blocks(path: str, progress: Progress | None, size: int = 1 << 20) -> Iterator[bytes]:
    """The bytes of ``path`` in blocks, each counted by ``progress``."""
    with binary_input(path) as f:
        while block := f.read(size):
            if progress is not None:
                progress(len(block))
            yield block


def word_blocks(args: argparse.Namespace, progress: Progress | None) -> Iterator[str]:
    """The input text in blocks of whole lines (word mode works line by line)."""
    errors = getattr(args, "errors", "strict")
    return line_blocks(text_chunks(source(args), errors=errors, progress=progress))


def lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of streamed text, without their ``\\n``.

    >>> list(lines(["a\\nb", "c\\n", "d"]))
    ['a', 'bc', 'd']
    """
    pending: list[str] = []
    for chunk in chunks:
        *complete, rest = chunk.split("\n")
        if complete:
            yield "".join([*pending, complete[0]])
            yield from complete[1:]
            pending = []
        pending.append(rest)
    if any(pending):
        yield "".join(pending)
