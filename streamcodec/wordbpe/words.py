"""Words and symbols: how subword-nmt cuts text into words and words into symbols.

>>> count_words("low lower low\\n"), word_symbols("low")
(Counter({'low': 2, 'lower': 1}), ['l', 'o', 'w</w>'])
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from streamcodec.stream.sources import line_blocks

__all__ = [
    "CODES_VERSION",
    "END_OF_WORD",
    "STRIP",
    "Pair",
    "count_words",
    "merge_pair",
    "remove_separators",
    "word_symbols",
]

END_OF_WORD = "</w>"
CODES_VERSION = (0, 2)
# subword-nmt strips these (and only these) around lines and codes-file entries.
STRIP = "\r\n "

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
    for block in line_blocks([text] if isinstance(text, str) else text):
        for line in block.splitlines(keepends=True):
            counts.update(word for word in line.strip(STRIP).split(" ") if word)
    return counts


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
