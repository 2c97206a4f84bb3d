"""streamcodec: streaming, exact, tiktoken-compatible byte-level BPE.

>>> import streamcodec
>>> enc = streamcodec.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> enc.decode([15339, 1917])
'hello world'
"""

from streamcodec.encoding import DisallowedSpecialTokenError, Encoding
from streamcodec.registry import get_encoding, list_encoding_names
from streamcodec.stream import InvalidUTF8Error, StreamDecoder, StreamEncoder
from streamcodec.training import train
from streamcodec.vocab import VocabularyError

__all__ = [
    "DisallowedSpecialTokenError",
    "Encoding",
    "InvalidUTF8Error",
    "StreamDecoder",
    "StreamEncoder",
    "VocabularyError",
    "get_encoding",
    "list_encoding_names",
    "train",
]
__version__ = "0.1.0"
