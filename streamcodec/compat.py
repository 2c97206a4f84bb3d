"""tiktoken's lesser ``Encoding`` methods, with tiktoken's exact semantics.

:class:`TiktokenMethods` is a base class of :class:`streamcodec.Encoding`; each method and
function here equals the tiktoken one it is named after (tiktoken 0.14's ``core.py`` and
``src/lib.rs``). It needs of the encoding only what :class:`Compatible` names.

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
    >>> stable, [18884] in completions  # "hello" is settled; " fanta" may become " fantasy"
    ([15339], True)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from streamcodec.text.specials import (
    AllowedSpecial,
    DisallowedSpecial,
    allowed_special_matches,
    refuse_disallowed,
    special_pair,
    special_policy,
    special_token_regex,
)
from streamcodec.text.unicode import encode_replacing_surrogates

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from streamcodec.engine.ordinary import OrdinaryEncoder

__all__ = [
    "Compatible",
    "TiktokenMethods",
    "encode_bytes_tiktoken",
    "encode_with_unstable",
    "widen_to_spaces",
]

Merge = Callable[[bytes], list[int]]
TokenBytes = Callable[[int], bytes]


class Compatible(Protocol):
    """What the methods need of an encoding (:class:`streamcodec.Encoding` is one)."""

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text -> id."""

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank."""

    @property
    def ordinary(self) -> OrdinaryEncoder:
        """The engine for ordinary text."""

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = ...,
        disallowed_special: DisallowedSpecial = ...,
    ) -> list[int]:
        """The ids of ``text``."""

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text`` without special tokens."""

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is a special token's id."""

    def token_byte_values(self) -> list[bytes]:
        """The mergeable tokens' bytes, sorted."""


def _uint32_refusing(
    ordinary: OrdinaryEncoder, text: str, disallowed: frozenset[str]
) -> memoryview:
    """The ids of ``text`` as uint32s (``encode_uint32``), after :func:`refuse_disallowed` of
    ``disallowed``, as tiktoken checks before it encodes. Where those tokens share their first
    two characters (:func:`special_pair`), the pass looks for them as it encodes, and the check
    goes on from where they first occur: the text is read once, not twice. A lone surrogate
    (``UnicodeEncodeError``): the whole check first, then the text with it replaced, as
    ``encode_replacing_surrogates`` does."""
    pair = special_pair(disallowed)
    if pair is not None:
        try:
            view, clean = ordinary.encode_uint32_clean(text, pair)
        except UnicodeEncodeError:
            pass  # the whole check first, then the replaced text: the path below
        else:
            refuse_disallowed(text, disallowed, start=clean)
            return view
    refuse_disallowed(text, disallowed)
    return encode_replacing_surrogates(
        lambda whole, start, end: ordinary.encode_uint32(whole, start=start, end=end), text
    )


class TiktokenMethods:
    """``encode_to_numpy``, ``decode_with_offsets``, ``encode_with_unstable``, ``_encode_bytes``,
    ``_encode_single_piece`` and ``_encode_only_native_bpe``, as tiktoken's."""

    def encode_to_numpy(
        self: Compatible,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> npt.NDArray[np.uint32]:
        """``encode`` as a numpy array of ``uint32`` (numpy is imported on first use). Text with
        no special token to encode takes the compiled buffer as it is, with no copy."""
        import numpy

        allowed, disallowed = special_policy(
            self.special_tokens, allowed_special, disallowed_special
        )
        if allowed:
            ids = self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
            return numpy.array(ids, dtype=numpy.uint32)
        return numpy.frombuffer(_uint32_refusing(self.ordinary, text, disallowed), numpy.uint32)

    def decode_with_offsets(self: Compatible, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Decode to text and the character offset at which each token starts.

        A token that starts inside a character gets that character's offset. Raises
        ``UnicodeDecodeError`` if the bytes are not valid UTF-8, as tiktoken does.
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            # Continuation bytes (0b10xxxxxx) do not start a character.
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for byte in token if not 0x80 <= byte < 0xC0)
        return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets

    def encode_with_unstable(
        self: Compatible,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The ids of ``text`` that appending text cannot change, and every id sequence that may
        follow them (tiktoken's, "itself unstable"); see :func:`encode_with_unstable`."""
        allowed, disallowed = special_policy(
            self.special_tokens, allowed_special, disallowed_special
        )
        refuse_disallowed(text, disallowed)
        text.encode("utf-8")  # as tiktoken: a lone surrogate raises UnicodeEncodeError here
        tokens, count = _with_last_piece(self, text, allowed)
        return encode_with_unstable(
            tokens,
            count,
            token_bytes=self.decode_single_token_bytes,
            is_special=self.is_special_token,
            sorted_tokens=self.token_byte_values(),
            ranks=self.mergeable_ranks,
            encode_ordinary=self.encode_ordinary,
            merge=self.ordinary.encode_piece.merge,
        )

    def _encode_bytes(self: Compatible, data: bytes) -> list[int]:
        """tiktoken's ``_encode_bytes``: valid UTF-8 as ``encode_ordinary``; after invalid
        bytes, the last piece and all the rest merged as one (lossy where ``encode_bytes`` is
        not); see :func:`encode_bytes_tiktoken`."""
        if not isinstance(data, bytes):
            raise TypeError(f"_encode_bytes: data must be bytes, not {type(data).__name__}")
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        tokens, count = _with_last_piece(self, data[:valid].decode("utf-8"), frozenset())
        return encode_bytes_tiktoken(
            data,
            valid,
            tokens,
            count,
            token_bytes=self.decode_single_token_bytes,
            is_special=self.is_special_token,
            ranks=self.mergeable_ranks,
            merge=self.ordinary.encode_piece.merge,
        )

    def _encode_single_piece(self: Compatible, text_or_bytes: str | bytes) -> list[int]:
        """One piece's ids, without pre-tokenization and without special tokens (tiktoken's)."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        elif not isinstance(text_or_bytes, bytes):
            raise TypeError(
                "_encode_single_piece: text_or_bytes must be str or bytes, not "
                f"{type(text_or_bytes).__name__}"
            )
        return self.ordinary.encode_piece(text_or_bytes)

    def _encode_only_native_bpe(self: Compatible, text: str) -> list[int]:
        """``encode_ordinary`` one piece at a time, without the cache (tiktoken's)."""
        encode_piece = self.ordinary.encode_piece
        return [
            token
            for piece in self.ordinary.pretokenizer.pieces(text)
            for token in encode_piece(piece.encode("utf-8"))
        ]


def _with_last_piece(enc: Compatible, text: str, allowed: frozenset[str]) -> tuple[list[int], int]:
    """The ids of ``text`` and how many of them its last pre-token gave (tiktoken's
    ``last_piece_token_len``: 0 when no ordinary text follows the last special token)."""
    start = 0
    if allowed:
        finder = special_token_regex(frozenset(enc.special_tokens))
        for match in allowed_special_matches(finder, text, allowed):
            start = match.end()
    pieces = enc.ordinary.pretokenizer.pieces(text, start)
    count = len(enc.ordinary.encode_piece(pieces[-1].encode("utf-8"))) if pieces else 0
    return enc.encode(text, allowed_special=allowed, disallowed_special=()), count


# Rust's char::is_whitespace (the White_Space property); str.isspace also takes U+001C-U+001F.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def widen_to_spaces(
    tokens: list[int], count: int, token_bytes: TokenBytes, is_special: Callable[[int], bool]
) -> int:
    """tiktoken's ``_increase_last_piece_token_len``: when the last piece's first token is all
    spaces, tabs and newlines, the whitespace tokens before it are unstable too (a special
    token never counts as whitespace).
    """

    def all_space(token: int) -> bool:
        return not is_special(token) and all(byte in b" \n\t" for byte in token_bytes(token))

    if count > 0 and all_space(tokens[-count]):
        while count < len(tokens) and all_space(tokens[-count - 1]):
            count += 1
    return count


def encode_with_unstable(
    tokens: list[int],
    count: int,
    *,
    token_bytes: TokenBytes,
    is_special: Callable[[int], bool],
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
    count = widen_to_spaces(tokens, count, token_bytes, is_special)
    unstable = b"".join(map(token_bytes, tokens[len(tokens) - count :]))
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
            completions.add(_covering(encoded, len(unstable), token_bytes))
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
    token_bytes: TokenBytes,
    is_special: Callable[[int], bool],
    ranks: dict[bytes, int],
    merge: Merge,
) -> list[int]:
    """tiktoken's ``_encode_bytes`` for ``data`` whose first ``valid`` bytes are UTF-8, given
    the ids of those bytes and ``count``, how many of them their last pre-token gave.

    The last piece's tokens are taken back and merged again together with the invalid rest,
    as one piece (tiktoken: "this likely matches what models see better").
    """
    count = widen_to_spaces(tokens, count, token_bytes, is_special)
    if tokens and count > 0:
        unstable = b"".join(map(token_bytes, tokens[len(tokens) - count :]))
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


def _covering(encoded: list[int], length: int, token_bytes: TokenBytes) -> tuple[int, ...]:
    """The first ids of ``encoded`` whose bytes reach ``length``."""
    covered = 0
    for i, token in enumerate(encoded):
        covered += len(token_bytes(token))
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
