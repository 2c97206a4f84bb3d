"""Choosing the path: the compiled code or its pure-Python twin, read in one place.

The compiled code (the piece encoder ``streamcodec.pieces._core``, the scanner
``streamcodec.text._scan`` and the fused pass ``streamcodec.engine._fused``) is built on install
when a C compiler is there; without one streamcodec is pure Python. ``backend()`` says which path
new encodings take, and the environment variable ``STREAMCODEC_BACKEND`` chooses: ``python``
forces the pure path, ``native`` makes a missing build an error, ``auto`` (or unset) takes the
compiled code when it is built. This module is the only reader of that variable: the layers
below take the choice as an argument (``Pretokenizer(native=...)``), so one choice reaches every
native part.

    >>> backend() in ("native", "python")
    True
    >>> resolve_backend("python")
    'python'

Both paths give the same ids for every input (tests/test_native.py, the fuzz campaign): the
compiled code is a translation of the Python functions it names, not a new algorithm.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import Literal, NoReturn

__all__ = ["BACKENDS", "BACKEND_ENV", "Backend", "backend", "resolve_backend"]

BACKEND_ENV = "STREAMCODEC_BACKEND"
BACKENDS = ("auto", "native", "python")
Backend = Literal["native", "python"]

# Built together by setup.py: all three or none (a partial build says which is missing).
_COMPILED = ("streamcodec.pieces._core", "streamcodec.text._scan", "streamcodec.engine._fused")


@functools.cache
def _load_compiled() -> str | None:
    """None when the compiled modules import, else why not."""
    for name in _COMPILED:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return f"{name}: {exc}"
    return None


def compiled_module(name: str) -> ModuleType:
    """One of the compiled modules (``"pieces._core"``...), once :func:`resolve_backend` chose
    the native path."""
    return importlib.import_module(f"streamcodec.{name}")


def raise_missing_core(reason: str, *, source: str) -> NoReturn:
    """Raise the error for a native backend that was asked for and is not built."""
    raise ImportError(
        f"{source} asks for the native backend, but streamcodec's compiled code is not built "
        f"({reason}). Reinstall streamcodec where a C compiler and the Python headers are "
        f"(pip install --force-reinstall --no-cache-dir streamcodec), or use the pure-Python "
        f"path ({BACKEND_ENV}=python)."
    )


def resolve_backend(requested: str | None = None) -> Backend:
    """The backend for ``requested`` ("auto", "native", "python"; ``None`` reads
    ``STREAMCODEC_BACKEND``). Raises ``ValueError`` for another name and ``ImportError`` when
    "native" is asked for and the compiled code is not built."""
    source = "backend=" + repr(requested)
    if requested is None:
        requested = os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"
        source = f"{BACKEND_ENV}={requested}"
    if requested not in BACKENDS:
        raise ValueError(f"{source}: the backend is one of {', '.join(BACKENDS)}")
    if requested == "python":
        return "python"
    missing = _load_compiled()
    if missing is not None:
        if requested == "native":
            raise_missing_core(missing, source=source)
        return "python"
    return "native"


def backend() -> Backend:
    """The path new encodings take: ``"native"`` (the compiled code) or ``"python"``."""
    return resolve_backend()
