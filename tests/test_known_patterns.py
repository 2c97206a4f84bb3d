"""The open models' patterns: recognized however they are spelled, cut natively exactly as
``regex`` cuts them, streamed as a whole, and encoded to tiktoken's ids.

Each claimed equivalence of two spellings (possessive or greedy, the contraction forms, the
whitespace tails: docs/patterns.md) is checked here by running the native scanner of the shape
against ``regex`` with the *other* spelling, on the texts of tests/test_scan.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.strategies import CLASS_SAMPLES, class_texts
from streamcodec import Encoding
from streamcodec.text import native
from streamcodec.text.known_patterns import (
    DEEPSEEK_V3_PATTERN,
    DIGITS_GPT2_PATTERN,
    KNOWN_PATTERNS,
    NATIVE_SHAPES,
    native_name,
    shape_of,
)
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

LLAMA3 = next(k.pattern for k in KNOWN_PATTERNS if k.name == "llama3")
QWEN2 = next(k.pattern for k in KNOWN_PATTERNS if k.name == "qwen2")
TEKKEN = next(k.pattern for k in KNOWN_PATTERNS if k.name == "tekken")
NEW = [LLAMA3, QWEN2, TEKKEN, DIGITS_GPT2_PATTERN, DEEPSEEK_V3_PATTERN]
NEW_IDS = ["llama3", "qwen2", "tekken", "digits_gpt2", "deepseek_v3"]

# Other spellings of the same meaning, each with the shape it must get.
SPELLINGS = {
    # possessive quantifiers where greedy ones cannot backtrack into a different piece
    LLAMA3.replace(r"\p{L}+", r"\p{L}++").replace("]?", "]?+").replace("{1,3}", "{1,3}+"): "llama3",
    LLAMA3.replace(r"[^\s\p{L}\p{N}]+[\r\n]*", r"[^\s\p{L}\p{N}]++[\r\n]*+"): "llama3",
    # the contraction forms
    LLAMA3.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'(?i:[sdmt]|ll|ve|re)"): "llama3",
    QWEN2.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'(?i:[sdmt]|ll|ve|re)"): "qwen2",
    QWEN2.replace(r"\p{N}|", r"\p{N}{1}|"): "qwen2",
    GPT2_PATTERN.replace("'(?:[sdmt]|ll|ve|re)", "'s|'t|'re|'ve|'m|'ll|'d"): "gpt2",
    GPT2_PATTERN.replace("'(?:[sdmt]|ll|ve|re)", "'d|'ll|'m|'re|'s|'t|'ve"): "gpt2",
    # \s*[\r\n] and \s*[\r\n]+ end at the same newline; \s and \s+ after \s+(?!\S)
    LLAMA3.replace(r"\s*[\r\n]+", r"\s*[\r\n]"): "llama3",
    LLAMA3.replace(r"|\s+(?!\S)|\s+", r"|\s+(?!\S)|\s"): "llama3",
    CL100K_PATTERN.replace(r"\s*[\r\n]|", r"\s*[\r\n]+|"): "cl100k_base",
    # \s++$ before \s+(?!\S) alone: the same whitespace run at the end
    GPT2_PATTERN.replace(r"|\s++$|\s+(?!\S)|\s", r"|\s+(?!\S)|\s+"): "gpt2",
    # a class's items in another order
    LLAMA3.replace(r"[^\r\n\p{L}\p{N}]", r"[^\n\r\p{N}\p{L}]"): "llama3",
    TEKKEN.replace(r"[\r\n/]*", r"[/\n\r]*"): "tekken",
    DIGITS_GPT2_PATTERN.replace(r"'s|'t|'re|'ve|'m|'ll|'d", "'(?:[sdmt]|ll|ve|re)"): "digits_gpt2",
    DIGITS_GPT2_PATTERN.replace(r"(?![^\s\p{N}])|\s+", r"(?![^\p{N}\s])|\s"): "digits_gpt2",
}
# Patterns that look alike but mean something else (or are outside the grammar): not native.
NOT_NATIVE = [
    # [sS] is not (?i:s): the long s and the Kelvin sign fold to s and k (llama.cpp's rewrite)
    LLAMA3.replace(
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
    ),
    LLAMA3.replace(r"\p{L}+", r"\p{L}+?"),  # lazy
    LLAMA3.replace(r"\s*[\r\n]+", r"\s*+[\r\n]+"),
    DIGITS_GPT2_PATTERN.replace(r"(?![^\s\p{N}])", r"(?!\S)"),  # \p{N} first, but (?!\S) after
    DIGITS_GPT2_PATTERN.replace(
        "\\p{N}|", "", 1
    ),  # the lookahead, but no digit alone first  # possessive: never gives the newline back
    O200K_PATTERN.replace(r"\p{M}]*", r"\p{M}]*+"),  # U*+ keeps what W+ needs
    LLAMA3.replace(r"|\s+", ""),  # a lone space before a letter matches nothing: dropped
    LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}{1,2}"),  # no scanner for that shape
    r"\w+|\s+",
]
DISTINCT = sorted(
    {k.pattern for k in KNOWN_PATTERNS} | {GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN}
)

pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None, reason="the native scanner is not built"
)


def _pieces(pattern: str, text: str, start: int = 0, end: int | None = None) -> list[str]:
    scanner = native.native_scanner(pattern)
    assert scanner is not None, pattern
    return scanner.pieces(text, start, len(text) if end is None else end)


def test_every_known_pattern_is_native() -> None:
    names = {k.name: native_name(k.pattern) for k in KNOWN_PATTERNS}
    assert None not in names.values(), names
    assert names["o200k_harmony"] == "o200k_base"
    assert names["cl100k_base without possessives"] == "cl100k_base"
    assert {name for name, _ in NATIVE_SHAPES.values()} >= {"llama3", "qwen2", "tekken"}
    assert names["digits_gpt2"] == "digits_gpt2"


@pytest.mark.parametrize("pattern", list(SPELLINGS), ids=range(len(SPELLINGS)))
def test_spellings_of_one_meaning_get_one_scanner(pattern: str) -> None:
    assert native_name(pattern) == SPELLINGS[pattern]


def test_look_alikes_are_not_taken_for_known_patterns() -> None:
    # cl100k_base without \s++$ is the llama3 shape with \s*[\r\n] (the same as \s*[\r\n]+).
    assert native_name(CL100K_PATTERN.replace(r"\s++$|", "")) == "llama3"
    for pattern in NOT_NATIVE:
        assert native_name(pattern) is None, pattern
        assert native.native_scanner(pattern) is None
    assert shape_of("") is None and shape_of("|||") is None


def test_llama3_and_cl100k_differ_where_the_issue_says() -> None:
    # "  \n  " ending the text: cl100k_base's \s++$ takes it all; llama3 cuts after the newline.
    text = "a  \n  "
    assert _pieces(CL100K_PATTERN, text) == regex.findall(CL100K_PATTERN, text) == ["a", "  \n  "]
    assert _pieces(LLAMA3, text) == regex.findall(LLAMA3, text) == ["a", "  \n", "  "]


@settings(max_examples=300, deadline=None)
@given(text=class_texts(), data=st.data())
def test_pieces_equal_regex_for_every_spelling(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for pattern in [*DISTINCT, *SPELLINGS]:
        expected = regex.compile(pattern).findall(text, start, end)
        assert _pieces(pattern, text, start, end) == expected, (pattern, text)


@pytest.mark.parametrize("pattern", NEW, ids=NEW_IDS)
def test_every_triple_of_class_samples(pattern: str) -> None:
    samples = sorted(set(CLASS_SAMPLES))
    compiled = regex.compile(pattern)
    triples = [a + b + c for a in samples for b in samples for c in samples]
    differing = [t for t in triples if _pieces(pattern, t) != compiled.findall(t)]
    assert not differing, differing[:5]


@pytest.mark.parametrize("pattern", NEW, ids=NEW_IDS)
def test_code_points_in_context(pattern: str) -> None:
    # Every code point alone (between newlines) and between letters of both cases, digits, a
    # space and a newline: a wrong class changes the pieces.
    alone = "".join(f"\n{chr(c)}" for c in range(0x110000))
    assert _pieces(pattern, alone) == regex.compile(pattern).findall(alone)
    text = "".join(f"a{c}A{c}a{c}1{c} {c}\n" for c in map(chr, range(3, 0x110000, 7)))
    assert _pieces(pattern, text) == regex.compile(pattern).findall(text)


def _encoding(pattern: str) -> Encoding:
    """cl100k_base's ranks with ``pattern`` (the models' own vocabularies are not offline)."""
    base = streamcodec.get_encoding("cl100k_base")
    return Encoding(
        "test", pat_str=pattern, mergeable_ranks=base.mergeable_ranks, special_tokens={}
    )


PROSE = (
    "It's 2024; we'll see. DON'T SHOUT ſ'S 12345678 ½ Ⅻ naïve café\r\n\r\n  Indented\tcode()\n"
    "    return x/y // 3\n\u00a0\u3000中文字符 日本語のテキスト 한국어 😀\u200d😀 "
    "'quoted' ’curly’\n\n  "
)


@pytest.mark.parametrize("pattern", NEW, ids=NEW_IDS)
def test_ids_equal_tiktoken_and_the_stream_equals_the_whole(pattern: str) -> None:
    import tiktoken

    enc = _encoding(pattern)
    assert enc.native_pattern == native_name(pattern)
    twin = tiktoken.Encoding(
        "twin", pat_str=pattern, mergeable_ranks=enc.mergeable_ranks, special_tokens={}
    )
    text = PROSE * 40
    ids = enc.encode_ordinary(text)
    assert ids == twin.encode_ordinary(text)
    chunks = [text[i : i + 37] for i in range(0, len(text), 37)]
    streamed = [i for part in enc.iter_encode_chunks(chunks) for i in part]
    assert streamed == ids


def test_an_unknown_pattern_says_so() -> None:
    enc = _encoding(r"\S+|\s+")
    assert enc.native_pattern is None
    assert _encoding(LLAMA3).native_pattern == "llama3"


@pytest.mark.parametrize("pattern", NEW, ids=NEW_IDS)
def test_a_tokenizer_json_with_a_known_pattern_runs_natively_as_hugging_face_does(
    pattern: str, tmp_path: Path
) -> None:
    """The Split of a tokenizer.json (as the models write it: Isolated, then ByteLevel without
    its regex) reads back as the pattern itself, cut natively; Hugging Face gives the same ids
    (cl100k_base's ranks: the models' own files are not available offline)."""
    tokenizers = pytest.importorskip("tokenizers")
    from streamcodec.formats import read_huggingface
    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import Vocabulary

    ranks = _encoding(pattern).mergeable_ranks
    doc = huggingface_json(Vocabulary(ranks, {}, pattern))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    vocabulary = read_huggingface(path, allow_unreachable=True)
    assert native_name(str(vocabulary.pat_str)) == native_name(pattern)
    enc = Encoding("hf", pat_str=str(vocabulary.pat_str), mergeable_ranks=ranks, special_tokens={})
    assert enc.native_pattern == native_name(pattern)
    hugging_face = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for line in PROSE.splitlines(keepends=True):
        assert hugging_face.encode(line).ids == enc.encode_ordinary(line), line


def test_digits_then_byte_level_is_one_pattern() -> None:
    """Hugging Face's Digits(individual_digits) then ByteLevel(use_regex) cuts as the one
    pattern DIGITS_GPT2_PATTERN (on text whose classes Oniguruma and regex agree on)."""
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    sequence = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    samples = ["a", "Z", "1", "٣", "'", "s", "t", "\t", "\r\n", "!", ".", "/", "_", "中", " ", "  "]
    texts = [PROSE, *(a + b + c for a in samples for b in samples for c in samples)]
    for text in texts:
        theirs = [text[a:b] for _, (a, b) in sequence.pre_tokenize_str(text)]
        assert _pieces(DIGITS_GPT2_PATTERN, text) == theirs, text


def test_a_tokenizer_json_with_digits_then_byte_level(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from streamcodec.formats import read_huggingface
    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import Vocabulary

    ranks = _encoding(GPT2_PATTERN).mergeable_ranks
    doc = huggingface_json(Vocabulary(ranks, {}, GPT2_PATTERN))
    doc["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": True,
                "use_regex": True,
            },
        ],
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    vocabulary = read_huggingface(path, allow_unreachable=True)
    assert vocabulary.pat_str == DIGITS_GPT2_PATTERN
    enc = Encoding("hf", pat_str=DIGITS_GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert enc.native_pattern == "digits_gpt2"
    hugging_face = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for line in PROSE.splitlines(keepends=True):
        assert hugging_face.encode(line).ids == enc.encode_ordinary(line), line


# Latin-1 text is a 1-byte str, scanned with the SWAR fast paths (_scan_ascii.h): runs of every
# length across 8-byte words, ended by each kind of character, ASCII or not.
LATIN1 = "aZq0 9\t\n\r\x0b\x1c\x85\xa0'!/_@[`{:\x1féÀªµ¹¼\x7f\x80\xc0\xdasStTdDlLvVeErRmM"


@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            st.sampled_from("aZz0 AQ9.'=$-~"), st.integers(0, 19), st.sampled_from(LATIN1[:27])
        ),
        max_size=12,
    )
)
def test_latin1_runs_equal_regex(runs: list[tuple[str, int, str]]) -> None:
    text = "".join(char * length + end for char, length, end in runs)
    assert max(text, default="a") <= "\xff"  # a 1-byte str: the SWAR paths
    for pattern in DISTINCT:
        assert _pieces(pattern, text) == regex.compile(pattern).findall(text), (pattern, text)


def test_latin1_words_of_every_length_and_end() -> None:
    for pattern in DISTINCT:
        compiled = regex.compile(pattern)
        for length in range(0, 20):
            for run in (
                "abcdefghij" * 2,
                "ABCDEFGHIJ" * 2,
                "0123456789" * 2,
                " " * 20,
                "aBcDe" * 4,
                "!/:@[`{~=$" * 2,
                "-" * 20,
            ):
                for end in LATIN1:
                    text = f"x{run[:length]}{end}{run[:length]}"
                    assert _pieces(pattern, text) == compiled.findall(text), (pattern, text)
