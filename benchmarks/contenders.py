"""The exact encoders benchmarks/throughput.py measures, each as list, numpy and count outputs.

Each contender is built fresh for every timed run (outside the timing): its caches start empty.
The peers are the fastest exact encoders on PyPI (the ``bench`` extra): toktok-rs (``toktok``),
gigatoken-cachefix (``gigatoken``) and snaptokens; a missing one is left out. Their thread pools
are held to one thread (``RAYON_NUM_THREADS=1``, set before they load), so every figure is one
thread. Files the peers load (a ``.tiktoken`` file, a ``tokenizer.json``) are written once into
the folder ``$STREAMCODEC_BENCH_DIR`` names (the parent's, shared with its child processes), or
a temporary one.

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

# snaptokens knows pre-tokenizers by their exact pattern text and refuses possessive quantifiers:
# these are the classic spellings of the patterns (the same pieces; every cell is checked against
# tiktoken's ids).
SNAPTOKENS_PATTERNS = {
    "cl100k_base": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "o200k_base": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


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
            "count": lambda: _counting(giga().encode),
        }
    if importlib.util.find_spec("snaptokens") is not None and name in SNAPTOKENS_PATTERNS:
        import numpy
        import snaptokens

        def snap() -> Any:
            return snaptokens.Tokenizer.from_file(str(_tokenizer_json(name)))

        def flat(tok: Any) -> Callable[[str], Any]:
            return lambda text: numpy.frombuffer(tok.encode_batch_flat([text])[0], numpy.uint32)

        found["snaptokens"] = {
            "list": lambda: (lambda tok: lambda text: tok.encode(text).ids)(snap()),
            "numpy": lambda: flat(snap()),
            "count": lambda: _counting(flat(snap())),
        }
    return found


def _counting(encode: Callable[[str], Any]) -> Callable[[str], int]:
    return lambda text: len(encode(text))


def _listing(encode: Callable[[str], Any]) -> Callable[[str], list[int]]:
    return lambda text: encode(text).tolist()  # type: ignore[no-any-return]


@functools.cache
def folder() -> Path:
    """The folder of the peers' files: ``$STREAMCODEC_BENCH_DIR``, or a temporary one of this
    process (removed when it exits)."""
    named = os.environ.get("STREAMCODEC_BENCH_DIR")
    if named:
        return Path(named)
    made = tempfile.TemporaryDirectory(prefix="streamcodec-bench-")
    _kept.append(made)
    return Path(made.name)


_kept: list[tempfile.TemporaryDirectory[str]] = []


@functools.cache
def _tiktoken_file(name: str) -> Path:
    """The ranks of ``name`` written as a ``.tiktoken`` file (base64 token, rank per line),
    named so that gigatoken knows its pre-tokenizer; once per folder."""
    path = folder() / f"{name}.tiktoken"
    if not path.exists():
        ranks = streamcodec.get_encoding(name).mergeable_ranks
        lines = (f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())
        path.write_text("".join(lines), encoding="ascii")
    return path


@functools.cache
def _tokenizer_json(name: str) -> Path:
    """``name`` as a ``tokenizer.json`` with the pattern snaptokens knows; once per folder."""
    import json

    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import Vocabulary

    path = folder() / f"{name}.json"
    if not path.exists():
        base = streamcodec.get_encoding(name)
        document = huggingface_json(Vocabulary(base.mergeable_ranks, {}, base.pat_str))
        document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = SNAPTOKENS_PATTERNS[
            name
        ]
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def prepare(name: str) -> None:
    """Write the peers' files of ``name`` into :func:`folder` (before child processes read them)."""
    if importlib.util.find_spec("gigatoken") is not None and name in GIGATOKEN_NAMES:
        _tiktoken_file(name)
    if importlib.util.find_spec("snaptokens") is not None and name in SNAPTOKENS_PATTERNS:
        _tokenizer_json(name)
