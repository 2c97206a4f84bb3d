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

import importlib
import types

from streamcodec.encoding import DisallowedSpecialTokenError, Encoding
from streamcodec.model import encoding_for_model, encoding_name_for_model
from streamcodec.pieces.native import backend
from streamcodec.registry import get_encoding, list_all_encoding_names, list_encoding_names
from streamcodec.stream import InvalidUTF8Error, StreamDecoder, StreamEncoder, Window
from streamcodec.training import train
from streamcodec.vocab import VocabularyError

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
    "train",
]
__version__ = "0.1.0"

# Loaded on first use, so that ``import streamcodec`` stays cheap: ``streamcodec.formats``, and
# tiktoken's module names that client code reaches as attributes (``tiktoken.load.read_file``).
_LAZY_MODULES = frozenset({"formats", "load", "core"})


def __getattr__(name: str) -> types.ModuleType:
    """The modules of ``_LAZY_MODULES``, imported when first asked for."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f"streamcodec.{name}")
    raise AttributeError(f"module 'streamcodec' has no attribute {name!r}")
