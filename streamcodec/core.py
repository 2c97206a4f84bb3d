"""``tiktoken.core``'s names: :class:`~streamcodec.encoding.Encoding` and the special-token error.

    >>> from streamcodec.core import Encoding
    >>> Encoding.__module__
    'streamcodec.encoding'

Code written for tiktoken imports ``Encoding`` from here (``from tiktoken.core import Encoding``,
for type hints and ``isinstance``): it is the same class as ``streamcodec.Encoding``.
"""

from __future__ import annotations

from streamcodec.dropin import same_module
from streamcodec.encoding import Encoding
from streamcodec.text.specials import raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]

same_module(__name__, "streamcodec.core")
