"""A shard on disk, whatever the trainer's format: ids streamed into one file, side files last.

Every format (:mod:`streamcodec.corpus.writers`) is a :class:`TokenShard` subclass, or speaks
its protocol (``with`` block, :meth:`~TokenShard.add`, :meth:`~TokenShard.end_document`,
:meth:`~TokenShard.add_documents`, ``paths``, ``tokens``, ``documents``). A shard is its ids, one
document after another, each between the corpus's boundary tokens (:class:`Layout`: ``bos``
before, ``eos`` after), little-endian in the format's type; a fixed-size header (the ``.npy``
one, llm.c's) is written last over a placeholder of its size, since it holds the length, and
the side files (offsets, an index, the kept fields) once the ids are all in. So memory does not
grow with the shard's tokens, only with its documents (one end each). Each file is replaced
whole or not at all (:mod:`streamcodec.atomicfile`), so an interrupted shard leaves nothing.

The manifest lists each file's SHA-256s (``sha256``, once the ``with`` block ends), fed the
bytes as they are written, never read back (the last shard's read-back was the run's serial
tail, 27-38 ms of a 45 MB run): the side files' whole, the ids' file as it grows. A format's
header (the ``.npy`` one, llm.c's) holds the ids' count, known only last, and SHA-256 is chained
from a file's first byte: so such an ids' file is listed with two digests, of its
``header_bytes`` (``header_sha256``, hashed when written, last) and of the bytes after them
(``sha256``, hashed as they come). A file with no header has ``header_bytes`` 0: its
``sha256`` is the whole file's, as ``sha256sum`` gives it.

    >>> import os, tempfile
    >>> from streamcodec.corpus.writers import shard_format
    >>> folder, layout = tempfile.mkdtemp(), Layout("nanogpt", "uint16", (), (9,))
    >>> with shard_format("nanogpt")(folder, 0, layout) as shard:
    ...     shard.add_documents([[1, 2, 3], [4]])
    >>> shard.tokens, shard.documents, open(shard.paths[0], "rb").read()
    (6, 2, b'\\x01\\x00\\x02\\x00\\x03\\x00\\t\\x00\\x04\\x00\\t\\x00')
"""

from __future__ import annotations

import array
import contextlib
import errno
import functools
import hashlib
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, BinaryIO, ClassVar, NamedTuple, TypeAlias

from streamcodec.atomicfile import atomic_output, start_writeback

__all__ = [
    "FIELDS",
    "Ids",
    "Layout",
    "TokenShard",
    "as_bytes",
    "close_whole",
    "file_digests",
    "file_records",
    "kept_fields",
    "split_flat",
]

TYPECODES = {"uint16": "H", "uint32": "I", "int32": "i", "int64": "q", "uint64": "Q"}
Fields = dict[str, Any]
Ids: TypeAlias = "memoryview | array.array[int]"  # a run of ids: an array, or a view
Fields_ = Sequence[Fields | None] | None  # each document's kept fields, or none kept
_WRITEBACK = 8 << 20  # bytes of ids written between two starts of their writeback to disk
FIELDS = ".fields.jsonl"  # the kept fields of a shard's documents, one JSON object per line


class Layout(NamedTuple):
    """What every shard of a corpus shares on disk: the format, the ids' type, the boundary
    tokens around each document, the document fields kept, and the encoding's name."""

    format: str
    dtype: str
    bos: tuple[int, ...] = ()
    eos: tuple[int, ...] = ()
    keep: tuple[str, ...] = ()
    label: str = ""


def as_bytes(values: Iterable[int], dtype: str) -> bytes:
    """Little-endian bytes; ``OverflowError`` for a value the type cannot hold (never wraps)."""
    data = array.array(TYPECODES[dtype], values)
    if sys.byteorder == "big":
        data.byteswap()
    return data.tobytes()


class TokenShard:
    """Shard ``index`` of a corpus, written into ``folder`` as ``shard_NNNNN`` + each of the
    format's ``suffixes`` (the ids' file first): :meth:`add` ids and :meth:`end_document` after
    each document, or :meth:`add_documents`; every file is in place once the ``with`` block
    ends without an error."""

    suffixes: ClassVar[tuple[str, ...]]
    header_size: ClassVar[int] = 0

    def __init__(self, folder: str, index: int, layout: Layout) -> None:
        suffixes = self.suffixes + ((FIELDS,) if layout.keep else ())
        self.paths = tuple(os.path.join(folder, f"shard_{index:05d}{s}") for s in suffixes)
        self.layout = layout
        self.tokens = 0
        self.documents = 0
        self.ends: list[int] = []  # where each document ends, in ids
        self.fields: list[Fields] = []  # the kept fields of each document, if any are kept
        self._typecode = TYPECODES[layout.dtype]
        self._width = array.array(self._typecode).itemsize  # of an id, in bytes
        self._stack = contextlib.ExitStack()
        self._out: BinaryIO | None = None
        self._open = False  # a document is in hand (its bos written)
        self._digest = hashlib.sha256()  # of the ids as written (after any header)
        # each file's SHA-256s as its manifest record lists them, once the ``with`` block ended
        self.sha256: list[dict[str, Any]] | None = None
        self._digests: list[dict[str, Any]] = []
        self._unsynced = 0  # bytes of ids written since their writeback last started
        self._buffer = bytearray()  # a task's ids joined with the boundaries (add_flat)

    def __enter__(self) -> TokenShard:
        self._out = self._stack.enter_context(atomic_output(self.paths[0]))
        self._out.write(bytes(self.header_size))
        return self

    def add(self, ids: Iterable[int]) -> None:
        """Append ids to the document in hand (its ``bos`` first, for the first ids)."""
        self._write(array.array(self._typecode, self._begin()) + self._packed(ids))

    def end_document(self, fields: Fields | None = None) -> None:
        """End the document in hand: its ``eos``, its end and its kept ``fields``."""
        self._write(array.array(self._typecode, [*self._begin(), *self.layout.eos]))
        self._open = False
        self._ended(self.tokens, fields)

    def add_documents(
        self, documents: Iterable[Sequence[int]], fields: Iterable[Fields | None] | None = None
    ) -> None:
        """Append whole documents, each between the boundaries, in one write (as many
        :meth:`add` and :meth:`end_document` calls would)."""
        data = array.array(self._typecode)
        kept = iter(fields) if fields is not None else None
        for ids in documents:
            data.extend(self.layout.bos)
            data.extend(self._packed(ids))
            data.extend(self.layout.eos)
            self._ended(self.tokens + len(data), None if kept is None else next(kept))
        self._write(data)

    def add_flat(self, ids: Ids, offsets: array.array[int], fields: Fields_ = None) -> None:
        """Append whole documents given as one run of ``ids`` (an ``array.array`` or a buffer
        of ints, document i at ``ids[offsets[i]:offsets[i + 1]]``), exactly as
        :meth:`add_documents` of each document would, with no step per id: ids of the shard's
        type are joined with the boundaries in one copy, without numpy (importing it,
        0.08-0.28 s, held up a command's first shard); others are converted by numpy in a few
        whole-array steps where it is installed."""
        if len(offsets) < 2:
            return
        data: Any
        if memoryview(ids).format == self._typecode and sys.byteorder == "little":
            data, sizes = self._joined(ids, offsets)
        else:
            try:
                data, sizes = self._converted(ids, offsets)
            except ImportError:  # no numpy: document by document
                self.add_documents(split_flat(ids, offsets), fields)
                return
        self.ends.extend(
            itertools.islice(itertools.accumulate(sizes, initial=self.tokens), 1, None)
        )
        self.documents += len(sizes)
        if self.layout.keep:
            kept = fields if fields is not None else [None] * len(sizes)
            self.fields.extend(dict.fromkeys(self.layout.keep) if f is None else f for f in kept)
        self._write(data)

    def _joined(self, ids: Ids, offsets: array.array[int]) -> tuple[Any, list[int]]:
        """:meth:`add_flat`'s ids of the shard's type, each document between the boundaries, as
        one run of bytes, and each document's size in ids. The native ``join_documents`` copies
        them into the writer's own buffer (kept for its next task: no fresh memory to fault
        in), hashed and written by one call each: as parts (three a document, 30,000 in 45 MB)
        they took a call each. The reference, without it: the parts joined."""
        view = memoryview(ids).cast("B")
        bos = array.array(self._typecode, self.layout.bos).tobytes()
        eos = array.array(self._typecode, self.layout.eos).tobytes()
        bounds, width = offsets.tolist(), self._width
        extra = len(self.layout.bos) + len(self.layout.eos)
        sizes = [end - start + extra for start, end in itertools.pairwise(bounds)]
        join = _native_join()
        if join is None:
            runs = itertools.pairwise(bounds)
            return b"".join(
                p for s, e in runs for p in (bos, view[s * width : e * width], eos)
            ), sizes
        need = sum(sizes) * width
        if len(self._buffer) < need:
            self._buffer = bytearray(need)
        written = join(view, offsets, width, bos, eos, self._buffer)
        return memoryview(self._buffer)[:written], sizes

    def _converted(self, ids: Ids, offsets: array.array[int]) -> tuple[Any, list[int]]:
        """:meth:`add_flat`'s ids of another type, by numpy (``ImportError`` without it)."""
        import numpy as np

        values = np.frombuffer(ids, np.dtype(memoryview(ids).format))
        bounds = np.frombuffer(offsets, np.int64)
        target = np.dtype(self._typecode).newbyteorder("<")
        _check_fits(values, target)
        bos, eos = self.layout.bos, self.layout.eos
        sizes = np.diff(bounds) + (len(bos) + len(eos))
        ends = np.cumsum(sizes)
        out = np.empty(int(ends[-1]), dtype=target)
        if bos or eos:
            starts = ends - sizes
            at = [starts + k for k in range(len(bos))] + [
                ends - len(eos) + k for k in range(len(eos))
            ]
            ids_at = np.ones(len(out), dtype=bool)
            for where, token in zip(at, (*bos, *eos), strict=True):
                out[where] = token
                ids_at[where] = False
            out[ids_at] = values
        else:
            out[:] = values
        return out, sizes.tolist()

    def _begin(self) -> tuple[int, ...]:
        started, self._open = self._open, True
        return () if started else self.layout.bos

    def _packed(self, ids: Iterable[int]) -> array.array[int]:
        # A same-kind array is copied whole; the engine's uint32s are narrowed by numpy where
        # it is installed (50x faster than id by id); any other is converted id by id. Either
        # way an id the type cannot hold is an OverflowError, never wrapped.
        if getattr(ids, "typecode", None) == self._typecode:
            return ids  # type: ignore[return-value]
        if isinstance(ids, array.array) and (narrowed := _narrowed(ids, self._typecode)):
            return narrowed
        return array.array(self._typecode, list(ids))

    def _ended(self, end: int, fields: Fields | None) -> None:
        self.ends.append(end)
        self.documents += 1
        if self.layout.keep:
            self.fields.append(dict.fromkeys(self.layout.keep) if fields is None else fields)

    def _write(self, data: Any) -> None:
        """Write ids of the shard's type, and hash them: an ``array.array`` (native order), or a
        numpy array, bytes or a buffer already little-endian. hashlib releases the GIL for a
        buffer over 2 kB."""
        assert self._out is not None
        if sys.byteorder == "big" and isinstance(data, array.array):
            data = array.array(data.typecode, data)
            data.byteswap()
        view = memoryview(data).cast("B")
        self._out.write(view)
        self._digest.update(view)
        nbytes = view.nbytes
        self.tokens += nbytes // self._width
        self._unsynced += nbytes
        if self._unsynced >= _WRITEBACK:  # on disk while the run goes on: a short fsync last
            self._out.flush()
            start_writeback(self._out.fileno())
            self._unsynced = 0

    def header(self) -> bytes:
        """The header of the ids' file, now that the ids are all in (``header_size`` bytes)."""
        return b""

    def index_files(self) -> Iterator[bytes]:
        """The content of each of the format's files after the ids' (``suffixes[1:]``)."""
        return iter(())

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        close_whole(self._stack, kind, exc, tb, self._finish)
        if kind is None:
            self.sha256 = self._digests

    def _finish(self) -> None:
        assert self._out is not None
        header = b""
        if self.header_size:
            header = self.header()
            self._out.flush()
            if os.pwrite(self._out.fileno(), header, 0) != len(header):  # over the placeholder
                raise OSError(errno.EIO, "the header was written short", self.paths[0])
        self._out.flush()
        start_writeback(self._out.fileno())  # the ids' last on their way while the rest is made
        self._digests.append(_digests(header, self._digest))
        kept = [kept_fields(self.fields)] if self.layout.keep else []
        for path, data in zip(
            self.paths[1:], itertools.chain(self.index_files(), kept), strict=True
        ):
            with atomic_output(path) as f:
                f.write(data)
            self._digests.append(_digests(b"", hashlib.sha256(data)))


def _digests(header: bytes, rest: Any) -> dict[str, Any]:
    """A file's digests as its manifest record lists them: its ``header`` (none: b"") and the
    SHA-256 ``rest`` of the bytes after it."""
    return {
        "sha256": rest.hexdigest(),
        "header_bytes": len(header),
        "header_sha256": hashlib.sha256(header).hexdigest() if header else None,
    }


@functools.cache
def _native_join() -> Callable[..., int] | None:
    """``_jsonl.join_documents``, where the corpus tool's native helpers are built."""
    try:
        from streamcodec.corpus import _jsonl  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _jsonl.join_documents  # type: ignore[no-any-return]


def _narrowed(ids: array.array[int], typecode: str) -> array.array[int] | None:
    """``ids`` as an array of ``typecode``, by numpy; None without numpy (or ids)."""
    try:
        import numpy
    except ImportError:
        return None
    if not ids:
        return None
    values = numpy.frombuffer(ids, numpy.dtype(ids.typecode))
    target = numpy.dtype(typecode)
    _check_fits(values, target)
    return array.array(typecode, values.astype(target).tobytes())


def _check_fits(values: Any, target: Any) -> None:
    """``OverflowError`` naming an id of the numpy array ``values`` that ``target`` cannot
    hold (never wrapped)."""
    import numpy

    if not len(values):
        return
    low, high = int(values.min()), int(values.max())
    if low < numpy.iinfo(target).min or high > numpy.iinfo(target).max:
        raise OverflowError(f"id {high if high > 0 else low} does not fit in {target.name}")


def split_flat(ids: Ids, offsets: array.array[int]) -> list[array.array[int]]:
    """One run of ids cut into its documents' (``add_flat``'s form to ``add_documents``')."""
    if not isinstance(ids, array.array):
        view = memoryview(ids)
        ids = array.array(view.format)
        ids.frombytes(view.cast("B"))
    return [ids[start:end] for start, end in itertools.pairwise(offsets)]


def close_whole(
    stack: contextlib.ExitStack[Any],
    kind: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
    finish: Callable[[], None],
) -> None:
    """End a shard's ``with`` block: after an error (in the block, or in ``finish``, which
    writes the header and the side files) no file of ``stack`` is kept; else all are."""
    if kind is not None:
        stack.__exit__(kind, exc, tb)
        return
    try:
        finish()
    except BaseException:
        stack.__exit__(*sys.exc_info())
        raise
    stack.__exit__(None, None, None)


def kept_fields(fields: list[Fields]) -> bytes:
    """The kept fields as JSON Lines, one object per document (the ``.fields.jsonl`` file)."""
    return b"".join(json.dumps(f, ensure_ascii=False).encode("utf-8") + b"\n" for f in fields)


def file_digests(path: str, header_bytes: int = 0) -> dict[str, Any]:
    """The digests of the file at ``path`` as a manifest record lists them, read back (its
    first ``header_bytes`` a header, hashed apart)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        header, rest, offset = os.pread(fd, header_bytes, 0), hashlib.sha256(), header_bytes
        while block := os.pread(fd, 1 << 20, offset):  # GIL released: read, hash
            rest.update(block)
            offset += len(block)
    finally:
        os.close(fd)
    return _digests(header, rest)


def file_records(
    paths: Sequence[str], digests: Sequence[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Each file of a shard as the manifest lists it: its name, size and SHA-256s (``digests``:
    the shard's, hashed as written; None: each file read back for them, whole)."""
    got = digests if digests is not None else [file_digests(p) for p in paths]
    return [
        {"name": os.path.basename(p), "bytes": os.path.getsize(p), **digest}
        for p, digest in zip(paths, got, strict=True)
    ]
