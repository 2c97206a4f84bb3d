"""tiktoken's ``.tiktoken`` format: one ``base64(token bytes) rank`` pair per line.

>>> data = write_tiktoken_bytes({b"a": 0, b"b": 1, b"ab": 2})
>>> data
b'YQ== 0\\nYg== 1\\nYWI= 2\\n'
>>> parse_tiktoken(data) == {b"a": 0, b"b": 1, b"ab": 2}
True
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping

from streamcodec.atomicfile import atomic_output
from streamcodec.vocab import MAX_RANK, VocabularyError, check_vocabulary

__all__ = ["parse_tiktoken", "read_tiktoken", "write_tiktoken", "write_tiktoken_bytes"]


def parse_tiktoken(data: bytes, *, source: str = "<bytes>") -> dict[bytes, int]:
    """Parse ``.tiktoken`` content; errors name ``source`` and the line."""
    lines = [line for line in data.splitlines() if line.strip()]
    try:  # The common case, well-formed, in one pass; anything odd is diagnosed line by line.
        ranks = {
            base64.b64decode(token, validate=True): int(rank)
            for token, rank in (line.split() for line in lines)
        }
        if (
            len(ranks) == len(lines)
            and len(set(ranks.values())) == len(ranks)
            and max(ranks.values(), default=0) <= MAX_RANK
            and all(line.split()[1].isdigit() for line in lines)
        ):
            return ranks
    except (ValueError, binascii.Error):
        pass
    return _parse_tiktoken_lines(data, source)


def _parse_tiktoken_lines(data: bytes, source: str) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}  # rank -> line it was first given on
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        where = f"{source}:{lineno}"
        if len(fields) != 2:
            raise VocabularyError(
                f"{where}: expected 'base64-token rank', got {len(fields)} field(s): {line[:60]!r}"
            )
        try:
            token = base64.b64decode(fields[0], validate=True)
        except binascii.Error:
            shown = fields[0][:60].decode(errors="replace")
            raise VocabularyError(f"{where}: {shown!r} is not valid base64") from None
        if not fields[1].isdigit():
            shown = fields[1][:30].decode(errors="replace")
            raise VocabularyError(f"{where}: rank {shown!r} is not a whole number")
        rank = int(fields[1])
        if rank > MAX_RANK:
            raise VocabularyError(
                f"{where}: rank {rank} is past 2**32 - 1, the largest token id (tiktoken's too)"
            )
        if token in ranks:
            raise VocabularyError(f"{where}: token {token!r} appears twice")
        if rank in seen_ranks:
            first = seen_ranks[rank]
            raise VocabularyError(f"{where}: rank {rank} was already given on line {first}")
        ranks[token] = rank
        seen_ranks[rank] = lineno
    return ranks


def read_tiktoken(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file and check it is a usable vocabulary (all 256 single bytes)."""
    with open(path, "rb") as f:
        ranks = parse_tiktoken(f.read(), source=os.fspath(path))
    check_vocabulary(ranks, source=os.fspath(path))
    return ranks


def write_tiktoken_bytes(ranks: Mapping[bytes, int]) -> bytes:
    """The ``.tiktoken`` content for ``ranks``, in rank order."""
    lines = (
        base64.b64encode(token) + b" " + str(rank).encode()
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    )
    return b"".join(line + b"\n" for line in lines)


def write_tiktoken(ranks: Mapping[bytes, int], path: str | os.PathLike[str]) -> None:
    """Write ``ranks`` to ``path`` atomically; what :func:`read_tiktoken` would refuse (a
    missing single byte, a repeated rank) is refused first, and nothing is written."""
    check_vocabulary(ranks, source=f"{os.fspath(path)} (not written)")
    with atomic_output(path) as f:
        f.write(write_tiktoken_bytes(ranks))
