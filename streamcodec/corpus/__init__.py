"""A corpus for training: many files in, token shards out, exact, resumable, local or on Dask.

    >>> import streamcodec.corpus  # doctest: +SKIP
    >>> streamcodec.corpus.tokenize(["data/"], "tokens/", jobs=2)  # doctest: +SKIP
    >>> for ids in streamcodec.corpus.read_documents("tokens/"): ...  # doctest: +SKIP

Modules, bottom up: ``files`` (an input file checked and decompressed to its proper end),
``inputs`` (files, folders, globs, documents), ``plan`` (which input ranges make each shard),
``shards`` (the ``.npy`` writer), ``manifest``, ``job`` (one shard's work), ``tokenize`` (the
run, resumed), ``cluster`` (the run on Dask) and ``check`` (shards against the manifest and the
inputs). docs/corpus.md has the format and the figures.
"""

from __future__ import annotations

import importlib
import sys
import types

from streamcodec.lazy import imported

TYPE_CHECKING = False  # not typing's (the command's start)
if TYPE_CHECKING:
    from typing import Any

    from streamcodec.corpus.check import check_corpus
    from streamcodec.corpus.tokenize import read_documents, tokenize

__all__ = ["check_corpus", "read_documents", "tokenize"]

# Imported when first asked for: ``count`` and ``encode`` read their input through ``files`` and
# ``document``, and importing the run and the check with them was 11 ms of their start.
_HOMES = {"check_corpus": "check", "read_documents": "tokenize", "tokenize": "tokenize"}


if not TYPE_CHECKING:  # mypy reads the names above (and no other: ``_jsonl`` has no stub)

    def __getattr__(name: str) -> Any:
        """The public names, imported when first asked for."""
        return imported(globals(), __name__, _HOMES, name)


class _Package(types.ModuleType):
    """This package, where ``tokenize`` is always the function: importing the module of that
    name (by any path) makes Python set it as the package's attribute, which an eager import
    of the function overrode; the name now stays the function's."""

    def __setattr__(self, name: str, value: object) -> None:
        if not (name == "tokenize" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its import (dill, which pickles a plain module of a source tree by value,
        # takes no module of another class: a datasets generator hashed with it).
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _Package
