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
import pathlib
from collections.abc import Callable, Iterator
from typing import Protocol

from streamcodec.stream.decoder import DecodesBytes, StreamDecoder
from streamcodec.stream.encoder import Encodes, Policy, StreamEncoder, encode_source
from streamcodec.stream.parallel import count_file_parts, encode_file_parts, splits
from streamcodec.stream.sources import Source
from streamcodec.text.specials import AllowedSpecial, DisallowedSpecial, special_policy

__all__ = ["StreamMethods", "Streamable"]


class Streamable(Encodes, DecodesBytes, Protocol):
    """What the streaming methods need of an encoding."""


class StreamMethods:
    """``stream_encoder``, ``stream_decoder``, ``iter_encode``, ``iter_encode_chunks``,
    ``count_tokens`` and ``encode_file``: see docs/streaming.md."""

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
        encoded in ``jobs`` worker processes, with the same ids in the same order.
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
    ) -> int:
        """The number of ids :meth:`iter_encode` yields for ``source``, in bounded memory."""
        policy = _policy(self, allowed_special, disallowed_special, errors)
        if splits(source, self, jobs):
            return count_file_parts(self, source, policy, jobs=jobs)
        return sum(map(len, encode_source(self, source, policy)))

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
    """The ids of ``source`` chunk by chunk: in ``jobs`` processes when it is a file."""
    if splits(source, encoding, jobs):
        return encode_file_parts(encoding, source, policy, jobs=jobs, progress=progress)
    return encode_source(encoding, source, policy, progress=progress)
