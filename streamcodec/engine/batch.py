"""Many ordinary texts at once, on every core: the batch pass and its pure twin.

A batch is a sequence of ``str``, of UTF-8 ``bytes``, a pyarrow ``string`` / ``large_string``
(or binary) array, or :class:`FlatTexts` (one run of UTF-8 and its offsets), the last two read
in place from their offsets and data buffers: no Python object per document. Each document's ids
equal ``Encoding.encode_ordinary(text)``; for bytes, those of ``text.decode("utf-8", errors)``:
invalid UTF-8 is refused, naming the document and the byte offset (``errors="strict"``),
replaced exactly as ``bytes.decode(errors="replace")`` does, or kept as the bytes
(``"surrogateescape"``: ``Encoding.encode_bytes``'s ids).

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> from streamcodec.engine.ordinary import OrdinaryEncoder
    >>> engine = OrdinaryEncoder(CL100K_PATTERN, {bytes([b]): b for b in range(256)})
    >>> encode_batch(engine, ["ab", b"c", ""], mode=LISTS, num_threads=2)[0]
    [[97, 98], [99], []]

On the fused path (``engine._fused``, ``engine/_fused_batch.h``) the GIL is released once for
the whole batch: native threads take documents from a shared counter, each with its own word
cache and id buffer, and the ids land in one uint32 array in document order (or in lists, or
are only counted); the array's buffer, once the array is freed, serves the encoder's next
batch. Elsewhere (the pure path, a pattern the native scanner does not know) the batch is cut
into one slice per thread, each encoded by :class:`OrdinaryEncoder` in turn: the same results,
with no speed promise. Both stop at a signal: the native pass checks between
blocks, the pure one between documents.
"""

from __future__ import annotations

import array
import os
import sys
import threading
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, pairwise
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn

from streamcodec.text.unicode import InvalidUTF8Error, encode_replacing_surrogates

if TYPE_CHECKING:
    from streamcodec.engine.ordinary import OrdinaryEncoder

__all__ = [
    "CAN_THREAD",
    "COUNTS",
    "IDS",
    "LISTS",
    "FlatTexts",
    "Texts",
    "default_threads",
    "encode_batch",
]

#: Whether this Python can start threads: Pyodide's cannot (emscripten), and every map over
#: threads or processes (``num_threads``, ``jobs``) then does its work in turn.
CAN_THREAD: Final = sys.platform != "emscripten"

#: What a batch gives: counts only, one uint32 array of ids (with offsets), or lists of ids.
COUNTS: Final = 0
IDS: Final = 1
LISTS: Final = 2
Mode = Literal[0, 1, 2]


class FlatTexts:
    """Documents as one run of UTF-8 bytes, document i at ``data[offsets[i]:offsets[i + 1]]``
    (``offsets``: native int64s, one more than the documents, as bytes): read in place, as the
    buffers of a pyarrow ``large_string`` array are (the corpus tool's JSON Lines reader gives
    them, ``corpus/_jsonl.c``). A plain class: not a tuple, which a batch would read as two
    documents, nor a dataclass (that module and the class cost a command's start 1.5 ms)."""

    __slots__ = ("data", "offsets")

    def __init__(self, offsets: bytes, data: bytes) -> None:
        self.offsets = offsets
        self.data = data


#: A batch: str or UTF-8 bytes documents, a pyarrow string array (any object then), FlatTexts.
Texts = Sequence[str] | Sequence[bytes] | Sequence[str | bytes] | Any

#: A document as the pure path reads it.
Document = str | bytes


def default_threads() -> int:
    """Every core this process may use (its CPU affinity where the system says, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def encode_batch(
    ordinary: OrdinaryEncoder,
    texts: Texts,
    *,
    mode: Mode,
    num_threads: int | None = None,
    errors: str = "strict",
    numpy: bool = True,
    watch: bool | None = None,
) -> tuple[Any, Any]:
    """Encode every document of ``texts`` (see the module docstring): ``(result, lengths)``
    where ``lengths[i + 1]`` holds document i's id count, or, for ``IDS``, the offsets (ids of
    document i at ``offsets[i]:offsets[i + 1]``). ``result``: for ``IDS`` a buffer of uint32
    ids, for ``LISTS`` a list of lists of ids, for ``COUNTS`` None. ``lengths`` is a numpy
    int64 array unless ``mode`` is ``LISTS`` or ``numpy`` is false (an ``array.array("q")``
    then: numpy is not needed). ``watch``: whether the calling thread checks for signals while
    the batch runs (None: if it is the main thread, the one Python gives signals to); a caller
    of short batches that checks between them passes False, and a one-thread batch then runs on
    the calling thread, no thread started and joined for it."""
    threads = default_threads() if num_threads is None else num_threads
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"num_threads={num_threads!r}: it is None (every core) or at least 1")
    if errors not in ("strict", "replace", "surrogateescape"):
        raise ValueError(
            f"errors={errors!r}: a batch takes errors='strict', 'replace' or 'surrogateescape'"
        )
    if isinstance(texts, (str, bytes)) and mode != LISTS:  # tiktoken's lists take one text's chars
        raise TypeError(
            f"texts is one {type(texts).__name__}: a batch is a sequence of texts ([text] for one)"
        )
    arrow = None
    if isinstance(texts, FlatTexts):
        arrow = _flat_buffers(texts)  # kept alive by `texts`
    elif type(texts).__module__.startswith("pyarrow"):
        texts, arrow = _arrow_buffers(texts)  # the array read is kept alive by `texts`
    if arrow is None and not isinstance(texts, Sequence):
        texts = list(texts)
    count = arrow[2] if arrow is not None else len(texts)
    lengths = _lengths(count, numpy=numpy and mode != LISTS)
    fused = ordinary._fused
    if fused is None:
        documents = _arrow_rows(arrow) if arrow is not None else texts
        return _encode_pure(ordinary, documents, mode, threads, errors, lengths), lengths
    from streamcodec.engine import _fused  # type: ignore[attr-defined]

    try:
        # only the main thread handles signals: another one runs a one-thread batch itself
        if watch is None:
            watch = threading.current_thread() is threading.main_thread()
        result = fused.encode_batch(texts, arrow, threads, errors, mode, lengths, watch)
    except _fused.InvalidDocument as exc:
        index, offset, reason = exc.args
        raise InvalidUTF8Error(offset, reason, f"texts[{index}]") from None
    return result, lengths


def _lengths(count: int, *, numpy: bool) -> Any:
    """``count + 1`` int64 zeros the pass writes into (numpy imported only when it is asked)."""
    if numpy:
        import numpy as np

        return np.zeros(count + 1, dtype=np.int64)
    return array.array("q", bytes(8 * (count + 1)))


def _arrow_buffers(texts: Any) -> tuple[Any, tuple[int, int, int, int, bool]]:
    """A pyarrow string or binary array (a chunked one combined first) and its (offsets
    address, data address, rows, first row, 64-bit offsets); a null row is refused, naming
    it."""
    import pyarrow as pa

    array: Any = texts
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    kind = array.type
    wide = pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    if not (wide or pa.types.is_string(kind) or pa.types.is_binary(kind)):
        raise TypeError(
            f"a pyarrow array of {kind} is no batch of texts: it is (large_)string or "
            "(large_)binary (cast it: array.cast(pyarrow.large_string()))"
        )
    if array.null_count:
        row = array.is_null().to_pylist().index(True)
        _raise_null(row)
    _, offsets, data = array.buffers()
    return array, (offsets.address, data.address if data else 0, len(array), array.offset, wide)


def _flat_buffers(texts: FlatTexts) -> tuple[int, int, int, int, bool]:
    """:func:`_arrow_buffers`' tuple for :class:`FlatTexts`."""
    import ctypes

    def address(data: bytes) -> int:
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0

    return address(texts.offsets), address(texts.data), len(texts.offsets) // 8 - 1, 0, True


def _raise_null(row: int) -> NoReturn:
    raise ValueError(
        f"texts[{row}] is null: every document of a batch is a text (drop the nulls "
        "first: pyarrow.compute.drop_null(array))"
    )


def _arrow_rows(arrow: tuple[int, int, int, int, bool]) -> list[bytes]:
    """The rows of an arrow array (:func:`_arrow_buffers`) as bytes, for the pure path."""
    import ctypes

    offsets_at, data_at, rows, first, wide = arrow
    width = 8 if wide else 4
    table = memoryview(ctypes.string_at(offsets_at + first * width, (rows + 1) * width))
    bounds = table.cast("q" if wide else "i").tolist()
    data = ctypes.string_at(data_at, bounds[-1]) if data_at else b""
    return [data[start:end] for start, end in pairwise(bounds)]


def _encode_pure(
    ordinary: OrdinaryEncoder,
    documents: Sequence[Document],
    mode: Mode,
    threads: int,
    errors: str,
    lengths: Any,
) -> Any:
    """The pure twin: one slice of documents per thread, each encoded in turn."""
    size = -(-len(documents) // threads) if documents else 1
    slices = [
        range(start, min(start + size, len(documents))) for start in range(0, len(documents), size)
    ]
    stop = threading.Event()

    def encode_slice(rows: range) -> list[list[int]]:
        return [_encode_document(ordinary, documents, row, errors, stop) for row in rows]

    encoded: list[list[int]] = []
    for part in _thread_map(encode_slice, slices, stop):
        encoded += part
    counts = [len(ids) for ids in encoded]
    lengths[1:] = array.array("q", accumulate(counts) if mode == IDS else counts)
    if mode == COUNTS:
        return None
    if mode == LISTS:
        return encoded
    return array.array("I", chain.from_iterable(encoded))


def _encode_document(
    ordinary: OrdinaryEncoder,
    documents: Sequence[Document],
    row: int,
    errors: str,
    stop: threading.Event,
) -> list[int]:
    """One document's ids, as ``Encoding.encode_ordinary`` gives them (bytes decoded first)."""
    if stop.is_set():
        raise _Stopped
    text = documents[row]
    if isinstance(text, bytes):
        try:
            decoded = text.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            raise InvalidUTF8Error(exc.start, exc.reason, f"texts[{row}]") from None
        # Escapes are the bytes they stand for (Encoding.encode_bytes); strict and replace
        # leave no surrogate.
        return ordinary.encode(decoded, "surrogateescape")
    if not isinstance(text, str):
        raise TypeError(f"texts[{row}] is {type(text).__name__}: each text is a str or UTF-8 bytes")
    return encode_replacing_surrogates(
        lambda whole, start, end: ordinary.encode(whole, start=start, end=end), text
    )


class _Stopped(Exception):
    """A slice left unfinished because the batch was stopped."""


def _thread_map(
    function: Any, slices: list[range], stop: threading.Event
) -> Iterable[list[list[int]]]:
    """``map(function, slices)`` on one thread per slice, in order. On any exception (a bad
    document, Ctrl-C in the waiting thread) the others stop at their next document."""
    if len(slices) <= 1 or not CAN_THREAD:
        return [function(rows) for rows in slices]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(len(slices))
    try:
        futures = [pool.submit(function, rows) for rows in slices]
        return [future.result() for future in futures]
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
