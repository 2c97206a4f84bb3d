"""subword-nmt's codes file: a ``#version: 0.2`` header, then one merge per line.

>>> parse_codes("#version: 0.2\\ne s\\n")
Codes(merges=[('e', 's')], version=(0, 2))
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from streamcodec.atomicfile import atomic_output
from streamcodec.text.unicode import decode_utf8
from streamcodec.wordbpe.words import CODES_VERSION, STRIP, Pair

__all__ = ["Codes", "format_codes", "parse_codes", "read_codes", "write_codes"]


@dataclass(frozen=True)
class Codes:
    """A codes file: its version and its merges, in the order they were learned."""

    merges: list[Pair]
    version: tuple[int, int] = CODES_VERSION


def format_codes(merges: Iterable[Pair], *, version: tuple[int, int] = CODES_VERSION) -> str:
    """The text of a codes file, as subword-nmt's learn-bpe writes it.

    >>> print(format_codes([("e", "s"), ("es", "t</w>")]), end="")
    #version: 0.2
    e s
    es t</w>
    """
    header = f"#version: {'.'.join(map(str, version))}\n"
    return header + "".join(f"{first} {second}\n" for first, second in merges)


def parse_codes(text: str, *, source: str = "codes", max_merges: int | None = None) -> Codes:
    """Read the text of a codes file; without a ``#version`` header it is version 0.1.

    Only the first ``max_merges`` merges are kept when given (subword-nmt's ``--merges``).
    Raises ``ValueError`` naming ``source`` and the line of a malformed entry.

    >>> parse_codes("#version: 0.2\\ne s\\nes t</w>\\n", max_merges=1)
    Codes(merges=[('e', 's')], version=(0, 2))
    """
    lines = text.rstrip("\n").split("\n")  # only LF ends a line: symbols may hold \x85 or \u2028
    first_line = 1
    version = (0, 1)
    if lines and lines[0].startswith("#version:"):
        version = _parse_version(lines[0], source)
        lines = lines[1:]
        first_line = 2
    if max_merges is not None:
        lines = lines[:max_merges]
    merges: list[Pair] = []
    for number, line in enumerate(lines, first_line):
        parts = line.strip(STRIP).split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(
                f"{source}, line {number}: expected two symbols separated by a space, got {line!r}"
            )
        merges.append((parts[0], parts[1]))
    return Codes(merges, version)


def _parse_version(line: str, source: str) -> tuple[int, int]:
    # "#version: 0.2" and "#version: 0.2.0" are the same version.
    number = re.sub(r"(\.0+)*$", "", line.split()[-1])
    try:
        parts = tuple(int(part) for part in number.split("."))
    except ValueError:
        raise ValueError(f"{source}, line 1: bad version header {line!r}") from None
    if parts not in ((0, 1), (0, 2)):
        raise ValueError(f"{source}, line 1: codes version {number} is not supported (0.1, 0.2)")
    return (parts[0], parts[1])


def read_codes(path: str | os.PathLike[str], *, max_merges: int | None = None) -> Codes:
    """Read a codes file written by subword-nmt's ``learn-bpe`` (or :func:`write_codes`)."""
    with open(path, "rb") as f:
        text = "".join(decode_utf8([f.read()], name=os.fspath(path)))
    return parse_codes(text, source=os.fspath(path), max_merges=max_merges)


def write_codes(
    path: str | os.PathLike[str],
    merges: Iterable[Pair],
    *,
    version: tuple[int, int] = CODES_VERSION,
) -> None:
    """Write a codes file atomically, in subword-nmt's format."""
    with atomic_output(path) as f:
        f.write(format_codes(merges, version=version).encode("utf-8"))
