"""Open models' tokenizer files on small fixtures: a GGUF as llama.cpp writes it, a
tokenizer.json as Hugging Face writes it, both through ``streamcodec.load_encoding`` and
compared with Hugging Face ``tokenizers`` (the real models: tests/test_llama_vectors.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import streamcodec
from streamcodec.formats.gguf import gguf_bytes, read_gguf_metadata
from streamcodec.formats.gguf_pre import PRE, huggingface_document
from streamcodec.formats.huggingface import added_token
from streamcodec.text.byte_alphabet import token_to_unicode

tokenizers = pytest.importorskip("tokenizers")

MERGES = [(b"a", b"b"), (b" ", b"a"), (b"1", b"2"), (b"\xc3", b"\xbc"), (b" ", b"ab")]
# A vocabulary as open models have it: no 0xC0, 0xC1, 0xF5-0xFF.
BYTES = [bytes([b]) for b in range(256) if b not in (0xC0, 0xC1, *range(0xF5, 0x100))]
TOKENS = [*BYTES, *(left + right for left, right in MERGES)]
TEXTS = ["ab  ab 12 über", "x\u0301 é 123456", "  \n\n ab!!", "ab<|end|>ab", "", "   "]


def _gguf(tmp_path: Path, pre: str, **extra: Any) -> Path:
    tokens = [token_to_unicode(t) for t in TOKENS] + ["<|end|>", "   ", f"[PAD{len(TOKENS) + 2}]"]
    metadata = {
        "general.name": "toy",
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": [1] * len(TOKENS) + [3, 4, 4],
        "tokenizer.ggml.merges": [
            f"{token_to_unicode(a)} {token_to_unicode(b)}" for a, b in MERGES
        ],
        "tokenizer.ggml.bos_token_id": len(TOKENS),
        **extra,
    }
    path = tmp_path / "toy.gguf"
    path.write_bytes(gguf_bytes(metadata))
    return path


@pytest.mark.parametrize(
    "pre",
    [
        "gpt-2",
        "llama-bpe",
        "qwen2",
        "mpt",
        "starcoder",
        "falcon",
        "deepseek-llm",
        "deepseek-coder",
        "command-r",
        "qwen35",
    ],
)
@pytest.mark.parametrize("backend", ["native", "python"])
def test_a_gguf_encodes_as_hugging_face(tmp_path: Path, pre: str, backend: str) -> None:
    path = _gguf(tmp_path, pre)
    enc = streamcodec.load_encoding(path, backend=backend)
    document = huggingface_document(read_gguf_metadata(path), source="toy.gguf")
    hugging_face = tokenizers.Tokenizer.from_str(json.dumps(document))
    for text in TEXTS:
        expected = hugging_face.encode(text, add_special_tokens=False).ids
        assert enc.encode(text, allowed_special="all") == expected, text
    ids = [enc.encode_ordinary(text) for text in TEXTS]
    assert enc.encode_ordinary_batch(TEXTS) == ids  # the batch keeps the rules (NFC, added)
    assert enc.rules.normalizer == PRE[pre].normalizer_name
    assert enc.rules.added_tokens == {"   ": len(TOKENS) + 1}  # user-defined: ordinary text
    assert enc.special_tokens == {"<|end|>": len(TOKENS)}  # control: special; no [PAD] filler


def test_the_gguf_names_bos_and_whether_it_is_added(tmp_path: Path) -> None:
    enc = streamcodec.load_encoding(
        _gguf(tmp_path, "gpt-2", **{"tokenizer.ggml.add_bos_token": True})
    )
    assert (enc.rules.bos_token, enc.rules.add_bos, enc.rules.eos_token) == ("<|end|>", True, None)
    assert enc.with_special_tokens(enc.encode("ab")) == [len(TOKENS), len(BYTES)]


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"tokenizer.ggml.model": "llama"}, r"'llama' \(SentencePiece\), not byte-level BPE"),
        ({"tokenizer.ggml.model": "bert"}, r"'bert' \(WordPiece\)"),
        ({"tokenizer.ggml.pre": "jais"}, r"tokenizer.ggml.pre is 'jais', a pre-tokenizer"),
    ],
)
def test_what_a_gguf_cannot_be_read_as_is_refused(
    tmp_path: Path, metadata: dict[str, Any], message: str
) -> None:
    path = _gguf(tmp_path, "gpt-2")
    path.write_bytes(gguf_bytes({"tokenizer.ggml.model": "gpt2"} | metadata))
    with pytest.raises(streamcodec.VocabularyError, match=f"^{path}: .*{message}"):
        streamcodec.load_encoding(path)


def test_a_template_post_processor_gives_bos_and_eos(tmp_path: Path) -> None:
    document = huggingface_document(read_gguf_metadata(_gguf(tmp_path, "llama-bpe")), source="x")
    single = [
        {"SpecialToken": {"id": "<|end|>", "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}},
    ]
    document["post_processor"] = {
        "type": "TemplateProcessing",
        "single": single,
        "pair": single,
        "special_tokens": {
            "<|end|>": {"id": "<|end|>", "ids": [len(TOKENS)], "tokens": ["<|end|>"]}
        },
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    enc = streamcodec.load_encoding(tmp_path)  # the folder
    hugging_face = tokenizers.Tokenizer.from_file(str(path))
    assert enc.with_special_tokens(enc.encode("ab 12")) == hugging_face.encode("ab 12").ids
    document["truncation"] = {"max_length": 5}
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(streamcodec.VocabularyError, match="truncation: is set"):
        streamcodec.load_encoding(path)


def test_a_tiktoken_file_needs_its_pattern(tmp_path: Path) -> None:
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    path = tmp_path / "toy.tiktoken"
    save_vocabulary(Vocabulary({bytes([b]): b for b in range(256)} | {b"ab": 256}), path)
    with pytest.raises(streamcodec.VocabularyError, match="pass pat_str="):
        streamcodec.load_encoding(path)
    enc = streamcodec.load_encoding(path, pat_str="cl100k_base")
    assert (enc.name, enc.encode("ab ab")) == ("toy", [256, 32, 256])


@pytest.mark.parametrize("backend", ["native", "python"])
def test_streams_and_splits_keep_the_rules(tmp_path: Path, backend: str) -> None:
    """A stream cut inside an added token (or between two characters NFC composes) would
    change the ids: the model's rules vet every cut (one character per chunk here)."""
    document = huggingface_document(read_gguf_metadata(_gguf(tmp_path, "mpt")), source="x")
    # (the next free id: Hugging Face renumbers an added token to it)
    document["added_tokens"].append(added_token(len(TOKENS) + 2, "b a", special=False))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    enc = streamcodec.load_encoding(path, backend=backend)  # NFC, "   " and "b a" added
    hugging_face = tokenizers.Tokenizer.from_file(str(path))
    texts = ["ab ab   ab \u0301x", "e\u0301e\u0301 ab    a", "x  \t   y\n\n   z e\u0301 b ab a"]
    for text in texts:
        whole = enc.encode(text)
        assert whole == hugging_face.encode(text).ids, text
        stream = enc.stream_encoder()
        fed = [i for char in text for i in stream.feed(char)] + stream.close()
        assert fed == whole, text
        windows = list(enc.split(text, max_tokens=3))
        assert [i for w in windows for i in w.ids] == whole, text
        assert all(enc.encode(w.text) == w.ids for w in windows), text


def test_the_command_line_takes_model_files(tmp_path: Path) -> None:
    """``-e`` takes a model's file as ``load_encoding`` does, and ``--vocab tokenizer.json``
    keeps the model's rules (NFC here: a decomposed é encodes as the composed one)."""
    from tests.test_cli import run

    gguf = _gguf(tmp_path, "qwen2")
    enc = streamcodec.load_encoding(gguf)
    text = "cafe\u0301 über 12"
    expected = " ".join(map(str, enc.encode(text)))
    assert enc.encode(text) == enc.encode("caf\u00e9 über 12")
    document = huggingface_document(read_gguf_metadata(gguf), source="x")
    json_path = tmp_path / "tokenizer.json"
    json_path.write_text(json.dumps(document), encoding="utf-8")
    for options in (
        ["-e", str(gguf)],
        ["-e", str(json_path)],
        ["--vocab", str(json_path)],
        ["--vocab", str(gguf)],
        ["-e", str(tmp_path)],
    ):
        done = run("encode", "-", *options, stdin=text.encode())
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().split() == expected.split(), options
    done = run("encode", "-", "-e", "vocab.tiktoken", stdin=b"x")
    assert done.returncode == 1 and b"use --vocab vocab.tiktoken --pattern" in done.stderr


def test_a_model_encoding_pickles_with_its_rules(tmp_path: Path) -> None:
    import pickle

    enc = streamcodec.load_encoding(
        _gguf(tmp_path, "mpt", **{"tokenizer.ggml.add_bos_token": True})
    )
    copy = pickle.loads(pickle.dumps(enc))
    assert copy.rules == enc.rules and copy.rules.normalizer == "NFC"
    for text in TEXTS:
        assert copy.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert copy.with_special_tokens([1]) == [len(TOKENS), 1]
