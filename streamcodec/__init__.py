"""streamcodec: streaming, exact, tiktoken-compatible byte-level BPE.

>>> import streamcodec
>>> enc = streamcodec.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> enc.decode([15339, 1917])
'hello world'
"""

import importlib
import types

from streamcodec.encoding import DisallowedSpecialTokenError, Encoding
from streamcodec.pieces.native import backend
from streamcodec.registry import get_encoding, list_encoding_names
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
    "get_encoding",
    "list_encoding_names",
    "train",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> types.ModuleType:
    """``streamcodec.formats`` without importing it first: it is loaded on first use, so that
    ``import streamcodec`` stays cheap."""
    if name == "formats":
        return importlib.import_module("streamcodec.formats")
    raise AttributeError(f"module 'streamcodec' has no attribute {name!r}")
