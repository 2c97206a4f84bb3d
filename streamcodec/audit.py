"""Audits against the specification: a user's text through the fast encoder and through
:mod:`streamcodec.reference`, and the merges of a piece explained step by step.

:func:`audit_text` is what ``streamcodec verify FILE`` runs: the text is pre-tokenized with the
``regex`` module directly, every piece is rank-merged by the reference, and the result must equal
``Encoding.encode_ordinary``. It also counts the pieces where tiktoken's whole-piece rule decides
the answer.

:func:`explain_piece` (from :mod:`streamcodec.explain.trace`, re-exported here) is what
``streamcodec explain`` shows: the parts after each merge, in rank order, next to greedy
longest-match (which is not BPE).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import regex

from streamcodec.explain.trace import Explanation, Step, explain_piece
from streamcodec.reference import rank_merge

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
