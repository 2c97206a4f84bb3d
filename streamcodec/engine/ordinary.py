"""Ordinary text (no special tokens) to ids: pre-tokens, then pieces, then ids.

This is the composer :class:`streamcodec.Encoding` wraps, the one place where the layers below
meet. The text is cut into pre-tokens by the pattern (:mod:`streamcodec.text.pretokenize`); each
pre-token's UTF-8 bytes are a *piece*, turned into ids by
:class:`~streamcodec.pieces.PieceEncoder` (which equals :func:`streamcodec.reference.rank_merge`).
With the byte-mode pattern the text is one piece, merged by :class:`~streamcodec.pieces.ByteMode`.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> engine = OrdinaryEncoder(CL100K_PATTERN, {bytes([b]): b for b in range(256)})
    >>> engine.encode("ab ab")
    [97, 98, 32, 97, 98]
    >>> engine.count("ab ab")
    5

Three paths, chosen once (:mod:`streamcodec.engine.backend`), all equal:

- **fused** (compiled, the pattern known to the native scanner): one C pass
  (``streamcodec.engine._fused``) cuts each piece, looks it up whole, then in a bounded word
  cache, and merges it on a miss, with the GIL released; the ids land in one uint32 buffer that
  becomes a list, an array (no copy) or only a count.
- **compiled pieces** (compiled, any other pattern): ``regex`` cuts the pieces, the compiled
  core merges them all in one call (``Core.encode_pieces``).
- **pure Python**, the readable twin: real text repeats itself, so ids are cached
  (:class:`~streamcodec.engine.cache.IdCache`, bounded by ``cache_bytes`` as the fused pass's
  word cache is, one cache shared by threads). For the named patterns the text is first cut
  into *words* (:meth:`Pretokenizer.words`): each word ends where the pattern must end a piece
  whatever follows, so its ids do not depend on its neighbours, and whole words are cached too.
  One cache holds words and pieces alike: a string has the same ids whether it is a word or a
  piece. Missing words are cut into pieces together, in one pass. Keys are only stored when
  they are valid UTF-8: text with lone surrogates under ``errors="surrogateescape"`` skips the
  cache, so no cached answer depends on the mode.

Why a cached answer is always right (the ids of a piece depend on its bytes alone): see
docs/performance.md, "The word cache".
"""

from __future__ import annotations

import array
import functools
import warnings
from collections.abc import Mapping
from itertools import accumulate, chain
from typing import Any

from streamcodec.arguments import whole_number
from streamcodec.engine.backend import Backend, compiled_module, resolve_backend
from streamcodec.engine.cache import ENTRY_BYTES, IdCache, Ids
from streamcodec.pieces import ByteMode, PieceEncoder
from streamcodec.pieces.ranks import Ranks, as_ranks
from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.text.unicode import has_surrogates
from streamcodec.vocab import BYTE_MODE_PATTERN

__all__ = ["DEFAULT_CACHE_BYTES", "OrdinaryEncoder", "cache_size_as_bytes"]

#: The bound of the fused pass's word cache, per thread encoding at once, and of the pure
#: path's cache (``cache_bytes``).
DEFAULT_CACHE_BYTES = 32 << 20


class OrdinaryEncoder:
    """Ordinary text to ids with ``pattern`` and ``ranks``. ``backend`` as for
    :class:`streamcodec.Encoding`; the attribute ``backend`` is the path taken ("python" in byte
    mode, and for vocabularies the core does not take). ``cache_bytes`` bounds the caches (0:
    none): the fused pass's word cache per thread encoding at once, the pure path's cache of
    words and pieces (one, shared by threads)."""

    def __init__(
        self,
        pattern: str,
        ranks: dict[bytes, int] | Ranks,
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        backend: str | None = None,
    ) -> None:
        cache_bytes = whole_number("cache_bytes", cache_bytes)  # 0: no word cache
        self.pattern = pattern
        chosen = resolve_backend(backend)
        self.pretokenizer = Pretokenizer(pattern, native=chosen == "native")
        byte_mode = pattern == BYTE_MODE_PATTERN
        self._given = given = as_ranks(ranks)
        self._core = _compiled_core(given) if chosen == "native" and not byte_mode else None
        if self._core is None:  # the Python path reads a dict: packed ranks make theirs now
            given.ranks()
        # No pre-tokenization: the text is one piece, merged between the cuts no token crosses.
        self.byte_mode = ByteMode(self._ranks) if byte_mode else None
        self._cache = IdCache(cache_bytes=cache_bytes)
        scanner = self.pretokenizer.scanner if self._core is not None else None
        self._fused: Any = None
        if scanner is not None:
            fused = compiled_module("engine._fused")
            self._fused = fused.FusedEncoder(self._core, scanner.number, cache_bytes=cache_bytes)
        self.backend: Backend = "python" if self._core is None else "native"
        #: The known pattern (``"llama3"``...) the native scanner cuts ``pattern`` as, or None.
        self.native_pattern = scanner.name if scanner is not None else None

    @property
    def _ranks(self) -> Mapping[bytes, int]:
        """The ranks as a mapping (packed ones made a dict the first time)."""
        return self._given.ranks()

    @functools.cached_property
    def encode_piece(self) -> PieceEncoder:
        """One piece's bytes to ids in Python (the pure path's; on the compiled paths only for
        ``Encoding._encode_single_piece``)."""
        return self.byte_mode or PieceEncoder(self._ranks)

    @functools.cached_property
    def longest_token(self) -> int:
        """The bytes of the longest token: ``n`` bytes of text give at least ``n / longest_token``
        ids, which settles a count limit without encoding (``Encoding.count_tokens``)."""
        return self._given.longest

    def encode(
        self,
        text: str,
        errors: str = "strict",
        *,
        start: int = 0,
        end: int | None = None,
        whole_piece: bool = True,
    ) -> list[int]:
        """The ids of ``text[start:end]`` (the slice ends the text).

        With ``errors="strict"`` a lone surrogate raises ``UnicodeEncodeError`` (the caller
        decides what it means); with ``"surrogateescape"`` it stands for the byte it escapes.
        ``whole_piece=False`` says the slice is a part, cut at a safe cut, of a longer ordinary
        text, so the whole-piece rule does not apply to the slice as a whole: this matters in
        byte mode only, where the text is one piece.
        """
        if end is None:
            end = len(text)
        if self._fused is not None:
            ids: list[int] = self._fused.encode(text, start, end, errors)
            return ids
        if self.pretokenizer.steps is not None:
            return self._encode_steps(text, errors, start, end)
        if self.byte_mode is not None and not whole_piece:
            data = text[start:end].encode("utf-8", errors)
            return self.byte_mode.encode(data, whole_piece=False) if data else []
        if self._core is not None:
            pieces = self.pretokenizer.pieces(text, start, end)
            ids = self._core.encode_pieces(pieces, errors=errors)
            return ids
        return self._encode_cached(text, errors, start, end)

    def encode_uint32(
        self, text: str, errors: str = "strict", *, start: int = 0, end: int | None = None
    ) -> memoryview:
        """:meth:`encode` as a memoryview of uint32s (``numpy.frombuffer(view,
        dtype=numpy.uint32)`` takes them with no copy): the fused pass's own buffer, else an
        ``array.array``'s."""
        if end is None:
            end = len(text)
        if self._fused is not None:
            return memoryview(self._fused.encode_array(text, start, end, errors))
        return memoryview(array.array("I", self.encode(text, errors, start=start, end=end)))

    def encode_uint32_clean(self, text: str, pair: str) -> tuple[memoryview, int]:
        """:meth:`encode_uint32` of the whole of ``text``, and a place before which ``pair`` (two
        ASCII characters, not NUL) starts nowhere in it: the fused pass looks for it as it
        encodes, each part of the text just before the part is encoded
        (``engine/_fused_parts.h``); 0 where no pass looks."""
        if self._fused is None:
            return self.encode_uint32(text), 0
        ids, clean = self._fused.encode_array(text, 0, len(text), "strict", pair)
        return memoryview(ids), clean

    def count(
        self,
        text: str,
        errors: str = "strict",
        *,
        start: int = 0,
        end: int | None = None,
        whole_piece: bool = True,
        limit: int | None = None,
    ) -> int:
        """``len(self.encode(...))``; the fused pass builds no ids for it. With ``limit``, any
        number above ``limit`` once the count passes it (the fused pass stops there)."""
        if end is None:
            end = len(text)
        if self._fused is not None:
            count: int = self._fused.count(text, start, end, errors, -1 if limit is None else limit)
            return count
        return len(self.encode(text, errors, start=start, end=end, whole_piece=whole_piece))

    def cache_info(self) -> dict[str, int]:
        """The caches, in bytes. The fused pass's word caches (idle ones): ``hits``,
        ``misses`` (of the first level and of the sets), ``merges`` (pieces no level held),
        ``bytes``, ``caches`` made (one: calls at once and a batch's threads share it),
        ``private_bytes`` and ``private_caches`` (their own beside it, idle, each within half
        the bound), ``sharing`` (1 while calls at once read it), ``id_buffer_bytes`` (a batch's
        threads' id buffers and the buffers of freed id arrays, a batch's or a large one of
        :meth:`encode_uint32`, idle, kept for the next: at most four times the bound together)
        and ``bytes_each`` (the bound); the pure path's one cache: ``bytes`` (charged, see
        :mod:`streamcodec.engine.cache`), ``entries`` and ``bytes_each``; empty on the
        compiled-pieces path, which caches nothing."""
        if self._fused is not None:
            return dict(self._fused.cache_info())
        return self._cache.info() if self._core is None else {}

    def _encode_steps(self, text: str, errors: str, start: int, end: int) -> list[int]:
        """A Sequence of pre-tokenizer steps: its pieces are bytes, a cut may split a character
        (:mod:`streamcodec.text.sequence`)."""
        assert self.pretokenizer.steps is not None
        pieces = self.pretokenizer.steps.byte_pieces(text, start, end, errors)
        if self._core is not None:
            escaped = [piece.decode("utf-8", "surrogateescape") for piece in pieces]
            ids: list[int] = self._core.encode_pieces(escaped, errors="surrogateescape")
            return ids
        return [token for piece in pieces for token in self.encode_piece(piece)]

    def _encode_cached(self, text: str, errors: str, start: int, end: int) -> list[int]:
        """The pure path: words, then pieces, through the cache (the module docstring)."""
        if errors != "strict" and has_surrogates(text, start, end):
            return [
                token
                for piece in self.pretokenizer.pieces(text, start, end)
                for token in self.encode_piece(piece.encode("utf-8", errors))
            ]
        words = self.pretokenizer.words(text, start, end)
        if words is not None and len(words) > 1 and self._cache.cache_bytes:
            first, last = words[0], words[-1]
            ids = self._cache.flat(
                words, lambda missing: self._new_words(missing, first, last), give_up=0.1
            )
            if ids is not None:
                return ids
        pieces = self.pretokenizer.pieces(text, start, end)
        found = self._cache.flat(pieces, self._new_pieces)
        assert found is not None  # never gives up
        return found

    def _new_pieces(self, pieces: list[str]) -> list[tuple[str, Ids]]:
        data = list(map(str.encode, pieces))
        # Most new pieces are tokens themselves (the whole-piece rule): look them up in C.
        ids: list[Ids] = list(zip(map(self._ranks.get, data)))  # type: ignore[arg-type]
        encode_piece = self.encode_piece
        for i, found in enumerate(ids):
            if found[0] is None:
                ids[i] = tuple(encode_piece(data[i]))
        return list(zip(pieces, ids, strict=True))

    def _new_words(self, words: list[str], first: str, last: str) -> list[tuple[str, Ids]]:
        """Cut all ``words`` into pieces in one pass. Words are cut independently, so joined
        they give the same pieces, provided the text's first word (which may lack the leading
        space) comes first and its last word (which may end in whitespace) comes last."""
        if first in words:
            words.remove(first)
            words.insert(0, first)
        # (If first == last, and there are other words, it starts with a space and ends with
        # something else, so it may go anywhere.)
        if last != first and last in words:
            words.remove(last)
            words.append(last)
        pieces = self.pretokenizer.pieces("".join(words))
        ids = self._cache.each(pieces, self._new_pieces)
        # Word ends are piece ends: find each one's piece, then its token, then slice the ids.
        piece_at = dict(zip(accumulate(map(len, pieces)), range(1, len(pieces) + 1), strict=True))
        token_at = [0, *accumulate(map(len, ids))]
        ends = [
            0,
            *map(token_at.__getitem__, map(piece_at.__getitem__, accumulate(map(len, words)))),
        ]
        flat = tuple(chain.from_iterable(ids))
        slices = map(slice, ends, ends[1:])
        return list(zip(words, map(flat.__getitem__, slices), strict=True))


def cache_size_as_bytes(cache_size: object, *, cache_bytes: int) -> int:
    """The deprecated ``cache_size`` (entries of the pure path's cache) as ``cache_bytes``, at
    ``ENTRY_BYTES`` an entry, with a ``DeprecationWarning`` saying what to give instead;
    ``cache_bytes`` is what the caller gave too (a ``ValueError`` unless the default)."""
    entries = whole_number("cache_size", cache_size)
    if cache_bytes != DEFAULT_CACHE_BYTES:
        raise ValueError("cache_size and cache_bytes both given: give cache_bytes only")
    converted = entries * ENTRY_BYTES
    warnings.warn(
        f"cache_size is deprecated: give cache_bytes={converted} (the caches' bound in bytes, "
        f"on both paths; {ENTRY_BYTES} bytes for a typical entry of the pure path's cache)",
        DeprecationWarning,
        stacklevel=3,  # the caller of Encoding()
    )
    return converted


def _compiled_core(ranks: Ranks) -> Any:
    """The compiled core's tables for ``ranks`` (``streamcodec.pieces._core.Core``; packed ranks
    read as they are, no dict made), or None when it cannot take the vocabulary (a rank outside
    0..2**32-2, a single byte that is no token: the Python path handles those; damaged packed
    ranks: the dict's error says so)."""
    try:
        return ranks.compiled(compiled_module("pieces._core").Core)
    except (ValueError, TypeError):
        return None
