"""tiktoken's lesser ``Encoding`` methods, with tiktoken's exact semantics.

Each function here equals the tiktoken method it is named after (tiktoken 0.14's ``core.py``
and ``src/lib.rs``); :class:`streamcodec.Encoding` calls them.

* :func:`encode_with_unstable`: the ids of a text that later text cannot change, and every
  sequence of ids that may follow them once the text goes on (completions of a prefix);
* :func:`encode_bytes_tiktoken`: ``_encode_bytes``, tiktoken's guess for bytes that are not
  UTF-8 (streamcodec's own lossless answer is ``Encoding.encode_bytes``);
* ``_encode_single_piece`` and ``_encode_only_native_bpe`` are one-liners in ``Encoding``.

Two rules decide what is "unstable" (both tiktoken's): the tokens of the last pre-token may
change when text is appended; and a run of all-whitespace tokens before it may too, since a
pattern such as ``\\s*[\\r\\n]+`` can swallow it into the next piece.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> stable, completions = enc.encode_with_unstable("hello fanta")
    >>> stable, [8842] in completions  # "hello" is settled; " fanta" may become " fantasy"...
    ([15339], True)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

__all__ = ["encode_bytes_tiktoken", "encode_with_unstable", "widen_to_spaces"]

Merge = Callable[[bytes], list[int]]

# Rust's char::is_whitespace (the White_Space property); str.isspace also takes U+001C-U+001F.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def widen_to_spaces(tokens: list[int], count: int, decoder: dict[int, bytes]) -> int:
    """tiktoken's ``_increase_last_piece_token_len``: when the last piece's first token is all
    spaces, tabs and newlines, the whitespace tokens before it are unstable too.

    ``decoder`` holds the mergeable tokens only: a special token is never whitespace.
    """

    def all_space(token: int) -> bool:
        data = decoder.get(token)
        return data is not None and all(byte in b" \n\t" for byte in data)

    if count > 0 and all_space(tokens[-count]):
        while count < len(tokens) and all_space(tokens[-count - 1]):
            count += 1
    return count


def encode_with_unstable(
    tokens: list[int],
    count: int,
    *,
    decoder: dict[int, bytes],
    sorted_tokens: Sequence[bytes],
    ranks: dict[bytes, int],
    encode_ordinary: Callable[[str], list[int]],
    merge: Merge,
) -> tuple[list[int], list[list[int]]]:
    """tiktoken's ``_encode_unstable_native`` given the ids of the text and ``count``, how many
    of them the last pre-token gave (0 when a special token ends the text): the stable ids,
    and the possible completions."""
    if count == 0:
        return tokens, []
    count = widen_to_spaces(tokens, count, decoder)
    unstable = b"".join(decoder[token] for token in tokens[len(tokens) - count :])
    stable = tokens[: len(tokens) - count]
    if not unstable:
        return stable, []
    completions: set[tuple[int, ...]] = {
        (ranks[token],) for token in _starting_with(sorted_tokens, unstable)
    }
    for i in range(1, len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        for token in _starting_with(sorted_tokens, suffix):
            possibility = prefix + token
            try:
                encoded = encode_ordinary(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = merge(possibility)
            completions.add(_covering(encoded, len(unstable), decoder))
    if len(unstable) > 1:
        size = _last_char_size(unstable)
        if size and size < len(unstable) and unstable[-size:].decode("utf-8") in _WHITE_SPACE:
            completions.add(tuple(merge(unstable[:-size]) + merge(unstable[-size:])))
    return stable, [list(completion) for completion in completions]


def encode_bytes_tiktoken(
    data: bytes,
    valid: int,
    tokens: list[int],
    count: int,
    *,
    decoder: dict[int, bytes],
    ranks: dict[bytes, int],
    merge: Merge,
) -> list[int]:
    """tiktoken's ``_encode_bytes`` for ``data`` whose first ``valid`` bytes are UTF-8, given
    the ids of those bytes and ``count``, how many of them their last pre-token gave.

    The last piece's tokens are taken back and merged again together with the invalid rest,
    as one piece (tiktoken: "this likely matches what models see better").
    """
    count = widen_to_spaces(tokens, count, decoder)
    if tokens and count > 0:
        unstable = b"".join(decoder[token] for token in tokens[len(tokens) - count :])
        unstable += data[valid:]
        tokens = tokens[: len(tokens) - count]
    else:
        unstable = data[valid:]
    if unstable:
        token = ranks.get(unstable)
        tokens = tokens + ([token] if token is not None else merge(unstable))
    return tokens


def _starting_with(sorted_tokens: Sequence[bytes], prefix: bytes) -> Iterable[bytes]:
    """The tokens that start with ``prefix`` (``sorted_tokens`` is sorted)."""
    point = bisect.bisect_left(sorted_tokens, prefix)
    while point < len(sorted_tokens) and sorted_tokens[point].startswith(prefix):
        yield sorted_tokens[point]
        point += 1


def _covering(encoded: list[int], length: int, decoder: dict[int, bytes]) -> tuple[int, ...]:
    """The first ids of ``encoded`` whose bytes reach ``length``."""
    covered = 0
    for i, token in enumerate(encoded):
        covered += len(decoder[token])
        if covered >= length:
            return tuple(encoded[: i + 1])
    return tuple(encoded)


def _last_char_size(data: bytes) -> int:
    """The length of the UTF-8 character that ends ``data``; 0 if it does not end in one."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            if len(data[-size:].decode("utf-8")) == 1:
                return size
        except UnicodeDecodeError:
            continue
    return 0
