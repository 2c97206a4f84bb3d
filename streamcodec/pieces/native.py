"""Choosing the path: the compiled core (:mod:`streamcodec.pieces._core`) or its Python twin.

The core is built on install when a C compiler is there; without one streamcodec is pure
Python. ``backend()`` says which path new encodings take, and the environment variable
``STREAMCODEC_BACKEND`` chooses: ``python`` forces the pure path, ``native`` makes a missing
build an error, ``auto`` (or unset) takes the core when it is built.

    >>> backend() in ("native", "python")
    True
    >>> import re
    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> pieces = re.compile(r"\\w+| ").findall
    >>> ordinary = NativeOrdinary.create(pieces, ranks) if backend() == "native" else None
    >>> ordinary is None or ordinary.encode("ab abc", 0, 6) == [256, 32, 256, 99]
    True

Both paths give the same ids for every input (tests/test_native.py, the fuzz campaign): the core
is a translation of the Python functions it names, not a new algorithm.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Literal, NoReturn

if TYPE_CHECKING:
    from streamcodec.pieces._core import Core

# The pre-tokenizer's ``pieces(text, start, end)``: this package does not import text/.
Pieces = Callable[[str, int, int], list[str]]

__all__ = ["BACKENDS", "BACKEND_ENV", "Backend", "NativeOrdinary", "backend", "resolve_backend"]

BACKEND_ENV = "STREAMCODEC_BACKEND"
BACKENDS = ("auto", "native", "python")
Backend = Literal["native", "python"]


@functools.cache
def _load_core() -> ModuleType | str:
    """The compiled module, or why it cannot be imported."""
    try:
        return importlib.import_module("streamcodec.pieces._core")
    except ImportError as exc:
        return str(exc)


def raise_missing_core(reason: str, *, source: str) -> NoReturn:
    """Raise the error for a native backend that was asked for and is not built."""
    raise ImportError(
        f"{source} asks for the native backend, but streamcodec's compiled core is not built "
        f"({reason}). Reinstall streamcodec where a C compiler and the Python headers are "
        f"(pip install --force-reinstall --no-cache-dir streamcodec), or use the pure-Python "
        f"path ({BACKEND_ENV}=python)."
    )


def resolve_backend(requested: str | None = None) -> Backend:
    """The backend for ``requested`` ("auto", "native", "python"; ``None`` reads
    ``STREAMCODEC_BACKEND``). Raises ``ValueError`` for another name and ``ImportError`` when
    "native" is asked for and the core is not built."""
    source = "backend=" + repr(requested)
    if requested is None:
        requested = os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"
        source = f"{BACKEND_ENV}={requested}"
    if requested not in BACKENDS:
        raise ValueError(f"{source}: the backend is one of {', '.join(BACKENDS)}")
    if requested == "python":
        return "python"
    core = _load_core()
    if isinstance(core, str):
        if requested == "native":
            raise_missing_core(core, source=source)
        return "python"
    return "native"


def backend() -> Backend:
    """The path new encodings take: ``"native"`` (the compiled core) or ``"python"``."""
    return resolve_backend()


class NativeOrdinary:
    """Ordinary text to ids through the compiled core: the pattern's pieces, then
    ``Core.encode_pieces`` (one call per text, without the GIL while it merges).

    It equals the Python path, ``streamcodec.ordinary.OrdinaryEncoder.encode`` (which equals
    encoding each piece with ``streamcodec.pieces.bpe.PieceEncoder``), and needs no cache: a
    piece costs less to merge in C than to look up through Python.
    """

    def __init__(self, pieces: Pieces, core: Core) -> None:
        self._pieces = pieces
        self.core = core

    @classmethod
    def create(cls, pieces: Pieces, ranks: Mapping[bytes, int]) -> NativeOrdinary | None:
        """The native encoder of ``ranks`` (the core must be built), or ``None`` when the core
        cannot take the vocabulary (a rank outside 0..2**32-2 or a single byte that is no
        token: the Python path handles those)."""
        if not isinstance(ranks, dict):
            return None
        from streamcodec.pieces._core import Core

        try:
            return cls(pieces, Core(ranks))
        except (ValueError, TypeError):
            return None

    def encode(self, text: str, start: int, end: int, errors: str = "strict") -> list[int]:
        """The ids of ``text[start:end]`` (the slice ends the text); ``errors`` is "strict"
        (a lone surrogate raises ``UnicodeEncodeError``) or "surrogateescape"."""
        return self.core.encode_pieces(self._pieces(text, start, end), errors=errors)
