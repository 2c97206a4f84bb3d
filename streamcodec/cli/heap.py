"""Keep the command line's resident memory flat on glibc, however long the input.

Streaming allocates and frees blocks of a few MB over and over (a 1 MB text chunk, the list of
its ids). glibc serves a block that large with ``mmap`` at first, but each one freed raises its
``mmap`` threshold, after which such blocks come from the heap, which fragments: ``streamcodec
count`` grew from 58 MB (2 KB input) to 101 MB (96 MB input) and more beyond (issue 22 §2).
Fixing the threshold (``mallopt(M_MMAP_THRESHOLD, 128 KiB)``, glibc's own default, which also
stops its adjustment) keeps every large block in ``mmap``, returned whole on ``free``; the peak
then stays where it is after the first chunk. The CLI owns its process, so it sets this; a
program using the library can set ``MALLOC_MMAP_THRESHOLD_=131072`` in its environment.
A user's own ``MALLOC_MMAP_THRESHOLD_`` is left alone (nothing is set), and so is a user's
``MALLOC_TRIM_THRESHOLD_``; elsewhere than glibc nothing is done.

A command whose large blocks are of a few sizes and few at a time asks for a higher threshold
instead (``threshold=REUSED``): ``tokenize-corpus`` holds at most ``2 * jobs`` tasks of about
1 MB, and in ``mmap`` each of their buffers (the block read, its text, its ids, the shard's
array) was mapped and its pages faulted in afresh: 418 MB of JSON Lines took 2.0 s of system
time with 128 KiB and 0.5 s with 32 MiB (wall 12.3 s and 8.8 s with one job), the peak 97 and
104 MB (with two jobs 127 and 146 MB), bounded as before. The trim threshold is then set too, at
twice that (as glibc's own adjustment would have set it): with the mmap threshold fixed, glibc
stops adjusting its trim threshold, left at 128 KiB, so each buffer freed at the top of a heap
gave its pages back, to be faulted in again by the next task (22,000-27,000 faults and 30-40 ms
of CPU a run of 45 MB, 1,000-1,700 with the trim threshold set).

    >>> keep_heap_flat() in (True, False)
    True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["REUSED", "keep_heap_flat"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
_THRESHOLD = 128 * 1024
#: The threshold for blocks that are reused from the heap (glibc's own largest, on 64 bits).
REUSED = 32 << 20


def keep_heap_flat(*, threshold: int = _THRESHOLD) -> bool:
    """Fix glibc's mmap threshold for this process (at ``threshold`` bytes); whether it was
    set."""
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False
    trim = threshold > _THRESHOLD and "MALLOC_TRIM_THRESHOLD_" not in os.environ
    if trim and not mallopt(_M_TRIM_THRESHOLD, 2 * threshold):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))


def _glibc_mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, None under another C library (musl has one that does nothing),
    called through ``_ctypes``, the compiled half of ``ctypes``, as ``ctypes.CDLL(None).mallopt``
    is: with ``ctypes`` imported for it (its types, ``struct``), :func:`keep_heap_flat` took
    2.0 ms of every command's start, through ``_ctypes`` 0.45 ms (fresh processes, least of
    12; callgrind, ``count`` of a small file: 707.1 M instructions, 701.7 M now, 701.0 M with
    no mallopt)."""
    import _ctypes

    class Function(_ctypes.CFuncPtr):  # ctypes.CFUNCTYPE(c_int): an int result by default
        _flags_ = _ctypes.FUNCFLAG_CDECL

    try:
        program = _ctypes.dlopen(None)  # type: ignore[arg-type]  # dlopen(NULL): the process
        _ctypes.dlsym(program, "gnu_get_libc_version")
        mallopt: Callable[[int, int], int] = Function(_ctypes.dlsym(program, "mallopt"))
    except OSError:  # no such symbol
        return None
    return mallopt
