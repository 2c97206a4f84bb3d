"""The registry of differential targets, and the helpers every target module uses.

A target pairs a generator of cases with a check; :func:`target` registers one in
:data:`TARGETS`. The targets themselves live in :mod:`fuzz.targets` (streamcodec's Python
paths), :mod:`fuzz.native_targets` (the compiled core) and :mod:`fuzz.scan_targets` (the native
scanner), which import this module and nothing of each other; :mod:`fuzz.targets` imports the
other two, so importing it fills the whole registry.

    >>> Tally(2) == Tally(cases=2, divergences=0)
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, AnyStr

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.strategies import Case, Vocab
from streamcodec.reference import rank_merge

__all__ = [
    "TARGETS",
    "Mismatch",
    "Tally",
    "Target",
    "expect_equal",
    "hypothesis_test",
    "outcome",
    "prefixes",
    "reference_encode",
    "target",
    "windows",
]


class Mismatch(AssertionError):
    """A fast path and its reference disagree on an input."""


@dataclasses.dataclass
class Tally:
    """What one check compared: ``cases`` inputs, of which ``divergences`` differed (allowed
    only for diverging targets)."""

    cases: int = 0
    divergences: int = 0

    def __iadd__(self, other: Tally) -> Tally:
        self.cases += other.cases
        self.divergences += other.divergences
        return self


@dataclasses.dataclass(frozen=True)
class Target:
    """A named differential target: ``cases`` generates inputs, ``check`` compares two paths."""

    name: str
    cases: st.SearchStrategy[Case]
    check: Callable[[Case], Tally]
    description: str
    diverges: bool = False


TARGETS: dict[str, Target] = {}


def target(
    name: str, cases: st.SearchStrategy[Case], *, diverges: bool = False
) -> Callable[[Callable[[Case], Tally]], Callable[[Case], Tally]]:
    """Register the decorated check as the target ``name``; its docstring describes it."""

    def register(check: Callable[[Case], Tally]) -> Callable[[Case], Tally]:
        description = (check.__doc__ or name).strip().splitlines()[0]
        TARGETS[name] = Target(name, cases, check, description, diverges)
        return check

    return register


def expect_equal(case: Case, what: str, value: object, got: object, expected: object) -> None:
    """Raise :class:`Mismatch` naming the input unless ``got == expected``."""
    if got != expected:
        raise Mismatch(f"{what} {value!r} on {case.vocab!r}: got {got!r}, expected {expected!r}")


def reference_encode(text: str, vocab: Vocab) -> list[int]:
    """The specification of ``encode_ordinary``: the pattern's matches, each rank-merged."""
    ranks = vocab.ranks
    return [
        token
        for piece in regex.findall(vocab.pattern, text)
        for token in rank_merge(piece.encode("utf-8"), ranks)
    ]


def outcome(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """``("ok", result)``, or ``("raises", name)`` with the name of the built-in exception the
    error is (a ``DisallowedSpecialTokenError`` is tiktoken's ``ValueError``): compares failures.
    """
    try:
        return "ok", function(*args, **kwargs)
    except Exception as exc:
        builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return "raises", builtin.__name__


def hypothesis_test(
    chosen: Target, *, max_examples: int, record: Callable[[Case, Tally], None] | None = None
) -> Callable[[], None]:
    """A hypothesis test running ``chosen`` on ``max_examples`` cases.

    ``record`` sees every case that passed with its tally. The test's
    ``.hypothesis.fuzz_one_input`` is what the atheris harness drives.
    """

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(chosen.cases)
    def run(case: Case) -> None:
        tally = chosen.check(case)
        if record is not None:
            record(case, tally)

    return run


def prefixes(items: Sequence[AnyStr], *, most: int = 48) -> list[AnyStr]:
    """Non-empty prefixes of each item, at most ``most`` per item (evenly spaced, the whole item
    last): a prefix of a piece is a piece too, and a prefix of a text ends it at a new place, so
    one generated input yields many cases.

    >>> prefixes([b"abc", b"x"])
    [b'a', b'ab', b'abc', b'x']
    >>> prefixes(["abcdef"], most=2)
    ['abc', 'abcdef']
    """
    return [
        item[:end]
        for item in items
        for end in range(len(item), 0, -max(1, -(-len(item) // most)))[::-1]
    ]


def windows(text: str, cuts: Sequence[int]) -> list[tuple[int, int]]:
    """``(start, end)`` slices of ``text`` chosen by ``cuts``, and the whole text.

    >>> windows("abcdef", [1, 4, 9])
    [(0, 6), (1, 4), (3, 6)]
    """
    n = len(text)
    bounds = [(0, n)]
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        bounds.append((min(a, b) % (n + 1), max(a, b) % (n + 1)) if n else (0, 0))
    return bounds
