"""The native scanner: the named patterns cut into pieces in C, exactly as ``regex`` cuts them.

The compiled module ``streamcodec.text._scan`` (built by setup.py when a C compiler is there)
knows the three named patterns of ``streamcodec.vocab.PATTERNS`` (gpt2/r50k/p50k, cl100k_base,
o200k_base) and the open models' patterns of :mod:`streamcodec.text.known_patterns` (Llama 3,
Qwen 2, Tekken...), however they are spelled, and classifies characters with the Unicode 16.0
tables generated from the pinned ``regex`` (``tools/unicode_tables.py``).
:func:`native_scanner` returns ``None`` for any other pattern, or when the module is not built;
the callers then use ``regex`` (:mod:`streamcodec.text.pretokenize`). Whether to use it at all
is the caller's choice (``STREAMCODEC_BACKEND`` is read once, by
:mod:`streamcodec.engine.backend`, and passed down).

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> scanner = native_scanner(CL100K_PATTERN)
    >>> scanner is None or scanner.pieces("it's 42", 0, 7) == ["it", "'s", " ", "42"]
    True

Why the C code equals ``regex``, alternative by alternative, is in docs/performance.md.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from streamcodec.text.known_patterns import native_name, native_number

__all__ = ["NativeScanner", "native_scanner"]


class NativeScanner:
    """One pattern's compiled scanner: ``number`` is its shape's number in _scan_pattern.h,
    ``name`` the known pattern it matched (``"cl100k_base"``, ``"llama3"``...)."""

    def __init__(self, module: ModuleType, number: int, name: str) -> None:
        self._scan = module
        self.number = number
        self.name = name

    def pieces(self, text: str, start: int, end: int) -> list[str]:
        """The pieces of ``text[start:end]``, the slice ending the text: equal to
        ``regex.compile(pattern).findall(text, start, end)``."""
        pieces: list[str] = self._scan.pieces(text, self.number, start, end)
        return pieces

    def words(self, text: str, start: int, end: int) -> list[str]:
        """``text[start:end]`` cut before each space that follows a non-space character: equal
        to ``Pretokenizer.words`` (its ``re`` path) for every named pattern."""
        words: list[str] = self._scan.words(text, self.number, start, end)
        return words

    def last_cut(self, text: str, lo: int, hi: int) -> int | None:
        """The last ``p`` in ``[lo, hi)`` where a stream may cut before ``text[p]``, looking back
        into ``text[:p]``: the last match of ``streamcodec.stream.SAFE_CUTS[pattern]`` there
        (``streamcodec.stream.cuts.last_safe_cut``), or ``None``. Only for the three named
        patterns' shapes (numbers 0 to 2), whose safe cuts are proven; ValueError for the others."""
        cut: int = self._scan.last_cut(text, self.number, lo, hi)
        return cut if cut >= 0 else None


def native_scanner(pattern: str) -> NativeScanner | None:
    """The compiled scanner of a known ``pattern``, or ``None`` (see the module docstring)."""
    number, name = native_number(pattern), native_name(pattern)
    module = _module()
    if number is None or name is None or module is None:
        return None
    return NativeScanner(module, number, name)


@functools.cache
def _module() -> ModuleType | None:
    try:
        return importlib.import_module("streamcodec.text._scan")
    except ImportError:  # not built: no C compiler at install time
        return None
