"""Regression tests (issue 23 §4): ranks past 2**32 - 1 encoded byte by byte on both backends
(wrong ids); they are refused now, with the file's line, as tiktoken refuses them."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from streamcodec.formats import load_vocabulary
from streamcodec.formats.tiktoken_file import parse_tiktoken
from streamcodec.vocab import MAX_RANK, VocabularyError, check_vocabulary

BYTES = {bytes([b]): b for b in range(256)}


def _tiktoken_text(rank: int) -> bytes:
    lines = [f"{base64.b64encode(t).decode()} {r}" for t, r in {**BYTES, b"he": rank}.items()]
    return "\n".join(lines).encode() + b"\n"


@pytest.mark.parametrize("rank", [2**32, 2**63 - 1, 2**63, 10**30])
def test_a_rank_past_32_bits_is_refused_with_its_line(rank: int, tmp_path: Path) -> None:
    path = tmp_path / "hostile.tiktoken"
    path.write_bytes(_tiktoken_text(rank))
    with pytest.raises(VocabularyError, match=rf"hostile.tiktoken:257: rank {rank} is past"):
        load_vocabulary(path)
    with pytest.raises(VocabularyError, match="past 2"):
        parse_tiktoken(_tiktoken_text(rank))
    with pytest.raises(VocabularyError, match="not an int from 0 to 2"):
        check_vocabulary({**BYTES, b"he": rank})


def test_the_largest_rank_is_kept() -> None:
    assert parse_tiktoken(_tiktoken_text(MAX_RANK))[b"he"] == MAX_RANK
