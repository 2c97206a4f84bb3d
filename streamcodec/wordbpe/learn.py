"""Learning merges: the naive reference and the incremental learner that must equal it.

>>> learn_merges({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
[('s', 't</w>'), ('e', 'st</w>'), ('l', 'o'), ('w', 'est</w>')]
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from streamcodec.training import Corpus, Progress, document_texts
from streamcodec.wordbpe.apply import WordBPE
from streamcodec.wordbpe.words import Pair, count_words, merge_pair, word_symbols

__all__ = ["learn_merges", "learn_merges_naive", "train_word_bpe"]


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
    progress: Progress | None = None,
) -> list[Pair]:
    """Learn up to ``num_merges`` merges from word counts; equal to :func:`learn_merges_naive`.

    ``total_symbols`` subtracts the number of distinct characters (word-internal and word-final)
    from ``num_merges``, as subword-nmt's ``--total-symbols`` does. ``progress("merge", done,
    total)`` is called after each merge.

    >>> learn_merges(count_words("aaab aaab"), 3)
    [('a', 'a'), ('aa', 'a'), ('aaa', 'b</w>')]
    """
    _check_arguments(word_counts, min_frequency)
    state = _PairCounts(word_counts)
    merges: list[Pair] = []
    budget = _merge_budget(word_counts, num_merges, total_symbols)
    for _ in range(budget):
        best = state.best()
        if best is None or state.stats[best] < min_frequency:
            break
        merges.append(best)
        state.merge(best)
        if progress is not None:
            progress("merge", len(merges), budget)
    return merges


def train_word_bpe(
    source: Corpus,
    *,
    num_merges: int,
    min_frequency: int = 2,
    total_symbols: bool = False,
    separator: str = "@@",
    progress: Progress | None = None,
) -> WordBPE:
    """Learn word-level BPE from ``source`` as subword-nmt's ``learn-bpe`` does, ready to apply.

    ``source`` is what :func:`streamcodec.train` takes: a str, a path, a file, or an iterable of
    those (documents); files are streamed and only the word counts are kept. ``progress`` is
    called as :func:`streamcodec.train` calls it: ``("count", bytes so far, None)``, then
    ``("merge", done, total)``.

    >>> train_word_bpe(["low lower", "lowest"], num_merges=2).merges
    [('l', 'o'), ('w', 'e')]
    """
    counts: Counter[str] = Counter()
    read = [0]
    for chunks in document_texts(source):
        counts.update(count_words(_counted(chunks, read, progress)))
    merges = learn_merges(
        counts,
        num_merges,
        min_frequency=min_frequency,
        total_symbols=total_symbols,
        progress=progress,
    )
    return WordBPE(merges, separator=separator)


def _counted(chunks: Iterator[str], read: list[int], progress: Progress | None) -> Iterator[str]:
    """``chunks``, reporting the bytes read so far (``read[0]``, over every document)."""
    for chunk in chunks:
        yield chunk
        if progress is not None:
            read[0] += len(chunk.encode("utf-8", "surrogatepass"))
            progress("count", read[0], None)


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
