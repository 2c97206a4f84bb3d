"""The registry of differential targets: each pairs a generator of cases with a check.

A check runs a case through a fast path and through the thing it must equal (the specification
in :mod:`streamcodec.reference`, or tiktoken built from the same vocabulary), raises
:class:`Mismatch` when they differ, and returns a :class:`Tally` of what it compared. The same
registry drives the test suite (tests/test_fuzz.py), the campaign (``python -m fuzz.campaign``)
and the coverage-guided harness (``python -m fuzz.atheris_harness``).

A *diverging* target is the opposite: greedy longest-match against rank-merge, which must differ
somewhere (BPE is not longest-match); it counts the divergences instead of failing on them.

Adding a target when a new fast path lands is one decorated function:

    @target("my_fast_path", case(max_pieces=20))
    def _check_my_fast_path(case: Case) -> Tally:
        for piece in case.pieces:
            expect_equal(case, "piece", piece, my_fast(piece), rank_merge(piece, case.vocab.ranks))
        return Tally(len(case.pieces))
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, AnyStr

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.strategies import Case, Vocab, case, real_vocab
from streamcodec.bpe import merge_piece
from streamcodec.reference import longest_match, rank_merge

__all__ = [
    "TARGETS",
    "Mismatch",
    "Tally",
    "Target",
    "corpus_divergence",
    "expect_equal",
    "hypothesis_test",
    "outcome",
    "prefixes",
    "reference_encode",
    "target",
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
    """``("ok", result)``, or ``("raises", exception type name)``: compares failures too."""
    try:
        return "ok", function(*args, **kwargs)
    except Exception as exc:
        return "raises", type(exc).__name__


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


# ---------------------------------------------------------------------------- the targets


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


@target("merge_piece", case(max_texts=0, max_pieces=24))
def _check_merge_piece(case: Case) -> Tally:
    """bpe.merge_piece == reference.rank_merge(whole_piece=False), on pieces of random vocabs."""
    ranks = case.vocab.ranks
    checked = prefixes(case.pieces)
    for piece in checked:
        expected = rank_merge(piece, ranks, whole_piece=False)
        expect_equal(case, "piece", piece, merge_piece(piece, ranks), expected)
    return Tally(len(checked))


@target("encode_reference", case())
def _check_encode_reference(case: Case) -> Tally:
    """Encoding.encode_ordinary == the pattern's matches rank-merged (whole_piece=True)."""
    enc = case.vocab.encoding
    checked = prefixes(case.texts)
    for text in checked:
        expected = reference_encode(text, case.vocab)
        expect_equal(case, "text", text, enc.encode_ordinary(text), expected)
    return Tally(len(checked))


@target("real_reference", case(real=True, max_texts=4))
def _check_real_reference(case: Case) -> Tally:
    """The genuine encodings' encode_ordinary == rank-merge of the pattern's matches."""
    return _check_encode_reference(case)


@target("tiktoken", case(surrogates=True))
def _check_tiktoken(case: Case) -> Tally:
    """Encoding == tiktoken built from the same vocabulary: ordinary, specials, errors."""
    ours, theirs = case.vocab.encoding, case.vocab.tiktoken
    checked = prefixes(case.texts)
    for text in checked:
        expect_equal(case, "text", text, ours.encode_ordinary(text), theirs.encode_ordinary(text))
    for text in case.texts:
        # By default a special token in the text is an error, in both.
        expect_equal(case, "text", text, outcome(ours.encode, text), outcome(theirs.encode, text))
        everything = outcome(ours.encode, text, allowed_special="all")
        expect_equal(
            case, "text", text, everything, outcome(theirs.encode, text, allowed_special="all")
        )
    return Tally(len(checked) + len(case.texts))


@target("real_tiktoken", case(real=True, surrogates=True, max_repeat=400))
def _check_real_tiktoken(case: Case) -> Tally:
    """The genuine encodings == tiktoken, with long repetitions and surrogates."""
    return _check_tiktoken(case)


@target("round_trip", case(max_pieces=8))
def _check_round_trip(case: Case) -> Tally:
    """decode(encode(text)) == text, decode_with_offsets == tiktoken's, bytes round trip."""
    ours, theirs = case.vocab.encoding, case.vocab.tiktoken
    checked = prefixes(case.texts)
    for text in checked:
        ids = ours.encode(text, allowed_special="all")
        expect_equal(case, "text", text, ours.decode(ids), text)
        offsets = outcome(ours.decode_with_offsets, ids)
        expect_equal(case, "ids", ids, offsets, outcome(theirs.decode_with_offsets, ids))
    for data in case.pieces:
        expect_equal(case, "bytes", data, ours.decode_bytes(ours.encode_bytes(data)), data)
    return Tally(len(checked) + len(case.pieces))


@target("longest_match", case(max_texts=0, max_pieces=24), diverges=True)
def _check_longest_match(case: Case) -> Tally:
    """Greedy longest-match vs rank_merge: counts the pieces where they differ."""
    ranks, longest = case.vocab.ranks, case.vocab.longest_token
    checked = prefixes(case.pieces)
    differ = sum(longest_match(p, ranks, longest=longest) != rank_merge(p, ranks) for p in checked)
    return Tally(len(checked), differ)


@functools.cache
def corpus_divergence(name: str = "cl100k_base") -> tuple[int, int, tuple[str, ...]]:
    """On the distinct pre-tokens of real text (tests/corpus.py), how often longest-match
    differs from rank-merge under the genuine encoding ``name``: (pieces, differing, examples).
    """
    from tests.corpus import samples

    vocab = real_vocab(name)
    ranks, longest = vocab.ranks, vocab.longest_token
    distinct = sorted(
        {p for text in samples().values() for p in regex.findall(vocab.pattern, text)}
    )
    differing = [
        piece
        for piece in distinct
        if longest_match(data := piece.encode("utf-8"), ranks, longest=longest)
        != rank_merge(data, ranks)
    ]
    # Words make the clearest examples: show them first.
    differing.sort(key=lambda piece: regex.fullmatch(r" ?\p{L}+", piece) is None)
    return len(distinct), len(differing), tuple(differing[:20])
