"""Any Hugging Face pre-tokenizer Sequence runs step by step, exactly as ``tokenizers`` runs it
(streamcodec.text.sequence): Splits in any number, Digits and Punctuation anywhere, ByteLevel
before the steps that then see the byte alphabet (Falcon's), on both backends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcodec.formats.huggingface import huggingface_json, parse_huggingface
from streamcodec.formats.open_model import encoding_from_vocabulary
from streamcodec.vocab import Vocabulary

tokenizers = pytest.importorskip("tokenizers")

_MERGED = [b"ab", b"12", b" a", b"\xc2\xbd", b"!!", b" 1", b"ab!", b"\xe4\xb8"]
RANKS = {bytes([b]): b for b in range(256)} | {t: 256 + i for i, t in enumerate(_MERGED)}


def _split(pattern: str) -> dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


STEPS: list[dict[str, Any]] = [
    _split(r"\s?\p{L}+"),
    _split(r"[\r\n]"),
    _split(r"\s+$"),
    _split(r"[0-9][0-9][0-9]"),
    _split(r"\s?[!-/:-~]+"),
    {"type": "Digits", "individual_digits": True},
    {"type": "Digits", "individual_digits": False},
    {"type": "Punctuation", "behavior": "Isolated"},
    {"type": "Punctuation", "behavior": "Contiguous"},
    _split(r"(\s?)(\p{L}+)"),  # groups: the matches are whole
    _split(r"(a)\1|([0-9])\2*"),  # backreferences: the gaps are found between the matches
]
BYTE_LEVEL = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}
TEXTS = st.text(alphabet="ab 12!?½ü中\n\r\t$+,.-٣", max_size=40)


def _pair(steps: list[dict[str, Any]], backend: str) -> tuple[Any, Any]:
    doc = huggingface_json(Vocabulary(RANKS, {}, None))
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": steps}
    data = json.dumps(doc)
    vocabulary = parse_huggingface(data.encode(), source="tokenizer.json")
    enc = encoding_from_vocabulary(vocabulary, name="steps", backend=backend)
    return enc, tokenizers.Tokenizer.from_str(data)


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(st.sampled_from(STEPS), max_size=3),
    use_regex=st.booleans(),
    after=st.lists(st.sampled_from(STEPS), max_size=2),
    backend=st.sampled_from(["native", "python"]),
    text=TEXTS,
)
def test_any_sequence_as_hugging_face(
    before: list[dict[str, Any]],
    use_regex: bool,
    after: list[dict[str, Any]],
    backend: str,
    text: str,
) -> None:
    steps = [*before, BYTE_LEVEL | {"use_regex": use_regex}, *after]
    enc, hugging_face = _pair(steps, backend)
    assert enc.encode(text) == hugging_face.encode(text).ids


def test_falcon_cuts_inside_a_character() -> None:
    """Digits after ByteLevel see the byte alphabet: ½ (C2 BD) is 'Â' then the digit '½'."""
    steps = [BYTE_LEVEL, {"type": "Digits", "individual_digits": False}]
    enc, hugging_face = _pair(steps, "python")
    assert enc.encode("x½") == hugging_face.encode("x½").ids == [ord("x"), 0xC2, 0xBD]


#: A Split whose pattern has groups and backreferences, alone before ByteLevel: one pattern
#: with its gaps where it can be (the copy of a pattern in it would renumber its groups).
GROUPED = [r"(\s?)(\p{L}+)", r"(a)\1", r"(?:(a)|(b))+", r"([0-9])\1*", r"(!)\1+|(a)b"]


@pytest.mark.parametrize("backend", ["native", "python"])
@pytest.mark.parametrize("pattern", GROUPED)
def test_one_split_with_groups_as_hugging_face(pattern: str, backend: str) -> None:
    enc, hugging_face = _pair([_split(pattern), BYTE_LEVEL | {"use_regex": False}], backend)
    for text in ["aab aa  b1 aaaab", "x1y22z333 !!a!", "ab ab\nab", "", "aaaa"]:
        assert enc.encode(text) == hugging_face.encode(text).ids, text


@pytest.mark.parametrize("pattern", GROUPED)
def test_a_split_step_with_groups_as_hugging_face(pattern: str) -> None:
    enc, hugging_face = _pair([_split(pattern), BYTE_LEVEL], "python")
    for text in ["aab aa  b1 aaaab", "x1y22z333 !!a!", "ab ab\nab", "aaaa"]:
        assert enc.encode(text) == hugging_face.encode(text).ids, text
