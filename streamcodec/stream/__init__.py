"""Streaming: chunks -> safe cuts -> ids, and ids -> text, in memory that does not grow.

- :mod:`.sources`: any source as text chunks (the one block reader), lines;
- :mod:`.cuts`: where text can be cut without changing its pieces (the safe-cut rules);
- :mod:`.encoder`: :class:`StreamEncoder`, special tokens split off, settled text encoded;
- :mod:`.decoder`: :class:`StreamDecoder`;
- :mod:`.parallel`: one file split at safe cuts and encoded by worker threads or processes;
- :mod:`.workers`: ``ordered_map``, work over tasks by threads or processes, in order;
- :mod:`.windows`: ``split``, windows of at most N tokens that are each exact on their own.

This package takes what it needs of an encoding through small protocols (:class:`.Encodes`,
:class:`.decoder.DecodesBytes`): it never imports :mod:`streamcodec.encoding` or the registry.
"""

from typing import Any

from streamcodec.stream import cuts
from streamcodec.stream.cuts import PROVEN_PATTERNS
from streamcodec.stream.decoder import StreamDecoder
from streamcodec.stream.encoder import Encodes, Policy, StreamEncoder, encode_text_chunks
from streamcodec.stream.sources import CHUNK_SIZE, SourceChangedError, text_chunks
from streamcodec.stream.windows import Window
from streamcodec.text.unicode import InvalidUTF8Error, decode_utf8

__all__ = [
    "CHUNK_SIZE",
    "PROVEN_PATTERNS",
    "Encodes",
    "InvalidUTF8Error",
    "Policy",
    "SourceChangedError",
    "StreamDecoder",
    "StreamEncoder",
    "Window",
    "decode_utf8",
    "encode_text_chunks",
    "text_chunks",
]


def __getattr__(name: str) -> Any:
    """``SAFE_CUT`` and ``SAFE_CUTS``, compiled when first asked for (see :mod:`.cuts`)."""
    return getattr(cuts, name)
