"""The merges of one piece, step by step, beside greedy longest-match (which is not BPE).

:func:`explain_piece` is what ``streamcodec explain`` prints and the page of
:mod:`streamcodec.explain.html` draws: the parts after each merge, in rank order
(:func:`streamcodec.reference.merge_steps`), the answer with the whole-piece rule, and greedy
longest-match (:func:`streamcodec.reference.longest_match`).

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257}
    >>> e = explain_piece(b"abc", ranks)
    >>> [b"|".join(step.parts) for step in e.steps], e.bpe, e.longest
    ([b'a|b|c', b'a|bc'], [97, 256], [257, 99])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from streamcodec.reference import longest_match, merge_steps, rank_merge

__all__ = ["Explanation", "Step", "explain_piece"]


@dataclasses.dataclass(frozen=True)
class Step:
    """The parts of a piece after one merge (``merged`` is the new part's rank; None at first)."""

    parts: list[bytes]
    merged: int | None


@dataclasses.dataclass(frozen=True)
class Explanation:
    """How one piece is encoded: the merges in rank order, and what longest-match does."""

    piece: bytes
    steps: list[Step]
    whole_piece: int | None  # the piece's own token, which the whole-piece rule returns
    bpe: list[int]  # rank_merge with the whole-piece rule: the answer
    longest: list[int]  # greedy longest-match, for comparison

    @property
    def differs(self) -> bool:
        """Whether greedy longest-match gives another answer than BPE."""
        return self.longest != self.bpe


def explain_piece(
    piece: bytes, ranks: Mapping[bytes, int], *, longest: int | None = None
) -> Explanation:
    """Explain the encoding of ``piece``; ``longest`` is the longest token's length, if known."""
    steps: list[Step] = []
    for parts in merge_steps(piece, ranks):
        merged = None
        if steps:
            # A merge keeps the parts before it: the first part that changed is the new one.
            before = steps[-1].parts
            merged = ranks[next(p for p, q in zip(parts, before, strict=False) if p != q)]
        steps.append(Step(parts, merged))
    return Explanation(
        piece=piece,
        steps=steps,
        whole_piece=ranks.get(piece),
        bpe=rank_merge(piece, ranks),
        longest=longest_match(piece, ranks, longest=longest),
    )
