"""Pre-tokenization: cut text into pieces with the vocabulary's pattern before any merging.

Merges never cross a piece boundary, so the pattern decides a lot: GPT-2's keeps a leading space
with the word after it (``" world"``), cl100k_base caps digit runs at three, and so on. The
pattern is matched with the ``regex`` module, which understands the possessive quantifiers and
Unicode classes of tiktoken's patterns.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> Pretokenizer(CL100K_PATTERN).pieces("Hello world!!  12345")
    ['Hello', ' world', '!!', ' ', ' ', '123', '45']

**The fast path** must give the same pieces as ``regex``. The standard library's ``re`` runs the
named patterns (GPT-2/r50k/p50k, cl100k_base, o200k_base) about three times faster once their
Unicode classes (``\\p{L}``, ``\\s``, ``(?i:s)``...) are written out as explicit character sets:
each set is computed by asking ``regex`` which characters of the Basic Multilingual Plane match
the class, so the two engines agree on every one of them (``re``'s own ``\\s`` would not: it
includes ``\\x1c``-``\\x1f``). Characters above the BMP would make ``re``'s sets slow, so they are
left out: a positive set never matches one, a negated set always does. That is exactly
``regex``'s answer for astral symbols and emoji, which belong to no class the patterns name; a
text holding an astral letter, digit, mark or space takes ``regex``. Patterns not known here
take ``regex`` too, as does Python before 3.11 (no possessive quantifiers in ``re``).

**The native path** comes first when it is built: the named patterns are cut into pieces and
words in C by :mod:`streamcodec.text.native`, equal to ``regex`` on every code point (astral
ones included); the ``re`` path is the fallback (``STREAMCODEC_BACKEND=python``, no compiler).
"""

from __future__ import annotations

import functools
import re
import sys

import regex

from streamcodec.text.native import native_scanner
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

__all__ = ["Pretokenizer", "fast_pattern"]

# «class» stands for a regex class written out over the BMP as an `re` set.
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
# Astral characters in a class some template names: a text holding one takes `regex`.
_ASTRAL_IN_CLASSES = regex.compile(r"[\p{L}\p{N}\p{M}\s]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_ASTRAL_SYMBOL = "\U0001f600"  # an emoji: in no positive class of any template


class Pretokenizer:
    """Split text into the matches of a pattern (tiktoken's and GPT-2's pre-tokenization);
    ``native=False`` keeps to the ``re``/``regex`` path even where the native scanner is built."""

    def __init__(self, pattern: str, *, native: bool = True) -> None:
        try:
            self._regex = regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"invalid pre-tokenizer pattern {pattern!r}: {exc}") from None
        self.pattern = pattern
        self._known = pattern in _TEMPLATES
        self._fast_known = self._known and sys.version_info >= (3, 11)
        # The C scanner, for the named patterns (unless the pure path is asked for).
        self._native = native_scanner(pattern) if native else None

    def pieces(self, text: str, start: int = 0, end: int | None = None) -> list[str]:
        """The pieces of ``text[start:end]``; the slice ends the text for ``$`` and lookaheads."""
        if end is None:
            end = len(text)
        if self._native is not None:
            return self._native.pieces(text, start, end)
        if self._fast_known and _fast_applies(text, start, end):
            return fast_pattern(self.pattern).findall(text, start, end)
        return self._regex.findall(text, start, end)

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


def _fast_applies(text: str, start: int, end: int) -> bool:
    if text.isascii():
        return True
    astral = _ASTRAL.findall(text, start, end)
    return not astral or not _ASTRAL_IN_CLASSES.search("".join(set(astral)))


@functools.cache
def fast_pattern(pattern: str) -> re.Pattern[str]:
    """The ``re`` equivalent of a named ``pattern`` on text without astral letters, digits,
    marks or spaces (built on first use: about 30 ms).

    >>> fast_pattern(GPT2_PATTERN).findall("it's 42")
    ['it', "'s", ' 42']
    """
    return re.compile(_CLASS.sub(lambda m: _bmp_set(m.group(1)), _TEMPLATES[pattern]))


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    # A word: any character, then anything but a space, or a space after whitespace.
    # (No astral character is whitespace, so the BMP set is all of regex's \s.)
    whitespace = _bmp_set(r"\s")
    # Possessive where ``re`` has it (3.11): a greedy group repeated once per space keeps a
    # backtracking entry per iteration, ~120 bytes per character of a long whitespace run.
    possessive = "+" if sys.version_info >= (3, 11) else ""
    return re.compile(rf"[\s\S][^ ]*(?:(?<={whitespace}) [^ ]*)*{possessive}")


def _bmp_set(cls: str) -> str:
    """``cls`` (a regex class) as an ``re`` set: the BMP characters it matches, or, when it
    matches astral symbols, the negation of the BMP characters it does not."""
    negate = regex.fullmatch(cls, _ASTRAL_SYMBOL) is not None
    runs = regex.finditer(f"(?:{cls})+" if not negate else f"(?:(?!{cls}).)+", _bmp(), regex.S)
    spans = [f"\\u{a:04x}-\\u{b - 1:04x}" for a, b in (run.span() for run in runs)]
    return f"[{'^' if negate else ''}{''.join(spans)}]"


@functools.cache
def _bmp() -> str:
    return "".join(map(chr, range(0x10000)))
