"""An input file on disk, read so that nothing is lost without a word.

Three checks stand between a corpus file and its documents:

- **a regular file**: a FIFO, a device or a folder where a file is expected is refused before it
  is opened (a FIFO would block, a device never ends, and neither can be read again to resume);
- **the file it was**: :class:`Fingerprinted` compares the file's size and modification time with
  those recorded when the run planned it, when it is opened and again when it has been read, so
  a file appended to, truncated or rewritten during the run fails the shard that reads it
  (:class:`InputChangedError`) instead of giving ids of neither version;
- **compressed to its proper end**: ``.gz``, ``.xz`` and ``.zst`` streams are decompressed here
  (:class:`Decompressed`, every member or frame, in bounded memory) and must end with their own
  end-of-stream marker: a truncated file is an error with its name and byte offset, never a
  shorter document, and bytes that are not the format say which file and where.

    >>> import gzip, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt.gz")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(gzip.compress(b"hello world")[:-5])
    >>> with open(path, "rb") as raw:
    ...     try:
    ...         Decompressed(raw, path, "gz").read()
    ...     except ValueError as exc:
    ...         print(str(exc).split(": ", 1)[1])
    the gz stream is cut short at byte offset 26 (after 11 bytes of text): a truncated file; \
compress it again, or leave it out
"""

from __future__ import annotations

import errno
import io
import lzma
import os
import stat
import zlib
from typing import IO, Any, NoReturn

__all__ = [
    "COMPRESSIONS",
    "Decompressed",
    "Fingerprinted",
    "InputChangedError",
    "regular_file",
]

#: The compressed formats, by suffix.
COMPRESSIONS = {".gz": "gz", ".xz": "xz", ".zst": "zst"}
_FEED = 1 << 16  # compressed bytes fed at a time
_OUT = 1 << 20  # decompressed bytes produced at a time (zlib and lzma; zstd by its frames)


class InputChangedError(ValueError):
    """An input is not the file the run planned (its size or time changed): the shard that
    reads it fails, and a rerun plans it again."""

    def __init__(self, name: str, when: str) -> None:
        super().__init__(
            f"{name}: the file changed {when} (its size or modification time is not what it "
            "was when the run began); run the command again once nothing writes to it"
        )
        self.name, self.when = name, when

    def __reduce__(self) -> tuple[type[InputChangedError], tuple[str, str]]:
        return type(self), (self.name, self.when)  # from a worker process, as it was raised


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)")]
    kinds += [(stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")]
    kinds += [(stat.S_ISSOCK, "a socket")]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def regular_file(path: str) -> os.stat_result:
    """``os.stat(path)``, or ``OSError`` naming what ``path`` is when it is not a regular file
    (checked before opening: opening a FIFO blocks until a writer comes)."""
    info = os.stat(path)
    what = _kind(info.st_mode)
    if what is not None:
        raise OSError(
            errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL,
            f"{what}, not a regular file: name files (or - for standard input)",
            path,
        )
    return info


def _version(info: os.stat_result) -> tuple[int, int]:
    return info.st_size, info.st_mtime_ns


class Fingerprinted(io.RawIOBase):
    """The file at ``path`` opened for reading, checked to be the one planned: its size and
    modification time are ``expected`` when opened and still when :meth:`check_unchanged` is
    called (at the end of a read)."""

    def __init__(self, path: str, expected: tuple[int, int]) -> None:
        super().__init__()
        regular_file(path)
        self.name = path
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115  (closed with this)
        self._expected = expected
        self.check_unchanged("before it was read")

    def check_unchanged(self, when: str = "while it was read") -> None:
        """:class:`InputChangedError` when the file's size or time is not the planned one."""
        if _version(os.fstat(self._file.fileno())) != self._expected:
            raise InputChangedError(self.name, when)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def fileno(self) -> int:
        return self._file.fileno()

    def readinto(self, buffer: Any) -> int:
        count = self._file.readinto(buffer)
        if count == 0:  # the end: what was read is whole only if the file did not change
            self.check_unchanged()
        return count or 0

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def _decompressor(codec: str) -> Any:
    if codec == "gz":
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if codec == "xz":
        return lzma.LZMADecompressor()
    import zstandard  # present: Decompressed checked

    return zstandard.ZstdDecompressor().decompressobj()


class Decompressed(io.RawIOBase):
    """The decompressed bytes of the stream ``raw`` (``gz``, ``xz`` or ``zst``): every member
    (gzip), stream (xz) or frame (zstd) one after another, each ended by its own marker.

    ``ValueError`` naming ``name`` and the byte offset in the compressed file: for bytes that
    are not the format, and for a file that ends inside a stream (truncated), at its end. An
    empty file is empty text."""

    def __init__(self, raw: IO[bytes] | io.RawIOBase, name: str, codec: str) -> None:
        super().__init__()
        self.name = name
        self.source, self._codec = raw, codec
        self._errors = _errors(codec, name)
        self._decoder: Any = None  # None between streams
        self._input = b""  # compressed bytes not yet fed
        self._offset = 0  # where ``_input`` starts in the compressed file
        self._output = memoryview(b"")
        self._produced = 0
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._output and not self._ended:
            self._fill()
        count = min(len(buffer), len(self._output))
        buffer[:count] = self._output[:count]
        self._output = self._output[count:]
        return count

    def _fill(self) -> None:
        """Decompress the next piece (or learn that the file ended where it may)."""
        if not self._input and not self._draining():
            self._input = self.source.read(_FEED)
            if not self._input:
                self._end_of_file()
                return
        if self._decoder is None:
            if self._codec == "gz":  # gzip allows zero bytes of padding after a member
                stripped = self._input.lstrip(b"\0")
                self._offset += len(self._input) - len(stripped)
                self._input = stripped
                if not stripped:
                    return
            self._decoder = _decompressor(self._codec)
        data, self._input = self._input, b""
        try:
            if self._codec == "zst":  # whole frames' output: no bound to ask for
                out = self._decoder.decompress(data)
            else:
                out = self._decoder.decompress(data, _OUT)
        except self._errors as exc:
            self._fail(f"not a valid {self._codec} stream ({exc})", at_or_after=True)
        self._offset += len(data)
        if self._codec == "gz":  # zlib hands back what it did not take; lzma keeps it
            self._input = self._decoder.unconsumed_tail
            self._offset -= len(self._input)
        if self._decoder.eof:  # this stream ended: what follows is the next one
            self._input = self._decoder.unused_data
            self._offset -= len(self._input)
            self._decoder = None
        self._output = memoryview(out)
        self._produced += len(out)

    def _end_of_file(self) -> None:
        """The compressed file ended: between streams, or (an error) inside one."""
        if self._decoder is not None and self._codec == "gz":
            out = self._decoder.flush()  # zlib may hold output it had no room for
            self._output, self._produced = memoryview(out), self._produced + len(out)
            if self._decoder.eof:
                self._decoder = None
                return
        if self._decoder is not None:
            self._fail(f"the {self._codec} stream is cut short", truncated=True)
        self._ended = True

    def _draining(self) -> bool:
        """Whether lzma holds output it has not given yet (asked again with no new input)."""
        return self._codec == "xz" and self._decoder is not None and not self._decoder.needs_input

    def _fail(self, what: str, *, truncated: bool = False, at_or_after: bool = False) -> NoReturn:
        hint = (
            "a truncated file; compress it again, or leave it out"
            if truncated
            else "a damaged or mislabelled file; check it with the format's own tool"
        )
        where = f"{'at or after' if at_or_after else 'at'} byte offset {self._offset}"
        raise ValueError(
            f"{self.name}: {what} {where} (after {self._produced:,} bytes of text): {hint}"
        )

    def close(self) -> None:
        if not self.closed:
            self.source.close()
        super().close()


def _errors(codec: str, name: str) -> tuple[type[Exception], ...]:
    """The exceptions the codec's decompressor raises for bytes not of its format."""
    if codec == "gz":
        return (zlib.error,)
    if codec == "xz":
        return (lzma.LZMAError,)
    try:
        import zstandard
    except ImportError:
        raise ImportError(f"{name}: reading .zst needs zstandard: pip install zstandard") from None
    return (zstandard.ZstdError,)
