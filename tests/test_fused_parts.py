"""The pass a part at a time (``engine/_fused_parts.h``): a 2-byte str's parts read before they
are encoded, and the disallowed special tokens' check fused into ``encode_array``, which looks
for the tokens' first two characters as it reads each part (``encode_to_numpy`` checks from
where they first occur). Each output of a 2-byte str must equal tiktoken's whatever piece
straddles the parts' ends. The place the look gives (``clean``) must have no pair start before
it in ``text[start:end]``, be that start where the look did not give up, leave the ids as they
are, and ``encode_to_numpy`` must refuse and accept what tiktoken does: texts of each str kind,
pairs across the parts' boundaries and after a piece longer than a part, a byte of a wider code
unit that looks like the pair's, a look that spends its budget, lone surrogates. Skipped unless
the compiled code is built.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcodec.text.specials import DisallowedSpecialTokenError, special_pair
from tests.conftest import tiktoken_twin
from tests.test_fused_buffer import _encoding

pytest.importorskip("streamcodec.engine._fused")
PART = 65536  # FUSED_PART: code units read (and looked through) at a time
PAIR = "<|"
# '|' and '<' themselves, code units whose low or high byte is '|' (0x7C) or '<' (0x3C), and a
# 4-byte one: every kind of str, and memchr's candidates that are no pair.
LETTERS = "<|>a \u017c\u7c7c\u013c\u3c3c\U0001f600\U0001f67c"


def _look(text: str, start: int = 0, end: int | None = None) -> tuple[list[int], int]:
    fused = _encoding().ordinary._fused
    stop = len(text) if end is None else end
    ids, clean = fused.encode_array(text, start, stop, "strict", PAIR)
    alone = fused.encode_array(text, start, stop, "strict")
    assert list(memoryview(ids)) == list(memoryview(alone))
    return list(memoryview(ids)), clean


def _first(text: str, start: int, end: int) -> int:
    at = text.find(PAIR, start, end)
    return end if at < 0 else at


@settings(max_examples=300, deadline=None)
@given(st.text(LETTERS, max_size=80), st.integers(0, 90), st.integers(0, 90))
def test_clean_is_where_the_pair_first_starts(text: str, start: int, end: int) -> None:
    start, end = min(start, len(text)), min(max(start, end), len(text))
    assert _look(text, start, end)[1] == _first(text, start, end)


@pytest.mark.parametrize("wide", ["", "\u00e9", "\u017c", "\U0001f600"])
@pytest.mark.parametrize(
    "at", [0, 1, PART - 2, PART - 1, PART, PART + 1, 3 * PART - 1, 5 * PART - 2, 5 * PART + 2]
)
def test_a_pair_at_each_place_of_a_long_text(wide: str, at: int) -> None:
    """Pairs at the parts' boundaries (and at the text's end) of texts of each str kind. Each
    ``\u017c`` is a candidate (its low byte is ``|``'s): the look spends its budget on them and
    gives up before the pair, at a place with no pair before it."""
    filler = ("abc " + wide + " ") * (5 * PART // 6)
    text = (filler[:at] + PAIR + filler)[: 5 * PART + 4]
    clean, first = _look(text)[1], _first(text, 0, len(text))
    assert clean == first if wide != "\u017c" else clean <= first


def test_a_pair_after_a_piece_longer_than_a_part() -> None:
    """A run of spaces of three parts is one piece: the pass jumps past the parts' ends."""
    for tail in (PAIR, "x" + PAIR, "x" * PART + PAIR):
        text = "a" + " " * (3 * PART) + tail
        assert _look(text)[1] == text.index(PAIR)


def test_the_look_gives_up_before_the_pair_once_its_budget_is_spent() -> None:
    text = "a|" * 100_000 + PAIR
    clean = _look(text)[1]
    assert 0 < clean < text.index(PAIR)  # no pair before it: the regex goes on from there
    with pytest.raises(DisallowedSpecialTokenError):
        _encoding().encode_to_numpy(text + "<|endoftext|>")


def test_the_pair_must_be_two_ascii_characters() -> None:
    fused = _encoding().ordinary._fused
    for pair in ("<", "<||", "\u00e9|", "\0|", 1):
        with pytest.raises(ValueError, match="two ASCII characters"):
            fused.encode_array("a", 0, 1, "strict", pair)


def test_special_pair() -> None:
    assert special_pair(frozenset(_encoding().special_tokens)) == PAIR
    for tokens in ({"<s>", "</s>"}, {"\u00e9|a"}, set()):
        assert special_pair(frozenset(tokens)) is None


@pytest.mark.parametrize("wide", ["", "\u00e9", "\u017c", "\U0001f600"])
@pytest.mark.parametrize("at", [0, PART - 1, 3 * PART + 5, None])
def test_encode_to_numpy_refuses_as_tiktoken(wide: str, at: int | None) -> None:
    encoding = _encoding()
    twin = tiktoken_twin(encoding)
    filler = ("word " + wide + " |<| ") * (4 * PART // 11)
    text = filler if at is None else filler[:at] + "<|endoftext|>" + filler[at:]
    if at is None:
        assert encoding.encode_to_numpy(text).tolist() == twin.encode(text)
    else:
        with pytest.raises(DisallowedSpecialTokenError, match="endoftext"):
            encoding.encode_to_numpy(text)
        allowed = encoding.encode_to_numpy(text, disallowed_special=())
        assert allowed.tolist() == twin.encode(text, disallowed_special=())


def test_a_lone_surrogate_with_a_disallowed_token_is_refused_first() -> None:
    """tiktoken checks before it encodes: the token's error, not the surrogate's."""
    encoding = _encoding()
    with pytest.raises(DisallowedSpecialTokenError):
        encoding.encode_to_numpy("a\ud800 <|endoftext|>" + "b" * 5000)
    text = "a\ud800 b <|x" * 1000
    assert encoding.encode_to_numpy(text).tolist() == encoding.encode(text)


@pytest.mark.parametrize("seed", range(4))
def test_each_output_of_a_2_byte_str_across_the_parts(seed: int) -> None:
    """Words, numbers, runs of spaces and line ends, some longer than a part, across the parts'
    ends: list, array and count as tiktoken's."""
    chosen = random.Random(seed)
    fragments = [" the", "\u017c", "word", " ", "  ", "\r\n", "12345", "'s", "\u00e9t\u00e9", "..."]
    parts = []
    while sum(map(len, parts)) < 4 * PART:
        if chosen.random() < 0.01:
            parts.append(chosen.choice([" ", "a", "\n"]) * chosen.randrange(PART // 2, 2 * PART))
        else:
            parts.append(chosen.choice(fragments))
    text = "".join(parts) + "\u017c"
    encoding = _encoding()
    expected = tiktoken_twin(encoding).encode_ordinary(text)
    assert encoding.encode_ordinary(text) == expected
    assert _look(text)[0] == expected
    assert encoding.ordinary.count(text) == len(expected)
