"""A tokenizer.json whose Split pattern leaves gaps: the text between matches is kept as pieces,
as Hugging Face tokenizers keeps it (issue 14, case 6: "hello world\\n" gave [32])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcodec import Encoding
from streamcodec.formats import load_vocabulary, save_vocabulary
from streamcodec.formats.split_gaps import with_gaps
from streamcodec.vocab import PATTERNS, Vocabulary

tokenizers = pytest.importorskip("tokenizers")

RANKS = {bytes([b]): b for b in range(256)} | {
    token: 256 + i for i, token in enumerate([b"he", b"ll", b"hell", b"hello", b"wo", b" w", b"  "])
}
GAPPY = [r"\w+", r" ?[a-z]+", r"\d", r"[a-z]+|\n"]


def _pair(tmp_path: Path, pattern: str) -> tuple[Encoding, object]:
    path = tmp_path / "tokenizer.json"
    document_vocab = Vocabulary(RANKS, {}, pattern)
    save_vocabulary(document_vocab, path)
    # Write the pattern as a Hugging Face user would: the plain regex, not streamcodec's form.
    document = json.loads(path.read_text())
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": pattern}
    path.write_text(json.dumps(document))
    loaded = load_vocabulary(path)
    assert loaded.pat_str is not None
    enc = Encoding("gappy", pat_str=loaded.pat_str, mergeable_ranks=RANKS, special_tokens={})
    return enc, tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize("pattern", GAPPY)
def test_hello_world_as_hugging_face(tmp_path: Path, pattern: str) -> None:
    enc, hf = _pair(tmp_path, pattern)
    for text in ["hello world\n", "  hello, world!! 12\n\n", "", "héllo wörld 😀"]:
        assert enc.encode(text) == hf.encode(text).ids  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(GAPPY), st.text(alphabet="helowrd 1\n,!é😀", max_size=60))
def test_any_text_as_hugging_face(pattern: str, text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        enc, hf = _pair(Path(folder), pattern)
    expected = hf.encode(text).ids  # type: ignore[attr-defined]
    assert enc.encode(text) == expected
    assert list(enc.iter_encode([text[:7], text[7:]])) == expected  # streamed too


def test_named_patterns_are_kept_and_gaps_are_added_once(tmp_path: Path) -> None:
    for pattern in PATTERNS.values():
        assert with_gaps(pattern) == pattern
    once = with_gaps(r"\w+")
    assert with_gaps(once) == once
    path = tmp_path / "again.json"
    save_vocabulary(Vocabulary(RANKS, {}, once), path)
    assert load_vocabulary(path).pat_str == once
    enc = Encoding("once", pat_str=once, mergeable_ranks=RANKS, special_tokens={})
    hf = tokenizers.Tokenizer.from_file(str(path))  # Hugging Face reads the written form alike
    assert hf.encode("hello, world!\n").ids == enc.encode("hello, world!\n")
