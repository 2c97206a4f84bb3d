"""A vocabulary's ranks, packed or a dict, behind one interface the engine reads.

The shipped vocabularies come as :class:`~streamcodec.pieces.packed.PackedRanks` (flat arrays,
their dict made only when asked for); any other vocabulary is a dict (a tiktoken file, a
tokenizer.json, a caller's own), which :func:`as_ranks` wraps in :class:`PlainRanks`. Both are
:class:`Ranks`: what the encoder, the decoding table and the model rules ask of a vocabulary,
so none of them branches on which it holds.

    >>> ranks = as_ranks({b"a": 0, b"b": 1, b"ab": 2})
    >>> ranks.max_rank, ranks.longest, ranks.every_byte, ranks.reused([2, 3])
    (2, 2, False, 1)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from streamcodec.pieces.piece import LONG_PIECE

__all__ = ["PlainRanks", "Ranks", "as_ranks", "plain_ids"]

_Key = TypeVar("_Key")


class Ranks(Protocol):
    """What the engine asks of a vocabulary's ranks (token bytes -> rank)."""

    @property
    def max_rank(self) -> int:
        """The largest rank (0 for no token)."""
        ...

    @property
    def longest(self) -> int:
        """The bytes of the longest token (1 for no token)."""
        ...

    @property
    def every_byte(self) -> bool:
        """Whether each single byte is a token."""
        ...

    def reused(self, ids: Iterable[int]) -> int:
        """How many ranks, and ids of ``ids``, are a rank another token has."""
        ...

    def ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank."""
        ...

    def compiled(self, core: Any) -> Any:
        """``core``'s tables (``streamcodec.pieces._core.Core``) for these ranks; a
        ``ValueError`` or ``TypeError`` where the core cannot take them (the Python path can)."""
        ...


class PlainRanks:
    """A dict's ranks as :class:`Ranks` (each answer worked out the first time asked)."""

    def __init__(self, ranks: dict[bytes, int]) -> None:
        self._ranks = ranks

    @functools.cached_property
    def max_rank(self) -> int:
        return max(self._ranks.values(), default=0)

    @functools.cached_property
    def longest(self) -> int:
        return max(map(len, self._ranks), default=1)

    @property
    def every_byte(self) -> bool:
        return all(bytes([b]) in self._ranks for b in range(256))

    def reused(self, ids: Iterable[int]) -> int:
        taken = set(self._ranks.values())
        return len(self._ranks) - len(taken) + sum(i in taken for i in ids)

    def ranks(self) -> dict[bytes, int]:
        return self._ranks

    def compiled(self, core: Any) -> Any:
        return core(self._ranks, long_piece=LONG_PIECE)


def as_ranks(ranks: Mapping[bytes, int] | Ranks) -> Ranks:
    """``ranks`` as :class:`Ranks`: a mapping in :class:`PlainRanks` (one that is not a dict,
    a ``MappingProxyType`` say, copied into one), its ids made plain ``int`` (:func:`plain_ids`);
    packed ranks, or ranks made already, as they are."""
    if isinstance(ranks, Mapping):
        return PlainRanks(plain_ids(ranks if isinstance(ranks, dict) else dict(ranks)))
    return ranks


def plain_ids(ids: dict[_Key, int]) -> dict[_Key, int]:
    """``ids`` with every value a plain ``int``: the same dict when it already is, else a copy.

    Ids come out of the vocabulary's own values, and tiktoken always returns ``int``, so an
    ``int`` subclass (a ``bool``, an ``IntEnum``) given as a rank must not reach the caller.

    >>> plain_ids({b"a": True})
    {b'a': 1}
    """
    if set(map(type, ids.values())) <= {int}:  # one pass in C: 2 ms for 200k ids, not 40
        return ids
    return {key: int(value) for key, value in ids.items()}
