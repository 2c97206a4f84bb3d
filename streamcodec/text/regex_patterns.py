"""The optional ``regex`` module: imported only for a pattern nothing else in streamcodec cuts.

The named encodings' patterns are cut by the native scanner or by ``re`` on the shipped Unicode
tables (:mod:`streamcodec.text.pretokenize`), and the stream's safe cuts are ``re`` patterns too,
so the pure path runs where ``regex`` cannot be installed (Pyodide offline, JupyterLite): see
docs/browser.md. Any other pattern (a tokenizer file's own) needs ``regex``'s possessive
quantifiers and Unicode classes: the pre-tokenizer imports it here, on first need, and the
error names the pattern and the install line when it is missing. (The specification,
:mod:`streamcodec.reference`, and the audit import ``regex`` inside the functions that use it.)

    >>> compile_regex(r"\\p{L}+").findall("héllo wörld")
    ['héllo', 'wörld']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import regex

__all__ = ["RegexMissingError", "compile_regex"]


class RegexMissingError(ImportError):
    """A pattern that only ``regex`` cuts, where ``regex`` is not installed."""


def compile_regex(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled by ``regex`` (a :class:`ValueError` naming it when invalid;
    :class:`RegexMissingError` when ``regex`` is not installed)."""
    try:
        import regex
    except ImportError:
        _raise_missing(pattern)
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid pre-tokenizer pattern {pattern!r}: {exc}") from None


def _raise_missing(pattern: str) -> NoReturn:
    shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
    raise RegexMissingError(
        f"the pattern {shown!r} needs the 'regex' module, which is not installed "
        "(pip install regex; in Pyodide: await micropip.install('regex')); the named "
        "encodings (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base...) need no regex"
    )
