"""Applying merges to text, as subword-nmt's ``apply-bpe`` does.

>>> WordBPE([("l", "o"), ("lo", "w</w>")]).apply("low lower")
'low lo@@ w@@ e@@ r'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from streamcodec.wordbpe.codes import Codes
from streamcodec.wordbpe.words import (
    CODES_VERSION,
    END_OF_WORD,
    STRIP,
    Pair,
    merge_pair,
    word_symbols,
)

__all__ = ["WordBPE"]


class WordBPE:
    """Apply learned merges to text, as subword-nmt's ``apply-bpe`` does.

    A word is merged by taking, again and again, the adjacent pair learned first and merging all
    its occurrences; what cannot be merged further stays as it is (unknown characters included).
    Every segment but a word's last is followed by ``separator``.

    >>> bpe = WordBPE([("l", "o"), ("lo", "w</w>")])
    >>> bpe.segment_word("low"), bpe.segment_word("lower")
    (('low',), ('lo', 'w', 'e', 'r'))
    >>> bpe.apply("  low   lower \\n")
    '  low lo@@ w@@ e@@ r \\n'
    """

    def __init__(
        self,
        merges: Iterable[Pair],
        *,
        separator: str = "@@",
        version: tuple[int, int] = CODES_VERSION,
    ) -> None:
        self.merges = list(merges)
        self.separator = separator
        self.version = version
        # A merge listed twice keeps its first (lowest) rank.
        self.ranks: dict[Pair, int] = {}
        for rank, pair in enumerate(self.merges):
            self.ranks.setdefault(pair, rank)
        self._cache: dict[str, tuple[str, ...]] = {}

    @classmethod
    def from_codes(cls, codes: Codes, *, separator: str = "@@") -> WordBPE:
        """The segmenter for a codes file read with :func:`read_codes` or :func:`parse_codes`."""
        return cls(codes.merges, separator=separator, version=codes.version)

    def segment_word(self, word: str) -> tuple[str, ...]:
        """The segments of one word, without separators or end-of-word markers."""
        cached = self._cache.get(word)
        if cached is None:
            cached = self._cache[word] = self._segment(word)
        return cached

    def _segment(self, word: str) -> tuple[str, ...]:
        symbols = word_symbols(word, self.version)
        ranks = self.ranks
        while len(symbols) > 1:
            candidates = [ranks[p] for p in itertools.pairwise(symbols) if p in ranks]
            if not candidates:
                break
            symbols = merge_pair(symbols, self.merges[min(candidates)])
        if symbols[-1] == END_OF_WORD:
            symbols.pop()
        elif symbols[-1].endswith(END_OF_WORD):
            symbols[-1] = symbols[-1][: -len(END_OF_WORD)]
        return tuple(symbols)

    def segment_words(self, words: Iterable[str]) -> list[str]:
        """Segments of each non-empty word, ``separator`` after all but each word's last."""
        out: list[str] = []
        for word in words:
            if not word:
                continue  # double spaces
            *inner, last = self.segment_word(word)
            out += [segment + self.separator for segment in inner]
            out.append(last)
        return out

    def segment_text(self, text: str) -> list[str]:
        """Every segment of ``text``, line after line, with separators (what ``apply`` writes).

        >>> WordBPE([("l", "o")]).segment_text("lo low\\nl")
        ['l@@', 'o', 'lo@@', 'w', 'l']
        """
        return [
            segment
            for line in text.splitlines()
            for segment in self.segment_words(line.strip(STRIP).split(" "))
        ]

    def apply_line(self, line: str) -> str:
        """Segment one line, keeping its leading and trailing CR, LF and spaces."""
        body = line.strip(STRIP)
        if not body:
            return line
        lead = line[: len(line) - len(line.lstrip(STRIP))]
        trail = line[len(line.rstrip(STRIP)) :]
        return lead + " ".join(self.segment_words(body.split(" "))) + trail

    def apply(self, text: str) -> str:
        """Segment ``text`` line by line (lines cut as ``str.splitlines`` cuts them)."""
        return "".join(self.apply_line(line) for line in text.splitlines(keepends=True))
