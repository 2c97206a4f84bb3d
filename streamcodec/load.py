"""Reading vocabulary files by path or URL, with tiktoken's cache: ``tiktoken.load``'s API.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.tiktoken")
    >>> dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2}, path)
    >>> load_tiktoken_bpe(path)
    {b'a': 0, b'b': 1, b'ab': 2}

``read_file_cached`` keeps what it read (a URL's download, or a file) in tiktoken's cache folder,
under the sha1 of the path: ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
``<tempdir>/data-gym-cache``; an empty value turns the cache off. tiktoken and streamcodec
therefore share one cache. With ``expected_hash`` a cached copy that does not match is read
again, and content that does not match is refused (``ValueError``).

Where streamcodec differs from tiktoken, it refuses what tiktoken would accept silently: a
``.tiktoken`` file that gives one token or one rank twice, and GPT-2 files whose ids disagree
with the merge order, raise ``ValueError`` naming the file and line (tiktoken keeps the last
line, or fails an ``assert``). URLs are read with the standard library (tiktoken uses
``requests``); other schemes (``az://``, ``gs://``) need ``blobfile``, as in tiktoken.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile

from streamcodec.atomicfile import atomic_output
from streamcodec.dropin import same_module
from streamcodec.formats.gpt2 import parse_gpt2
from streamcodec.formats.tiktoken_file import parse_tiktoken, write_tiktoken_bytes

__all__ = [
    "check_hash",
    "data_gym_to_mergeable_bpe_ranks",
    "dump_tiktoken_bpe",
    "load_tiktoken_bpe",
    "read_file",
    "read_file_cached",
    "tiktoken_cache_dir",
]


def read_file(blobpath: str) -> bytes:
    """The bytes at ``blobpath``: a local path, an ``http(s)://`` URL, or a blobfile URL."""
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    if blobpath.startswith(("http://", "https://")):
        import urllib.request  # only here: it costs more to import than the rest of streamcodec

        with urllib.request.urlopen(blobpath, timeout=60) as response:
            data: bytes = response.read()
            return data
    try:
        import blobfile
    except ImportError as exc:
        raise ImportError(
            f"reading {blobpath} needs blobfile; install it with `pip install blobfile`"
        ) from exc
    blob: bytes = blobfile.read_bytes(blobpath)
    return blob


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data``'s sha256 (hex) is ``expected_hash``."""
    return hashlib.sha256(data).hexdigest() == expected_hash


def tiktoken_cache_dir() -> tuple[str, bool]:
    """tiktoken's cache folder ("" when turned off), and whether the user chose it."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable], True
    return os.path.join(tempfile.gettempdir(), "data-gym-cache"), False


def cache_path(blobpath: str) -> str | None:
    """Where tiktoken's cache keeps ``blobpath`` (``None`` when the cache is off)."""
    cache_dir, _ = tiktoken_cache_dir()
    if not cache_dir:
        return None
    return os.path.join(cache_dir, hashlib.sha1(blobpath.encode()).hexdigest())


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """:func:`read_file` through tiktoken's cache, checked against ``expected_hash`` (sha256)."""
    path = cache_path(blobpath)
    if path is not None and os.path.exists(path):
        with open(path, "rb", buffering=0) as f:
            data = f.read()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
        with contextlib.suppress(OSError):  # a stale or corrupt copy: read the original again
            os.remove(path)
    contents = read_file(blobpath)
    if expected_hash and not check_hash(contents, expected_hash):
        raise ValueError(
            f"Hash mismatch for data downloaded from {blobpath} (expected {expected_hash}). "
            "This may indicate a corrupted download. Please try again."
        )
    if path is not None:
        _store(path, contents)
    return contents


def _store(path: str, contents: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with atomic_output(path) as f:
            f.write(contents)
    except OSError:
        if tiktoken_cache_dir()[1]:  # a folder the user chose must work; the default may not
            raise


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """The ranks in a ``.tiktoken`` file (path or URL), read through the cache."""
    return parse_tiktoken(
        read_file_cached(tiktoken_bpe_file, expected_hash), source=tiktoken_bpe_file
    )


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """The ranks in GPT-2's ``vocab.bpe`` + ``encoder.json`` ("data gym" files).

    The special tokens of ``encoder.json`` (``<|endoftext|>``) are left out, as in tiktoken.
    ``clobber_one_byte_tokens`` is accepted for tiktoken's signature: the single bytes' ids
    always come from ``encoder.json`` here, which GPT-2's files make the same.
    """
    del clobber_one_byte_tokens
    vocabulary = parse_gpt2(
        read_file_cached(encoder_json_file, encoder_json_hash),
        read_file_cached(vocab_bpe_file, vocab_bpe_hash),
        encoder_source=encoder_json_file,
        merges_source=vocab_bpe_file,
    )
    return vocabulary.mergeable_ranks


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Write ``bpe_ranks`` as a ``.tiktoken`` file (atomically), in rank order."""
    with atomic_output(tiktoken_bpe_file) as f:
        f.write(write_tiktoken_bytes(bpe_ranks))


same_module(__name__, "streamcodec.load")
