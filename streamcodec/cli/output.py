"""The one output writer of every command: ``-o PATH``, or standard output.

    with output(args.output) as out:
        out.write(b"...")

``-o`` goes through :func:`streamcodec.atomicfile.atomic_output`, so it means the same thing in
every command: a file is replaced whole or not at all (its mode and links kept), a device, FIFO
or ``/dev/fd/N`` is written in place, and a missing folder is refused.
"""

from __future__ import annotations

import contextlib
import errno
import io
import sys
from collections.abc import Iterator
from typing import BinaryIO, NoReturn

from streamcodec.atomicfile import atomic_output, naming, replaces

__all__ = ["ClosedStdout", "output"]


class ClosedStdout(io.TextIOBase):
    """What ``sys.stdout`` becomes when the command starts with it closed (``>&-``: Python then
    has ``None``, and ``print`` writes nowhere without a word): writing raises ``OSError``, so
    the command fails in one line, as coreutils do, while commands writing to ``-o`` go on."""

    @property
    def buffer(self) -> BinaryIO:
        self._refuse()

    def write(self, text: str) -> int:
        self._refuse()

    @staticmethod
    def _refuse() -> NoReturn:
        raise OSError(
            errno.EBADF, "standard output is closed (write to a file with -o)", "<stdout>"
        )


@contextlib.contextmanager
def output(path: str | None, *, seekable: bool = False) -> Iterator[BinaryIO]:
    """The output (``None``: stdout); ``seekable`` spools through a temporary file whatever is
    written in place (stdout, a FIFO), so a writer may go back to its start."""
    target = _stdout() if path is None else atomic_output(path)
    with target as out:
        if seekable and (path is None or not replaces(path)):
            import shutil  # only here: with tempfile, 3 ms of every command's start
            import tempfile

            with tempfile.TemporaryFile() as spool:
                yield spool
                spool.seek(0)
                shutil.copyfileobj(spool, out)
        else:
            yield out
        out.flush()


@contextlib.contextmanager
def _stdout() -> Iterator[BinaryIO]:
    """Standard output; a full disk behind it (``> file``) is named as ``-o`` files are."""
    with naming("<stdout>", writing=True):
        yield sys.stdout.buffer
