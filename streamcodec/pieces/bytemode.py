"""Byte mode: BPE with no pre-tokenization (minbpe's BasicTokenizer), cut where no token crosses.

With :data:`streamcodec.vocab.BYTE_MODE_PATTERN` the whole text is one piece, so merges may cross
spaces and lines, and a long text would be one long merge. But a merge only ever makes a token,
so two neighbouring bytes ``x y`` that are adjacent inside *no* token can never end up in the same
part: the text before them and the text after them merge independently, each exactly as
:func:`streamcodec.reference.rank_merge` (without the whole-piece rule) merges it alone. Those
places are *safe cuts*. They make byte mode fast (each stretch between cuts is short) and let a
stream emit everything before the last cut, whatever comes after.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"ab": 257, b"aaab": 258}
    >>> mode = ByteMode(ranks)
    >>> mode.cuts(b"aaabdaaabac")  # 'bd', 'da', 'ba' and 'ac' are inside no token
    [4, 5, 9, 10]
    >>> mode.encode(b"aaabdaaabac")
    [258, 100, 258, 97, 99]

How much a stream holds depends on the vocabulary: the longest stretch of text without a safe cut.
With cl100k_base's merges it is under 80 bytes on prose and code; a vocabulary in which every pair
of neighbouring bytes of the input occurs inside some token (``a`` repeated, with ``aa`` a token)
never cuts, and the stream holds the whole input.
"""

from __future__ import annotations

from collections.abc import Mapping

from streamcodec.pieces.piece import LONG_PIECE, PieceEncoder

__all__ = ["ByteMode"]


class ByteMode(PieceEncoder):
    """A piece encoder for texts that are one piece: it merges between safe cuts, exactly.

    ``encode`` (and calling it) must equal :func:`streamcodec.reference.rank_merge` on the whole
    bytes. A stretch without a cut is merged as :class:`PieceEncoder` merges a piece: the merge
    loop when short, the linear backtracking encoder when long.
    """

    def __init__(self, ranks: Mapping[bytes, int], *, long_piece: int = LONG_PIECE) -> None:
        super().__init__(ranks, long_piece=long_piece)
        # inside[x << 8 | y] is 1 when the bytes x y are adjacent inside some token.
        inside = bytearray(1 << 16)
        for token in ranks:
            for i in range(len(token) - 1):
                inside[token[i] << 8 | token[i + 1]] = 1
        self._inside = bytes(inside)

    def __call__(self, piece: bytes) -> list[int]:
        """The ids of ``piece``, the whole-piece rule first."""
        return self.encode(piece)

    def cuts(self, data: bytes, start: int = 1) -> list[int]:
        """The offsets ``i >= start`` at which no token can contain both ``data[i-1]`` and
        ``data[i]``.

        >>> ByteMode({b"a": 0, b"b": 1, b"ab": 2}).cuts(b"abba")
        [2, 3]
        """
        inside = self._inside
        return [
            i for i in range(max(start, 1), len(data)) if not inside[data[i - 1] << 8 | data[i]]
        ]

    def encode(self, data: bytes, *, whole_piece: bool = True) -> list[int]:
        """The ids of ``data`` as one piece: ``rank_merge(data, ranks, whole_piece=...)``."""
        ranks = self.ranks
        if whole_piece and data in ranks:
            return [ranks[data]]
        ids: list[int] = []
        begin = 0
        for end in [*self.cuts(data), len(data)]:
            if end - begin == 1:
                ids.append(ranks[data[begin:end]])  # a lone byte: nothing to merge
            else:
                ids += self.merge(data[begin:end])
            begin = end
        return ids

    def last_cut(self, text: str) -> int:
        """The largest character offset ``k > 0`` that is a safe cut of ``text``, or 0.

        A stream may emit ``encode(text[:k].encode(), whole_piece=False)`` now and go on with
        ``text[k:]``; at the end of the input, the rest is encoded with ``whole_piece=True`` only
        if nothing was emitted before. Together they are the ids of the whole text: if the whole
        text is a token, every pair of neighbouring bytes in it is inside that token, so no cut
        was ever found. No cut touches a surrogate: a pair of them may become one character, and
        a lone one U+FFFD or an escaped byte, whose bytes are only known then.

        >>> ByteMode({b"a": 0, b"b": 1, b"ab": 2}).last_cut("ab ab a")
        6
        """
        inside = self._inside
        for k in range(len(text) - 1, 0, -1):
            before, after = text[k - 1], text[k]
            if _is_surrogate(before) or _is_surrogate(after):
                continue
            # The last UTF-8 byte of the character before and the first byte of the one after.
            if not inside[before.encode("utf-8")[-1] << 8 | after.encode("utf-8")[0]]:
                return k
        return 0


def _is_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udfff"
