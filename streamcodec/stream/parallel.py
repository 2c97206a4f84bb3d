"""Parallel encoding of one file: cut it at safe cuts, encode the parts in worker threads.

The file is split into parts of about ``PART_BYTES``, each ending at a safe cut (rules 1 to 5
of :mod:`streamcodec.stream.cuts`) that no special token straddles. Encoding text in two parts
at a safe cut gives the ids of the whole, so the ids of the parts, in order, are exactly one
job's. The parts go through :func:`~streamcodec.stream.workers.ordered_map`, at most ``2 * jobs``
in flight, so memory stays bounded however large the file:

- on the native path, ``jobs`` threads share the one encoding (the compiled core and scanner
  release the GIL on long texts): nothing is pickled, and a closed run stops within a block;
- on the pure-Python path, ``jobs`` processes, each with a pipe of its own: the encoding is
  pickled once per worker (a registered encoding as its name; a forked worker finds it loaded).

Either way a part's ids wait as packed ``uint32`` (4 bytes an id, not a list's 8 + an int).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import os
from array import array
from collections.abc import Callable, Generator, Iterator
from typing import Any, BinaryIO, TypeGuard

from streamcodec.arguments import whole_number
from streamcodec.stream.cuts import PROVEN_PATTERNS, may_cut, safe_cut
from streamcodec.stream.encoder import Encodes, Policy, count_text_chunks, encode_text_chunks
from streamcodec.stream.sources import Source, SourceChangedError, file_blocks, version
from streamcodec.stream.workers import cancelled, ordered_map
from streamcodec.text.specials import special_token_regex, straddles
from streamcodec.text.unicode import decode_utf8

__all__ = ["NoCutFound", "count_file_parts", "encode_file_parts", "split_points", "splits"]

PART_BYTES = 4 << 20
WINDOW = 1 << 16  # bytes searched for a safe cut near each split target

Task = tuple[str, int, int, Policy]  # path, start and end offsets, policy


def splits(source: Source, encoding: Encodes, jobs: int) -> TypeGuard[os.PathLike[str]]:
    """Whether to split ``source`` across ``jobs`` workers: only a file, and only with a pattern
    whose safe cuts are proven (any other pattern, or an open model's rules, is encoded in one
    process)."""
    if whole_number("jobs", jobs, least=1) == 1:
        return False
    if not isinstance(source, os.PathLike):
        raise ValueError(f"jobs={jobs} needs a file path (os.PathLike) to split the work")
    # An open model's rules (NFC, added tokens: engine/model.py) are not in the proven cuts.
    ruled = getattr(encoding.ordinary, "cut_allowed", None) is not None
    return encoding.ordinary.pretokenizer.named in PROVEN_PATTERNS and not ruled


def encode_file_parts(
    encoding: Encodes,
    path: os.PathLike[str],
    policy: Policy,
    *,
    jobs: int,
    progress: Callable[[int], object] | None = None,
) -> Iterator[list[int]]:
    """The ids of each part of the file, in order, encoded by ``jobs`` workers."""
    for ids in _run(encoding, path, policy, _encode_part, jobs, progress):
        yield ids.tolist()


def count_file_parts(
    encoding: Encodes,
    path: os.PathLike[str],
    policy: Policy,
    *,
    jobs: int,
    limit: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> int | None:
    """The number of ids of the file, counted by ``jobs`` workers; with ``limit``, None as
    soon as the count is sure to pass it (a stretch without a safe cut longer than ``limit``
    tokens can be settles it before it is read whole: see :func:`split_points`)."""
    stretch = None if limit is None else limit * _longest_token(encoding)
    total = 0
    try:
        counts = _run(encoding, path, policy, _count_part, jobs, progress, stretch)
        with contextlib.closing(counts):
            for n in counts:
                total += n
                if limit is not None and total > limit:
                    return None
    except NoCutFound:
        return None
    return total


class NoCutFound(Exception):
    """More bytes than asked for in a row have no safe cut (:func:`split_points`)."""


def _longest_token(encoding: Encodes) -> int:
    """The bytes of the longest token, special ones included."""
    specials = (len(token.encode("utf-8", "surrogatepass")) for token in encoding.special_tokens)
    return max(encoding.ordinary.longest_token, *specials)


def split_points(
    path: str | os.PathLike[str],
    encoding: Encodes,
    *,
    part_bytes: int | None = None,
    longest_stretch: int | None = None,
) -> Iterator[int]:
    """Byte offsets, from 0 to the file size, that are safe cuts a part's length apart.

    With ``longest_stretch``, :class:`NoCutFound` once more bytes than that in a row have been
    searched for a cut in vain (without it, a file of one endless pre-token is searched to its
    end).

    >>> import streamcodec, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = f.write_bytes(b"one two three four " * 4)
    >>> list(split_points(f, streamcodec.get_encoding("cl100k_base"), part_bytes=20))
    [0, 37, 75, 76]
    """
    part_bytes = part_bytes or PART_BYTES
    size = os.path.getsize(path)
    specials = frozenset(encoding.special_tokens)
    # A window keeps a margin of up to 4 bytes a character of the longest special token.
    if 4 * max(map(len, specials), default=0) + 3 >= WINDOW // 2:
        longest_stretch = None
    yield 0
    with open(path, "rb") as f:
        target = part_bytes
        vain = None  # where the windows found no cut began
        while target < size:
            cut = _safe_cut_after(f, target, specials)
            if cut is not None:
                yield cut
                target, vain = cut + part_bytes, None
                continue
            # A long run without a cut: look further on. The windows overlap by half, so
            # [vain + WINDOW / 2, target) has none.
            vain = target if vain is None else vain
            target += WINDOW // 2
            stretch = target - vain - WINDOW // 2
            if longest_stretch is not None and stretch > longest_stretch:
                raise NoCutFound(f"{os.fspath(path)}: no safe cut in {stretch:,} bytes")
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
    lo = max(1, longest)
    if not may_cut(text, lo, end):
        return None
    for match in safe_cut().finditer(text, lo, end):
        cut = match.start()
        if finder is None or not straddles(finder, text, cut, longest):
            return offset + skip + len(text[:cut].encode("utf-8", "surrogateescape"))
    return None


def in_processes(encoding: Encodes) -> bool:
    """Whether ``encoding``'s workers must be processes: the pure-Python path holds the GIL."""
    return encoding.ordinary.backend != "native"


Work = Callable[[Encodes, Task], Any]


def _run(
    encoding: Encodes,
    path: os.PathLike[str],
    policy: Policy,
    work: Work,
    jobs: int,
    progress: Callable[[int], object] | None,
    longest_stretch: int | None = None,
) -> Generator[Any, None, None]:
    processes = in_processes(encoding)
    sizes: collections.deque[int] = collections.deque()  # of the parts in flight, in order

    def tasks() -> Iterator[Task]:
        points = split_points(path, encoding, longest_stretch=longest_stretch)
        start = next(points)
        for end in points:
            sizes.append(end - start)
            yield os.fspath(path), start, end, policy
            start = end

    part = functools.partial(work, encoding)
    before = version(os.stat(path))
    with contextlib.closing(ordered_map(part, tasks(), jobs=jobs, processes=processes)) as done:
        for result in done:
            if progress is not None:
                progress(sizes.popleft())
            yield result
    if version(os.stat(path)) != before:  # a part read short says so at once; this, the rest
        raise SourceChangedError(os.fspath(path))


def _part_texts(task: Task) -> Iterator[str]:
    path, start, end, policy = task
    with open(path, "rb") as f:
        f.seek(start)
        # A closed run stops a worker thread within a block (processes are killed instead).
        blocks = itertools.takewhile(_going, file_blocks(f, path, limit=end - start))
        yield from decode_utf8(blocks, errors=policy.errors, name=path, offset=start)


def _going(_: object) -> bool:
    return not cancelled()


def _encode_part(encoding: Encodes, task: Task) -> array[int]:
    """The part's ids, packed as they come: a tenth of a list's memory, or of its pickle."""
    ids = array("I")
    for chunk in encode_text_chunks(task[3].stream_encoder(encoding), _part_texts(task)):
        ids.extend(chunk)
    return ids


def _count_part(encoding: Encodes, task: Task) -> int:
    return sum(count_text_chunks(task[3].stream_encoder(encoding), _part_texts(task)))
