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

from streamcodec.wordbpe.apply import WordBPE
from streamcodec.wordbpe.codes import Codes, format_codes, parse_codes, read_codes, write_codes
from streamcodec.wordbpe.learn import learn_merges, learn_merges_naive, train_word_bpe
from streamcodec.wordbpe.words import (
    END_OF_WORD,
    count_words,
    merge_pair,
    remove_separators,
    word_symbols,
)

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
