"""Vocabulary files: round trips, and errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamcodec.formats import read_tiktoken, write_tiktoken
from streamcodec.vocab import VocabularyError, check_vocabulary

TOY = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}


def test_tiktoken_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "toy.tiktoken"
    write_tiktoken(TOY, path)
    assert read_tiktoken(path) == TOY


def test_real_cl100k_round_trips(tmp_path: Path) -> None:
    import streamcodec

    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    write_tiktoken(ranks, tmp_path / "cl100k.tiktoken")
    assert read_tiktoken(tmp_path / "cl100k.tiktoken") == ranks


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"YQ== 0\nYg== 1\nYQ== 2\n", r"bad.tiktoken:3: token b'a' appears twice"),
        (b"YQ== 0\nYg== 0\n", r"bad.tiktoken:2: rank 0 was already given on line 1"),
        (b"YQ== 0\nYg==\n", r"bad.tiktoken:2: expected 'base64-token rank', got 1 field"),
        (b"YQ== 0\n!!!! 1\n", r"bad.tiktoken:2: .* is not valid base64"),
        (b"YQ== 0\nYg== -1\n", r"bad.tiktoken:2: rank '-1' is not a whole number"),
    ],
)
def test_malformed_tiktoken_names_file_and_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message):
        read_tiktoken(path)


def test_check_vocabulary_errors() -> None:
    check_vocabulary(TOY, {"<|end|>": 258})
    with pytest.raises(VocabularyError, match="single bytes 0x00"):
        check_vocabulary({b"a": 97})
    with pytest.raises(VocabularyError, match="special token '<s>' has id 256"):
        check_vocabulary(TOY, {"<s>": 256})
    with pytest.raises(VocabularyError, match="rank 0 is given to both"):
        check_vocabulary(TOY | {b"zz": 0})
