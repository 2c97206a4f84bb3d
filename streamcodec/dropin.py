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

Some libraries pick their adapter by the class's name: chonkie 1.7 looks for "tiktoken" in
``str(type(enc))``. :class:`PresentsAsTiktoken`, the metaclass of ``streamcodec.Encoding``,
makes that ``<class 'tiktoken.core.Encoding'>``, tiktoken's own, while ``tiktoken`` is mapped to
streamcodec, and ``<class 'streamcodec.encoding.Encoding'>`` otherwise: the class is the same
object either way, only its name as printed follows the swap.

    >>> import streamcodec
    >>> str(streamcodec.Encoding)
    "<class 'streamcodec.encoding.Encoding'>"
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["PresentsAsTiktoken", "same_module"]


def same_module(name: str, canonical: str) -> None:
    """Make ``sys.modules[name]`` the module ``canonical`` when the two names differ.

    Called at the end of a module with its ``__name__``: the import statement then returns
    the canonical module (importlib reads ``sys.modules`` after running the module's code).
    """
    if name != canonical:
        sys.modules[name] = importlib.import_module(canonical)


class PresentsAsTiktoken(type):
    """The metaclass of ``streamcodec.Encoding``: under ``sys.modules["tiktoken"] =
    streamcodec``, the class prints as tiktoken's (subclasses print as themselves)."""

    def __repr__(cls) -> str:
        swapped = sys.modules.get("tiktoken") is sys.modules.get("streamcodec") is not None
        if swapped and cls.__qualname__ == "Encoding" and cls.__module__ == "streamcodec.encoding":
            return "<class 'tiktoken.core.Encoding'>"
        return super().__repr__()
