"""One huge piece costs a few bytes per character, not ~125 (issue 14, case 7).

A long whitespace run is one piece. The word splitter's ``re`` pattern repeated a group once per
space, and ``re`` keeps a backtracking entry per repetition: 10 MB of spaces took 1.2 GB.
``benchmarks/long_piece_memory.py`` measures the peak beside tiktoken's; here ``tracemalloc``
(which sees ``re``'s stack) bounds it, so the test does not depend on the machine.
"""

from __future__ import annotations

import sys
import tracemalloc

import pytest

import streamcodec

N = 1_000_000


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive repeats need re of 3.11")
@pytest.mark.parametrize("unit", [" ", "\n ", "a", " \t"])
def test_a_huge_piece_costs_a_few_bytes_per_character(unit: str) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    text = unit * (N // len(unit))
    enc.encode_ordinary("warm up  the  caches\n")
    tracemalloc.start()
    try:
        ids = enc.encode_ordinary(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert enc.decode(ids) == text
    assert peak / len(text) < 20, f"{peak / len(text):.1f} bytes per character"
