"""The native pre-tokenizer's differential target: scanner == ``regex``, one pass == two steps.

Registered in :data:`fuzz.registry.TARGETS` (:mod:`fuzz.targets` imports this module) when the
scanner is built (and ``STREAMCODEC_BACKEND`` is not ``python``), so the suite, the campaign
and the atheris harness run it like every other target.

    python -m fuzz.campaign --seconds 60 --targets scanner,patterns
"""

from __future__ import annotations

import functools

import regex

from fuzz.registry import Tally, expect_equal, outcome, target, windows
from fuzz.strategies import Case, scanner_cases
from streamcodec.pieces.native import backend
from streamcodec.stream import SAFE_CUTS
from streamcodec.text.known_patterns import KNOWN_PATTERNS
from streamcodec.text.native import native_scanner
from streamcodec.vocab import GPT2_PATTERN

__all__: list[str] = []


@functools.cache
def _core() -> object | None:
    """cl100k_base's ranks in the compiled core, when it is built (any ranks do)."""
    if backend() != "native":
        return None
    import streamcodec
    from streamcodec.pieces._core import Core

    return Core(streamcodec.get_encoding("cl100k_base").mergeable_ranks)


def _check_scanner(case: Case) -> Tally:
    """The native scanner == regex's findall on text[start:end] for each named pattern; its
    safe cuts == the stream's SAFE_CUTS searched backward; its one pass to ids == the core's
    encode_pieces of those pieces (errors included), when the core is built."""
    core, checked = _core(), 0
    for pattern, cut in SAFE_CUTS.items():
        scanner, compiled = native_scanner(pattern), regex.compile(pattern)
        assert scanner is not None
        for text in case.texts:
            for start, end in windows(text, case.cuts):
                expected = compiled.findall(text, start, end)
                got = scanner.pieces(text, start, end)
                expect_equal(case, "text", text[start:end], got, expected)
                safe = next((p for p in range(end - 1, start - 1, -1) if cut.match(text, p)), None)
                found = scanner.last_cut(text, start, end)
                expect_equal(case, "cuts in", text[start:end], found, safe)
                checked += 1
                if core is None:
                    continue
                for errors in ("strict", "surrogateescape"):
                    one_pass = outcome(scanner.encode, text, start, end, core, errors)
                    two_steps = outcome(core.encode_pieces, expected, errors=errors)  # type: ignore[attr-defined]
                    expect_equal(case, "ids of", text[start:end], one_pass, two_steps)
    return Tally(checked)


def _check_known_patterns(case: Case) -> Tally:
    """The native scanner == regex's findall on text[start:end] for each known pattern of the
    open models (streamcodec.text.known_patterns), as those models spell it, on the case's texts
    and their Latin-1 parts; its one pass to ids == the core's encode_pieces of those pieces,
    when the core is built."""
    core, checked = _core(), 0
    # Each text also without its code points past U+00FF: a 1-byte str, which the scanner's
    # SWAR fast paths read (_scan_ascii.h).
    latin1 = ["".join(c for c in text if c <= "\xff") for text in case.texts]
    for pattern in sorted({known.pattern for known in KNOWN_PATTERNS}):
        scanner, compiled = native_scanner(pattern), regex.compile(pattern)
        assert scanner is not None
        for text in [*case.texts, *latin1]:
            for start, end in windows(text, case.cuts):
                expected = compiled.findall(text, start, end)
                expect_equal(
                    case, "text", text[start:end], scanner.pieces(text, start, end), expected
                )
                checked += 1
                if core is not None:
                    one_pass = outcome(scanner.encode, text, start, end, core, "surrogateescape")
                    two_steps = outcome(core.encode_pieces, expected, errors="surrogateescape")  # type: ignore[attr-defined]
                    expect_equal(case, "ids of", text[start:end], one_pass, two_steps)
    return Tally(checked)


if native_scanner(GPT2_PATTERN) is not None:
    target("scanner", scanner_cases())(_check_scanner)
    target("patterns", scanner_cases())(_check_known_patterns)
