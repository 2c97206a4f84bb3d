"""Encoding equals tiktoken on the genuine vocabularies and real text, and behaves like it."""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding

TRICKY = [
    "",
    " ",
    "\n",
    "hello world",
    "  leading and trailing  ",
    "a\r\nb\r\n\r\n  \n\t\tc",
    "I'll we've they're it's DON'T He'S",
    "1234567890 3.14159 1,000,000",
    "x" * 1000,
    " " * 300 + "y",
    "\n" * 50,
    "😀👨‍👩‍👧‍👦🏳️‍🌈👍🏽",
    "日本語のテキストと中文文本",
    "mixed\u00a0spaces\u2003and\u2028separators\u2029",
    "tabs\tand\x0bvertical\x0cfeeds\x1c\x1d\x1e\x1f",
    "<|endoftext|> is a special token but here ordinary text",
]


@pytest.mark.parametrize("name", ["prose", "code", "multilingual"])
def test_real_text_equals_tiktoken(real_pair, name: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    text = samples()[name]
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_tricky_strings_equal_tiktoken(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    for text in TRICKY:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), text
        assert ours.encode(text, disallowed_special=()) == theirs.encode(
            text, disallowed_special=()
        )


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_random_text_equals_tiktoken_and_round_trips(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    ids = ours.encode_ordinary(text)
    assert ids == theirs.encode_ordinary(text)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert ours.decode(ids) == text


def test_special_tokens_are_refused_by_default(real_encoding: Encoding) -> None:
    with pytest.raises(ValueError, match=re.escape("disallowed special token '<|endoftext|>'")):
        real_encoding.encode("hi <|endoftext|>")


def test_special_tokens_when_allowed_equal_tiktoken(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    text = "a  <|endoftext|>\n\n<|endofprompt|>b <|endoftext|>"
    for allowed in ["all", {"<|endoftext|>"}, {"<|endofprompt|>"}]:
        assert ours.encode(text, allowed_special=allowed, disallowed_special=()) == theirs.encode(
            text, allowed_special=allowed, disallowed_special=()
        )
    # Allowing one special does not allow the others.
    with pytest.raises(ValueError, match=re.escape("<|endofprompt|>")):
        ours.encode(text, allowed_special={"<|endoftext|>"})
    assert ours.encode(text, disallowed_special=()) == ours.encode_ordinary(text)


def test_lone_surrogates_become_replacement_characters_as_in_tiktoken(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    for text in ["a\ud800b", "\udfff", "\ud83d\ude00", "x\ud83dy<|endoftext|>"]:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )


def test_encode_bytes_is_lossless_and_equals_encode_on_valid_utf8(real_encoding: Encoding) -> None:
    for data in [b"caf\xe9 au lait", b"\xff\xfe\x00abc", "naïve 😀".encode()[:-1], b"\xed\xa0\x80"]:
        assert real_encoding.decode_bytes(real_encoding.encode_bytes(data)) == data
    text = "valid text, 日本語"
    assert real_encoding.encode_bytes(text.encode()) == real_encoding.encode_ordinary(text)


def test_decoding_api_matches_tiktoken(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    ids = theirs.encode("héllo wörld 😀", allowed_special="all")
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.decode(ids[:-1]) == theirs.decode(ids[:-1])  # a split character: U+FFFD
    assert ours.decode_batch([ids, ids[:2]]) == theirs.decode_batch([ids, ids[:2]])
    assert ours.decode_bytes_batch([ids]) == theirs.decode_bytes_batch([ids])
    eot = ours.eot_token
    assert ours.decode_single_token_bytes(eot) == theirs.decode_single_token_bytes(eot)
    assert ours.encode_single_token("<|endoftext|>") == eot
    assert ours.encode_single_token(b"hello") == theirs.encode_single_token(b"hello")
    with pytest.raises(KeyError):
        ours.encode_single_token("not a single token at all")
    with pytest.raises(KeyError):
        ours.decode_bytes([ours.n_vocab + 10])


def test_properties_match_tiktoken(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    assert ours.n_vocab == theirs.n_vocab
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert ours.is_special_token(ours.eot_token) and not ours.is_special_token(0)


def test_batch_equals_single(real_encoding: Encoding) -> None:
    texts = ["one", "two <|endoftext|>", "three"]
    assert real_encoding.encode_ordinary_batch(texts) == [
        real_encoding.encode_ordinary(t) for t in texts
    ]
    assert real_encoding.encode_batch(texts, allowed_special="all") == [
        real_encoding.encode(t, allowed_special="all") for t in texts
    ]
    with pytest.raises(ValueError):
        real_encoding.encode_batch(texts)


def test_pickle_round_trip(real_encoding: Encoding) -> None:
    clone = pickle.loads(pickle.dumps(real_encoding))
    assert clone.name == real_encoding.name
    assert clone.encode("pickled text") == real_encoding.encode("pickled text")


def test_explicit_n_vocab_is_checked() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    Encoding(
        "ok",
        pat_str=r"\S+",
        mergeable_ranks=ranks,
        special_tokens={"<s>": 256},
        explicit_n_vocab=257,
    )
    with pytest.raises(ValueError, match="explicit_n_vocab=300"):
        Encoding(
            "bad", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=300
        )


def test_swapping_the_import_is_enough() -> None:
    import tiktoken

    enc = streamcodec.get_encoding("cl100k_base")
    twin = tiktoken.Encoding(
        "cl100k_twin",
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )
    for module in (streamcodec, tiktoken):
        cls = module.Encoding
        made = cls(
            "x",
            pat_str=enc.pat_str,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
        )
        assert made.encode("same code, either library") == twin.encode("same code, either library")


def test_an_allowed_special_inside_a_longer_unallowed_one_equals_tiktoken() -> None:
    import tiktoken

    ranks = {bytes([b]): b for b in range(256)}
    specials = {"<|a|>b|>": 256, "b|>": 257}
    text = "x<|a|>b|>y"
    twin = tiktoken.Encoding("t", pat_str=r"\S", mergeable_ranks=ranks, special_tokens=specials)
    ours = Encoding("t", pat_str=r"\S", mergeable_ranks=ranks, special_tokens=specials)
    expected = twin.encode(text, allowed_special={"b|>"}, disallowed_special=())
    assert expected[-2:] == [257, ord("y")]  # the longer token does not hide the shorter one
    assert ours.encode(text, allowed_special={"b|>"}, disallowed_special=()) == expected
    stream = ours.stream_encoder(allowed_special={"b|>"}, disallowed_special=())
    assert [i for char in text for i in stream.feed(char)] + stream.close() == expected


def test_ranks_given_as_a_mapping_that_is_not_a_dict_encode_as_the_dicts() -> None:
    # A regression: a read-only view of the ranks (MappingProxyType) ended Encoding() in an
    # AttributeError ('max_rank') once the ranks were read through one interface (pieces/ranks.py).
    import types

    base = streamcodec.get_encoding("gpt2")
    view = types.MappingProxyType(dict(base.mergeable_ranks))
    text = "Hello, mapped world! 你好 \u00e9t\u00e9"
    for backend in {"python", streamcodec.backend()}:  # native where it is built
        enc = Encoding("gpt2-view", pat_str=base._pat_str, mergeable_ranks=view,  # type: ignore[arg-type]
                       special_tokens={"<|endoftext|>": 50256}, backend=backend)  # fmt: skip
        assert enc.encode_ordinary(text) == base.encode_ordinary(text)
        assert enc.decode(enc.encode_ordinary(text)) == text
