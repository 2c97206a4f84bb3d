"""The native pre-tokenizer's differential target: scanner == ``regex``, fused pass == two steps.

Registered in :data:`fuzz.registry.TARGETS` (:mod:`fuzz.targets` imports this module) when the
scanner is built (and ``STREAMCODEC_BACKEND`` is not ``python``), so the suite, the campaign
and the atheris harness run it like every other target.

    python -m fuzz.campaign --seconds 60 --targets scanner,patterns
"""

from __future__ import annotations

import functools
from typing import Any

import regex

from fuzz.registry import Tally, expect_equal, outcome, target, windows
from fuzz.strategies import Case, scanner_cases
from streamcodec.engine.backend import backend
from streamcodec.stream import SAFE_CUTS
from streamcodec.text.known_patterns import KNOWN_PATTERNS
from streamcodec.text.native import native_scanner
from streamcodec.vocab import GPT2_PATTERN

__all__: list[str] = []


@functools.cache
def _core() -> Any:
    """cl100k_base's ranks in the compiled core, when it is built (any ranks do)."""
    if backend() != "native":
        return None
    import streamcodec
    from streamcodec.pieces import LONG_PIECE
    from streamcodec.pieces._core import Core

    return Core(streamcodec.get_encoding("cl100k_base").mergeable_ranks, long_piece=LONG_PIECE)


# Word caches of a few sets (4 KiB) and with a long pieces' store of one segment (40 KiB), so
# that both evict at every turn; a case uses one of them, by its first cut.
CACHE_BYTES = (4096, 40 << 10)


@functools.cache
def _fused(pattern: str, cache_bytes: int) -> Any:
    """The fused pass for ``pattern`` with a small word cache, kept across cases so that cached
    answers (and evictions) are checked too; None without the compiled code."""
    scanner, core = native_scanner(pattern), _core()
    if scanner is None or core is None:
        return None
    from streamcodec.engine._fused import FusedEncoder

    return FusedEncoder(core, scanner.number, cache_bytes=cache_bytes)


def _check_fused(
    case: Case, pattern: str, text: str, start: int, end: int, pieces: list[str]
) -> None:
    """The fused pass's ids and count == the core's encode_pieces of regex's pieces."""
    fused = _fused(pattern, CACHE_BYTES[case.cuts[0] % 2 if case.cuts else 0])
    if fused is None:
        return
    for errors in ("strict", "surrogateescape"):
        one_pass = outcome(fused.encode, text, start, end, errors)
        two_steps = outcome(_core().encode_pieces, pieces, errors=errors)
        expect_equal(case, "ids of", text[start:end], one_pass, two_steps)
        if two_steps[0] == "ok":
            counted = fused.count(text, start, end, errors, -1)
            expect_equal(case, "count of", text[start:end], counted, len(two_steps[1]))


def _check_scanner(case: Case) -> Tally:
    """The native scanner == regex's findall on text[start:end] for each named pattern; its
    safe cuts == the stream's SAFE_CUTS searched backward; its fused pass to ids == the core's
    encode_pieces of those pieces (errors included), when the core is built."""
    checked = 0
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
                _check_fused(case, pattern, text, start, end, expected)
    return Tally(checked)


def _check_known_patterns(case: Case) -> Tally:
    """The native scanner == regex's findall on text[start:end] for each known pattern of the
    open models (streamcodec.text.known_patterns), as those models spell it, on the case's texts
    and their Latin-1 parts; its fused pass to ids == the core's encode_pieces of those pieces,
    when the core is built."""
    checked = 0
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
                _check_fused(case, pattern, text, start, end, expected)
    return Tally(checked)


if native_scanner(GPT2_PATTERN) is not None:
    target("scanner", scanner_cases())(_check_scanner)
    target("patterns", scanner_cases())(_check_known_patterns)
