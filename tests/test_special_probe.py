"""The disallowed-special check's probe (text/specials.py's ``clean_before``): the same answer
and the same error as the regex's search over the whole text, whatever the tokens and the text,
with the probe's budget ample or spent at once."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcodec.text import specials
from streamcodec.text.specials import (
    DisallowedSpecialTokenError,
    clean_before,
    refuse_disallowed,
    special_token_regex,
)

# A small alphabet, so tokens, their prefixes and the probe character meet often.
LETTERS = "<|>ab"
tokens = st.frozensets(st.text(LETTERS, min_size=1, max_size=5), min_size=1, max_size=4)
texts = st.text(LETTERS + " é", max_size=60)


def _refused(text: str, disallowed: frozenset[str]) -> str | None:
    try:
        refuse_disallowed(text, disallowed)
    except DisallowedSpecialTokenError as error:
        return str(error)
    return None


def _expected(text: str, disallowed: frozenset[str]) -> str | None:
    match = special_token_regex(disallowed).search(text)
    if match is None:
        return None
    with pytest.raises(DisallowedSpecialTokenError) as info:
        specials.raise_disallowed_special_token(match.group())
    return str(info.value)


@settings(max_examples=400, deadline=None)
@given(tokens, texts, st.sampled_from([1, 2, specials.PROBE_BUDGET]))
def test_the_probe_refuses_what_the_regex_finds(
    disallowed: frozenset[str], text: str, budget: int
) -> None:
    original = specials.PROBE_BUDGET
    specials.PROBE_BUDGET = budget
    try:
        assert _refused(text, disallowed) == _expected(text, disallowed)
        at = clean_before(text, disallowed)
        first = special_token_regex(disallowed).search(text)
        # No token starts before `at`; where one is found, it is the leftmost.
        assert first is None or first.start() >= at
        assert 0 <= at <= len(text)
    finally:
        specials.PROBE_BUDGET = original


def test_the_probe_finds_each_token_of_a_real_set() -> None:
    names = frozenset({"<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"})
    text = ("word " * 200 + "<|end | <|fim ") * 20  # probes to check, fewer than the budget
    assert clean_before(text, names) == len(text)
    for name in sorted(names):
        placed = text + name + text
        assert clean_before(placed, names) == len(text)
        assert _refused(placed, names) == _expected(placed, names) is not None


def test_the_probe_is_a_rare_character_of_the_prefix() -> None:
    # o200k_base's: the prefix "<|endof" ends in a letter; "|" is rarer in text.
    assert specials._probe(frozenset({"<|endoftext|>", "<|endofprompt|>"}))[:2] == ("|", 1)
    assert specials._probe(frozenset({"ab", "ac"}))[:2] == ("a", 0)


def test_tokens_with_no_common_prefix_leave_it_to_the_regex() -> None:
    assert clean_before("a b c", frozenset({"a", "b"})) == 0
    assert _refused("xx b", frozenset({"a", "b"})) == _expected("xx b", frozenset({"a", "b"}))


def test_a_text_full_of_the_probe_character_stops_probing() -> None:
    text, names = "|" * 100_000, frozenset({"<|a|>", "<|b|>"})  # the probe: "|", 1 in
    assert clean_before(text, names) == specials.PROBE_BUDGET + len(text) // 4096
    assert re.search("<", text) is None and _refused(text, names) is None
