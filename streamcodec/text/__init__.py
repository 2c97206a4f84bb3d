"""Text before it becomes pieces: special tokens, UTF-8 and surrogates, pre-tokenization.

:mod:`.specials` finds, refuses and splits off special tokens; :mod:`.unicode` is the one
incremental UTF-8 reader (every byte source is decoded there) and the surrogate rules;
:mod:`.pretokenize` cuts ordinary text into pre-tokens with the encoding's pattern;
:mod:`.offsets` says where each token starts in the text (characters or bytes). This
package imports nothing of streamcodec's but :mod:`streamcodec.vocab`.
"""

from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.text.specials import DisallowedSpecialTokenError
from streamcodec.text.unicode import InvalidUTF8Error

__all__ = ["DisallowedSpecialTokenError", "InvalidUTF8Error", "Pretokenizer"]
