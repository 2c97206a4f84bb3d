"""Audits against the specification: a user's text through the fast encoder and through
:mod:`streamcodec.reference`, and the merges of a piece explained step by step.

:func:`audit_text` is what ``streamcodec verify FILE`` runs: the text is pre-tokenized with the
``regex`` module directly, every piece is rank-merged by the reference, and the result must equal
``Encoding.encode_ordinary``. It also counts the pieces where tiktoken's whole-piece rule decides
the answer.

:func:`explain_piece` is what ``streamcodec explain`` shows: the parts after each merge, in rank
order, next to greedy longest-match (which is not BPE).

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257}
    >>> e = explain_piece(b"abc", ranks)
    >>> [b"|".join(step.parts) for step in e.steps], e.bpe, e.longest
    ([b'a|b|c', b'a|bc'], [97, 256], [257, 99])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import regex

from streamcodec.reference import longest_match, merge_steps, rank_merge

if TYPE_CHECKING:
    from streamcodec.encoding import Encoding

__all__ = [
    "Audit",
    "Explanation",
    "PieceMismatch",
    "Step",
    "audit_text",
    "explain_piece",
]


@dataclasses.dataclass(frozen=True)
class PieceMismatch:
    """The first piece where the fast encoder and the reference disagree."""

    index: int  # the piece's position among the text's pieces
    offset: int  # the character offset of the piece in the text
    piece: str
    fast: list[int]
    reference: list[int]


@dataclasses.dataclass(frozen=True)
class Audit:
    """What :func:`audit_text` checked and found."""

    encoding: str
    bytes: int
    pieces: int
    distinct_pieces: int
    tokens: int
    whole_piece_pieces: int  # pieces whose answer the whole-piece rule decides
    mismatch: PieceMismatch | None  # None: the fast encoder equals the reference
    tiktoken_equal: bool | None  # None: tiktoken is not installed


def audit_text(enc: Encoding, text: str) -> Audit:
    """Encode ``text`` with ``enc`` and with the reference; report the first difference.

    Special tokens are treated as ordinary text (``encode_ordinary``). Distinct pieces are
    rank-merged once, so a large file costs one reference merge per distinct piece.
    """
    ranks = enc.mergeable_ranks
    pieces = regex.findall(enc.pat_str, text)
    memo: dict[str, list[int]] = {}
    whole_piece = 0
    for piece in pieces:
        if piece not in memo:
            data = piece.encode("utf-8")
            memo[piece] = rank_merge(data, ranks)
            whole_piece += memo[piece] != rank_merge(data, ranks, whole_piece=False)
    fast = enc.encode_ordinary(text)
    return Audit(
        encoding=enc.name,
        bytes=len(text.encode("utf-8")),
        pieces=len(pieces),
        distinct_pieces=len(memo),
        tokens=len(fast),
        whole_piece_pieces=whole_piece,
        mismatch=_first_mismatch(text, pieces, memo, fast),
        tiktoken_equal=_equals_tiktoken(enc, text, fast),
    )


def _first_mismatch(
    text: str, pieces: list[str], memo: dict[str, list[int]], fast: list[int]
) -> PieceMismatch | None:
    position = offset = 0
    for index, piece in enumerate(pieces):
        expected = memo[piece]
        got = fast[position : position + len(expected)]
        if got != expected:
            return PieceMismatch(index, offset, piece, got, expected)
        position += len(expected)
        offset += len(piece)
    if position != len(fast):
        return PieceMismatch(len(pieces), len(text), "", fast[position:], [])
    return None


def _equals_tiktoken(enc: Encoding, text: str, ids: list[int]) -> bool | None:
    try:
        import tiktoken
    except ImportError:
        return None
    twin = tiktoken.Encoding(
        f"{enc.name}-twin",
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )
    return bool(twin.encode_ordinary(text) == ids)


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
