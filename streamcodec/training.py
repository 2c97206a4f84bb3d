"""The efficient trainer: count the pre-tokens once, then merge with a priority queue.

It must learn exactly the ranks of :func:`streamcodec.reference.train_naive`, which recounts every
adjacent pair after every merge. Here the pairs are counted once, over the table of distinct
pre-tokens ("words", weighted by how often each occurs), and a merge of ``(a, b)`` into ``ab``
only visits the words that contain the pair (``where[pair]``) and fixes the counts of the pairs
around each occurrence: ``(x, a) -> (x, ab)`` and ``(b, y) -> (ab, y)``.

The best pair comes from a heap with lazy invalidation. An entry holds a count that is at least
the pair's true count (counts of old pairs only fall; every pair whose count rises is pushed
again), so when the popped entry's count is the true count it is the true maximum; a stale entry
is pushed back with its true count. Ties go to the smallest ``(left id, right id)``: the heap key
is ``-count`` then the pair, so the order is the reference's.

    >>> enc = train("aaabdaaabac", vocab_size=259, pat_str=r".+", min_frequency=1)
    >>> [enc.decode_single_token_bytes(rank) for rank in range(256, 259)]
    [b'aa', b'ab', b'aaab']

The corpus is streamed: only the table of distinct pre-tokens and their counts is kept. See
:func:`count_pretokens` for how the text is cut without changing its pre-tokens.
"""

from __future__ import annotations

import heapq
import io
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO

from streamcodec.encoding import Encoding
from streamcodec.engine.backend import backend
from streamcodec.stream.cuts import cuts_for
from streamcodec.stream.encoder import Segment, SettledStream
from streamcodec.stream.sources import text_chunks
from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.vocab import resolve_pattern

__all__ = ["Corpus", "Progress", "count_pretokens", "document_texts", "learn_ranks", "train"]

Document = str | os.PathLike[str] | IO[str] | IO[bytes]
#: A str (one document), a path, a file object (text or binary UTF-8), or an iterable of those.
Corpus = Document | Iterable[Document]
#: ``progress(stage, done, total)``: stage ``"count"`` reports the UTF-8 bytes of text counted so
#: far (total None); stage ``"merge"`` the merges done out of ``total``.
Progress = Callable[[str, int, int | None], None]

CORPUS_READ_SIZE = 1 << 18  # bytes read at a time: the pieces of so much text are held at once

# A word is a str with one character per id (chr(id)), so that finding and replacing a pair
# in it are str.find and str.replace, in C; a pair is the 2-character str. A heap entry is an
# int, the pair's ids and count packed so that the smallest entry has the highest count, then
# the smallest (left id, right id): (left << 32 | right) - (count << 64).
_MAX_TOKENS = 0x110000  # chr's limit
_RIGHT = (1 << 32) - 1


def train(
    source: Corpus,
    *,
    vocab_size: int,
    pat_str: str,
    special_tokens: Iterable[str] = (),
    min_frequency: int = 2,
    name: str = "trained",
    progress: Progress | None = None,
) -> Encoding:
    """Learn a byte-level BPE encoding with ``vocab_size`` ids (special tokens included).

    ``source`` is a str (the text of one document), an ``os.PathLike`` (a file, read as UTF-8),
    a file object, or an iterable of those (documents: no pre-token spans two of them). Text
    equal to a special token is cut out and not counted; the special tokens take the ids after
    the merges, in the order given. Training stops early when no pair occurs ``min_frequency``
    times (a pair seen once is memorisation, not a pattern), so ``n_vocab`` may be smaller.

    >>> enc = train(["low lower lowest"] * 2, vocab_size=260, pat_str="gpt2",
    ...             special_tokens=["<|end|>"])
    >>> enc.decode_tokens_bytes(enc.encode(" lowest<|end|>", allowed_special="all"))
    [b' low', b'e', b's', b't', b'<|end|>']
    """
    specials = list(dict.fromkeys(special_tokens))
    if "" in specials:
        raise ValueError("a special token cannot be the empty string")
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must hold the 256 single bytes and "
            f"{len(specials)} special token(s)"
        )
    pattern = resolve_pattern(pat_str)
    counts = count_pretokens(source, pat_str=pattern, special_tokens=specials, progress=progress)
    ranks = learn_ranks(
        counts,
        n_tokens=vocab_size - len(specials),
        min_frequency=min_frequency,
        progress=progress,
    )
    return Encoding(
        name,
        pat_str=pattern,
        mergeable_ranks=ranks,
        special_tokens={text: len(ranks) + i for i, text in enumerate(specials)},
    )


def count_pretokens(
    source: Corpus,
    *,
    pat_str: str,
    special_tokens: Iterable[str] = (),
    progress: Progress | None = None,
    chunk_size: int = CORPUS_READ_SIZE,
) -> Counter[str]:
    """Count the pre-tokens of every document of ``source`` (see :func:`train`), streaming files.

    A file is read ``chunk_size`` bytes at a time and cut as the streaming encoder cuts it
    (:class:`streamcodec.stream.encoder.SettledStream`): around the special tokens (dropped)
    and at safe cuts, so the pre-tokens are those of the whole file; text with no safe cut is
    kept until one comes or the file ends.

    >>> count_pretokens("a b<|end|>a", pat_str="gpt2", special_tokens=["<|end|>"])
    Counter({'a': 2, ' b': 1})
    """
    pretokenizer = Pretokenizer(resolve_pattern(pat_str), native=backend() == "native")
    specials = {token: i for i, token in enumerate(dict.fromkeys(special_tokens))}
    counts: Counter[str] = Counter()
    done = 0
    for document in _documents(source):
        for text, start, end, _ in _segments(document, pretokenizer, specials, chunk_size):
            counts.update(pretokenizer.pieces(text, start, end))
            if progress is not None:
                done += len(text[start:end].encode("utf-8", "surrogatepass"))
                progress("count", done, None)
    return counts


def _segments(
    document: Document, pretokenizer: Pretokenizer, specials: dict[str, int], chunk_size: int
) -> Iterator[Segment]:
    """The settled ordinary text of ``document``; special tokens are dropped."""
    cuts = cuts_for(pretokenizer)
    stream = SettledStream(specials, cuts, allowed=frozenset(specials), disallowed=frozenset())
    for chunk in text_chunks(document, chunk_size=chunk_size):
        for item in stream.feed(chunk):
            if not isinstance(item, int):
                yield item
    yield from (item for item in stream.close() if not isinstance(item, int))


def document_texts(
    source: Corpus, *, chunk_size: int = CORPUS_READ_SIZE
) -> Iterator[Iterator[str]]:
    """The text of each document of ``source``, in chunks (files are read ``chunk_size`` bytes
    at a time and decoded as UTF-8; an error names the file and the byte offset).

    >>> [list(chunks) for chunks in document_texts(["one", "two"])]
    [['one'], ['two']]
    """
    for document in _documents(source):
        yield text_chunks(document, chunk_size=chunk_size)


def _documents(source: Corpus) -> Iterator[Document]:
    if isinstance(source, (str, os.PathLike, io.IOBase)) or hasattr(source, "read"):
        yield source  # type: ignore[misc]  # a file object that is not an io.IOBase
    else:
        yield from source


def learn_ranks(
    counts: Mapping[str, int] | Mapping[bytes, int],
    *,
    n_tokens: int,
    min_frequency: int = 2,
    progress: Progress | None = None,
) -> dict[bytes, int]:
    """Merge until there are ``n_tokens`` ranks or no pair occurs ``min_frequency`` times.

    ``counts`` maps each distinct pre-token (text or bytes) to its number of occurrences. The
    result equals :func:`streamcodec.reference.train_naive` on the same pre-tokens. A
    ``min_frequency`` below 1 means 1: a pair that does not occur is never merged.

    >>> learn_ranks({"hug": 10, "pug": 5, "hugs": 5}, n_tokens=258)[b"ug"]
    256
    """
    if n_tokens > _MAX_TOKENS:
        raise ValueError(f"n_tokens={n_tokens}: at most {_MAX_TOKENS} mergeable tokens")
    min_frequency = max(1, min_frequency)
    words: list[str] = []
    freqs: list[int] = []
    for piece, freq in counts.items():
        data = piece.encode("utf-8") if isinstance(piece, str) else piece
        if len(data) > 1:  # a single byte has no pair
            words.append(data.decode("latin-1"))  # chr(byte) for each byte
            freqs.append(freq)
    pair_counts, where = _count_pairs(words, freqs)
    tokens = [bytes([b]) for b in range(256)]
    ranks = {token: rank for rank, token in enumerate(tokens)}
    heap = [_entry(pair, count) for pair, count in pair_counts.items() if count >= min_frequency]
    heapq.heapify(heap)
    while len(tokens) < n_tokens and heap:
        entry = heapq.heappop(heap)
        pair = chr(entry >> 32 & _RIGHT) + chr(entry & _RIGHT)
        count = pair_counts.get(pair, 0)
        if count != -(entry >> 64):  # stale: the pair has become rarer since this was pushed
            if count >= min_frequency:
                heapq.heappush(heap, _entry(pair, count))
            continue
        merged = tokens[ord(pair[0])] + tokens[ord(pair[1])]
        ranks[merged] = len(tokens)
        tokens.append(merged)
        del pair_counts[pair]
        for new_pair, count in _merge(pair, chr(ranks[merged]), words, freqs, pair_counts, where):
            if count >= min_frequency:
                heapq.heappush(heap, _entry(new_pair, count))
        if progress is not None:
            progress("merge", len(tokens) - 256, n_tokens - 256)
    return ranks


def _entry(pair: str, count: int) -> int:
    return (ord(pair[0]) << 32 | ord(pair[1])) - (count << 64)


def _count_pairs(
    words: list[str], freqs: list[int]
) -> tuple[defaultdict[str, int], defaultdict[str, list[int]]]:
    """Each adjacent pair's weighted count, and the indices of the words it occurs in."""
    pair_counts: defaultdict[str, int] = defaultdict(int)
    where: defaultdict[str, list[int]] = defaultdict(list)
    for index, (word, freq) in enumerate(zip(words, freqs, strict=True)):
        for i in range(len(word) - 1):
            pair = word[i : i + 2]
            pair_counts[pair] += freq
            where[pair].append(index)
    return pair_counts, where


def _merge(
    pair: str,
    new: str,
    words: list[str],
    freqs: list[int],
    pair_counts: dict[str, int],
    where: defaultdict[str, list[int]],
) -> Iterable[tuple[str, int]]:
    """Replace ``pair`` (``ab``) by ``new`` in every word holding it; return the new pairs' counts.

    Each occurrence, left to right, turns ``(x, a)`` into ``(x, ab)`` and ``(b, y)`` into
    ``(ab, y)``; when ``x`` is the ``b`` of the occurrence just before (``a b a b``), the
    ``(ab, a)`` made by that one becomes ``(ab, ab)``. This keeps the counts exact. Pairs with
    ``ab`` are new, so they are counted apart and added at the end. The loop is written out in
    full (no helper calls): it is where training spends its time.
    """
    fresh: defaultdict[str, int] = defaultdict(int)
    follow = new + pair[0]  # (ab, a)
    double = new + new  # (ab, ab)
    for index in dict.fromkeys(where.pop(pair)):
        word = words[index]
        i = word.find(pair)
        if i < 0:  # a stale index: an earlier merge took the pair from this word
            continue
        freq = freqs[index]
        end = 0  # where the previous occurrence ended
        last = len(word) - 2
        while i >= 0:
            if i and i == end:
                fresh[follow] -= freq
                fresh[double] += freq
                where[double].append(index)
            elif i:
                if (old := word[i - 1 : i + 1]) != pair:
                    if remaining := pair_counts[old] - freq:
                        pair_counts[old] = remaining
                    else:
                        del pair_counts[old], where[old]
                grown = word[i - 1] + new
                fresh[grown] += freq
                where[grown].append(index)
            end = i + 2
            if i < last:
                if (old := word[i + 1 : i + 3]) != pair:
                    if remaining := pair_counts[old] - freq:
                        pair_counts[old] = remaining
                    else:
                        del pair_counts[old], where[old]
                grown = new + word[end]
                fresh[grown] += freq
                where[grown].append(index)
            i = word.find(pair, end)
        words[index] = word.replace(pair, new)
    for grown, count in list(fresh.items()):
        if count:
            pair_counts[grown] = count
        else:  # made and unmade within one word: (ab, a) in a b a b
            del fresh[grown], where[grown]
    return fresh.items()
