"""tiktoken's public vocabularies, shipped inside the package in a compact form.

Each ``<name>.zlib`` file beside this module holds one vocabulary's tokens in rank order, in
zlib's format: a magic line, the runs of consecutive ranks (``first count`` pairs), one byte per
token giving its length, then the tokens' bytes end to end. It is read only when an encoding asks
for it, and it is about half of the ``.tiktoken`` file's size, and quicker to load: no base64, no
line splitting (``benchmarks/vocabulary_load.py``). The files are *stored* (zlib's level 0):
inflating cl100k_base was 3 ms of every command's start, and a stored file is read for the cost
of a copy and its checksum, which still sees any changed byte (the wheel's zip compresses it).

The files are built by ``tools/build_vocabularies.py`` from the original files, each checked
against the sha256 tiktoken publishes. :func:`original_files` rebuilds those originals from the
shipped ranks byte for byte, so the test suite checks the same hashes on what is shipped.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 257}
    >>> unpack_ranks(pack_ranks(ranks)) == ranks
    True
    >>> len(shipped_ranks("r50k_base"))
    50256
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from streamcodec.engine.backend import backend
from streamcodec.pieces.packed import PackedRanks

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "SHIPPED",
    "Published",
    "checked_originals",
    "original_files",
    "pack_ranks",
    "shipped_packed",
    "shipped_path",
    "shipped_ranks",
    "unpack",
    "unpack_ranks",
]

# The shipped vocabularies; the other named encodings reuse them (gpt2 is r50k_base's ranks,
# p50k_edit p50k_base's, o200k_harmony o200k_base's).
SHIPPED = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


class Published(Protocol):
    """What tiktoken publishes of a named encoding (a ``registry.EncodingSpec`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def shipped(self) -> str: ...
    @property
    def download_url(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def special_tokens(self) -> dict[str, int]: ...
    @property
    def data_gym(self) -> tuple[tuple[str, str], tuple[str, str]] | None: ...


_MAGIC = b"streamcodec ranks 1\n"
# Formats, not struct.Struct objects: a module pickled by value (dill, for an editable install
# in a Hugging Face datasets generator) cannot hold a Struct.
_RUN = "<II"  # first rank, how many consecutive ranks follow
_COUNT = "<I"


def shipped_path(name: str) -> Path:
    """Where the shipped vocabulary ``name`` lives (it may be missing from a stripped install)."""
    from pathlib import Path

    return Path(_shipped_file(name))


def _shipped_file(name: str) -> str:
    # a str: pathlib is 5% of a one-line tokenize-corpus, which reads this file
    return os.path.join(os.path.dirname(__file__), f"{name}.zlib")


def shipped_ranks(name: str) -> dict[bytes, int] | None:
    """The ranks of the shipped vocabulary ``name``, or ``None`` when the package has none."""
    packed = shipped_packed(name)
    return None if packed is None else packed.ranks()


def shipped_packed(name: str) -> PackedRanks | None:
    """The shipped vocabulary ``name`` as read (its dict made when first asked for), or ``None``
    when the package has none."""
    path = _shipped_file(name)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return unpack(data, source=path)


def pack_ranks(ranks: Mapping[bytes, int]) -> bytes:
    """The compact form of ``ranks`` (tokens of at most 255 bytes, as in every tiktoken file)."""
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    if any(len(token) > 255 for token, _ in ordered):
        raise ValueError("a token longer than 255 bytes cannot be packed")
    runs: list[list[int]] = []
    for _, rank in ordered:
        if runs and runs[-1][0] + runs[-1][1] == rank:
            runs[-1][1] += 1
        else:
            runs.append([rank, 1])
    payload = b"".join(
        [
            _MAGIC,
            struct.pack(_COUNT, len(runs)),
            *(struct.pack(_RUN, first, count) for first, count in runs),
            bytes(len(token) for token, _ in ordered),
            *(token for token, _ in ordered),
        ]
    )
    return zlib.compress(payload, 0)  # stored: read by a copy, not an inflate (module doc)


def unpack_ranks(data: bytes, *, source: str = "<bytes>") -> dict[bytes, int]:
    """The ranks packed by :func:`pack_ranks`; a damaged file is a ``ValueError`` naming
    ``source`` (zlib's checksum sees any changed byte)."""
    return unpack(data, source=source).ranks()


def unpack(data: bytes, *, source: str = "<bytes>") -> PackedRanks:
    """:func:`unpack_ranks` with the dict left to be made when first asked for (the compiled
    core builds its tables from the arrays themselves)."""
    try:
        payload = zlib.decompress(data)
        if not payload.startswith(_MAGIC):
            raise ValueError("not a packed vocabulary")
        at = len(_MAGIC)
        (n_runs,) = struct.unpack_from(_COUNT, payload, at)
        at += struct.calcsize(_COUNT)
        size = struct.calcsize(_RUN)
        runs = [struct.unpack_from(_RUN, payload, at + i * size) for i in range(n_runs)]
        at += n_runs * size
    except (zlib.error, struct.error, ValueError) as exc:
        raise ValueError(f"{source}: damaged vocabulary ({exc}); reinstall streamcodec") from None
    total = sum(count for _, count in runs)
    lengths, blob = payload[at : at + total], payload[at + total :]
    return PackedRanks(lengths, blob, runs, source=source, native=backend() == "native")


def checked_originals(spec: Published) -> dict[str, bytes]:
    """:func:`original_files` of ``spec``'s shipped ranks, each checked against the sha256
    tiktoken expects (a ``ValueError`` names the first that differs)."""
    import hashlib  # here: loading a vocabulary needs no hash (OpenSSL's module, 2-4 ms)

    ranks = shipped_ranks(spec.shipped)
    if ranks is None:
        raise ValueError(f"{shipped_path(spec.shipped)} is missing: build it first")
    checked = {}
    for url, (content, expected) in original_files(spec, ranks).items():
        actual = hashlib.sha256(content).hexdigest()
        if actual != expected:
            raise ValueError(f"{spec.name}: {url} rebuilt with sha256 {actual}, not {expected}")
        checked[url] = content
    return checked


def original_files(spec: Published, ranks: Mapping[bytes, int]) -> dict[str, tuple[bytes, str]]:
    """The files tiktoken downloads for ``spec``, rebuilt byte for byte from its ranks, as
    ``{url: (content, the sha256 tiktoken expects)}``: the ``.tiktoken`` file, or for gpt2 GPT-2's
    ``vocab.bpe`` and ``encoder.json`` (written with ``json.dumps``' defaults, as GPT-2's were)."""
    import json
    import tempfile

    from streamcodec.formats import write_gpt2
    from streamcodec.formats.tiktoken_file import write_tiktoken_bytes
    from streamcodec.vocab import Vocabulary

    if spec.data_gym is None:
        return {spec.download_url: (write_tiktoken_bytes(ranks), spec.sha256)}
    (bpe_url, bpe_sha256), (encoder_url, encoder_sha256) = spec.data_gym
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        encoder, merges = Path(folder) / "encoder.json", Path(folder) / "vocab.bpe"
        write_gpt2(Vocabulary(dict(ranks), spec.special_tokens), encoder, merges)
        encoder_json = json.dumps(json.loads(encoder.read_bytes())).encode()
        return {
            bpe_url: (merges.read_bytes(), bpe_sha256),
            encoder_url: (encoder_json, encoder_sha256),
        }
