"""``import streamcodec as tiktoken`` for code that is not yours: one module per tiktoken name.

A client library writes ``import tiktoken``; to run it on streamcodec, map the name first::

    import sys, streamcodec
    sys.modules["tiktoken"] = streamcodec
    import tokencost  # its tiktoken.encoding_for_model(...) is streamcodec's

Python then imports ``tiktoken.load``, ``tiktoken.model``, ``tiktoken.registry`` and
``tiktoken.core`` from streamcodec's folder, as *new* copies of ``streamcodec.load`` and so on:
two model tables, two registries. Each of those modules ends with :func:`same_module`, which
puts the ``streamcodec.*`` module in the copy's place, so there is one of each whatever name
imported it.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["same_module"]


def same_module(name: str, canonical: str) -> None:
    """Make ``sys.modules[name]`` the module ``canonical`` when the two names differ.

    Called at the end of a module with its ``__name__``: the import statement then returns
    the canonical module (importlib reads ``sys.modules`` after running the module's code).
    """
    if name != canonical:
        sys.modules[name] = importlib.import_module(canonical)
