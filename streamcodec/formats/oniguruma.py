"""Pre-tokenizer patterns between the ``regex`` module's dialect and Oniguruma's (HF tokenizers).

Hugging Face ``tokenizers`` compiles a ``Split`` pattern with Oniguruma (Ruby syntax), which
reads three constructs differently from the ``regex`` module streamcodec uses:

============  ==============================  ==========================================
construct     ``regex`` (streamcodec)          Oniguruma (Hugging Face)
============  ==============================  ==========================================
``X{1,3}+``   possessive: at most 3 X          ``(?:X{1,3})+``: any number of X
``$``         end, or before a final newline   end of *any* line
``\\Z``        end of the text                  end, or before a final newline
============  ==============================  ==========================================

cl100k_base's ``\\p{N}{1,3}+`` is the case that matters: read by Oniguruma as it stands, a run
of digits becomes one piece instead of pieces of three. :func:`to_oniguruma` rewrites a pattern
so Oniguruma matches what ``regex`` matches, :func:`from_oniguruma` the other way round.

    >>> to_oniguruma(r"\\p{N}{1,3}+|\\s++$")
    '(?>\\\\p{N}{1,3})|\\\\s++\\\\Z'
    >>> from_oniguruma(r"\\d{2}+$")
    '(?:\\\\d{2})+(?=\\\\n|\\\\Z)'
"""

from __future__ import annotations

import re

__all__ = ["from_oniguruma", "to_oniguruma"]

_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")
_BRACED_ESCAPE = re.compile(r"\\[pPxNu]\{[^}]*\}")


def _items(pattern: str) -> list[str]:
    """Cut a pattern into items: an escape, a character class, an interval, or one character."""
    items = []
    i = 0
    while i < len(pattern):
        if braced := _BRACED_ESCAPE.match(pattern, i):
            end = braced.end()
        elif pattern[i] == "\\":
            end = i + 2
        elif pattern[i] == "[":
            end = _class_end(pattern, i)
        elif interval := _INTERVAL.match(pattern, i):
            end = interval.end()
        else:
            end = i + 1
        items.append(pattern[i:end])
        i = end
    return items


def _class_end(pattern: str, start: int) -> int:
    """The index just after the character class that opens at ``start`` (nesting allowed)."""
    depth, i = 0, start
    while i < len(pattern):
        char = pattern[i]
        i += 1
        if char == "\\":
            i += 1
        elif char == "[":
            depth += 1
            i += pattern.startswith("^", i)
            i += pattern.startswith("]", i)  # a ']' first in the class is a member, not its end
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unterminated character class at offset {start} in {pattern!r}")


def _atom_start(items: list[str], end: int) -> int:
    """Index of the first item of the atom that ends just before ``items[end]``."""
    if items[end - 1] != ")":
        return end - 1
    depth = 0
    for k in range(end - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(items[k], 0)
        if depth == 0:
            return k
    raise ValueError("unbalanced parentheses")


def _translate(pattern: str, *, possessive: str, anchors: dict[str, str]) -> str:
    items = _items(pattern)
    out = [anchors.get(item, item) for item in items]  # kept aligned with items
    for index, item in enumerate(items):
        if item.startswith("{") and len(item) > 2 and items[index + 1 : index + 2] == ["+"]:
            start = _atom_start(items, index)
            atom = "".join(out[start:index])
            out[start : index + 2] = [possessive.format(atom=atom, interval=item)]
            out[start + 1 : start + 1] = [""] * (index + 1 - start)
    return "".join(out)


def to_oniguruma(pattern: str) -> str:
    """``pattern`` (``regex`` dialect) rewritten to match the same in Oniguruma."""
    return _translate(
        pattern, possessive="(?>{atom}{interval})", anchors={"$": r"\Z", r"\Z": r"\z"}
    )


def from_oniguruma(pattern: str) -> str:
    """An Oniguruma ``pattern`` rewritten to match the same with the ``regex`` module."""
    return _translate(
        pattern,
        possessive="(?:{atom}{interval})+",
        anchors={"$": r"(?=\n|\Z)", r"\Z": "$", r"\z": r"\Z"},
    )
