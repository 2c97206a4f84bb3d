"""The streaming methods of :class:`streamcodec.Encoding`: sources of any size, bounded memory.

:class:`StreamMethods` is a base class of ``Encoding``: these methods need of it only what the
:class:`Streamable` protocol names, so the stream package never imports the facade.

    >>> import io, streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> list(enc.iter_encode(io.BytesIO(b"hello world")))
    [15339, 1917]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Protocol

from streamcodec.arguments import whole_number
from streamcodec.stream.decoder import DecodesBytes, StreamDecoder
from streamcodec.stream.encoder import Policy, StreamEncoder, count_source, encode_source
from streamcodec.stream.parallel import count_file_parts, encode_file_parts, splits
from streamcodec.stream.sources import Source, text_chunks
from streamcodec.stream.windows import Window, Windowable, split
from streamcodec.text.offsets import OffsetCounter, Unit
from streamcodec.text.specials import AllowedSpecial, DisallowedSpecial, special_policy

__all__ = ["StreamMethods", "Streamable"]


class Streamable(Windowable, DecodesBytes, Protocol):
    """What the streaming methods need of an encoding."""


class StreamMethods:
    """``stream_encoder``, ``stream_decoder``, ``iter_encode``, ``iter_encode_chunks``,
    ``count_tokens``, ``iter_encode_with_offsets``, ``split`` and ``encode_file``: see
    docs/streaming.md and docs/budgets.md."""

    def stream_encoder(
        self: Streamable,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> StreamEncoder:
        """A :class:`~streamcodec.stream.StreamEncoder`: ``feed(text)`` returns the final ids.

        Concatenated, the ids of every ``feed`` and of ``close`` equal :meth:`encode` of the
        whole text, with the same special-token policy.
        """
        allowed, disallowed = special_policy(
            self.special_tokens, allowed_special, disallowed_special
        )
        return StreamEncoder(self, allowed=allowed, disallowed=disallowed)

    def stream_decoder(self: Streamable, *, errors: str = "replace") -> StreamDecoder:
        """A :class:`~streamcodec.stream.StreamDecoder`: ``feed(ids)`` returns complete text."""
        return StreamDecoder(self, errors=errors)

    def iter_encode(
        self: Streamable,
        source: Source,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
    ) -> Iterator[int]:
        """Yield the ids of ``source``, reading it in chunks: memory stays bounded.

        ``source`` is text (a ``str``), a path (an ``os.PathLike`` such as ``pathlib.Path``: a
        ``str`` is always text), ``bytes``, a text or binary file object, or an iterable of
        ``str`` or ``bytes`` chunks. Bytes are UTF-8, decoded with ``errors``: ``"strict"``
        raises :class:`~streamcodec.stream.InvalidUTF8Error` with the byte offset, ``"replace"``
        encodes the text with U+FFFD as ``encode`` would, ``"surrogateescape"`` is lossless
        (``decode_bytes`` of the ids gives back the input bytes, as :meth:`encode_bytes`).

        """
        policy = _policy(self, allowed_special, disallowed_special, errors)
        for ids in _chunks(self, source, policy, jobs=1, progress=None):
            yield from ids

    def iter_encode_chunks(
        self: Streamable,
        source: Source,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
        jobs: int = 1,
        progress: Callable[[int], object] | None = None,
    ) -> Iterator[list[int]]:
        """Like :meth:`iter_encode`, a list of ids per chunk read (faster to consume).

        With ``jobs > 1`` the source must be a path: it is split at safe cuts and the parts are
        encoded by ``jobs`` threads (native path) or processes (pure path), with the same ids
        in the same order. Closing the iterator ends the workers.
        ``progress`` is called with each count of input bytes consumed.
        """
        policy = _policy(self, allowed_special, disallowed_special, errors)
        return _chunks(self, source, policy, jobs=jobs, progress=progress)

    def count_tokens(
        self: Streamable,
        source: Source,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
        jobs: int = 1,
        limit: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> int | None:
        """The number of ids :meth:`iter_encode` yields for ``source``, in bounded memory.

        With ``limit``, None as soon as the count is sure to pass it: the rest of the source is
        not read, and one endless pre-token is read only until ``limit`` tokens could not hold
        it. (Only ``limit=None`` never returns None.) ``progress`` as in
        :meth:`iter_encode_chunks`.
        """
        policy = _policy(self, allowed_special, disallowed_special, errors)
        if limit is not None:
            whole_number("limit", limit)
        if splits(source, self, jobs):
            return count_file_parts(self, source, policy, jobs=jobs, limit=limit, progress=progress)
        return count_source(self, source, policy, limit=limit, progress=progress)

    def iter_encode_with_offsets(
        self: Streamable,
        source: Source,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
        unit: Unit = "char",
    ) -> Iterator[tuple[int, int]]:
        """Like :meth:`iter_encode`, each id with the absolute offset where its token starts.

        Offsets follow ``Encoding.encode_with_offsets``, counted in the text the source decodes
        to (invalid UTF-8 under ``errors="replace"`` is one U+FFFD; in a ``str``, a lone
        surrogate is one U+FFFD and a surrogate pair one character). With ``unit="byte"`` they
        are offsets into the UTF-8 of that text: the input's own bytes when it is valid UTF-8
        or read with ``errors="surrogateescape"`` (which character offsets refuse).
        """
        if unit == "char" and errors == "surrogateescape":
            raise ValueError("errors='surrogateescape' keeps invalid bytes: use unit='byte'")
        counter = OffsetCounter(unit)
        policy = _policy(self, allowed_special, disallowed_special, errors)
        for ids in _chunks(self, source, policy, jobs=1, progress=None):
            yield from zip(ids, counter.offsets(self.decode_tokens_bytes(ids)), strict=True)

    def split(
        self: Streamable,
        source: Source,
        max_tokens: int,
        *,
        overlap: int = 0,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
        progress: Callable[[int], object] | None = None,
    ) -> Iterator[Window]:
        """Cut ``source`` into consecutive windows of at most ``max_tokens`` tokens each.

        Yields :class:`~streamcodec.stream.windows.Window` ``(text, ids, start)``, reading the
        source in bounded memory. Cuts fall between tokens, never inside a character; each
        window's ``text`` encodes on its own to exactly its ``ids``. With ``overlap=0`` the
        texts joined are the input and the ids joined are ``encode`` of it; with ``overlap``
        each window starts up to that many tokens before the previous one ends (``start`` says
        where). ``errors`` is ``"strict"`` or ``"replace"`` (windows are text); see
        :mod:`streamcodec.stream.windows` for where the cuts fall. ``progress`` is called with
        each count of input bytes read.
        """
        if errors == "surrogateescape":
            raise ValueError("split gives text: errors must be 'strict' or 'replace'")
        policy = _policy(self, allowed_special, disallowed_special, errors)
        chunks = text_chunks(source, errors=errors, progress=progress)
        return split(self, chunks, max_tokens, overlap=overlap, policy=policy)

    def encode_file(
        self: Streamable,
        path: str | os.PathLike[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        errors: str = "strict",
        jobs: int = 1,
    ) -> list[int]:
        """The ids of the UTF-8 file at ``path`` (a ``str`` here is a path), using ``jobs``."""
        policy = _policy(self, allowed_special, disallowed_special, errors)
        ids: list[int] = []
        import pathlib  # here: 5% of a command's start, which encodes no file by this method

        for chunk in _chunks(self, pathlib.Path(path), policy, jobs=jobs, progress=None):
            ids += chunk
        return ids


def _policy(
    encoding: Streamable,
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
    errors: str,
) -> Policy:
    allowed, disallowed = special_policy(
        encoding.special_tokens, allowed_special, disallowed_special
    )
    return Policy(allowed, disallowed, errors)


def _chunks(
    encoding: Streamable,
    source: Source,
    policy: Policy,
    *,
    jobs: int,
    progress: Callable[[int], object] | None,
) -> Iterator[list[int]]:
    """The ids of ``source`` chunk by chunk: by ``jobs`` workers when it is a file."""
    if splits(source, encoding, jobs):
        return encode_file_parts(encoding, source, policy, jobs=jobs, progress=progress)
    return encode_source(encoding, source, policy, progress=progress)
