"""Parallel encoding of one file: cut it at safe cuts, encode the parts in worker processes.

The file is split into parts of about ``PART_BYTES``, each ending at a safe cut (rules 1 to 5
of :mod:`streamcodec.stream.cuts`) that no special token straddles. Encoding text in two parts
at a safe cut gives the ids of the whole, so the ids of the parts, in order, are exactly one
job's. Workers get the encoding once, pickled: a registered encoding pickles as its name (a
forked worker finds it loaded), any other by value. Ids come back as packed ``uint32``; at most
``2 * jobs`` parts are in flight, so memory stays bounded however large the file.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from array import array
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, TypeGuard

from streamcodec.stream.cuts import PROVEN_PATTERNS, safe_cut
from streamcodec.stream.encoder import Encodes, Policy, encode_text_chunks
from streamcodec.stream.sources import Source, read_blocks
from streamcodec.text.specials import special_token_regex, straddles
from streamcodec.text.unicode import decode_utf8

__all__ = ["count_file_parts", "encode_file_parts", "split_points", "splits"]

PART_BYTES = 4 << 20
WINDOW = 1 << 16  # bytes searched for a safe cut near each split target
PR_SET_PDEATHSIG = 1  # prctl(2)

Task = tuple[str, int, int, Policy]  # path, start and end offsets, policy


def splits(source: Source, encoding: Encodes, jobs: int) -> TypeGuard[os.PathLike[str]]:
    """Whether to split ``source`` across ``jobs`` processes: only a file, and only with a pattern
    whose safe cuts are proven (any other pattern is encoded in one process)."""
    if jobs <= 1:
        return False
    if not isinstance(source, os.PathLike):
        raise ValueError(f"jobs={jobs} needs a file path (os.PathLike) to split the work")
    return encoding.ordinary.pattern in PROVEN_PATTERNS


def encode_file_parts(
    encoding: Encodes,
    path: os.PathLike[str],
    policy: Policy,
    *,
    jobs: int,
    progress: Callable[[int], object] | None = None,
) -> Iterator[list[int]]:
    """The ids of each part of the file, in order, encoded by ``jobs`` worker processes."""
    for packed in _run(encoding, path, policy, _encode_part, jobs, progress):
        yield array("I", packed).tolist()


def count_file_parts(
    encoding: Encodes, path: os.PathLike[str], policy: Policy, *, jobs: int
) -> int:
    """The number of ids of the file, counted by ``jobs`` worker processes."""
    return sum(_run(encoding, path, policy, _count_part, jobs, None))


def split_points(
    path: str | os.PathLike[str], encoding: Encodes, *, part_bytes: int | None = None
) -> Iterator[int]:
    """Byte offsets, from 0 to the file size, that are safe cuts a part's length apart.

    >>> import streamcodec, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = f.write_bytes(b"one two three four " * 4)
    >>> list(split_points(f, streamcodec.get_encoding("cl100k_base"), part_bytes=20))
    [0, 37, 75, 76]
    """
    part_bytes = part_bytes or PART_BYTES
    size = os.path.getsize(path)
    specials = frozenset(encoding.special_tokens)
    yield 0
    with open(path, "rb") as f:
        target = part_bytes
        while target < size:
            cut = _safe_cut_after(f, target, specials)
            if cut is None:
                target += WINDOW // 2  # a long run without a cut: look further on
            else:
                yield cut
                target = cut + part_bytes
    yield size


def _safe_cut_after(f: BinaryIO, offset: int, specials: frozenset[str]) -> int | None:
    """The first safe cut in the window at ``offset`` that no special token straddles."""
    longest = max(map(len, specials), default=0)
    finder = special_token_regex(specials) if specials else None
    f.seek(offset)
    data = f.read(WINDOW)
    skip = 0
    while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:  # inside a character
        skip += 1
    text = data[skip:].decode("utf-8", "surrogateescape")
    # Only cuts around which a special token would be seen whole (the end of the file ends them).
    end = len(text) if len(data) < WINDOW else len(text) - longest
    for match in safe_cut().finditer(text, max(1, longest), end):
        cut = match.start()
        if finder is None or not straddles(finder, text, cut, longest):
            return offset + skip + len(text[:cut].encode("utf-8", "surrogateescape"))
    return None


def _run(
    encoding: Encodes,
    path: os.PathLike[str],
    policy: Policy,
    work: Callable[[Task], Any],
    jobs: int,
    progress: Callable[[int], object] | None,
) -> Iterator[Any]:
    points = split_points(path, encoding)
    start = next(points)
    name = os.fspath(path)
    in_flight: collections.deque[tuple[int, Any]] = collections.deque()
    pool = multiprocessing.Pool(jobs, _init_worker, (encoding,))
    try:
        for end in points:
            task: Task = (name, start, end, policy)
            in_flight.append((end - start, pool.apply_async(work, (task,))))
            start = end
            if len(in_flight) >= 2 * jobs:
                yield _result(in_flight, progress)
        while in_flight:
            yield _result(in_flight, progress)
    finally:
        _end_pool(pool)


def _end_pool(pool: Any) -> None:
    """Terminate ``pool``; a stop signal arriving meanwhile is raised again once it is done.

    A signal handler that raises in the middle of ``terminate`` leaves the pool's threads
    waiting for each other, and the process hangs at exit.
    """
    if threading.current_thread() is not threading.main_thread():
        pool.terminate()
        pool.join()
        return
    caught: list[int] = []
    previous = {signum: signal.signal(signum, _record(caught)) for signum in _STOP_SIGNALS}
    try:
        pool.terminate()
        pool.join()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if caught:
        signal.raise_signal(caught[0])


def _record(caught: list[int]) -> Callable[[int, Any], None]:
    return lambda signum, frame: caught.append(signum)


def _result(in_flight: collections.deque[tuple[int, Any]], progress: Any) -> Any:
    size, pending = in_flight.popleft()
    result = pending.get()
    if progress is not None:
        progress(size)
    return result


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_worker_encoding: Encodes | None = None


def _init_worker(encoding: Encodes) -> None:
    global _worker_encoding
    _die_with_parent()
    _worker_encoding = encoding


def _die_with_parent() -> None:
    """Leave interrupts to the parent, which ends the pool (SIGTERM, quietly), and on Linux have
    the kernel send SIGTERM if the parent dies without doing so (SIGKILL): no orphans."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)  # not a handler inherited from the parent
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _part_ids(task: Task) -> Iterator[list[int]]:
    path, start, end, policy = task
    assert _worker_encoding is not None
    with open(path, "rb") as f:
        f.seek(start)
        blocks = read_blocks(f, limit=end - start)
        texts = decode_utf8(blocks, errors=policy.errors, name=path, offset=start)
        yield from encode_text_chunks(policy.stream_encoder(_worker_encoding), texts)


def _encode_part(task: Task) -> bytes:
    ids: list[int] = []
    for chunk in _part_ids(task):
        ids += chunk
    return array("I", ids).tobytes()


def _count_part(task: Task) -> int:
    return sum(map(len, _part_ids(task)))
