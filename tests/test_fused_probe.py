"""The fused pass's probe of the first level: the key a piece is looked up by must be the one
its entry was stored under, however it was built. A piece whose 16 bytes from its start lie in
the text is keyed from two loads, masked to its length (``fl_key_set_padded``); one near the
text's end, and every vocabulary token when the table is filled, byte by byte (``fl_key_set``).
A mask that kept a byte of what follows the piece would still give exact ids (the slow path
answers a miss), so this counts hits: every piece met before must hit, whatever follows it.
Skipped unless the compiled code is built.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import streamcodec
from streamcodec.pieces import LONG_PIECE
from streamcodec.text import native
from streamcodec.vocab import CL100K_PATTERN

core_module = pytest.importorskip("streamcodec.pieces._core")
fused_module = pytest.importorskip("streamcodec.engine._fused")
pytestmark = pytest.mark.skipif(
    native.native_scanner(CL100K_PATTERN) is None, reason="the native scanner is not built"
)


@pytest.mark.parametrize("ahead", ["off", "on"])  # each loop counts its hits its own way
def test_every_piece_met_before_hits_whatever_follows_it(ahead: str) -> None:
    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    # Tokens " x...": one piece each, of 2 to 15 bytes (the key's every length but 1), and
    # pieces of two or more tokens of 2 to 15 bytes (stored on their first miss).
    by_length: dict[int, list[str]] = {}
    for token in ranks:
        if token[:1] == b" " and token[1:].isalpha() and token.isascii() and len(token) <= 15:
            by_length.setdefault(len(token), []).append(token.decode())
    pieces = [word for words in by_length.values() for word in sorted(words)[:6]]
    rng = random.Random(3)
    pieces += [" " + "".join(rng.choices("qxzjv", k=n)) for n in range(1, 15) for _ in range(3)]
    assert {len(piece) for piece in pieces} == set(range(2, 16))
    core = core_module.Core(ranks, long_piece=LONG_PIECE)
    scanner = native.native_scanner(CL100K_PATTERN)
    assert scanner is not None
    fused = fused_module.FusedEncoder(core, scanner.number, cache_bytes=32 << 20)
    was = fused_module.ahead(ahead)
    try:
        _turns(fused, core, pieces, rng)
    finally:
        fused_module.ahead(was)


def _turns(fused: Any, core: Any, pieces: list[str], rng: random.Random) -> None:
    for turn in range(4):  # each turn, each piece between others: other bytes after it
        rng.shuffle(pieces)
        text = "".join(pieces)
        before = fused.cache_info()["hits"]
        ids = fused.encode(text, 0, len(text), "strict")
        assert ids == core.encode_pieces(pieces)  # type: ignore[attr-defined]
        if turn:
            assert fused.cache_info()["hits"] - before == len(pieces), turn
