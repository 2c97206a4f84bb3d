"""Word-level BPE of Sennrich et al. (2016), compatible with subword-nmt 0.3.8.

This is the classic BPE of neural machine translation, not the byte-level BPE of GPT models:

- text is split into words on single spaces (lines are cut as ``str.splitlines`` cuts them);
- each word is a sequence of *characters* (code points, not bytes), and its last character
  carries the end-of-word marker ``</w>``, so ``st</w>`` (a word ending) and ``st`` (inside a
  word) are different symbols;
- learning repeatedly merges the most frequent adjacent pair of symbols, counted over word
  frequencies; ties go to the pair that is largest as a tuple of strings (subword-nmt's
  ``max(stats, key=lambda x: (stats[x], x))``); learning stops early when the best pair is seen
  fewer than ``min_frequency`` times;
- applying merges a word by repeatedly taking the adjacent pair that was learned first, merging
  all its occurrences left to right; every segment but the last is written with ``@@``.

The priority is the rank of the *pair*, not of the merged string: ``ab + c`` and ``a + bc`` are
different merges, which is why this module does not use :func:`streamcodec.reference.rank_merge`.

    >>> merges = learn_merges({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
    >>> merges
    [('s', 't</w>'), ('e', 'st</w>'), ('l', 'o'), ('w', 'est</w>')]
    >>> WordBPE(merges).apply("lowest newer")
    'lo@@ west n@@ e@@ w@@ e@@ r'

The codes file is subword-nmt's: a ``#version: 0.2`` header, then one merge per line, the two
symbols separated by a space. Learning is incremental (only the words that contain the merged pair
are re-counted, and a heap with lazy invalidation finds the best pair), and must give the merges
of :func:`learn_merges_naive`, which recounts everything each round. Where subword-nmt departs
from its own algorithm (a tab or other non-space whitespace inside a word, see
docs/classic_bpe.md) this module follows the algorithm.
"""

from __future__ import annotations

import heapq
import itertools
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from streamcodec.atomicfile import atomic_output
from streamcodec.training import Source, document_texts

__all__ = [
    "END_OF_WORD",
    "Codes",
    "WordBPE",
    "count_words",
    "format_codes",
    "learn_merges",
    "learn_merges_naive",
    "merge_pair",
    "parse_codes",
    "read_codes",
    "remove_separators",
    "train_word_bpe",
    "word_symbols",
    "write_codes",
]

END_OF_WORD = "</w>"
CODES_VERSION = (0, 2)
# subword-nmt strips these (and only these) around lines and codes-file entries.
_STRIP = "\r\n "

Pair = tuple[str, str]


def count_words(text: str | Iterable[str]) -> Counter[str]:
    """Count the space-separated words of ``text`` as subword-nmt does.

    ``text`` is a string or its successive chunks, cut anywhere (a file read in blocks). Lines
    are cut where ``str.splitlines`` cuts them (subword-nmt reads through ``codecs``), then
    stripped of CR, LF and spaces and split on single spaces; tabs stay inside words.

    >>> count_words("a b  a\\n\\tb")
    Counter({'a': 2, 'b': 1, '\\tb': 1})
    >>> count_words(["a b", "b a\\n", "a"]) == count_words("a bb a\\na")
    True
    """
    counts: Counter[str] = Counter()
    pending = ""
    for chunk in [text] if isinstance(text, str) else text:
        pending += chunk
        # After a space or LF nothing joins the text before to the text after.
        cut = max(pending.rfind(" "), pending.rfind("\\n")) + 1
        _count_lines(pending[:cut], counts)
        pending = pending[cut:]
    _count_lines(pending, counts)
    return counts


def _count_lines(text: str, counts: Counter[str]) -> None:
    for line in text.splitlines(keepends=True):
        counts.update(word for word in line.strip(_STRIP).split(" ") if word)


def remove_separators(text: str, *, separator: str = "@@") -> str:
    """Undo :meth:`WordBPE.apply`: join the segments back into words.

    This is subword-nmt's ``sed -r 's/(@@ )|(@@ ?$)//g'``, line by line.

    >>> remove_separators("lo@@ west ne@@ w@@\\n")
    'lowest new\\n'
    """
    joined = re.escape(separator)
    return re.sub(rf"{joined} |{joined} ?(?=[\\r\\n]*$)", "", text, flags=re.MULTILINE)


def word_symbols(word: str, version: tuple[int, int] = CODES_VERSION) -> list[str]:
    """The initial symbols of ``word``: its characters, the end-of-word marker on the last.

    >>> word_symbols("low"), word_symbols("low", (0, 1))
    (['l', 'o', 'w</w>'], ['l', 'o', 'w', '</w>'])
    """
    if version == (0, 1):
        return [*word, END_OF_WORD]
    if version == (0, 2):
        return [*word[:-1], word[-1] + END_OF_WORD]
    raise ValueError(f"codes version {'.'.join(map(str, version))} is not supported (0.1, 0.2)")


def merge_pair(symbols: Sequence[str], pair: Pair) -> list[str]:
    """Merge every occurrence of ``pair`` in ``symbols``, left to right, without overlaps.

    >>> merge_pair(["a", "a", "a", "b"], ("a", "a"))
    ['aa', 'a', 'b']
    """
    first, second = pair
    out: list[str] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == first and symbols[i + 1] == second:
            out.append(first + second)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _check_arguments(word_counts: Mapping[str, int], min_frequency: int) -> None:
    if min_frequency < 1:
        raise ValueError(f"min_frequency must be at least 1, not {min_frequency}")
    # A space would split the symbol in the codes file; a line break would split the line.
    for word in word_counts:
        if " " in word or "\n" in word:
            raise ValueError(f"word {word!r} contains a space or a line break; see count_words")


def _merge_budget(word_counts: Mapping[str, int], num_merges: int, total_symbols: bool) -> int:
    """subword-nmt's ``--total-symbols``: count the characters towards the number of symbols."""
    if not total_symbols:
        return num_merges
    inner = {char for word in word_counts for char in word[:-1]}
    final = {word[-1] for word in word_counts if word}
    return num_merges - len(inner) - len(final)


def learn_merges_naive(
    word_counts: Mapping[str, int],
    num_merges: int,
    *,
    min_frequency: int = 2,
    total_symbols: bool = False,
) -> list[Pair]:
    """The specification of learning: recount every pair each round; slow, obviously right.

    >>> learn_merges_naive({"aaab": 2}, 3)
    [('a', 'a'), ('aa', 'a'), ('aaa', 'b</w>')]
    """
    _check_arguments(word_counts, min_frequency)
    words = {tuple(word_symbols(word)): count for word, count in word_counts.items() if word}
    merges: list[Pair] = []
    for _ in range(_merge_budget(word_counts, num_merges, total_symbols)):
        stats: Counter[Pair] = Counter()
        for symbols, count in words.items():
            for pair in itertools.pairwise(symbols):
                stats[pair] += count
        if not stats:
            break
        best = max(stats, key=lambda pair: (stats[pair], pair))
        if stats[best] < min_frequency:
            break
        merges.append(best)
        words = {tuple(merge_pair(symbols, best)): count for symbols, count in words.items()}
    return merges


def learn_merges(
    word_counts: Mapping[str, int],
    num_merges: int,
    *,
    min_frequency: int = 2,
    total_symbols: bool = False,
) -> list[Pair]:
    """Learn up to ``num_merges`` merges from word counts; equal to :func:`learn_merges_naive`.

    ``total_symbols`` subtracts the number of distinct characters (word-internal and word-final)
    from ``num_merges``, as subword-nmt's ``--total-symbols`` does.

    >>> learn_merges(count_words("aaab aaab"), 3)
    [('a', 'a'), ('aa', 'a'), ('aaa', 'b</w>')]
    """
    _check_arguments(word_counts, min_frequency)
    state = _PairCounts(word_counts)
    merges: list[Pair] = []
    for _ in range(_merge_budget(word_counts, num_merges, total_symbols)):
        best = state.best()
        if best is None or state.stats[best] < min_frequency:
            break
        merges.append(best)
        state.merge(best)
    return merges


def train_word_bpe(
    source: Source,
    *,
    num_merges: int,
    min_frequency: int = 2,
    total_symbols: bool = False,
    separator: str = "@@",
) -> WordBPE:
    """Learn word-level BPE from ``source`` as subword-nmt's ``learn-bpe`` does, ready to apply.

    ``source`` is what :func:`streamcodec.train` takes: a str, a path, a file, or an iterable of
    those (documents); files are streamed and only the word counts are kept.

    >>> train_word_bpe(["low lower", "lowest"], num_merges=2).merges
    [('l', 'o'), ('w', 'e')]
    """
    counts: Counter[str] = Counter()
    for chunks in document_texts(source):
        counts.update(count_words(chunks))
    merges = learn_merges(
        counts, num_merges, min_frequency=min_frequency, total_symbols=total_symbols
    )
    return WordBPE(merges, separator=separator)


def _tie_key(pair: Pair) -> tuple[int, ...]:
    """A key that sorts pairs in *descending* tuple-of-strings order, for a min-heap.

    Each code point is negated and each string ends with 1 (above every negated code point), so
    a string sorts after its own extensions, as needed when the order is reversed.
    """
    first, second = pair
    return (*(-ord(c) for c in first), 1, *(-ord(c) for c in second), 1)


@dataclass
class _PairCounts:
    """Pair counts over the distinct words, with the words each pair occurs in and a heap."""

    word_counts: Mapping[str, int]
    words: list[list[str]] = field(init=False)
    counts: list[int] = field(init=False)
    stats: defaultdict[Pair, int] = field(init=False)
    where: defaultdict[Pair, set[int]] = field(init=False)
    heap: list[tuple[int, tuple[int, ...], Pair]] = field(init=False)

    def __post_init__(self) -> None:
        items = [(word, count) for word, count in self.word_counts.items() if word]
        self.words = [word_symbols(word) for word, _ in items]
        self.counts = [count for _, count in items]
        self.stats = defaultdict(int)
        self.where = defaultdict(set)
        for index, (symbols, count) in enumerate(zip(self.words, self.counts, strict=True)):
            for pair in itertools.pairwise(symbols):
                self.stats[pair] += count
                self.where[pair].add(index)
        self.heap = [(-n, _tie_key(pair), pair) for pair, n in self.stats.items()]
        heapq.heapify(self.heap)

    def best(self) -> Pair | None:
        """The most frequent pair (largest on ties).

        Every pair has an entry whose count is at least its true count (a count that rises is
        pushed again; one that falls is not), so an entry whose count is true is the maximum. A
        stale entry is pushed back with the true count.
        """
        heap, stats = self.heap, self.stats
        while heap:
            negative, key, pair = heap[0]
            n = stats.get(pair, 0)
            if n == -negative:
                return pair
            if n > 0:
                heapq.heapreplace(heap, (-n, key, pair))
            else:
                heapq.heappop(heap)
        return None

    def merge(self, pair: Pair) -> None:
        """Merge ``pair`` in every word holding it and update the counts of the pairs changed."""
        changed: dict[Pair, int] = defaultdict(int)
        for index in self.where.pop(pair, ()):
            old = self.words[index]
            new = merge_pair(old, pair)
            if len(new) == len(old):
                continue  # a stale entry: an earlier merge removed the pair from this word
            self.words[index] = new
            # Only the pairs around the merges change; pairs kept stay indexed and counted.
            delta: dict[Pair, int] = defaultdict(int)
            for gone in itertools.pairwise(old):
                delta[gone] -= 1
            for made in itertools.pairwise(new):
                delta[made] += 1
            count = self.counts[index]
            for each, d in delta.items():
                if d:
                    changed[each] += d * count
                    if d > 0:
                        self.where[each].add(index)
        for each, d in changed.items():
            n = self.stats[each] + d
            self.stats[each] = n
            if d > 0:
                heapq.heappush(self.heap, (-n, _tie_key(each), each))
            elif n <= 0:
                del self.stats[each]


@dataclass(frozen=True)
class Codes:
    """A codes file: its version and its merges, in the order they were learned."""

    merges: list[Pair]
    version: tuple[int, int] = CODES_VERSION


def format_codes(merges: Iterable[Pair], *, version: tuple[int, int] = CODES_VERSION) -> str:
    """The text of a codes file, as subword-nmt's learn-bpe writes it.

    >>> print(format_codes([("e", "s"), ("es", "t</w>")]), end="")
    #version: 0.2
    e s
    es t</w>
    """
    header = f"#version: {'.'.join(map(str, version))}\n"
    return header + "".join(f"{first} {second}\n" for first, second in merges)


def parse_codes(text: str, *, source: str = "codes", max_merges: int | None = None) -> Codes:
    """Read the text of a codes file; without a ``#version`` header it is version 0.1.

    Only the first ``max_merges`` merges are kept when given (subword-nmt's ``--merges``).
    Raises ``ValueError`` naming ``source`` and the line of a malformed entry.

    >>> parse_codes("#version: 0.2\\ne s\\nes t</w>\\n", max_merges=1)
    Codes(merges=[('e', 's')], version=(0, 2))
    """
    lines = text.rstrip("\n").split("\n")  # only LF ends a line: symbols may hold \x85 or \u2028
    first_line = 1
    version = (0, 1)
    if lines and lines[0].startswith("#version:"):
        version = _parse_version(lines[0], source)
        lines = lines[1:]
        first_line = 2
    if max_merges is not None:
        lines = lines[:max_merges]
    merges: list[Pair] = []
    for number, line in enumerate(lines, first_line):
        parts = line.strip(_STRIP).split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(
                f"{source}, line {number}: expected two symbols separated by a space, got {line!r}"
            )
        merges.append((parts[0], parts[1]))
    return Codes(merges, version)


def _parse_version(line: str, source: str) -> tuple[int, int]:
    # "#version: 0.2" and "#version: 0.2.0" are the same version.
    number = re.sub(r"(\.0+)*$", "", line.split()[-1])
    try:
        parts = tuple(int(part) for part in number.split("."))
    except ValueError:
        raise ValueError(f"{source}, line 1: bad version header {line!r}") from None
    if parts not in ((0, 1), (0, 2)):
        raise ValueError(f"{source}, line 1: codes version {number} is not supported (0.1, 0.2)")
    return (parts[0], parts[1])


def read_codes(path: str | os.PathLike[str], *, max_merges: int | None = None) -> Codes:
    """Read a codes file written by subword-nmt's ``learn-bpe`` (or :func:`write_codes`)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{os.fspath(path)}: invalid UTF-8 at byte offset {exc.start}") from None
    return parse_codes(text, source=os.fspath(path), max_merges=max_merges)


def write_codes(
    path: str | os.PathLike[str],
    merges: Iterable[Pair],
    *,
    version: tuple[int, int] = CODES_VERSION,
) -> None:
    """Write a codes file atomically, in subword-nmt's format."""
    with atomic_output(path) as f:
        f.write(format_codes(merges, version=version).encode("utf-8"))


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
            for segment in self.segment_words(line.strip(_STRIP).split(" "))
        ]

    def apply_line(self, line: str) -> str:
        """Segment one line, keeping its leading and trailing CR, LF and spaces."""
        body = line.strip(_STRIP)
        if not body:
            return line
        lead = line[: len(line) - len(line.lstrip(_STRIP))]
        trail = line[len(line.rstrip(_STRIP)) :]
        return lead + " ".join(self.segment_words(body.split(" "))) + trail

    def apply(self, text: str) -> str:
        """Segment ``text`` line by line (lines cut as ``str.splitlines`` cuts them)."""
        return "".join(self.apply_line(line) for line in text.splitlines(keepends=True))
