"""tiktoken behaviours users rely on, beyond tests/test_encoding.py: special-token policies and
their errors, surrogates in every entry point, offsets, catastrophically repetitive input,
batch round trips. Each is compared with tiktoken built from the same vocabulary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.strategies import SURROGATES, texts
from fuzz.targets import outcome

SPECIAL = "<|endoftext|>"
PROMPT = "<|endofprompt|>"


def _error(function, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as info:
        function(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize(
    "policy",
    [
        {},
        {"allowed_special": {SPECIAL}},
        {"disallowed_special": {PROMPT}},
        {"disallowed_special": ()},
        {"allowed_special": "all", "disallowed_special": ()},
        {"allowed_special": {SPECIAL}, "disallowed_special": {SPECIAL, PROMPT}},
    ],
)
def test_special_token_policies_and_errors_equal_tiktoken(real_pair, policy) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    for text in [
        f"a{SPECIAL}b",
        f"{PROMPT} then {SPECIAL}",
        f"<|endoftext|{SPECIAL}|>",
        "<|endoftext|",
        f"word{PROMPT}{PROMPT}",
    ]:
        if text.count(PROMPT) and PROMPT not in ours.special_tokens:
            continue
        got, expected = outcome(ours.encode, text, **policy), outcome(theirs.encode, text, **policy)
        assert got == expected, (text, policy)
        if expected[0] == "raises":
            assert _error(ours.encode, text, **policy) == _error(theirs.encode, text, **policy)


def test_the_error_names_the_first_disallowed_token(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    text = f"x {SPECIAL} y <|endofprompt|>"
    assert _error(ours.encode, text) == _error(theirs.encode, text)
    assert _error(ours.encode_batch, [text]) == _error(theirs.encode_batch, [text])


@settings(max_examples=60, deadline=None)
@given(text=texts(surrogates=True), data=st.data())
def test_surrogates_in_every_entry_point(real_pair, text: str, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    text += data.draw(st.sampled_from(SURROGATES))
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
    assert ours.encode_batch([text, text], disallowed_special=()) == theirs.encode_batch(
        [text, text], disallowed_special=()
    )


@settings(max_examples=60, deadline=None)
@given(text=texts())
def test_offsets_equal_tiktoken_including_split_characters(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    ids = theirs.encode(text, disallowed_special=())
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    for cut in range(len(ids)):
        # Prefixes may end inside a character: both raise, or both give the same offsets.
        assert outcome(ours.decode_with_offsets, ids[:cut]) == outcome(
            theirs.decode_with_offsets, ids[:cut]
        )


@pytest.mark.parametrize("unit", ["a", "ab", " ", "\n", "!", "1", "é", "👍🏽", " a", "\r\n"])
def test_catastrophically_repetitive_input(real_pair, unit: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    text = unit * (4000 // len(unit))
    ids = ours.encode_ordinary(text)
    assert ids == theirs.encode_ordinary(text)
    assert ours.decode(ids) == text


@settings(max_examples=30, deadline=None)
@given(batch=st.lists(texts(), max_size=6))
def test_batch_round_trips(real_pair, batch: list[str]) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    ids = ours.encode_batch(batch, allowed_special="all")
    assert ids == theirs.encode_batch(batch, allowed_special="all")
    assert ours.decode_batch(ids) == batch
    assert ours.decode_bytes_batch(ids) == [text.encode() for text in batch]
    assert ours.encode_ordinary_batch(batch) == theirs.encode_ordinary_batch(batch)


def test_ranks_with_gaps_equal_tiktoken() -> None:
    """tiktoken accepts ranks that are not contiguous (it refuses duplicates by panicking)."""
    import tiktoken

    from streamcodec import Encoding

    ranks = {bytes([b]): 3 * b + 7 for b in range(256)} | {b"ab": 5000, b"abc": 4000, b"bc": 9000}
    specials = {"<s>": 123456}
    ours = Encoding("gaps", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens=specials)
    theirs = tiktoken.Encoding(
        "gaps", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens=specials
    )
    for text in ["abc abcbc ab<s>", "xabcx", "bcab"]:
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )
    assert ours.n_vocab == theirs.n_vocab == 123457
