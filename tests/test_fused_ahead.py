"""The common blocks' two loops (``engine/_fused_hits.h``): each block's first-level lines asked
for some blocks ahead of its lookups, or not, the loop chosen by timing both (``ahead()``:
"timed") or forced ("on", "off"). Each must give the ids of the pieces then the core, with the
blocks walked ahead broken wherever the walk one at a time breaks (a word longer than a block, a
code point past ASCII, a 2-byte str's window, the text's end), every output, with the word cache
off, tiny and full, at each level of the block step. Skipped unless the compiled code is built.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.strategies import BLOCK_FRAGMENTS, block_texts
from streamcodec.vocab import CL100K_PATTERN, O200K_PATTERN
from tests.test_fused import NAMED, _both, _core, _fused, _twice_every_output, fused_module

MODES = ("on", "off", "timed")


@pytest.fixture(params=["avx512", "sse2"])
def level(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each level of the block step this processor runs (the blocks' loops run at both)."""
    best = fused_module.simd()
    order = ["none", "sse2", "avx512"]
    if order.index(request.param) > order.index(best):
        pytest.skip(f"no {request.param} here")
    fused_module.simd(request.param)
    try:
        yield request.param
    finally:
        fused_module.simd(best)


def _in_mode(mode: str, check: Callable[[], None]) -> None:
    """check() with the blocks' loop in `mode`."""
    before = fused_module.ahead(mode)
    try:
        check()
    finally:
        fused_module.ahead(before)


@functools.cache
def _long_text(seed: int, size: int) -> str:
    """Many common blocks in a row, broken now and then: ASCII fragments, a word of 70-200
    letters, a Latin-1 or wider code point."""
    rng = random.Random(seed)
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        roll = rng.random()
        if roll < 0.01:
            parts.append(" " + "x" * rng.randint(70, 200))
        elif roll < 0.015:
            parts.append(rng.choice(["caf\xe9", " \u20ac", "\u4e2d\u6587", " \U0001f600"]))
        else:
            parts.append(rng.choice(BLOCK_FRAGMENTS))
    return "".join(parts)


@functools.cache
def _expected(pattern: str, text: str) -> list[int]:
    return _core().encode_pieces(regex.findall(pattern, text))  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=60, deadline=None)
@given(text=block_texts().map(lambda t: t * 12), data=st.data())
def test_both_loops_equal_the_pieces_then_the_core(
    mode: str, text: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))

    def check() -> None:
        for pattern in NAMED:
            one_pass, two_steps = _both(pattern, text, start, end, "strict")
            assert one_pass == two_steps, (pattern, mode, text[start:end])

    _in_mode(mode, check)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pattern", [CL100K_PATTERN, O200K_PATTERN])
@pytest.mark.parametrize("wide", ["", "\u2019"])  # a 1-byte str; a 2-byte one (its windows)
def test_long_runs_of_common_blocks(level: str, mode: str, pattern: str, wide: str) -> None:
    """Texts of 1,000 to 100,000 code units (100,000: the timed choice's trials and a choice),
    as 1-byte and 2-byte strs, each output, twice, with a first level that evicts and a full
    one."""
    for seed, size in ((1, 1_000), (2, 30_000), (3, 100_000)):
        text = _long_text(seed, size) + wide
        expected = _expected(pattern, text)
        _in_mode(
            mode, functools.partial(_twice_every_output, pattern, text, expected, (300, 32 << 20))
        )


@pytest.mark.parametrize("mode", ["on", "off"])
def test_a_count_stops_past_its_limit_among_blocks_walked_ahead(mode: str) -> None:
    """A count with a limit stops once past it, within a block of it, though later blocks were
    walked and their lines asked for already."""
    text = _long_text(4, 50_000)
    total = len(_expected(CL100K_PATTERN, text))
    fused = _fused(CL100K_PATTERN, 32 << 20)

    def check() -> None:
        for limit in (0, 1, 100, 5_000, total - 1, total, total + 1):
            got = fused.count(text, 0, len(text), "strict", limit)
            assert got == total if limit >= total else limit < got <= limit + 64 * 6, limit

    _in_mode(mode, check)


def test_the_mode_is_named_and_checked() -> None:
    before = fused_module.ahead()
    assert before == "timed"
    try:
        assert fused_module.ahead("on") == "timed" and fused_module.ahead() == "on"
        assert fused_module.ahead("off") == "on"
        for bad in ("fast", 1, None):
            with pytest.raises((ValueError, TypeError)):
                fused_module.ahead(bad)
        with pytest.raises(TypeError):
            fused_module.ahead("on", "off")
    finally:
        fused_module.ahead(before)
