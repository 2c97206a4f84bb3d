"""Atomic output: write to a temporary file beside the target, rename it into place at the end.

An interrupted run (Ctrl-C, a crash, a full disk) leaves the old file, or no file, never a
truncated one that looks complete.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_output(path) as f:
    ...     _ = f.write(b"done")
    >>> open(path, "rb").read()
    b'done'
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["atomic_output"]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a binary temporary file that replaces ``path`` only if the block ends normally."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file owner-only; give it the permissions open() would have.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
