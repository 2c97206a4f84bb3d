"""GPT-2's byte alphabet: each of the 256 bytes written as one printable character.

GPT-2 (and every byte-level BPE file after it: ``tokenizer.json``, GGUF) writes token bytes as
text through a byte-to-unicode map: the 188 printable bytes stand for themselves, the other 68
(space, control characters, ...) become U+0100 and up, so a space is ``Ġ``. Hugging Face's
``ByteLevel`` pre-tokenizer maps the text itself so, and the steps after it see those
characters (:mod:`streamcodec.text.sequence`).

    >>> token_to_unicode(b" the")
    'Ġthe'
    >>> unicode_to_token("Ġthe")
    b' the'
"""

from __future__ import annotations

import itertools

__all__ = ["BYTE_TO_UNICODE", "token_to_unicode", "unicode_to_token", "unicode_to_tokens"]

_PRINTABLE = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
_OTHERS = [b for b in range(256) if b not in _PRINTABLE]
BYTE_TO_UNICODE: dict[int, str] = {b: chr(b) for b in _PRINTABLE} | {
    b: chr(256 + i) for i, b in enumerate(_OTHERS)
}
# Through latin-1, where character i is byte i. Characters outside the alphabet that latin-1
# could still encode go to a lone surrogate, which it cannot, so they fail like the rest.
_TO_UNICODE = str.maketrans({chr(b): c for b, c in BYTE_TO_UNICODE.items()})
_FROM_UNICODE = str.maketrans(
    {chr(i): "\ud800" for i in _OTHERS} | {c: chr(b) for b, c in BYTE_TO_UNICODE.items()}
)


def token_to_unicode(token: bytes) -> str:
    """Token bytes written in GPT-2's byte alphabet."""
    return token.decode("latin-1").translate(_TO_UNICODE)


def unicode_to_token(text: str) -> bytes:
    """The bytes of a token written in GPT-2's byte alphabet; ``ValueError`` names a bad char."""
    try:
        return text.translate(_FROM_UNICODE).encode("latin-1")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(
            f"character {bad!r} (U+{ord(bad):04X}) is not in the byte-level alphabet"
        ) from None


def unicode_to_tokens(texts: list[str]) -> list[bytes]:
    """:func:`unicode_to_token` for many tokens at once (one translation, then slicing)."""
    data = unicode_to_token("".join(texts))
    ends = list(itertools.accumulate(map(len, texts)))
    return [data[end - len(text) : end] for text, end in zip(texts, ends, strict=True)]
