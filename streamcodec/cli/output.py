"""The one output writer of every command: ``-o PATH`` (atomic), or standard output.

    with output(args.output) as out:
        out.write(b"...")

Every command writes through here, so ``-o`` means the same thing in each.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from streamcodec.atomicfile import atomic_output

__all__ = ["output"]


@contextlib.contextmanager
def output(path: str | None, *, seekable: bool = False) -> Iterator[BinaryIO]:
    """The output file (atomic), or stdout; ``seekable`` spools stdout through a temp file."""
    if path is not None:
        with atomic_output(path) as f:
            yield f
    elif seekable:
        with tempfile.TemporaryFile() as f:
            yield f
            f.seek(0)
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.flush()
    else:
        yield sys.stdout.buffer
        sys.stdout.flush()
