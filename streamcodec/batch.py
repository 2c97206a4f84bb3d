"""``Encoding``'s batch methods: many texts at once, on every core.

:class:`BatchMethods` is a base class of :class:`streamcodec.Encoding`. Every method runs on one
machine, :func:`streamcodec.engine.batch.encode_batch` (the GIL released once for the whole
batch on the compiled path, native threads each with its own word cache):

* :meth:`~BatchMethods.encode_ordinary_batch_to_numpy`: all ids in one uint32 array, with the
  offsets of each text's ids;
* :meth:`~BatchMethods.count_tokens_batch`: the number of ids of each text, building no ids;
* :meth:`~BatchMethods.encode_ordinary_batch`, :meth:`~BatchMethods.encode_batch`: tiktoken's
  list-returning methods, with tiktoken's signatures.

The first two take str, UTF-8 bytes, or a pyarrow string array read in place.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> ids, offsets = enc.encode_ordinary_batch_to_numpy(["hello world", "", "hi"])
    >>> ids.tolist(), offsets.tolist()
    ([15339, 1917, 6151], [0, 2, 2, 3])
    >>> enc.count_tokens_batch([b"hello world", b"hi"]).tolist()
    [2, 1]
"""

from __future__ import annotations

import array
from typing import TYPE_CHECKING, Any, Protocol

from streamcodec.engine.batch import COUNTS, IDS, LISTS, FlatTexts, Texts, encode_batch
from streamcodec.text.specials import (
    AllowedSpecial,
    DisallowedSpecial,
    allowed_special_matches,
    refuse_disallowed,
    special_token_regex,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from streamcodec.engine.ordinary import OrdinaryEncoder

__all__ = ["BatchMethods", "Batchable", "FlatTexts", "encode_flat_uint32"]


class Batchable(Protocol):
    """What the batch methods need of an encoding (:class:`streamcodec.Encoding` is one)."""

    @property
    def ordinary(self) -> OrdinaryEncoder: ...

    @property
    def special_tokens(self) -> dict[str, int]: ...

    def _special_policy(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]: ...


class BatchMethods:
    """The batch methods of :class:`streamcodec.Encoding` (the module docstring)."""

    def encode_ordinary_batch_to_numpy(
        self: Batchable, texts: Texts, *, num_threads: int | None = None, errors: str = "strict"
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """``(ids, offsets)``: the ids of every text in one uint32 array, those of ``texts[i]``
        at ``ids[offsets[i]:offsets[i + 1]]`` (``offsets``: int64, ``len(texts) + 1``). Each
        text's ids are :meth:`encode_ordinary`'s (special tokens are ordinary text, as in
        tiktoken's ``encode_ordinary_batch``).

        ``texts``: a sequence of str, or of UTF-8 bytes, or a pyarrow ``string`` /
        ``large_string`` array (read in place; a null row is an error naming it). Bytes that
        are not UTF-8 raise :class:`~streamcodec.text.unicode.InvalidUTF8Error` naming the text
        and the byte offset with ``errors="strict"``; ``"replace"`` reads them as
        ``bytes.decode(errors="replace")`` does, ``"surrogateescape"`` keeps them as the bytes
        (:meth:`encode_bytes`'s ids). ``num_threads``: None for every core this process may
        use (a thread for each 64 kB of text at most). Ctrl-C stops the batch within a second.
        """
        import numpy as np

        ids, offsets = encode_batch(
            self.ordinary, texts, mode=IDS, num_threads=num_threads, errors=errors
        )
        return np.frombuffer(ids, dtype=np.uint32), offsets

    def count_tokens_batch(
        self: Batchable, texts: Texts, *, num_threads: int | None = None, errors: str = "strict"
    ) -> npt.NDArray[np.int64]:
        """The number of ids of each text, as an int64 array, building no ids: ``texts``,
        ``num_threads`` and ``errors`` as for :meth:`encode_ordinary_batch_to_numpy`."""
        _, counts = encode_batch(
            self.ordinary, texts, mode=COUNTS, num_threads=num_threads, errors=errors
        )
        result: npt.NDArray[np.int64] = counts[1:]
        return result

    def encode_ordinary_batch(
        self: Batchable, text: list[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        """Encode each string of ``text`` with :meth:`encode_ordinary`, on ``num_threads``
        threads at most."""
        lists: list[list[int]] = encode_batch(
            self.ordinary, text, mode=LISTS, num_threads=num_threads
        )[0]
        return lists

    def encode_batch(
        self: Batchable,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        """Encode each string of ``text``; see :meth:`encode` (a disallowed special token in any
        text raises ``ValueError``). The ordinary text between allowed special tokens is
        encoded as one batch."""
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        for each in text:
            refuse_disallowed(each, disallowed)
        if not allowed:
            return BatchMethods.encode_ordinary_batch(self, text, num_threads=num_threads)
        finder = special_token_regex(frozenset(self.special_tokens))
        ordinary: list[str] = []  # the texts between special tokens, of every text
        layouts: list[list[Any]] = []  # per text: an index into `ordinary`, or a special's id
        for each in text:
            layout: list[Any] = []
            start = 0
            for match in allowed_special_matches(finder, each, allowed):
                layout += [len(ordinary), (self.special_tokens[match.group()],)]
                ordinary.append(each[start : match.start()])
                start = match.end()
            layouts.append([*layout, len(ordinary)])
            ordinary.append(each[start:])
        lists = BatchMethods.encode_ordinary_batch(self, ordinary, num_threads=num_threads)
        return [
            [
                token
                for part in layout
                for token in (part if isinstance(part, tuple) else lists[part])
            ]
            for layout in layouts
        ]


def encode_flat_uint32(
    enc: Batchable, texts: Texts, *, errors: str = "strict", watch: bool | None = None
) -> tuple[memoryview | array.array[int], array.array[int]]:
    """:meth:`~BatchMethods.encode_ordinary_batch_to_numpy`'s ids and offsets with no numpy: the
    batch (str, bytes, a pyarrow string array or :class:`FlatTexts`, read in place; ``errors``
    as there) encoded on the calling thread with the GIL released once, for callers that run
    several batches at once (the corpus tool). The ids: uint32, an ``array.array`` on the pure
    path (picklable, for its worker processes), else a memoryview of the engine's array (not
    copied); the offsets: an ``array.array`` of int64. ``watch`` as in
    :func:`~streamcodec.engine.batch.encode_batch` (False: signals are the caller's to check
    between batches)."""
    ids, offsets = encode_batch(
        enc.ordinary, texts, mode=IDS, num_threads=1, errors=errors, numpy=False, watch=watch
    )
    return (ids if isinstance(ids, array.array) else memoryview(ids)), offsets
