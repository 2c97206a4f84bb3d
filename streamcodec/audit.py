"""Audits against the specification: a user's text through the fast encoder and through
:mod:`streamcodec.reference`, and the merges of a piece explained step by step.

:func:`audit_source` is what ``streamcodec verify FILE`` runs, in bounded memory: the input is
cut at safe cuts (:mod:`streamcodec.stream.cuts`) into windows of about 1 MB, and each window's
``Encoding.encode_ordinary`` must equal the specification: its pieces cut by the ``regex``
module directly, each rank-merged by the reference; and tiktoken built from the same
vocabulary. Every window is compared for the first ``whole`` characters (16 Mi), then one in
``every`` (8), so a large file costs a fraction of a full comparison; ``every=1`` compares all.
:func:`audit_text` compares one text whole. Both count the pieces where tiktoken's whole-piece
rule decides the answer.

:func:`explain_piece` (from :mod:`streamcodec.explain.trace`, re-exported here) is what
``streamcodec explain`` shows: the parts after each merge, in rank order, next to greedy
longest-match (which is not BPE).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import regex

from streamcodec.explain.trace import Explanation, Step, explain_piece
from streamcodec.reference import rank_merge
from streamcodec.stream.cuts import cuts_for
from streamcodec.stream.encoder import SettledText
from streamcodec.stream.sources import Source, text_chunks

if TYPE_CHECKING:
    from streamcodec.encoding import Encoding

__all__ = [
    "Audit",
    "Explanation",
    "PieceMismatch",
    "Step",
    "audit_source",
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
    """What :func:`audit_source` or :func:`audit_text` checked and found."""

    encoding: str
    bytes: int  # all the text, encoded by the fast encoder
    tokens: int
    windows: int  # the windows it was cut into at safe cuts
    compared_windows: int  # those compared with the specification and tiktoken
    compared_bytes: int
    pieces: int  # of the compared windows
    distinct_pieces: int  # rank-merged by the reference (a memo of _MEMO pieces at a time)
    whole_piece_pieces: int  # of those, the pieces whose answer the whole-piece rule decides
    mismatch: PieceMismatch | None  # None: the fast encoder equals the reference
    tiktoken_equal: bool | None  # None: tiktoken is not installed


_MEMO = 1 << 18  # reference merges remembered at once: memory stays bounded on any input


class _Auditor:
    """The comparisons of :class:`Audit`, one window at a time."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.twin = _tiktoken_twin(enc)
        self.memo: dict[str, list[int]] = {}
        self.counts = dict.fromkeys(
            ["bytes", "tokens", "windows", "compared_windows", "compared_bytes", "pieces"], 0
        )
        self.merged = self.whole_piece = self.offset = 0
        self.mismatch: PieceMismatch | None = None
        self.tiktoken_equal: bool | None = None if self.twin is None else True

    def window(self, text: str, *, compare: bool) -> None:
        size = len(text.encode("utf-8", "surrogatepass"))
        fast = self.enc.encode_ordinary(text)
        counts = self.counts
        counts["bytes"] += size
        counts["tokens"] += len(fast)
        counts["windows"] += 1
        if compare:
            counts["compared_windows"] += 1
            counts["compared_bytes"] += size
            self._compare(text, fast)
        self.offset += len(text)

    def _compare(self, text: str, fast: list[int]) -> None:
        # whole matches (findall gives a pattern's groups, if it has any)
        pieces = [match.group() for match in regex.finditer(self.enc.pat_str, text)]
        ranks = self.enc.mergeable_ranks
        expected = []
        for piece in pieces:
            ids = self.memo.get(piece)
            if ids is None:
                if len(self.memo) >= _MEMO:
                    self.memo.clear()
                data = piece.encode("utf-8")
                ids = self.memo[piece] = rank_merge(data, ranks)
                self.merged += 1
                self.whole_piece += ids != rank_merge(data, ranks, whole_piece=False)
            expected.append(ids)
        if self.mismatch is None:
            where = (self.counts["pieces"], self.offset)
            self.mismatch = _first_mismatch(pieces, expected, fast, where)
        self.counts["pieces"] += len(pieces)
        if self.twin is not None and self.twin.encode_ordinary(text) != fast:
            self.tiktoken_equal = False

    def result(self) -> Audit:
        return Audit(
            encoding=self.enc.name,
            **self.counts,
            distinct_pieces=self.merged,
            whole_piece_pieces=self.whole_piece,
            mismatch=self.mismatch,
            tiktoken_equal=self.tiktoken_equal,
        )


def audit_text(enc: Encoding, text: str) -> Audit:
    """Encode ``text`` with ``enc`` and with the reference; report the first difference.

    Special tokens are treated as ordinary text (``encode_ordinary``). Distinct pieces are
    rank-merged once, so a large text costs one reference merge per distinct piece.
    """
    auditor = _Auditor(enc)
    auditor.window(text, compare=True)
    return auditor.result()


def audit_source(
    enc: Encoding,
    source: Source,
    *,
    whole: int = 1 << 24,
    every: int = 8,
    progress: Callable[[int], object] | None = None,
) -> Audit:
    """:func:`audit_text` of ``source`` read in chunks, in bounded memory, window by window
    (cut at safe cuts); windows are compared for the first ``whole`` characters, then one in
    ``every``. ``progress`` is called with each count of bytes read."""
    auditor = _Auditor(enc)
    engine = enc.ordinary
    rules = getattr(engine, "cut_allowed", None)  # an open model's (engine/model.py)
    settled = SettledText(cuts_for(engine.pretokenizer, engine.byte_mode, allowed=rules))

    def check(segment: Any) -> None:
        compare = auditor.offset < whole or auditor.counts["windows"] % every == 0
        auditor.window(segment.text[segment.start : segment.end], compare=compare)

    for chunk in text_chunks(source, progress=progress):
        if (segment := settled.feed(chunk)) is not None:
            check(segment)
    check(settled.close())
    return auditor.result()


def _first_mismatch(
    pieces: list[str], expected: list[list[int]], fast: list[int], where: tuple[int, int]
) -> PieceMismatch | None:
    """The first piece whose reference ids differ from ``fast``; ``where``: the index of the
    window's first piece and its character offset in the input."""
    position = 0
    index, offset = where
    for piece, ids in zip(pieces, expected, strict=True):
        got = fast[position : position + len(ids)]
        if got != ids:
            return PieceMismatch(index, offset, piece, got, ids)
        position += len(ids)
        index, offset = index + 1, offset + len(piece)
    if position != len(fast):
        return PieceMismatch(index, offset, "", fast[position:], [])
    return None


def _tiktoken_twin(enc: Encoding) -> Any:
    try:
        import tiktoken
    except ImportError:
        return None
    return tiktoken.Encoding(
        f"{enc.name}-twin",
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )
