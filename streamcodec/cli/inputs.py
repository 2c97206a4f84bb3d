"""Where a command's input comes from: a path, or ``-`` for standard input.

    $ streamcodec encode - < book.txt
    $ streamcodec count data.jsonl.zst --field text
    $ streamcodec encode shard.parquet --column text -f jsonl

Every command reads its input through here, so all take the same kinds, and the kinds are the
corpus tool's (:mod:`streamcodec.corpus.inputs`, one reader): a ``.gz``, ``.xz`` or ``.zst``
file is read decompressed, to its proper end; with ``--field`` the input is JSON Lines, each
line's field a document, and a ``.parquet`` (``.pq``) file is one document per row of
``--column`` (default ``text``). Each document is encoded alone, as ``tokenize-corpus`` does.
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
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from streamcodec.cli.progress import Progress
from streamcodec.corpus.document import STDIN, Document, Input, Kind, Range, Reading, open_input
from streamcodec.corpus.files import COMPRESSIONS, regular_file
from streamcodec.corpus.inputs import documents as corpus_documents
from streamcodec.encoding import Encoding
from streamcodec.stream.sources import (
    CHUNK_SIZE,
    find_in,
    line_blocks,
    read_blocks,
    text_chunks,
)
from streamcodec.text.specials import DisallowedSpecialTokenError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Recorder",
    "add_document_options",
    "binary_input",
    "blocks",
    "documents",
    "encoded_documents",
    "find_bytes",
    "is_regular_file",
    "shown_name",
    "source",
    "text_only",
    "word_blocks",
]


def source(args: argparse.Namespace) -> Path | Recorder:
    """The input as the streaming encoder takes it: a path, or standard input's bytes.

    Anything readable is read as a stream: a FIFO, ``<(zcat f)``, ``/dev/stdin``; ``/dev/null``
    is empty. A folder or a missing path fails here, before any work (and before workers start).
    A compressed file is read decompressed (:mod:`streamcodec.corpus.files`). ``--jobs`` needs
    an uncompressed regular file to split: with anything else it falls back to one job, and
    says so.
    """
    if args.input != "-" and stat.S_ISDIR(os.stat(args.input).st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", args.input)
    compressed = _compressed(args.input)  # a stream, as a pipe is
    if getattr(args, "jobs", 1) > 1 and (compressed or not is_regular_file(args.input)):
        kind = "uncompressed " if compressed else ""
        print(
            f"streamcodec: note: --jobs {args.jobs} splits {kind}regular files only; "
            f"reading {shown_name(args.input)} with one job",
            file=sys.stderr,
        )
        args.jobs = 1
    if compressed is not None:
        return Recorder(compressed, args.input)
    if is_regular_file(args.input):
        from pathlib import Path  # here: 5% of tokenize-corpus's start, which reads no source

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
        return find_in(f, needle, size=size)


def word_blocks(args: argparse.Namespace, progress: Progress | None) -> Iterator[str]:
    """The input text in blocks of whole lines (word mode works line by line)."""
    errors = getattr(args, "errors", "strict")
    return line_blocks(text_chunks(source(args), errors=errors, progress=progress))


def add_document_options(command: argparse.ArgumentParser) -> None:
    """``--field`` (the input is JSON Lines) and ``--column`` (a Parquet input's column)."""
    command.add_argument(
        "--field",
        metavar="NAME",
        help="read the input as JSON Lines (a JSON object a line, compressed or not, or -): "
        "each line's field NAME is a document, encoded alone (default: the input is one text)",
    )
    command.add_argument(
        "--column",
        metavar="NAME",
        help="a Parquet input (.parquet, .pq): each row's column NAME is a document, encoded "
        "alone (default text)",
    )


def documents(args: argparse.Namespace) -> Iterator[Document] | None:
    """The input's documents, read as ``tokenize-corpus`` reads them, when it is JSON Lines
    (``--field``) or Parquet; None for text (read as a stream by :func:`source`). An option
    the input does not take is refused."""
    name = args.input
    parquet = name != "-" and _suffix(name) in (".parquet", ".pq")
    if args.column is not None and not parquet:
        raise ValueError(f"--column reads Parquet inputs (.parquet, .pq), not {shown_name(name)}")
    if args.field is not None and parquet:
        raise ValueError(f"--field reads JSON Lines, and {name} is Parquet: pass --column")
    if args.field is None and not parquet:
        return None
    if args.errors not in ("strict", "replace"):
        raise ValueError(
            f"--errors {args.errors} keeps the bytes of a text stream: documents of JSON Lines "
            "or Parquet take strict or replace"
        )
    if name == "-":
        inp = Input(STDIN, "jsonl", None, -1, 0)
    else:
        info = regular_file(name)
        compression = COMPRESSIONS.get(os.path.splitext(name)[1].lower())
        kind: Kind = "parquet" if parquet else "jsonl"
        inp = Input(os.path.abspath(name), kind, compression, info.st_size, info.st_mtime_ns)
    reading = Reading(args.field or "text", args.column or "text", None, args.errors, "jsonl")
    return corpus_documents(inp, Range(0, 0, -1), reading)


def text_only(args: argparse.Namespace, why: str) -> None:
    """Refuse ``--field`` and ``--column`` where the input is read as text (``why``)."""
    for option in ("field", "column"):
        if getattr(args, option, None) is not None:
            raise ValueError(f"--{option} reads documents, and {why}: leave it out")


def encoded_documents(
    enc: Encoding, docs: Iterator[Document], options: dict[str, Any]
) -> Iterator[list[int]]:
    """Each document's ids, encoded alone under ``options`` (``Encoding.encode``'s); a special
    token not allowed is refused with where its document is (file:line, or row)."""
    for doc in docs:
        try:
            yield enc.encode(doc.text, **options)
        except DisallowedSpecialTokenError as exc:
            raise ValueError(
                f"{doc.where}: the document contains the special token {exc.token!r}; pass "
                f"--allowed-special {exc.token!r} to encode it as that token, or "
                "--special-as-text to encode it as text"
            ) from None


def _suffix(name: str) -> str:
    """The kind's suffix of ``name``: ``.jsonl`` for ``a.jsonl.zst``."""
    stem, suffix = os.path.splitext(name)
    if suffix.lower() in COMPRESSIONS:
        suffix = os.path.splitext(stem)[1]
    return suffix.lower()


def _compressed(name: str) -> BinaryIO | None:
    """A compressed input (by its name) decompressed, to its proper end; else None."""
    compression = COMPRESSIONS.get(os.path.splitext(name)[1].lower())
    if name == "-" or compression is None:
        return None
    info = regular_file(name)
    inp = Input(name, "text", compression, info.st_size, info.st_mtime_ns)
    return cast(BinaryIO, open_input(inp))
