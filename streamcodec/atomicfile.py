"""The one output writer: a file appears whole or not at all; anything else is written in place.

What is at the path decides how it is written:

- a new path, or a regular file: a temporary file beside it is renamed over it at the end, so an
  interrupted run (Ctrl-C, SIGTERM, a crash, a full disk) leaves the old file, or no file, never
  a truncated one that looks complete. An existing file keeps its mode (0600 stays 0600);
- a symlink: its target is written that way, and the link stays a link;
- a regular file with hard links: built in a temporary file, then copied into the file itself at
  the end, so every link still names it (a rename would split them); only an interruption during
  that last copy can leave it partial;
- ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` (``-o >(cmd)``): that open descriptor;
- anything else (``/dev/null``, a FIFO, a terminal): opened and written in place, never replaced.

Errors name the caller's path, never the temporary file; a missing folder is refused (named).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_output(path) as f:
    ...     _ = f.write(b"done")
    >>> open(path, "rb").read()
    b'done'
"""

from __future__ import annotations

import contextlib
import errno
import functools
import operator
import os
import re
import stat
from collections.abc import Iterator
from typing import Any, BinaryIO

__all__ = [
    "atomic_output",
    "check_folder",
    "naming",
    "replaces",
    "start_writeback",
    "temporary_prefix",
]

# The paths that name a descriptor this process already holds.
_DESCRIPTOR = re.compile(r"/dev/(?:fd/(\d+)|(stdout)|(stderr))|/proc/self/fd/(\d+)")
# Errors of writing that say nothing of the file; they get the caller's path.
_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


def replaces(path: str | os.PathLike[str]) -> bool:
    """Whether :func:`atomic_output` builds ``path`` in a new file of its own (not in place)."""
    name = os.fspath(path)
    if _descriptor(name) is not None:
        return False
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except FileNotFoundError:
        return True


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open ``path`` for writing bytes as the module docstring says; the result is there only
    if the block ends normally (for a file that is replaced)."""
    name = os.fspath(path)
    with naming(name):
        info = _stat(name)
        in_place = _open_in_place(name, info)
    if in_place is None:
        with _replacing(name, os.path.realpath(name), info) as f:
            yield f
        return
    with naming(name, writing=True), in_place as f:
        yield f


def _open_in_place(name: str, info: os.stat_result | None) -> BinaryIO | None:
    """A descriptor the path names, or what is not a regular file, opened; else ``None``."""
    fd = _descriptor(name)
    if fd is not None:
        return os.fdopen(os.dup(fd), "wb")
    if info is not None and not stat.S_ISREG(info.st_mode):
        return open(name, "wb")
    return None


@contextlib.contextmanager
def _replacing(name: str, real: str, info: os.stat_result | None) -> Iterator[BinaryIO]:
    """A temporary file beside ``real`` that becomes it (or its content) at the end."""
    check_folder(name)
    folder = os.path.dirname(real)
    with naming(name):
        prefix = temporary_prefix(real)
    tmp = ""
    try:
        with naming(name):
            # Any name with this process's prefix is its own.
            while True:
                tmp = temporary_name(folder, prefix, ".tmp")
                with contextlib.suppress(FileExistsError):
                    fd = os.open(tmp, _NEW_FILE, 0o600)
                    break
            _keep_mode(fd, info)
        # naming() outside the file: closing it flushes the buffer, and a full disk met there
        # (after another error, or none) names the caller's path too
        with naming(name, writing=True), os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with naming(name):
            if info is not None and info.st_nlink > 1:
                _copy_into(tmp, real)
                os.unlink(tmp)
            else:
                os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            if tmp:  # else no file was made
                os.unlink(tmp)
        raise


def temporary_prefix(real: str) -> str:
    """The prefix of a temporary beside ``real``: ``.NAME.PID@HOST.``; those of a dead process
    of this host (killed with SIGKILL, as a Dask worker or an out-of-memory kill is) are
    removed first, so the next run to the same path leaves none behind."""
    folder, base = os.path.split(real)
    host = _host()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder or "."):
            if not entry.name.startswith(f".{base}."):
                continue
            owner = _OWNER.fullmatch(entry.name, len(base) + 2)
            if owner is None or owner["host"] != host or _alive(int(owner["pid"])):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    import shutil  # here: the module, with bz2 and lzma, costs every start 2 ms

                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
    return f".{base}.{os.getpid()}@{host}."


def temporary_name(folder: str, prefix: str, suffix: str = "") -> str:
    """A fresh name for a temporary file or folder in ``folder``, for the caller to hold before
    it makes one: a signal just after it is made then finds its name and removes it (inside
    ``tempfile.mkstemp`` or ``mkdtemp``, which had not yet returned it, it was left behind)."""
    return os.path.join(folder, f"{prefix}{os.urandom(4).hex()}{suffix}")  # secrets.token_hex's


def _host() -> str:
    """This machine's name as ``socket.gethostname()`` gives it: uname's node name, where there
    is one (importing socket cost every start 1.5 ms)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    import socket

    return socket.gethostname()


# A temporary file is made as tempfile.mkstemp makes one.
_NEW_FILE = functools.reduce(
    operator.or_,
    [getattr(os, flag, 0) for flag in ("O_NOFOLLOW", "O_CLOEXEC", "O_NOINHERIT", "O_BINARY")],
    os.O_RDWR | os.O_CREAT | os.O_EXCL,
)
# After the prefix, 8 characters (as mkstemp and mkdtemp add; and the files ".tmp").
_OWNER = re.compile(r"(?P<pid>\d+)@(?P<host>.+)\.[a-z0-9_]{8}(?:\.tmp)?", re.S)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def check_folder(path: str | os.PathLike[str]) -> None:
    """Refuse a path whose folder is missing, naming the folder (nothing here creates one):
    the folder of the path as given, or of a symlink's target."""
    name = os.fspath(path)
    real_folder = os.path.dirname(os.path.realpath(name))
    if not os.path.isdir(real_folder):
        shown = os.path.dirname(name)
        if not shown or os.path.islink(name):  # the link's own folder is there: name its target's
            shown = real_folder
        if os.path.exists(real_folder):
            raise NotADirectoryError(errno.ENOTDIR, f"{shown} is not a folder", name)
        raise FileNotFoundError(errno.ENOENT, f"the folder {shown} does not exist", name)


def _keep_mode(fd: int, info: os.stat_result | None) -> None:
    """The old file's mode and owner, or the permissions ``open()`` would give a new file."""
    if info is None:
        os.fchmod(fd, 0o666 & ~_umask())  # made owner-only, as mkstemp makes a file
        return
    with contextlib.suppress(PermissionError):  # only root may give a file to another user
        os.fchown(fd, info.st_uid, info.st_gid)
    os.fchmod(fd, stat.S_IMODE(info.st_mode))


def _copy_into(tmp: str, real: str) -> None:
    """Overwrite the file ``real`` in place with ``tmp``'s bytes: its hard links stay whole."""
    import shutil

    with open(tmp, "rb") as source, open(real, "r+b") as target:
        shutil.copyfileobj(source, target, 1 << 20)
        target.truncate()
        target.flush()
        os.fsync(target.fileno())


@contextlib.contextmanager
def naming(name: str, *, writing: bool = False) -> Iterator[None]:
    """Give our errors the caller's path ``name``: any of our own calls' (they may name the
    temporary file or folder); while the caller writes, only those that name no file (a full
    disk)."""
    try:
        yield
    except OSError as exc:
        if exc.filename == name or (writing and exc.errno not in _WRITE_ERRORS):
            raise
        if writing and exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, name) from None


def _descriptor(name: str) -> int | None:
    """The descriptor ``name`` stands for, if it or a link it leads through names one of this
    process's (``/dev/stdout`` is a link to ``/proc/self/fd/1``)."""
    for _ in range(40):  # the kernel's limit on links followed
        match = _DESCRIPTOR.fullmatch(name)
        if match is not None:
            fd, stdout, stderr, proc = match.groups()
            return 1 if stdout else 2 if stderr else int(fd or proc)
        if not os.path.islink(name):
            return None
        name = os.path.join(os.path.dirname(name), os.readlink(name))
    return None


def start_writeback(fd: int) -> None:
    """Start writing to disk what was written to ``fd`` so far, without waiting (Linux's
    ``sync_file_range(SYNC_FILE_RANGE_WRITE)``; elsewhere, or for what is not a file, nothing):
    a large file written over a while is then mostly on disk when its ``fsync`` comes (that
    of 40 MB: 20 ms down to 2-5 ms here), which stays the proof that it is."""
    call = _sync_file_range()
    if call is not None:
        call(fd, 0, 0, 2)  # SYNC_FILE_RANGE_WRITE; an error (a pipe, a device) changes nothing


@functools.cache
def _sync_file_range() -> Any:
    try:
        import ctypes
    except ImportError:  # Pyodide
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (AttributeError, OSError):  # not Linux
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return call


def _stat(name: str) -> os.stat_result | None:
    try:
        return os.stat(name)
    except FileNotFoundError:
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
