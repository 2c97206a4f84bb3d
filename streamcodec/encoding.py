"""``Encoding``: text to ids and back, a drop-in for ``tiktoken.Encoding``.

The data path is: text -> special tokens split off (only those the caller allows,
:mod:`streamcodec.text.specials`) -> ordinary text -> pre-tokens (the pattern's matches) ->
pieces as UTF-8 bytes -> ids (:mod:`streamcodec.engine.ordinary`). A piece whose bytes are a
token is that token (tiktoken's whole-piece rule); any other piece is merged by rank
(:mod:`streamcodec.pieces`). This module is the facade: it owns the special-token policy and
tiktoken's API, and hands streams to :mod:`streamcodec.stream`.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> enc = Encoding("toy", pat_str=r"\\w+|\\s+", mergeable_ranks=ranks,
    ...                special_tokens={"<|end|>": 257})
    >>> enc.encode("ab ab<|end|>", allowed_special="all")
    [256, 32, 256, 257]
    >>> enc.decode([256, 32, 256])
    'ab ab'

Special tokens in untrusted text are refused by default, as tiktoken does: ``encode`` raises
``ValueError`` when the text contains one that is not explicitly allowed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from streamcodec.arguments import whole_number
from streamcodec.batch import BatchMethods
from streamcodec.compat import TiktokenMethods
from streamcodec.dropin import PresentsAsTiktoken
from streamcodec.engine import ordinary as engine
from streamcodec.engine.backend import Backend
from streamcodec.engine.batch import CAN_THREAD
from streamcodec.engine.model import model_encoder
from streamcodec.engine.ordinary import OrdinaryEncoder
from streamcodec.pieces.packed import PackedRanks
from streamcodec.pieces.token_bytes import TokenBytes, plain_ids
from streamcodec.stream.methods import StreamMethods
from streamcodec.stream.sources import Source
from streamcodec.text.offsets import OffsetCounter, Unit, input_positions, starts_inside_character
from streamcodec.text.specials import (
    AllowedSpecial,
    DisallowedSpecial,
    DisallowedSpecialTokenError,
    allowed_special_matches,
    refuse_disallowed,
    special_policy,
    special_token_regex,
)
from streamcodec.text.unicode import encode_replacing_surrogates
from streamcodec.vocab import ModelRules

__all__ = ["DisallowedSpecialTokenError", "Encoding", "Source"]

#: How a registered encoding rebuilds itself when unpickled: a function and its arguments.
Recipe = tuple[Callable[..., "Encoding"], tuple[Any, ...]]


class Encoding(StreamMethods, TiktokenMethods, BatchMethods, metaclass=PresentsAsTiktoken):
    """A byte-level BPE encoding: mergeable ranks, special tokens and a pre-tokenizer pattern.

    The constructor and the public methods are those of ``tiktoken.Encoding``, so code written
    for tiktoken runs unchanged after swapping the import. Added, keyword-only: ``cache_bytes``
    (the caches' bound on both paths, per thread for the compiled word cache; 0: none;
    :mod:`streamcodec.engine.ordinary`; ``cache_size``, in entries, is its deprecated alias),
    ``backend`` (:mod:`streamcodec.engine.backend`; attributes: ``backend``,
    ``native_pattern``); streaming: ``StreamMethods``; many texts on every core:
    ``BatchMethods`` (:mod:`streamcodec.batch`). ``mergeable_ranks`` may be ``PackedRanks``
    (:mod:`streamcodec.pieces.packed`: get_encoding's, its dict made when first asked for).
    """

    name: str
    """The encoding's name (``"cl100k_base"``), as given to the constructor."""
    max_token_value: int
    """The largest id, of a mergeable or a special token (tiktoken's attribute)."""
    backend: Backend
    """``"native"`` (the compiled core) or ``"python"`` (byte mode, or ranks the core refuses)."""
    native_pattern: str | None
    """The known pattern the native scanner cuts ``pat_str`` as (docs/patterns.md), or None."""
    recipe: Recipe | None
    """The call a registered encoding is pickled as (``get_encoding, ("cl100k_base",)``)."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int] | PackedRanks,
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
        cache_bytes: int = engine.DEFAULT_CACHE_BYTES,
        cache_size: int | None = None,
        backend: str | None = None,
        rules: ModelRules | None = None,
    ) -> None:
        self.name, self._pat_str = name, pat_str
        self._special_tokens = special_tokens = plain_ids(special_tokens)
        self.rules = rules = rules or ModelRules()  # an open model's: engine/model.py
        rules.check(special_tokens, name)
        both = special_tokens | plain_ids(rules.added_tokens)  # added tokens decode as specials
        try:
            self._bytes = TokenBytes(mergeable_ranks, both)
        except ValueError as exc:
            raise ValueError(f"encoding {name!r}: {exc}") from None
        self.max_token_value = self._bytes.max_id
        n_tokens = len(mergeable_ranks) + len(both)
        if explicit_n_vocab and (
            n_tokens != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1
        ):
            raise ValueError(
                f"encoding {name!r}: explicit_n_vocab={explicit_n_vocab}, but the vocabulary has "
                f"{n_tokens} tokens and its largest id is {self.max_token_value}"
            )
        self._special_token_values = frozenset(special_tokens.values())
        # The keyword options, pickled with the encoding (the backend as the caller asked).
        if cache_size is not None:
            cache_bytes = engine.cache_size_as_bytes(cache_size, cache_bytes=cache_bytes)
        self._options: dict[str, Any] = dict(cache_bytes=cache_bytes, backend=backend)
        ordinary = model_encoder(rules, pat_str, self._bytes.vocabulary, **self._options)
        self._options["rules"] = rules
        self._ordinary, self.backend = ordinary, ordinary.backend
        self.native_pattern = ordinary.native_pattern  # the known pattern cut in C, or None
        self.recipe: Recipe | None = None  # set by the registry: pickled as the call returning it

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    def with_special_tokens(self, ids: list[int]) -> list[int]:
        """``ids`` with the BOS and EOS the model adds (``rules``: Hugging Face's
        ``add_special_tokens=True``)."""
        return self.rules.wrap(ids, self._special_tokens)

    # ------------------------------------------------------------------ properties

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank (the id, and the merge priority)."""
        return self._mergeable_ranks

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text -> id."""
        return self._special_tokens

    @property
    def pat_str(self) -> str:
        """The pre-tokenizer pattern."""
        return self._pat_str

    @property
    def ordinary(self) -> OrdinaryEncoder:
        """The engine for ordinary text (no special tokens): pre-tokenizer, piece encoder,
        cache; see :mod:`streamcodec.engine.ordinary`."""
        return self._ordinary

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        """The texts of the special tokens (tiktoken's name for them)."""
        return set(self._special_tokens)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``; ``KeyError`` if the encoding has none."""
        return self._special_tokens["<|endoftext|>"]

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1``, as in tiktoken."""
        return self.max_token_value + 1

    def is_special_token(self, token: int) -> bool:
        """Whether the id ``token`` is a special token's (``TypeError`` if it is not an int)."""
        if not isinstance(token, int):
            raise TypeError(f"is_special_token: token must be an int, not {type(token).__name__}")
        return token in self._special_token_values

    # ------------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text``, treating special tokens as ordinary text.

        >>> enc.encode_ordinary("hello world")  # doctest: +SKIP
        [15339, 1917]
        """
        return self._encode(text, frozenset())

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encode ``text``; special tokens are refused unless allowed.

        Raises ``ValueError`` if ``text`` contains a special token that is disallowed (by default
        every special token not in ``allowed_special``). Pass ``disallowed_special=()`` to encode
        such text as ordinary text, or ``allowed_special="all"`` to encode it as special tokens.
        """
        allowed = self._allowed_special(allowed_special, disallowed_special, text)
        return self._encode(text, allowed)

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encode arbitrary bytes, losslessly: ``decode_bytes(encode_bytes(b)) == b``.

        Valid UTF-8 is encoded exactly as ``encode_ordinary`` would; each invalid byte is
        pre-tokenized as a symbol (it is not a letter, digit or space) and kept as that byte.

        >>> enc.decode_bytes(enc.encode_bytes(b"caf\\xe9"))  # doctest: +SKIP
        b'caf\\xe9'
        """
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"encode_bytes: data must be bytes, not {type(data).__name__}")
        return self._ordinary.encode(data.decode("utf-8", "surrogateescape"), "surrogateescape")

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        unit: Unit = "char",
    ) -> tuple[list[int], list[int]]:
        """The ids of ``text`` (as :meth:`encode`) and where each token starts in ``text``.

        An offset is the index of the character in which the token's first byte lies, so a
        token that starts inside a character gets that character's index (the rule of
        :meth:`decode_with_offsets`), and ``text[offsets[i]:offsets[j]]`` is the text of tokens
        ``i`` to ``j`` when both start between characters. With ``unit="byte"`` the offsets are
        into ``text.encode("utf-8")`` (a lone surrogate counts as U+FFFD, as ``encode`` reads
        it). See :mod:`streamcodec.text.offsets`.

        >>> enc.encode_with_offsets("hi 🦙")  # doctest: +SKIP
        ([6151, 11410, 99, 247], [0, 2, 3, 3])
        """
        ids = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        offsets = OffsetCounter(unit).offsets(self.decode_tokens_bytes(ids))
        positions = input_positions(text) if unit == "char" else None
        return ids, offsets if positions is None else [positions[i] for i in offsets]

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> str:
        """The longest prefix of ``text``, ending between characters, whose encoding is the
        first ids of ``encode(text)``, at most ``max_tokens`` of them (boundaries are tried
        from the budget down: a prefix ending inside a piece may encode to other tokens).

        >>> enc.truncate("hello world, again", 2)  # doctest: +SKIP
        'hello world'
        """
        max_tokens = whole_number("max_tokens", max_tokens)
        policy = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}
        ids, offsets = self.encode_with_offsets(text, **policy)  # type: ignore[arg-type]
        if len(ids) <= max_tokens:
            return text
        for k in range(max_tokens, 0, -1):
            if starts_inside_character(self._bytes.by_id[ids[k]]):
                continue
            prefix = text[: offsets[k]]
            if self.encode(prefix, **policy) == ids[:k]:  # type: ignore[arg-type]
                return prefix
        return ""

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text or bytes is exactly ``text_or_bytes`` (specials too).

        Raises ``KeyError`` if there is none, ``TypeError`` for an argument of another type.
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_tokens:
                return self._special_tokens[text_or_bytes]
            text_or_bytes = text_or_bytes.encode("utf-8")
        elif not isinstance(text_or_bytes, bytes):
            raise TypeError(
                "encode_single_token: text_or_bytes must be str or bytes, not "
                f"{type(text_or_bytes).__name__}"
            )
        if text_or_bytes in self._mergeable_ranks:
            return self._mergeable_ranks[text_or_bytes]
        special = self._special_token_bytes.get(text_or_bytes)
        if special is None:
            raise KeyError(text_or_bytes)
        return special

    def _allowed_special(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial, text: str
    ) -> frozenset[str]:
        """Resolve the caller's special-token policy; raise if ``text`` breaks it."""
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        refuse_disallowed(text, disallowed)
        return allowed

    def _special_policy(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        return special_policy(self._special_tokens, allowed_special, disallowed_special)

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        """Encode ``text`` with the special tokens in ``allowed``, as tiktoken does.

        Lone surrogates cannot be UTF-8: like tiktoken, they become U+FFFD (a valid pair of
        surrogates becomes the character it stands for).
        """
        return encode_replacing_surrogates(
            lambda whole, _start, _end: self._encode_with_specials(whole, allowed), text
        )

    def _encode_with_specials(self, text: str, allowed: frozenset[str]) -> list[int]:
        encode_ordinary = self._ordinary.encode
        if not allowed:
            return encode_ordinary(text)
        ids: list[int] = []
        finder = special_token_regex(frozenset(self._special_tokens))
        start = 0
        for match in allowed_special_matches(finder, text, allowed):
            ids += encode_ordinary(text, start=start, end=match.start())
            ids.append(self._special_tokens[match.group()])
            start = match.end()
        return ids + encode_ordinary(text, start=start)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens`` joined. Raises ``KeyError`` for an unknown id, and as tiktoken
        ``TypeError`` for a non-integer (``1.0``, ``"5"``, ``None``), ``OverflowError`` below 0
        or from 2**32 (see :mod:`streamcodec.pieces.token_bytes`: the checks cost nothing)."""
        return self._bytes.join(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decode to text; by default invalid UTF-8 becomes U+FFFD (lossy, as tiktoken)."""
        return self._bytes.join(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (specials too). Raises ``KeyError`` for an unknown id, and
        ``TypeError`` or ``OverflowError`` for a bad one, as :meth:`decode_bytes`."""
        return self._bytes.one(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, for showing a tokenization (and for offsets)."""
        return self._bytes.each(tokens)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """Decode each list of ids; see :meth:`decode`."""
        decode = functools.partial(self.decode, errors=errors)
        return _thread_map(decode, batch, num_threads)

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        """Decode each list of ids to bytes."""
        return _thread_map(self.decode_bytes, batch, num_threads)

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted."""
        return sorted(self._mergeable_ranks)

    def explain_html(
        self,
        text: str,
        *,
        piece: int | None = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> str:
        """A self-contained HTML page showing the tokens of ``text`` and the merges of a piece
        (:func:`streamcodec.explain.html.explain_html`; special tokens as in :meth:`encode`)."""
        from streamcodec.explain.html import explain_html

        policy = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}
        return explain_html(self, text, piece=piece, **policy)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ pickling

    def __reduce__(self) -> str | tuple[Any, ...]:
        # A registered encoding pickles as the call that returns it (a few dozen bytes, and
        # a worker process that has it loaded shares it); any other by value.
        if self.recipe is not None:
            return self.recipe
        return super().__reduce__()

    def __getstate__(self) -> object:
        vocab = {"mergeable_ranks": self._mergeable_ranks, "special_tokens": self._special_tokens}
        return {"name": self.name, "pat_str": self._pat_str, **vocab, **self._options}

    def __setstate__(self, value: Any) -> None:
        self.__init__(**value)  # type: ignore[misc]

    @functools.cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:  # tiktoken's; packed: made when first read
        return self._bytes.ranks

    @functools.cached_property
    def _special_token_bytes(self) -> dict[bytes, int]:
        both = self._special_tokens | self.rules.added_tokens
        return {text.encode("utf-8"): i for text, i in both.items()}


T = TypeVar("T")
R = TypeVar("R")


def _thread_map(function: Callable[[T], R], items: Iterable[T], num_threads: int) -> list[R]:
    """``list(map(function, items))`` on ``num_threads`` threads (the ``*_batch`` methods)."""
    if not CAN_THREAD:
        return list(map(function, items))
    # Imported here: concurrent.futures pulls in logging, which importing streamcodec need not.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(num_threads) as pool:
        return list(pool.map(function, items))
