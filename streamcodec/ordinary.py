"""Ordinary text (no special tokens) to ids: pre-tokens, then pieces, then ids.

This is the engine :class:`streamcodec.Encoding` wraps. The text is cut into pre-tokens by the
pattern (:mod:`streamcodec.text.pretokenize`); each pre-token's UTF-8 bytes are a *piece*, turned
into ids by :class:`~streamcodec.pieces.PieceEncoder` (which equals
:func:`streamcodec.reference.rank_merge`). With the byte-mode pattern the text is one piece,
merged by :class:`~streamcodec.pieces.ByteMode`.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> engine = OrdinaryEncoder(CL100K_PATTERN, {bytes([b]): b for b in range(256)})
    >>> engine.encode("ab ab")
    [97, 98, 32, 97, 98]

Real text repeats itself, so ids are cached (:class:`~streamcodec.pieces.cache.IdCache`). The
biggest remaining cost is cutting text into pieces with the pattern, so for the named patterns
the text is first cut into *words*, much faster (:meth:`Pretokenizer.words`): each word ends
where the pattern must end a piece whatever follows, so its ids do not depend on its neighbours,
and whole words are cached too. One cache holds words and pieces alike: a string has the same
ids whether it is a word or a piece. Missing words are cut into pieces together, in one pass,
and the pieces' ids come from the same cache. When the cache knows no word of a text and the
text repeats few of its words, cutting it straight into pieces is cheaper.

When the compiled core is built (:mod:`streamcodec.pieces.native`), the pieces go to it instead,
a whole text per call and without a cache: it merges a piece faster than Python looks one up.
For the named patterns the native scanner (:mod:`streamcodec.text.native`) hands each piece to
the core as soon as it is cut, in one pass with no list of piece strings in between.

Keys are only stored when they are valid UTF-8: text with lone surrogates under
``errors="surrogateescape"`` skips the cache, so no cached answer depends on the mode.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from itertools import accumulate, chain

from streamcodec.pieces import ByteMode, PieceEncoder
from streamcodec.pieces.cache import DEFAULT_CACHE_SIZE, IdCache, Ids
from streamcodec.pieces.native import Backend, NativeOrdinary, resolve_backend
from streamcodec.text.native import native_scanner
from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.text.unicode import has_surrogates
from streamcodec.vocab import BYTE_MODE_PATTERN

__all__ = ["DEFAULT_CACHE_SIZE", "OrdinaryEncoder"]


class OrdinaryEncoder:
    """Ordinary text to ids with ``pattern`` and ``ranks``, caching up to ``cache_size`` words
    and pieces (0: no cache) on the Python path. ``backend`` as for :class:`streamcodec.Encoding`;
    the attribute ``backend`` is the path taken ("python" in byte mode, and for vocabularies the
    core does not take)."""

    def __init__(
        self,
        pattern: str,
        ranks: Mapping[bytes, int],
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        backend: str | None = None,
    ) -> None:
        self.pattern = pattern
        chosen = resolve_backend(backend)
        self.pretokenizer = Pretokenizer(pattern, native=chosen == "native")
        # No pre-tokenization: the text is one piece, merged between the cuts no token crosses.
        self.byte_mode = ByteMode(ranks) if pattern == BYTE_MODE_PATTERN else None
        self.encode_piece: PieceEncoder = self.byte_mode or PieceEncoder(ranks)
        self._ranks = ranks
        self._cache = IdCache(size=cache_size)
        self.requested_backend = backend  # what the caller asked for (pickled with the encoding)
        native = chosen == "native" and self.byte_mode is None
        self.native = NativeOrdinary.create(self.pretokenizer.pieces, ranks) if native else None
        # The named patterns go through in one pass: each piece merged as soon as it is cut.
        scanner = native_scanner(pattern) if self.native is not None else None
        self._one_pass: Callable[..., list[int]] | None = None
        if scanner is not None and self.native is not None:
            self._one_pass = functools.partial(scanner.encode, core=self.native.core)
        self.backend: Backend = "python" if self.native is None else "native"
        #: The known pattern (``"llama3"``...) the native scanner cuts ``pattern`` as, or None.
        self.native_pattern = scanner.name if scanner is not None else None

    @functools.cached_property
    def longest_token(self) -> int:
        """The bytes of the longest token: ``n`` bytes of text give at least ``n / longest_token``
        ids, which settles a count limit without encoding (``Encoding.count_tokens``)."""
        return max(map(len, self._ranks), default=1)

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
        if self.byte_mode is not None and not whole_piece:
            data = text[start:end].encode("utf-8", errors)
            return self.byte_mode.encode(data, whole_piece=False) if data else []
        if self._one_pass is not None:
            return self._one_pass(text, start, end, errors=errors)
        if self.native is not None:
            return self.native.encode(text, start, end, errors)
        if errors != "strict" and has_surrogates(text, start, end):
            return [
                token
                for piece in self.pretokenizer.pieces(text, start, end)
                for token in self.encode_piece(piece.encode("utf-8", errors))
            ]
        words = self.pretokenizer.words(text, start, end)
        if words is not None and len(words) > 1 and self._cache.size:
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
