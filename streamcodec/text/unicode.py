"""Text from bytes, and bytes from text: the one incremental UTF-8 reader, and surrogates.

Every byte source (files, pipes, chunks, worker parts, training corpora) is decoded here, so
invalid UTF-8 gets one error everywhere: :class:`InvalidUTF8Error`, naming the source and the
byte offset.

    >>> list(decode_utf8([b"caf\\xc3", b"\\xa9!"]))
    ['caf', 'é!', '']

Python text may hold lone surrogates, which UTF-8 cannot: tiktoken makes them U+FFFD
(:func:`replace_lone_surrogates`), and ``errors="surrogateescape"`` uses them for the invalid
bytes they stand for.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = [
    "InvalidUTF8Error",
    "decode_utf8",
    "encode_replacing_surrogates",
    "has_surrogates",
    "replace_lone_surrogates",
]

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidUTF8Error(ValueError):
    """Input bytes are not UTF-8; the message names the source and the byte offset."""

    def __init__(self, offset: int, reason: str, source: str) -> None:
        super().__init__(
            f"{source}: invalid UTF-8 at byte offset {offset} ({reason}); "
            "decode with errors='replace' or errors='surrogateescape' to accept it"
        )
        self.offset, self.reason, self.source = offset, reason, source

    def __reduce__(self) -> tuple[type[InvalidUTF8Error], tuple[int, str, str]]:
        # Raised in worker processes too, so it must survive pickling.
        return type(self), (self.offset, self.reason, self.source)


def decode_utf8(
    blocks: Iterable[bytes],
    *,
    errors: str = "strict",
    name: str = "<bytes>",
    offset: int = 0,
    progress: Callable[[int], object] | None = None,
) -> Iterator[str]:
    """Decode UTF-8 blocks incrementally (a character may straddle blocks).

    Under ``errors="strict"`` invalid input raises :class:`InvalidUTF8Error` naming its byte
    offset (``offset`` is that of the first block); ``progress`` is called with each block's
    size.

        >>> list(decode_utf8([b"ok", b"\\xff"], name="x"))
        Traceback (most recent call last):
        ...
        streamcodec.text.unicode.InvalidUTF8Error: x: invalid UTF-8 at byte offset 2 (invalid \
start byte 0xff); decode with errors='replace' or errors='surrogateescape' to accept it
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    block = b""
    try:
        for block in blocks:
            text = decoder.decode(block)
            offset += len(block)
            if progress is not None:
                progress(len(block))
            yield text
        block = b""
        yield decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        # exc.start counts from the bytes the decoder held from before, then ``block``.
        held = len(exc.object) - len(block)
        bad = exc.object[exc.start]
        at = offset - held + exc.start
        raise InvalidUTF8Error(at, f"{exc.reason} 0x{bad:02x}", name) from None


def has_surrogates(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` holds a surrogate (which UTF-8 cannot encode)."""
    return _SURROGATE.search(text, start, len(text) if end is None else end) is not None


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate made U+FFFD and each surrogate pair joined, as tiktoken.

    >>> replace_lone_surrogates("a\\ud83d b\\ud83d\\ude00") == "a\\ufffd b\\U0001f600"
    True
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def encode_replacing_surrogates(
    encode: Callable[[str, int, int], T], text: str, start: int = 0, end: int | None = None
) -> T:
    """``encode(text, start, end)``, the fast path for valid text; when it meets a lone
    surrogate (``UnicodeEncodeError``), again on the text with them replaced as tiktoken does.
    ``text[:start]`` (context) and ``text[start:end]`` are fixed apart, so ``start`` and ``end``
    still mark the same text (a joined pair is one character shorter).

    >>> encode_replacing_surrogates(lambda t, s, e: t[s:e].encode(), "ab\\ud83d", 1)
    b'b\\xef\\xbf\\xbd'
    """
    stop = len(text) if end is None else end
    try:
        return encode(text, start, stop)
    except UnicodeEncodeError:
        context = replace_lone_surrogates(text[:start])
        body = replace_lone_surrogates(text[start:stop])
        return encode(context + body, len(context), len(context) + len(body))
