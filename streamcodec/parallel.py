"""Parallel encoding of one file: cut it at safe cuts, encode the parts in worker processes.

The file is split into parts of about ``PART_BYTES``, each ending at a safe cut (the rules of
:mod:`streamcodec.stream`) that no special token straddles. Encoding text in two parts at a safe
cut gives the ids of the whole, so the ids of the parts, in order, are exactly one job's. Workers
get the encoding once: by name when it is a registered one (a forked worker finds it loaded),
else pickled. Ids come back as packed ``uint32``; at most ``2 * jobs`` parts are in flight, so
memory stays bounded however large the file.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from array import array
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from streamcodec.stream import SAFE_CUT, Policy, decode_utf8, encode_text_chunks

if TYPE_CHECKING:
    from streamcodec.encoding import Encoding

__all__ = ["count_file_parts", "encode_file_parts", "split_points"]

PART_BYTES = 4 << 20
WINDOW = 1 << 16  # bytes searched for a safe cut near each split target
BLOCK = 1 << 20
PR_SET_PDEATHSIG = 1  # prctl(2)

Task = tuple[str, int, int, Policy]  # path, start and end offsets, policy


def encode_file_parts(
    encoding: Encoding,
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
    encoding: Encoding, path: os.PathLike[str], policy: Policy, *, jobs: int
) -> int:
    """The number of ids of the file, counted by ``jobs`` worker processes."""
    return sum(_run(encoding, path, policy, _count_part, jobs, None))


def split_points(
    path: str | os.PathLike[str], encoding: Encoding, *, part_bytes: int | None = None
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
    longest = max(map(len, encoding.special_tokens), default=0)
    yield 0
    with open(path, "rb") as f:
        target = part_bytes
        while target < size:
            cut = _safe_cut_after(f, target, encoding.special_tokens, longest)
            if cut is None:
                target += WINDOW // 2  # a long run without a cut: look further on
            else:
                yield cut
                target = cut + part_bytes
    yield size


def _safe_cut_after(f: BinaryIO, offset: int, specials: dict[str, int], longest: int) -> int | None:
    """The first safe cut in the window at ``offset`` that no special token straddles."""
    f.seek(offset)
    data = f.read(WINDOW)
    skip = 0
    while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:  # inside a character
        skip += 1
    text = data[skip:].decode("utf-8", "surrogateescape")
    # Only cuts around which a special token would be seen whole (the end of the file ends them).
    end = len(text) if len(data) < WINDOW else len(text) - longest
    for match in SAFE_CUT.finditer(text, max(1, longest), end):
        cut = match.start()
        if not any(_straddles(text, token, cut) for token in specials):
            return offset + skip + len(text[:cut].encode("utf-8", "surrogateescape"))
    return None


def _straddles(text: str, token: str, cut: int) -> bool:
    found = text.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1)
    return 0 <= found < cut


def _run(
    encoding: Encoding,
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
    with multiprocessing.Pool(jobs, _init_worker, (_reference(encoding),)) as pool:
        for end in points:
            task: Task = (name, start, end, policy)
            in_flight.append((end - start, pool.apply_async(work, (task,))))
            start = end
            if len(in_flight) >= 2 * jobs:
                yield _result(in_flight, progress)
        while in_flight:
            yield _result(in_flight, progress)


def _result(in_flight: collections.deque[tuple[int, Any]], progress: Any) -> Any:
    size, pending = in_flight.popleft()
    result = pending.get()
    if progress is not None:
        progress(size)
    return result


def _reference(encoding: Encoding) -> str | Encoding:
    """The encoding's registered name if ``get_encoding`` returned it, else the encoding."""
    from streamcodec.registry import loaded_encoding

    # Asking get_encoding could load a vocabulary just to find it is another object.
    return encoding.name if loaded_encoding(encoding.name) is encoding else encoding


_worker_encoding: Encoding | None = None


def _init_worker(reference: str | Encoding) -> None:
    global _worker_encoding
    _die_with_parent()
    if isinstance(reference, str):
        from streamcodec.registry import get_encoding

        reference = get_encoding(reference)
    _worker_encoding = reference


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
        texts = decode_utf8(_blocks(f, end - start), errors=policy.errors, name=path, offset=start)
        yield from encode_text_chunks(policy.stream_encoder(_worker_encoding), texts)


def _blocks(f: BinaryIO, size: int) -> Iterator[bytes]:
    while size > 0:
        block = f.read(min(BLOCK, size))
        if not block:
            return
        size -= len(block)
        yield block


def _encode_part(task: Task) -> bytes:
    ids: list[int] = []
    for chunk in _part_ids(task):
        ids += chunk
    return array("I", ids).tobytes()


def _count_part(task: Task) -> int:
    return sum(map(len, _part_ids(task)))
