"""The optional ``regex`` module: imported only for a pattern nothing else in streamcodec cuts.

The named encodings' patterns are cut by the native scanner or by ``re`` on the shipped Unicode
tables (:mod:`streamcodec.text.pretokenize`), and the stream's safe cuts are ``re`` patterns too,
so the pure path runs where ``regex`` cannot be installed (Pyodide offline, JupyterLite): see
docs/browser.md. Any other pattern (a tokenizer file's own) needs ``regex``'s possessive
quantifiers and Unicode classes: the pre-tokenizer imports it here, on first need, and the
error names the pattern and the install line when it is missing. (The specification,
:mod:`streamcodec.reference`, and the audit import ``regex`` inside the functions that use it.)

Such a pattern is checked when it is compiled, as tiktoken's engine cannot be asked to: one
that matches the empty string (``\\b``, ``x|``, ``a*``) would drop text without a word (tiktoken
panics on it), and one that backtracks without bound (``(a|aa)+$`` on 40 ``a`` and a ``b``:
minutes) would hang on some text. Both are refused, the first also when met on the text itself
(:func:`refuse_empty`). The backtracking check runs the pattern under a time budget on runs of
each kind of character (letters, digits, spaces, marks..., and each character the pattern
names) ended by each other kind, the shape of text that makes nested repetitions explode. It
is a probe, not a proof (``(?:xy|x|y)+$`` passes it); ``regex``'s ``timeout=`` costs 3-5x on
every match, so text itself is matched without one, and Ctrl-C still stops a match that runs
away (``regex`` checks for signals).

    >>> compile_regex(r"\\p{L}+").findall("héllo wörld")
    ['héllo', 'wörld']

:func:`whole_matches` is the one reader of a pattern's matches, ``re``'s or ``regex``'s: whole
(``findall`` gives a pattern's groups when it has some), an empty one refused.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

if TYPE_CHECKING:
    import re

    import regex

#: A compiled pattern of either engine: ``re`` runs the pinned patterns, ``regex`` the others.
Pattern: TypeAlias = "re.Pattern[str] | regex.Pattern[str]"

__all__ = [
    "PROBE_SECONDS",
    "Pattern",
    "RegexMissingError",
    "compile_regex",
    "quick_in_re",
    "refuse_empty",
    "whole_matches",
]

#: The time a probe of the backtracking check may take: a pattern that backtracks without
#: bound takes seconds to hours there, any other microseconds (a margin for a loaded machine).
PROBE_SECONDS = 0.25
_RUN = 40  # characters in a probe's run: (a|aa)+$ takes some 10^8 steps on 40
_KINDS = [
    "a",
    "A",
    "1",
    " ",
    "\n",
    "\t",
    ".",
    "'",
    "é",
    "中",
    "\u0301",
    "ab",
    "a ",
    " a",
    "a1",
    "\r\n",
]


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
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid pre-tokenizer pattern {pattern!r}: {exc}") from None
    _check(compiled)
    return compiled


def _probes(pattern: str, length: int) -> Iterator[str]:
    """Runs of each kind, and of each character ``pattern`` names, each ended by another kind."""
    named = sorted({char for char in pattern if char.isalnum() or char in "'\"-_/,:;"})
    for run in dict.fromkeys([*_KINDS, *named]):
        for end in ["", *(kind[0] for kind in _KINDS if kind[0] != run[0])]:
            yield run * (length // len(run)) + end


def quick_in_re(compiled: re.Pattern[str], source: str) -> bool:
    """Whether ``re`` (which has no time budget) matches the probes of ``source`` quickly: a
    nested repetition ``regex`` cuts short (``(a+)+$``) may still explode in ``re``, so a
    pattern ``re`` would run (text/pinned.py) is probed there too, on shorter runs."""
    for probe in _probes(source, 24):  # 2**24 steps: a second; any other pattern: microseconds
        started = time.perf_counter()
        compiled.findall(probe)
        if time.perf_counter() - started > PROBE_SECONDS / 5:
            return False
    return True


def _check(compiled: regex.Pattern[str]) -> None:
    """Refuse a pattern that matches the empty string or backtracks without bound on a probe
    (the module docstring: why and how)."""
    for probe in _probes(compiled.pattern, _RUN):
        try:
            whole_matches(compiled, probe, timeout=PROBE_SECONDS)
        except TimeoutError:
            raise ValueError(
                f"the pre-tokenizer pattern {_shown(compiled.pattern)} backtracks without "
                f"bound: matching it on {_shown(probe)} takes more than {PROBE_SECONDS} s; "
                "write the nested repetition with a possessive quantifier (++, *+) or an "
                "atomic group (?>...)"
            ) from None


def whole_matches(
    compiled: Pattern,
    text: str,
    start: int = 0,
    end: int = -1,
    *,
    timeout: float | None = None,
) -> list[str]:
    """The matches of ``compiled`` in ``text[start:end]``, whole, as tiktoken takes them
    (``findall`` gives a pattern's groups when it has some: ``(ab)+|.`` failed on tuples);
    an empty one refused (:func:`refuse_empty`). ``timeout`` (seconds) is ``regex``'s: a
    :class:`TimeoutError` past it; ``re`` has none."""
    end = len(text) if end < 0 else end
    budget: dict[str, Any] = {} if timeout is None else {"timeout": timeout}  # regex's alone
    if compiled.groups:
        pieces = [match.group() for match in compiled.finditer(text, start, end, **budget)]
    else:
        pieces = compiled.findall(text, start, end, **budget)
    refuse_empty(compiled, pieces, text, start, end)
    return pieces


def refuse_empty(
    compiled: Pattern,
    pieces: list[str],
    text: str,
    start: int = 0,
    end: int = -1,
) -> None:
    """Raise :class:`ValueError` if ``pieces``, the matches of ``compiled`` in
    ``text[start:end]``, hold an empty one: the text beside it would be dropped in silence."""
    if "" not in pieces:
        return
    end = len(text) if end < 0 else end
    at = next(m.start() for m in compiled.finditer(text, start, end) if m.start() == m.end())
    raise ValueError(
        f"the pre-tokenizer pattern {_shown(compiled.pattern)} matches the empty string (at "
        f"character {at:,} of {_shown(text[max(start, at - 20) : at + 20])}): a match must take "
        "a character at least, or text is dropped without a word (tiktoken fails on it too)"
    )


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _raise_missing(pattern: str) -> NoReturn:
    raise RegexMissingError(
        f"the pattern {_shown(pattern)} needs the 'regex' module, which is not installed "
        "(pip install regex; in Pyodide: await micropip.install('regex')); the named "
        "encodings (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base...) need no regex"
    )
