r"""A pattern's Unicode classes written out from the shipped tables, so the pure path cuts as the
native scanner does whatever ``regex`` is installed.

``\p{L}``, ``\s`` or ``(?i:s)`` mean what the installed ``regex``'s Unicode version says
(2026 releases: Unicode 17), while tiktoken, Hugging Face ``tokenizers`` and the native scanner
classify with Unicode 16.0 (:mod:`streamcodec.text.unicode_classes`). :func:`pinned_pattern`
rewrites every class of a pattern into an explicit set of code points from the shipped tables,
inside character classes too (``[^\r\n\p{L}\p{N}]``), and the letters of a case-insensitive
group into their case sets; the result means the same under any Unicode version, and the
standard library's ``re`` runs it (Python 3.11 has possessive quantifiers). A pattern with
anything this does not know how to pin (``\w``, ``\d``, ``\b``, ``.``, other properties,
case-insensitive letters outside the contractions) gives ``None``: ``regex`` then cuts it.

    >>> pinned_pattern(r"(?i:'s)|[A-C]+")
    "(?:'[\\U00000053\\U00000073\\U0000017f])|[\\U00000041-\\U00000043]+"
    >>> pinned_pattern(r"\w+") is None
    True
"""

from __future__ import annotations

import functools
import re
import sys

from streamcodec.text.unicode_classes import CLASSES, class_ranges

__all__ = ["pinned_pattern", "pinned_re"]

Range = tuple[int, int]
# A token of a pattern: a property or escape, a class, a case-insensitive group's opening, any
# other group opening, or one character.
_TOKEN = re.compile(
    r"\\p\{\w+\}|\\[pP]\{\^?\w+\}|\\.|\[\^?\]?(?:\\.|[^\]])*\]|\(\?i:|\(\?[:!=]|\(\?<?[=!]|.",
    re.DOTALL,
)
_ITEM = re.compile(r"\\p\{\w+\}|\\.|.", re.DOTALL)
_ESCAPES = {"r": 13, "n": 10, "t": 9, "f": 12, "v": 11, "0": 0}
_PLAIN_ESCAPE = re.compile(r"\\[^A-Za-z0-9]")
_FOLDED = {f"(?i:{letter})" for letter in "delmrstv"}
_UNPINNED = re.compile(r"\\[wWdDbBhHzZAG]|\\[pP]\{\^|\\P|\(\?(?!i:)[a-zA-Z]|\(\?<[^=!]|\(\?\(")


class _Unpinned(Exception):
    """Something :func:`pinned_pattern` does not pin."""


@functools.cache
def pinned_pattern(pattern: str) -> str | None:
    """``pattern`` with its classes written out (the module docstring), or ``None``."""
    if _UNPINNED.search(pattern):
        return None
    out: list[str] = []
    groups: list[bool] = []  # per open group: whether it is case-insensitive
    try:
        for token in _TOKEN.findall(pattern):
            if token == ".":
                return None
            if token.startswith("("):
                groups.append(token == "(?i:")
                out.append("(?:" if token == "(?i:" else token)
                continue
            if token == ")":
                if not groups:
                    return None
                groups.pop()
            ranges = _token_ranges(token, any(groups))
            out.append(token if ranges is None else _set(*ranges))
    except _Unpinned:
        return None
    return "".join(out)


@functools.cache
def pinned_re(pattern: str) -> re.Pattern[str] | None:
    """:func:`pinned_pattern` compiled by ``re`` (Python 3.11 and later), or ``None``."""
    pinned = pinned_pattern(pattern)
    if pinned is None or sys.version_info < (3, 11):
        return None
    try:
        return re.compile(pinned)
    except re.error:
        return None


def _token_ranges(token: str, folded: bool) -> tuple[bool, list[Range]] | None:
    """``(negated, ranges)`` for a token that is a class, ``None`` for one kept as it is;
    ``_Unpinned`` for one that cannot be pinned."""
    if token.startswith("\\p{"):
        return (False, _named(token))
    if token in ("\\s", "\\S"):
        return (False, _spaces(token == "\\S"))
    if token.startswith("[") and len(token) > 2:
        return _class(token, folded)
    if folded and token.isalpha():
        return (False, _folded(token))
    if (
        token.startswith("\\")
        and len(token) == 2
        and token[1].isalnum()
        and token[1] not in _ESCAPES
    ):
        raise _Unpinned(token)
    return None


def _named(token: str) -> list[Range]:
    if token == r"\p{L}" or token in CLASSES:
        return list(class_ranges(token))
    raise _Unpinned(token)


def _spaces(negated: bool) -> list[Range]:
    """``\\s``, or ``\\S`` (every other code point), as ranges."""
    spaces = list(class_ranges(r"\s"))
    if not negated:
        return spaces
    starts = [0, *(last + 1 for _, last in spaces)]
    ends = [*(first - 1 for first, _ in spaces), sys.maxunicode]
    return [(a, b) for a, b in zip(starts, ends, strict=True) if a <= b]


def _folded(letter: str) -> list[Range]:
    spelling = f"(?i:{letter.lower()})"
    if spelling not in _FOLDED:
        raise _Unpinned(letter)
    return list(class_ranges(spelling))


def _class(token: str, folded: bool) -> tuple[bool, list[Range]]:
    negated = token.startswith("[^")
    items = _ITEM.findall(token[2 if negated else 1 : -1])
    ranges: list[Range] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item.startswith("\\p{") or item in ("\\s", "\\S"):
            ranges += _named(item) if item.startswith("\\p") else _spaces(item == "\\S")
            i += 1
        elif i + 2 < len(items) and items[i + 1] == "-":
            first, last = _code(item), _code(items[i + 2])
            if last < first:
                raise _Unpinned(token)
            ranges.append((first, last))
            i += 3
        else:
            code = _code(item)
            ranges += _folded(item) if folded and item.isalpha() else [(code, code)]
            i += 1
    return (negated, ranges)


def _code(item: str) -> int:
    """The code point of a literal class item (a character or an escape)."""
    if len(item) == 1:
        return ord(item)
    if _PLAIN_ESCAPE.fullmatch(item):
        return ord(item[1])
    if len(item) == 2 and item[1] in _ESCAPES:
        return _ESCAPES[item[1]]
    raise _Unpinned(item)


def _set(negated: bool, ranges: list[Range]) -> str:
    spans = "".join(
        f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in _joined(ranges)
    )
    return f"[{'^' if negated else ''}{spans}]"


def _joined(ranges: list[Range]) -> list[Range]:
    joined: list[Range] = []
    for first, last in sorted(ranges):
        if joined and first <= joined[-1][1] + 1:
            joined[-1] = (joined[-1][0], max(last, joined[-1][1]))
        else:
            joined.append((first, last))
    return joined
