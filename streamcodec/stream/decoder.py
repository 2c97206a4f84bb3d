"""Stream decoding: ids arriving in batches to text, a character held until its last byte.

>>> import streamcodec
>>> enc = streamcodec.get_encoding("cl100k_base")
>>> ids = enc.encode("a 🦜")  # the parrot is three tokens: b" \\xf0\\x9f", b"\\xa6", b"\\x9c"
>>> stream = enc.stream_decoder()
>>> [stream.feed([i]) for i in ids] + [stream.close()]
['a', ' ', '', '🦜', '']
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["DecodesBytes", "StreamDecoder"]


class DecodesBytes(Protocol):
    """What the decoder needs of an encoding (:class:`streamcodec.Encoding` is one)."""

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens`` joined."""


class StreamDecoder:
    """Decode ids fed in batches; ``feed`` returns the text that is complete.

    A character whose bytes are split across tokens waits for its last byte. ``errors`` is the
    policy for invalid UTF-8, as in ``bytes.decode``: the stream gives the same text as
    ``Encoding.decode`` of all the ids.
    """

    def __init__(self, encoding: DecodesBytes, *, errors: str = "replace") -> None:
        self._bytes = encoding.decode_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def feed(self, ids: Iterable[int]) -> str:
        """The text completed by ``ids``."""
        return self._decoder.decode(self._bytes(list(ids)))

    def close(self) -> str:
        """What is left: a replacement character for an unfinished one (per ``errors``)."""
        return self._decoder.decode(b"", final=True)
