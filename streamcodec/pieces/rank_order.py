"""Rank-order verification: which tokens BPE can produce, how, and which neighbours it allows.

Three facts about a vocabulary decide what the merge loop can output, and the backtracking
encoder (:mod:`streamcodec.pieces.backtrack`) is built on them. Each is defined by
:func:`streamcodec.reference.rank_merge` (``whole_piece=False``) and computed with the merge loop,
which equals it:

- a token is **reachable** when its own bytes merge to exactly that token. An unreachable token
  never appears inside the merge result of any piece (its bytes are always merged differently);
  only tiktoken's whole-piece rule can output it, for a piece that is exactly its bytes.
- the **split** of a reachable multi-byte token is the pair of tokens its last merge joins.
- two tokens form a **valid pair** when the bytes of both merge to exactly ``[a, b]``: no merge
  crosses the boundary between them.

A sequence of reachable tokens in which every adjacent pair is valid is the merge result of its
bytes, and that result is unique, so an encoder may search for such a sequence instead of
replaying the merges (the idea of the backtracking encoder of GitHub's ``bpe`` crate). Pairs are
checked as that crate does, by walking split trees, when both tokens are **ordered** (every
merge in their trees joins parts ranked below the result, as in any trained vocabulary), and
otherwise by merging their bytes, which is the definition.

Everything is computed lazily and memoized, so building a :class:`RankOrder` costs nothing:

    >>> order = RankOrder({b"a": 0, b"b": 1, b"ab": 2, b"bbb": 3})
    >>> order.split(2), order.is_reachable(3), order.is_valid_pair(1, 2)
    ((0, 1), False, True)
    >>> order.unreachable_tokens()
    [3]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from streamcodec.pieces.merge import merge_parts, merge_piece

__all__ = ["RankOrder"]

# Memoized pair verdicts kept at most; beyond it the memo starts afresh (the verdicts are cheap to
# recompute, and a long run of distinct pairs must not grow memory without bound).
_MAX_PAIRS = 1 << 16


class RankOrder:
    """Reachability, splits and valid pairs of one vocabulary, computed on demand.

    Safe to share between threads: the memos only ever gain correct entries. ``merge`` is the
    merge loop the definitions run: :func:`~streamcodec.pieces.merge.merge_piece` of ``ranks``
    or a twin that equals it, such as the compiled core's ``Core.merge_piece`` (what
    :func:`streamcodec.formats.merges.unreachable_tokens` passes: 9x faster over a whole
    vocabulary).
    """

    def __init__(
        self, ranks: Mapping[bytes, int], *, merge: Callable[[bytes], list[int]] | None = None
    ) -> None:
        self._ranks = ranks
        self._merge = merge if merge is not None else lambda data: merge_piece(data, ranks)
        self._decoder: dict[int, bytes] | None = None
        self._decoder_lock = threading.Lock()
        self._reachable: dict[int, bool] = {}
        self._splits: dict[int, tuple[int, int] | None] = {}
        self._ordered: dict[int, bool] = {}
        self._valid: dict[tuple[int, int], bool] = {}

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """The vocabulary: token bytes to rank."""
        return self._ranks

    def token_bytes(self, token: int) -> bytes:
        """The bytes of ``token``."""
        decoder = self._decoder
        if decoder is None:
            with self._decoder_lock:
                if self._decoder is None:
                    self._decoder = {rank: data for data, rank in self._ranks.items()}
                decoder = self._decoder
        return decoder[token]

    def is_reachable(self, token: int) -> bool:
        """Whether merging the bytes of ``token`` gives ``token`` itself."""
        known = self._reachable.get(token)
        if known is None:
            known = self._merge(self.token_bytes(token)) == [token]
            self._reachable[token] = known
        return known

    def split(self, token: int) -> tuple[int, int] | None:
        """The two tokens the last merge joins into ``token``; ``None`` for a single byte or an
        unreachable token.

        >>> RankOrder({b"a": 0, b"b": 1, b"ab": 2}).split(2)
        (0, 1)
        """
        if token in self._splits:
            return self._splits[token]
        data = self.token_bytes(token)
        split = None
        if len(data) > 1 and self.is_reachable(token):
            left, right = merge_parts(data, self._ranks, parts=2)
            split = self._ranks[left], self._ranks[right]
        self._splits[token] = split
        return split

    def is_ordered(self, token: int) -> bool:
        """Whether ``token`` is reachable and every merge that builds it joins parts that rank
        below the result (true of every token of a trained vocabulary).

        Walks the split tree with an explicit stack: a chain of merges may be thousands deep.
        """
        stack = [token]
        while stack:
            top = stack[-1]
            if top in self._ordered:
                stack.pop()
                continue
            split = self.split(top)
            if split is None:
                self._ordered[top] = len(self.token_bytes(top)) == 1
            elif not (split[0] < top and split[1] < top):
                self._ordered[top] = False
            else:
                pending = [part for part in split if part not in self._ordered]
                if pending:
                    stack.extend(pending)
                    continue
                self._ordered[top] = self._ordered[split[0]] and self._ordered[split[1]]
            stack.pop()
        return self._ordered[token]

    def is_valid_pair(self, left: int, right: int) -> bool:
        """Whether merging the bytes of ``left`` then ``right`` gives exactly ``[left, right]``.

        >>> order = RankOrder({b"a": 0, b"b": 1, b"ab": 2})
        >>> order.is_valid_pair(0, 1), order.is_valid_pair(1, 0)
        (False, True)
        """
        key = (left, right)
        known = self._valid.get(key)
        if known is None:
            if self.is_ordered(left) and self.is_ordered(right):
                known = self._valid_by_splits(left, right)
            else:
                data = self.token_bytes(left) + self.token_bytes(right)
                known = self._merge(data) == [left, right]
            if len(self._valid) >= _MAX_PAIRS:
                self._valid = {}
            self._valid[key] = known
        return known

    def _valid_by_splits(self, left: int, right: int) -> bool:
        """:meth:`is_valid_pair` for ordered tokens, by undoing merges at the boundary.

        In an ordered token the merges happen in rank order, so the two sides are rebuilt
        backwards: undo whichever side's last merge came later, and at each step ask whether the
        two parts now touching the boundary would merge (their join is a token whose split they
        are) before the merge just undone, which is the deadline. A tie goes to the leftmost
        pair, so a cross merge may tie with the right side's merge but not with the left's.
        """
        deadline = None
        while True:
            joined = self._ranks.get(self.token_bytes(left) + self.token_bytes(right))
            if (
                joined is not None
                and (deadline is None or joined < deadline)
                and self.split(joined) == (left, right)
            ):
                return False
            left_split, right_split = self.split(left), self.split(right)
            if left_split is not None and (right_split is None or left > right):
                deadline, left = left, left_split[1]
            elif right_split is not None:
                deadline, right = right + 1, right_split[0]
            else:
                return True

    def unreachable_tokens(self) -> list[int]:
        """Every token whose own bytes merge to something else, sorted: :meth:`is_reachable` of
        each, by a scan that merges every token but single bytes (each its own merge)."""
        merge = self._merge
        return sorted(
            rank for data, rank in self._ranks.items() if len(data) > 1 and merge(data) != [rank]
        )
