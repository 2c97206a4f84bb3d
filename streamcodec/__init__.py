"""streamcodec: streaming, exact, tiktoken-compatible byte-level BPE.

>>> import streamcodec
>>> enc = streamcodec.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> enc.decode([15339, 1917])
'hello world'

It is a drop-in for tiktoken: ``import streamcodec as tiktoken``, or, for a library that imports
tiktoken itself, ``sys.modules["tiktoken"] = streamcodec`` first (see :mod:`streamcodec.dropin`).
"""

from __future__ import annotations

import importlib

from streamcodec.lazy import imported

TYPE_CHECKING = False  # not typing's: ``import typing`` alone costs more than all of this
if TYPE_CHECKING:
    from typing import Any

    from streamcodec.encoding import DisallowedSpecialTokenError, Encoding
    from streamcodec.engine.backend import backend
    from streamcodec.formats.open_model import load_encoding
    from streamcodec.model import encoding_for_model, encoding_name_for_model
    from streamcodec.registry import get_encoding, list_all_encoding_names, list_encoding_names
    from streamcodec.stream import InvalidUTF8Error, StreamDecoder, StreamEncoder, Window
    from streamcodec.training import train
    from streamcodec.vocab import VocabularyError

# Where each public name lives: loaded on first use, so ``import streamcodec`` loads nothing
# (the command line handles signals before it loads the rest: streamcodec/__main__.py).
_HOMES = {
    "DisallowedSpecialTokenError": "encoding",
    "Encoding": "encoding",
    "encoding_for_model": "model",
    "encoding_name_for_model": "model",
    "backend": "engine.backend",
    "get_encoding": "registry",
    "list_all_encoding_names": "registry",
    "list_encoding_names": "registry",
    "load_encoding": "formats.open_model",
    "InvalidUTF8Error": "stream",
    "StreamDecoder": "stream",
    "StreamEncoder": "stream",
    "Window": "stream",
    "train": "training",
    "VocabularyError": "vocab",
}

__all__ = [
    "DisallowedSpecialTokenError",
    "Encoding",
    "InvalidUTF8Error",
    "StreamDecoder",
    "StreamEncoder",
    "VocabularyError",
    "Window",
    "backend",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_all_encoding_names",
    "list_encoding_names",
    "load_encoding",
    "train",
]
__version__ = "0.1.0"

# tiktoken's module names that client code reaches as attributes (``tiktoken.load.read_file``,
# ``tiktoken.model.MODEL_TO_ENCODING``: tiktoken imports them all), and ``streamcodec.formats``
# and ``streamcodec.corpus``.
_LAZY_MODULES = frozenset({"formats", "load", "core", "model", "registry", "corpus"})


def __getattr__(name: str) -> Any:
    """The public names and the modules of ``_LAZY_MODULES``, imported when first asked for."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f"streamcodec.{name}")
    return imported(globals(), "streamcodec", _HOMES, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES, *_LAZY_MODULES})
