"""The exact encoders benchmarks/throughput.py measures, each as list, numpy and count outputs.

Each contender is built fresh for every timed run (outside the timing): its caches start empty.
The peers are the fastest exact encoders on PyPI (the ``bench`` extra): toktok-rs (``toktok``)
and gigatoken-cachefix (``gigatoken``); a missing one is left out. Their thread pools are held to
one thread (``RAYON_NUM_THREADS=1``, set before they load), so every figure is one thread.

    >>> outputs = streamcodec_outputs("cl100k_base")
    >>> sorted(outputs)
    ['count', 'list', 'numpy']
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # the peers' pools: one thread, as ours

import tiktoken

import streamcodec

# A maker builds a fresh encoder and returns its encode function for one output.
Maker = Callable[[], Callable[[str], Any]]

GIGATOKEN_NAMES = ("r50k_base", "cl100k_base", "o200k_base")  # it knows their pre-tokenizers


def vocabulary(name: str) -> dict[str, Any]:
    """The constructor arguments of the registered encoding ``name``."""
    base = streamcodec.get_encoding(name)
    ranks, specials = base.mergeable_ranks, base.special_tokens
    return {"pat_str": base.pat_str, "mergeable_ranks": ranks, "special_tokens": specials}


def fresh(name: str, backend: str = "native") -> streamcodec.Encoding:
    """A new ``Encoding`` of the registered vocabulary ``name``: its caches are empty."""
    return streamcodec.Encoding(name, **vocabulary(name), backend=backend)


def twin(name: str) -> tiktoken.Encoding:
    """tiktoken built from the same vocabulary (the baseline of every ratio)."""
    return tiktoken.Encoding(name, **vocabulary(name))


def streamcodec_outputs(name: str) -> dict[str, Maker]:
    """streamcodec's three outputs, each on a fresh ``Encoding``."""
    return {
        "list": lambda: fresh(name).encode_ordinary,
        "numpy": lambda: fresh(name).encode_to_numpy,
        "count": lambda: fresh(name).ordinary.count,
    }


def tiktoken_outputs(name: str) -> dict[str, Maker]:
    """tiktoken's outputs (it counts by building the list)."""
    return {
        "list": lambda: twin(name).encode_ordinary,
        "numpy": lambda: twin(name).encode_to_numpy,
        "count": lambda: _counting(twin(name).encode_ordinary),
    }


def peer_outputs(name: str) -> dict[str, dict[str, Maker]]:
    """The installed peers' outputs, by peer."""
    found: dict[str, dict[str, Maker]] = {}
    if importlib.util.find_spec("toktok") is not None:
        from toktok import _toktok

        def toktok() -> Any:
            return _toktok.Tokenizer(name, "")

        found["toktok-rs"] = {
            "list": lambda: toktok().encode_ordinary,
            "numpy": lambda: toktok().encode_to_numpy,
            "count": lambda: toktok().count,
        }
    if importlib.util.find_spec("gigatoken") is not None and name in GIGATOKEN_NAMES:
        import gigatoken

        path = _tiktoken_file(name)

        def giga() -> Any:
            return gigatoken.Tokenizer.from_tiktoken(path)

        found["gigatoken"] = {
            "list": lambda: _listing(giga().encode),
            "numpy": lambda: giga().encode,
        }
    return found


def _counting(encode: Callable[[str], list[int]]) -> Callable[[str], int]:
    return lambda text: len(encode(text))


def _listing(encode: Callable[[str], Any]) -> Callable[[str], list[int]]:
    return lambda text: encode(text).tolist()  # type: ignore[no-any-return]


@functools.cache
def _folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for this process, removed when it exits."""
    return tempfile.TemporaryDirectory(prefix="streamcodec-bench-")


@functools.cache
def _tiktoken_file(name: str) -> Path:
    """The ranks of ``name`` written as a ``.tiktoken`` file (base64 token, rank per line),
    named so that gigatoken knows its pre-tokenizer; once per process."""
    path = Path(_folder().name) / f"{name}.tiktoken"
    ranks = streamcodec.get_encoding(name).mergeable_ranks
    lines = (f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())
    path.write_text("".join(lines), encoding="ascii")
    return path
