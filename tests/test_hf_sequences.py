"""DeepSeek V3's pre-tokenizer Sequence (three Splits) read as one pattern that cuts as Hugging
Face's Sequence cuts, and a tokenizer.json with it encoding as Hugging Face does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex

import streamcodec
from streamcodec import Encoding
from streamcodec.formats.hf_sequences import DEEPSEEK_V3_PATTERN, DEEPSEEK_V3_SPLITS
from tests.test_known_patterns import PROSE

tokenizers = pytest.importorskip("tokenizers")

# A character of each class the three Splits tell apart: digits, CJK letters, kana marks and
# symbols (゛ U+309B is a symbol inside the CJK range, U+3099 a mark, U+3097 unassigned),
# ASCII punctuation before letters, other letters and marks, controls no Split matches.
SAMPLES = [
    *("a", "Z", "1", "٣", "'", "s", "\t", "\r\n", "!", ".", "/", "_", "中", "ー", "゛"),
    *("\u3099", "\u3097", "・", " ", "  ", "\x00", "é", "\u0301", "😀", "x=", "ab"),
]


def _splits(with_characters: bool) -> list[dict[str, object]]:
    """The Split steps as DeepSeek V3's tokenizer.json writes them (CR and LF as characters)."""
    patterns = [
        p.replace(r"\r", "\r").replace(r"\n", "\n") if with_characters else p
        for p in DEEPSEEK_V3_SPLITS
    ]
    return [
        {"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False}
        for p in patterns
    ]


def _hugging_face_pieces(text: str) -> list[str]:
    pre = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
            for pattern in (p.replace(r"\r", "\r").replace(r"\n", "\n") for p in DEEPSEEK_V3_SPLITS)
        ]
    )
    return [text[a:b] for _, (a, b) in pre.pre_tokenize_str(text)]


def test_the_one_pattern_cuts_as_the_sequence() -> None:
    texts = [
        PROSE,
        "x=12345 中文 ok",
        *(a + b + c for a in SAMPLES for b in SAMPLES for c in SAMPLES),
    ]
    compiled = regex.compile(DEEPSEEK_V3_PATTERN)
    differing = [t for t in texts if compiled.findall(t) != _hugging_face_pieces(t)]
    assert not differing, differing[:5]


@pytest.mark.parametrize("with_characters", [True, False])
def test_a_deepseek_tokenizer_json_encodes_as_hugging_face(
    tmp_path: Path, with_characters: bool
) -> None:
    from streamcodec.formats import read_huggingface
    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import GPT2_PATTERN, Vocabulary

    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    doc = huggingface_json(Vocabulary(ranks, {}, GPT2_PATTERN))
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": False,
    }
    doc["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [*_splits(with_characters), byte_level],
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    vocabulary = read_huggingface(path, allow_unreachable=True)
    assert vocabulary.pat_str == DEEPSEEK_V3_PATTERN
    enc = Encoding("hf", pat_str=DEEPSEEK_V3_PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert enc.native_pattern == ("deepseek_v3" if streamcodec.backend() == "native" else None)
    hugging_face = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for line in PROSE.splitlines(keepends=True):
        assert hugging_face.encode(line).ids == enc.encode_ordinary(line), line
