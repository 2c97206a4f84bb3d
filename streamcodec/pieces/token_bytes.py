"""Ids back to token bytes, fast, with tiktoken's error types for ids that are not ids.

Decoding is one C loop of dict lookups, which already refuses every bad id but one kind: an
unknown id, a negative one, ``None`` or a string is a ``KeyError`` there, but ``1.0`` (or
``Decimal(1)``) is taken for ``1``, as it hashes and compares equal. So the ``sum`` of the ids
must also be an ``int`` (a quarter of the loop's time; a float makes it a float). When anything
is wrong, the ids are walked again one by one to raise the error tiktoken raises, with a message
that says which one: ``TypeError`` for a non-integer, ``OverflowError`` below 0 or from 2**32,
``KeyError`` for an id no token has.

    >>> ids = TokenBytes({b"a": 0, b"b": 1}, {"<|end|>": 2})
    >>> ids.join([0, 1, 2])
    b'ab<|end|>'
    >>> ids.join([0, 1.0])
    Traceback (most recent call last):
    TypeError: tokens[1] is 1.0, a float: a token id is an int
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import TypeVar

from streamcodec.pieces.ranks import Ranks, as_ranks, plain_ids

__all__ = ["TokenBytes", "plain_ids"]  # plain_ids: pieces/ranks.py's

_Key = TypeVar("_Key")


class TokenBytes:
    """The bytes of each id of ``ranks`` and ``special_tokens`` (special tokens that share an
    id, as o200k_harmony's do, decode to the first listed)."""

    def __init__(self, ranks: dict[bytes, int] | Ranks, special_tokens: Mapping[str, int]) -> None:
        special_ids: dict[int, bytes] = {}
        for text, i in special_tokens.items():
            special_ids.setdefault(i, text.encode("utf-8"))
        self._special_ids = special_ids
        #: The ranks as given (packed ranks stay packed), their ids plain ``int``; the tables
        #: below are made when first asked for.
        self.vocabulary = as_ranks(ranks)
        #: The largest id (0 for none).
        self.max_id: int = max(self.vocabulary.max_rank, *special_ids, 0)
        twice = self.vocabulary.reused(special_ids)
        if twice:
            raise ValueError(
                f"{twice} token ids are used twice (duplicate ranks, or a special token id equal "
                "to a rank)"
            )

    @functools.cached_property
    def ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank, with plain ``int`` ranks (packed ranks': made the first time)."""
        return self.vocabulary.ranks()

    @functools.cached_property
    def by_id(self) -> dict[int, bytes]:
        """Each id's bytes, made the first time."""
        by_id = {rank: token for token, rank in self.ranks.items()}
        by_id.update(self._special_ids)
        return by_id

    def join(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens`` joined; ``KeyError("Invalid token for decoding: N")``."""
        tokens = _as_list(tokens)
        try:
            joined = b"".join(map(self.by_id.__getitem__, tokens))
            if type(sum(tokens)) is int:  # no float, which the dict takes for an int
                return joined
        except (KeyError, TypeError):
            pass
        return b"".join([self._checked(token, f"tokens[{i}]") for i, token in enumerate(tokens)])

    def each(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each of ``tokens``; ``KeyError("N")`` for an unknown id."""
        tokens = _as_list(tokens)
        try:
            found = list(map(self.by_id.__getitem__, tokens))
            if type(sum(tokens)) is int:
                return found
        except (KeyError, TypeError):
            pass
        return [self.one(token, f"tokens[{i}]") for i, token in enumerate(tokens)]

    def one(self, token: int, where: str = "token") -> bytes:
        """The bytes of ``token``; ``KeyError("N")`` for an unknown id."""
        if type(token) is int and (data := self.by_id.get(token)) is not None:
            return data
        try:
            return self._checked(token, where)
        except KeyError:
            raise KeyError(str(token)) from None  # tiktoken's message here: the id alone

    def _checked(self, token: object, where: str) -> bytes:
        """The bytes of ``token``, or tiktoken's error type with a message naming ``where``."""
        try:
            index = operator.index(token)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"{where} is {token!r}, a {type(token).__name__}: a token id is an int"
            ) from None
        if not 0 <= index < 2**32:
            raise OverflowError(f"{where} is {index}: a token id is between 0 and 2**32 - 1")
        data = self.by_id.get(index)
        if data is None:
            raise KeyError(f"Invalid token for decoding: {index}")
        return data


def _as_list(tokens: Sequence[int]) -> list[int]:
    """``tokens`` as a list of Python ints where it can be (a numpy array's ``tolist``)."""
    if type(tokens) is list:
        return tokens
    tolist = getattr(tokens, "tolist", None)
    return tolist() if callable(tolist) else list(tokens)
