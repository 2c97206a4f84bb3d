"""Pre-tokenization: cut text into pieces with the vocabulary's pattern before any merging.

Merges never cross a piece boundary, so the pattern decides a lot: GPT-2's keeps a leading space
with the word after it (``" world"``), cl100k_base caps digit runs at three, and so on. The
pattern is matched with the ``regex`` module, which understands the possessive quantifiers and
Unicode classes of tiktoken's patterns.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> Pretokenizer(CL100K_PATTERN).pieces("Hello world!!  12345")
    ['Hello', ' world', '!!', ' ', ' ', '123', '45']

**The fast path** must give the same pieces as tiktoken. The standard library's ``re`` runs the
named patterns (GPT-2/r50k/p50k, cl100k_base, o200k_base) about three times faster once their
Unicode classes (``\\p{L}``, ``\\s``, ``(?i:s)``...) are written out as explicit character sets,
and it needs no ``regex`` at all: the sets come from the Unicode 16.0 tables shipped with
streamcodec (:mod:`streamcodec.text.unicode_classes`, tiktoken 0.14's Unicode version), so the
pieces are tiktoken's whatever ``regex`` release is installed (``re``'s own ``\\s`` would not
do either: it includes ``\\x1c``-``\\x1f``). Sets with astral ranges make ``re`` several
times slower, so sets cut to the Basic Multilingual Plane serve every text whose astral
characters (emoji...) are in no class the patterns name: a positive set never matches one, a
negated set always does, as the full set would. Text with an astral letter, digit, mark or space
takes the full sets. Any other pattern whose classes pin to the shipped tables (every open
model's: :mod:`streamcodec.text.pinned`) is run by ``re`` with those classes written out; the
rest take ``regex`` (its Unicode version), as does Python before 3.11 (no possessive
quantifiers in ``re``).

**The native path** comes first when it is built: the named patterns are cut into pieces and
words in C by :mod:`streamcodec.text.native`, with the same shipped tables, equal to ``regex``
on every code point (astral ones included); the ``re`` path is the fallback
(``STREAMCODEC_BACKEND=python``, no compiler).
"""

from __future__ import annotations

import functools
import re
import sys
from typing import TYPE_CHECKING

from streamcodec.text.known_patterns import STEPS_PREFIX, named_pattern, native_number
from streamcodec.text.native import NativeScanner, native_scanner
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

if TYPE_CHECKING:
    import regex

    from streamcodec.text.sequence import Steps

__all__ = ["Pretokenizer", "class_set", "fast_pattern", "full_pattern"]

# «class» stands for a regex class written out as an explicit set (see class_set).
_O200K_CONTRACTION = (
    r"(?:'«(?i:s)»|'«(?i:t)»|'«(?i:r)»«(?i:e)»|'«(?i:v)»«(?i:e)»|'«(?i:m)»|'«(?i:l)»«(?i:l)»"
    r"|'«(?i:d)»)?"
)
_O200K_UPPER = r"«[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]»"
_O200K_LOWER = r"«[\p{Ll}\p{Lm}\p{Lo}\p{M}]»"
_TEMPLATES = {
    GPT2_PATTERN: (
        r"""'(?:[sdmt]|ll|ve|re)| ?«\p{L}»++| ?«\p{N}»++| ?«[^\s\p{L}\p{N}]»++|«\s»++$"""
        r"""|«\s»+(?!«\S»)|«\s»"""
    ),
    CL100K_PATTERN: (
        r"""'(?:«(?i:[sdmt])»|«(?i:l)»«(?i:l)»|«(?i:v)»«(?i:e)»|«(?i:r)»«(?i:e)»)"""
        r"""|«[^\r\n\p{L}\p{N}]»?+«\p{L}»++|«\p{N}»{1,3}+| ?«[^\s\p{L}\p{N}]»++[\r\n]*+"""
        r"""|«\s»++$|«\s»*[\r\n]|«\s»+(?!«\S»)|«\s»"""
    ),
    O200K_PATTERN: "|".join(
        [
            rf"""«[^\r\n\p{{L}}\p{{N}}]»?{_O200K_UPPER}*{_O200K_LOWER}+{_O200K_CONTRACTION}""",
            rf"""«[^\r\n\p{{L}}\p{{N}}]»?{_O200K_UPPER}+{_O200K_LOWER}*{_O200K_CONTRACTION}""",
            r"""«\p{N}»{1,3}""",
            r""" ?«[^\s\p{L}\p{N}]»+[\r\n/]*""",
            r"""«\s»*[\r\n]+""",
            r"""«\s»+(?!«\S»)""",
            r"""«\s»+""",
        ]
    ),
}
_CLASS = re.compile("«([^»]*)»")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
BMP_END = 0xFFFF


# The readers of steps and of other patterns, imported by the patterns that need them: a named
# pattern's start imports neither (sequence, pinned, regex_patterns, unicode_classes and
# byte_alphabet: 3% of a one-line tokenize-corpus's instructions).
def _steps(pattern: str) -> Steps:
    from streamcodec.text.sequence import Steps

    return Steps(pattern)


def _pinned(pattern: str) -> re.Pattern[str] | None:
    from streamcodec.text.pinned import pinned_re

    return pinned_re(pattern)


def _regex(pattern: str) -> regex.Pattern[str]:
    from streamcodec.text.regex_patterns import compile_regex

    return compile_regex(pattern)


class Pretokenizer:
    """Split text into the matches of a pattern (tiktoken's and GPT-2's pre-tokenization);
    ``native=False`` keeps to the ``re``/``regex`` path even where the native scanner is built."""

    def __init__(self, pattern: str, *, native: bool = True) -> None:
        self.pattern = pattern
        #: A Sequence of Hugging Face steps (:mod:`streamcodec.text.sequence`), or None.
        self.steps = _steps(pattern) if pattern.startswith(STEPS_PREFIX) else None
        #: The named pattern (tiktoken's string) of ``pattern``'s shape, however it is spelled
        #: (:func:`~streamcodec.text.known_patterns.named_pattern`), or None: cut as that one.
        self.named = named_pattern(pattern)
        self._known = self.named is not None
        self._fast_known = self._known and sys.version_info >= (3, 11)
        # The C scanner, for the named patterns (unless the pure path is asked for).
        self._native = native_scanner(pattern) if native else None
        # ``regex`` only for a pattern nothing else cuts (compiled now: a bad one fails here).
        covered = self._fast_known or self._native is not None or self.steps is not None
        # Any other pattern: its classes pinned to the shipped tables where they can be
        # (text/pinned.py); ``regex`` checks it unless the native scanner knows its shape.
        self._pinned = None if self._fast_known or self.steps else _pinned(pattern)
        known = native_number(pattern) is not None
        self._regex = None if covered or (self._pinned and known) else _regex(pattern)
        if self._pinned is not None and self._regex is not None:  # (a+)+$: quick in regex only
            from streamcodec.text.regex_patterns import quick_in_re

            self._pinned = self._pinned if quick_in_re(self._pinned, pattern) else None
        # What cuts a pattern no scanner knows (its reader imported for such a pattern only).
        self._matcher = self._pinned if self._pinned is not None else self._regex
        if self._matcher is not None:
            from streamcodec.text.regex_patterns import whole_matches

            self._whole_matches = whole_matches

    @property
    def scanner(self) -> NativeScanner | None:
        """The compiled scanner that cuts this pattern, or None (``re`` or ``regex`` does)."""
        return self._native

    def pieces(self, text: str, start: int = 0, end: int | None = None) -> list[str]:
        """The pieces of ``text[start:end]``; the slice ends the text for ``$`` and lookaheads."""
        if end is None:
            end = len(text)
        if self.steps is not None:
            return self.steps.pieces(text, start, end)
        if self._native is not None:
            return self._native.pieces(text, start, end)
        if self._fast_known:
            if text.isascii() or _bmp_sets_apply(text, start, end):
                return fast_pattern(self.named).findall(text, start, end)
            return full_pattern(self.named).findall(text, start, end)
        # An empty match met in the text is refused on both (compiling's check may miss one).
        assert self._matcher is not None  # set for every pattern the branches above do not cut
        return self._whole_matches(self._matcher, text, start, end)

    def words(self, text: str, start: int = 0, end: int | None = None) -> list[str] | None:
        """``text[start:end]`` cut where every named pattern must end a piece, whatever follows:
        before each space that follows a non-space character: *words*, each with the spaces
        before it. ``None`` for other patterns.

        Each of the patterns puts a space only at the start of a piece or inside a run of
        whitespace, and looks past a non-space character only to see whether a letter, digit,
        apostrophe, newline or ``/`` follows, or the end: a space answers as the end does.
        So the pieces of the words, each cut on its own, are the pieces of the text.

        >>> from streamcodec.vocab import CL100K_PATTERN
        >>> Pretokenizer(CL100K_PATTERN).words("Hi there,  you\\n you")
        ['Hi', ' there,', '  you\\n you']
        """
        if not self._known:
            return None
        if self._native is not None:
            return self._native.words(text, start, len(text) if end is None else end)
        return _word_pattern().findall(text, start, len(text) if end is None else end)


def _bmp_sets_apply(text: str, start: int, end: int) -> bool:
    """Whether the sets cut to the BMP give the pieces of ``text[start:end]``: when no astral
    character there is in a class (emoji are in none), as a positive set never matches one and
    a negated set always does."""
    astral = _ASTRAL.findall(text, start, end)
    return not astral or _astral_in_classes().search("".join(set(astral))) is None


@functools.cache
def _astral_in_classes() -> re.Pattern[str]:
    return re.compile(class_set(r"[\p{L}\p{N}\p{M}\s]"))


@functools.cache
def fast_pattern(pattern: str) -> re.Pattern[str]:
    """The ``re`` equivalent of a named ``pattern`` on text whose astral characters are in no
    class (its classes cut to the BMP; built on first use).

    >>> fast_pattern(GPT2_PATTERN).findall("it's 42")
    ['it', "'s", ' 42']
    """
    return _compile(pattern, BMP_END)


@functools.cache
def full_pattern(pattern: str) -> re.Pattern[str]:
    """The ``re`` equivalent of a named ``pattern`` on any text (slower sets).

    >>> full_pattern(CL100K_PATTERN).findall("𝒳𝒴 𝟙𝟚𝟛𝟜")  # astral letters and digits
    ['𝒳𝒴', ' ', '𝟙𝟚𝟛', '𝟜']
    """
    return _compile(pattern, sys.maxunicode)


def _compile(pattern: str, last: int) -> re.Pattern[str]:
    return re.compile(_CLASS.sub(lambda m: class_set(m.group(1), last=last), _TEMPLATES[pattern]))


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    # A word: any character, then anything but a space, or a space after whitespace.
    whitespace = class_set(r"\s")
    # Possessive where ``re`` has it (3.11): a greedy group repeated once per space keeps a
    # backtracking entry per iteration, ~120 bytes per character of a long whitespace run.
    possessive = "+" if sys.version_info >= (3, 11) else ""
    return re.compile(rf"[\s\S][^ ]*(?:(?<={whitespace}) [^ ]*)*{possessive}")


# An item of a class spelling: a Unicode class, a literal or escaped character, or a range.
_ITEM = re.compile(r"\\p\{\w+\}|\\s|\\u[0-9a-f]{4}-\\u[0-9a-f]{4}|\\[rn]|[^\\]")


@functools.cache
def class_set(spelling: str, *, last: int = sys.maxunicode) -> str:
    r"""The character set ``spelling`` (a class as the named patterns and the safe-cut rules
    write it) as an explicit set for ``re`` or ``regex``, from the shipped Unicode tables,
    for code points up to ``last``.

    >>> class_set(r"[^\r\n\p{N}]", last=0x7F)
    '[^\\U0000000a\\U0000000d\\U00000030-\\U00000039]'
    >>> class_set("(?i:[st])", last=0x7F)
    '[\\U00000053\\U00000054\\U00000073\\U00000074]'
    """
    negate = spelling.startswith("[^") or spelling == r"\S"
    if folded := re.fullmatch(r"\(\?i:\[?([a-z]+)\]?\)", spelling):
        items = [f"(?i:{letter})" for letter in folded.group(1)]
    else:
        items = _ITEM.findall(r"\s" if spelling == r"\S" else spelling.strip("[^]"))
    ranges = [r for item in items for r in _item_ranges(item) if r[0] <= last]
    spans = (
        f"\\U{a:08x}" if a == min(b, last) else f"\\U{a:08x}-\\U{min(b, last):08x}"
        for a, b in sorted(ranges)
    )
    return f"[{'^' if negate else ''}{''.join(spans)}]"


def _item_ranges(item: str) -> tuple[tuple[int, int], ...]:
    if item.startswith(("\\p", "(?i:")) or item == r"\s":
        from streamcodec.text.unicode_classes import class_ranges

        return class_ranges(item)
    if item.startswith("\\u"):
        return ((int(item[2:6], 16), int(item[9:13], 16)),)
    code = {r"\r": 13, r"\n": 10}.get(item, ord(item[0]))
    return ((code, code),)
