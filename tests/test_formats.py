"""Vocabulary files: round trips, and errors that name the file and line."""

from __future__ import annotations

import doctest
import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz import corpus
from streamcodec import Encoding
from streamcodec.formats import (
    FORMATS,
    Vocabulary,
    detect_format,
    load_vocabulary,
    read_gpt2,
    read_huggingface,
    read_minbpe,
    read_tiktoken,
    save_vocabulary,
    write_gpt2,
    write_huggingface,
    write_minbpe,
    write_tiktoken,
)
from streamcodec.formats.gpt2 import token_to_unicode
from streamcodec.formats.huggingface import huggingface_json
from streamcodec.formats.merges import compiled_merge, merge_pairs, unreachable_tokens
from streamcodec.formats.split_gaps import with_gaps
from streamcodec.formats.tiktoken_file import write_tiktoken_bytes
from streamcodec.vocab import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    ModelRules,
    VocabularyError,
    check_vocabulary,
)

BYTES_ONLY = {bytes([b]): b for b in range(256)}
TOY = BYTES_ONLY | {b"ab": 256, b"abc": 257}


def test_tiktoken_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "toy.tiktoken"
    write_tiktoken(TOY, path)
    assert read_tiktoken(path) == TOY


def test_real_cl100k_round_trips(tmp_path: Path) -> None:
    import streamcodec

    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    write_tiktoken(ranks, tmp_path / "cl100k.tiktoken")
    assert read_tiktoken(tmp_path / "cl100k.tiktoken") == ranks


def test_tiktoken_without_every_single_byte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(write_tiktoken_bytes({b"a": 0, b"b": 1}))
    with pytest.raises(
        VocabularyError, match=r"bad.tiktoken: single bytes 0x00, .* are not tokens"
    ):
        read_tiktoken(path)


def test_save_refuses_what_load_refuses_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "bad.tiktoken"
    for save in (
        lambda: write_tiktoken({b"a": 0, b"b": 1}, path),
        lambda: save_vocabulary(Vocabulary({b"a": 0, b"b": 1}), path),
    ):
        with pytest.raises(VocabularyError, match=r"bad.tiktoken \(not written\): single bytes"):
            save()
    assert os.listdir(tmp_path) == []


def test_save_refuses_an_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown vocabulary format 'bogus'; known: tiktoken"):
        save_vocabulary(TOY_VOCAB, tmp_path / "x.tiktoken", format="bogus")  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


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


# ---------------------------------------------------------------- every format: round trips

TOY_VOCAB = Vocabulary(TOY, {"<|end|>": 258}, r"\s?\w+|\s+|[^\w\s]+")
OUTPUT_NAMES = {
    "tiktoken": "toy.tiktoken",
    "gpt2": "gpt2",
    "huggingface": "tokenizer.json",
    "minbpe": "toy.model",
}


def _kept(vocabulary: Vocabulary, fmt: str) -> Vocabulary:
    """What a format keeps: .tiktoken only ranks, GPT-2's files no pattern."""
    if fmt == "tiktoken":
        return Vocabulary(vocabulary.mergeable_ranks)
    if fmt == "gpt2":
        return Vocabulary(vocabulary.mergeable_ranks, vocabulary.special_tokens)
    if fmt == "huggingface" and vocabulary.pat_str is not None:
        # Hugging Face keeps the text between a Split pattern's matches (tests/test_hf_gaps.py).
        return vocabulary._replace(pat_str=with_gaps(vocabulary.pat_str))
    return vocabulary


@pytest.mark.parametrize("fmt", FORMATS)
def test_toy_round_trip_every_format(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / OUTPUT_NAMES[fmt]
    save_vocabulary(TOY_VOCAB, path, format="gpt2" if fmt == "gpt2" else None)
    assert detect_format(path) == fmt
    assert load_vocabulary(path) == _kept(TOY_VOCAB, fmt)


def test_loader_finds_gpt2_pairs_and_tokenizer_folders(tmp_path: Path) -> None:
    write_gpt2(TOY_VOCAB, tmp_path / "hf-slow" / "vocab.json", tmp_path / "hf-slow" / "merges.txt")
    expected = _kept(TOY_VOCAB, "gpt2")
    assert load_vocabulary(tmp_path / "hf-slow") == expected
    assert load_vocabulary(tmp_path / "hf-slow" / "merges.txt") == expected
    assert load_vocabulary(tmp_path / "hf-slow" / "vocab.json") == expected
    save_vocabulary(TOY_VOCAB, tmp_path / "hub" / "tokenizer.json", format="huggingface")
    assert detect_format(tmp_path / "hub") == "huggingface"
    assert load_vocabulary(tmp_path / "hub") == _kept(TOY_VOCAB, "huggingface")
    with pytest.raises(ValueError, match="a folder without"):
        load_vocabulary(tmp_path)


@pytest.fixture(scope="module")
def cl100k() -> Vocabulary:
    enc = streamcodec.get_encoding("cl100k_base")
    return Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)


def test_real_cl100k_round_trips_gpt2(tmp_path: Path, cl100k: Vocabulary) -> None:
    save_vocabulary(cl100k, tmp_path / "encoder.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["encoder.json", "vocab.bpe"]
    assert load_vocabulary(tmp_path) == _kept(cl100k, "gpt2")


def test_real_size_round_trips_minbpe(tmp_path: Path, cl100k: Vocabulary) -> None:
    # minbpe fixes byte b at id b; cl100k_base numbers its bytes otherwise, so it is refused...
    with pytest.raises(VocabularyError, match="minbpe gives byte b the id b"):
        write_minbpe(cl100k, tmp_path / "cl100k.model")
    # ...and its merges with the bytes renumbered make a real-size minbpe vocabulary.
    ranks = {t: t[0] if len(t) == 1 else r for t, r in cl100k.mergeable_ranks.items()}
    renumbered = Vocabulary(ranks, cl100k.special_tokens, cl100k.pat_str)
    write_minbpe(renumbered, tmp_path / "renumbered.model")
    assert read_minbpe(tmp_path / "renumbered.model") == renumbered


def test_gpt2_files_from_r50k_like_ranks_read_back_and_match_tiktoken(
    tmp_path: Path, cl100k: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r50k's shape: GPT-2's byte order, 50,000 merges, <|endoftext|> = 50256."""
    ranks = {t: r for t, r in cl100k.mergeable_ranks.items() if r < 50256}
    r50k_like = Vocabulary(ranks, {"<|endoftext|>": 50256})
    write_gpt2(r50k_like, tmp_path / "encoder.json", tmp_path / "vocab.bpe")
    assert read_gpt2(tmp_path / "encoder.json", tmp_path / "vocab.bpe") == r50k_like
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))  # it caches by path
    theirs = data_gym_to_mergeable_bpe_ranks(
        str(tmp_path / "vocab.bpe"), str(tmp_path / "encoder.json")
    )
    assert theirs == ranks


# ---------------------------------------------------------------- Hugging Face, exactly

TEXT_LIMIT = 60_000


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    return [
        corpus.python_source(TEXT_LIMIT),
        corpus.english_prose(TEXT_LIMIT),
        corpus.multilingual(TEXT_LIMIT),
        "digits 1234567 and   spaces  \n\n\t trailing  ",
    ]


def test_huggingface_loads_our_tokenizer_json_and_encodes_alike(
    real_encoding: Encoding, real_texts: list[str], tmp_path: Path
) -> None:
    """Our tokenizer.json reads back identically, and Hugging Face encodes with it as we do."""
    tokenizers = pytest.importorskip("tokenizers")
    enc = real_encoding
    vocabulary = Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)
    path = tmp_path / "tokenizer.json"
    write_huggingface(vocabulary, path)
    assert read_huggingface(path) == vocabulary
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in real_texts:
        assert hf.encode(text).ids == enc.encode_ordinary(text)
        assert hf.decode(hf.encode(text).ids) == text
    text = "a<|endoftext|>b<|endofprompt|>"
    assert hf.encode(text).ids == enc.encode(text, allowed_special="all")


def test_huggingface_trained_tokenizer_reads_exactly(tmp_path: Path, real_texts: list[str]) -> None:
    """A GPT-2-style tokenizer.json trained by Hugging Face (one merge per token,
    ignore_merges false): streamcodec reads it, encodes like Hugging Face, and recovers the
    very merge list from the ranks alone."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1500,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    train_text = corpus.python_source(100_000) + corpus.english_prose(100_000)
    hf.train_from_iterator(
        [train_text[i : i + 1000] for i in range(0, len(train_text), 1000)], trainer
    )
    hf.save(str(tmp_path / "tokenizer.json"))
    vocabulary = read_huggingface(tmp_path / "tokenizer.json")
    assert vocabulary.pat_str == GPT2_PATTERN
    assert vocabulary.special_tokens == {"<|endoftext|>": 0}
    enc = Encoding(
        "trained",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=vocabulary.mergeable_ranks,
        special_tokens=vocabulary.special_tokens,
    )
    for text in real_texts:
        assert hf.encode(text).ids == enc.encode_ordinary(text)
    theirs = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))["model"]
    ours = [
        [token_to_unicode(a), token_to_unicode(b)]
        for a, b in merge_pairs(vocabulary.mergeable_ranks).values()
    ]
    assert ours == [m.split(" ") if isinstance(m, str) else m for m in theirs["merges"]]


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.text("abc", min_size=2, max_size=5), min_size=1, max_size=10, unique=True),
    texts=st.lists(st.text("abc ", min_size=1, max_size=16), min_size=1, max_size=5),
)
def test_huggingface_encodes_like_streamcodec_on_small_vocabularies(
    tokens: list[str], texts: list[str]
) -> None:
    """Any ranks, even tokens no merge builds: the writer's merge list and ignore_merges make
    Hugging Face merge exactly as tiktoken's rule does."""
    tokenizers = pytest.importorskip("tokenizers")
    ranks = BYTES_ONLY | {token.encode(): 256 + i for i, token in enumerate(tokens)}
    vocabulary = Vocabulary(ranks, {}, r"\S+|\s+")
    enc = Encoding("small", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    hf = tokenizers.Tokenizer.from_str(json.dumps(huggingface_json(vocabulary)))
    for text in texts:
        assert hf.encode(text).ids == enc.encode_ordinary(text)


def test_pattern_survives_oniguruma(real_texts: list[str]) -> None:
    """cl100k's possessive {1,3}+ means something else to Oniguruma; the writer rewrites it."""
    tokenizers = pytest.importorskip("tokenizers")
    import regex

    from streamcodec.formats.oniguruma import from_oniguruma, to_oniguruma
    from streamcodec.vocab import PATTERNS

    for pattern in set(PATTERNS.values()):
        split = tokenizers.pre_tokenizers.Split(
            tokenizers.Regex(to_oniguruma(pattern)), behavior="isolated"
        )
        for text in real_texts:
            expected = regex.findall(pattern, text)
            assert [p for p, _ in split.pre_tokenize_str(text)] == expected
            assert regex.findall(from_oniguruma(to_oniguruma(pattern)), text) == expected
    assert "{1,3}+" in CL100K_PATTERN and "{1,3}+" not in to_oniguruma(CL100K_PATTERN)
    assert from_oniguruma(to_oniguruma(r"\w+$|\s+\Z|[$]")) == r"\w+$|\s+\Z|[$]"
    assert from_oniguruma(r"(\d|x){2}+") == r"(?:(\d|x){2})+"


# ---------------------------------------------------------------- merges and reachability


def test_merge_pairs_and_unreachable_tokens() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    assert merge_pairs(ranks)[b"abc"] == (b"a", b"bc")  # bc was learned first
    assert unreachable_tokens(ranks) == []
    gap = {bytes([b]): b for b in range(256)} | {b"xyz": 256}
    assert unreachable_tokens(gap) == [b"xyz"]
    with pytest.raises(VocabularyError, match="not two tokens joined"):
        merge_pairs(gap)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), merged=st.integers(1, 60))
def test_unreachable_tokens_natively_equal_the_pure_loop(seed: int, merged: int) -> None:
    # Random tokens at random ranks: many are unreachable (their bytes merge otherwise).
    rng = random.Random(seed)
    tokens = {bytes(rng.choice(b"abc") for _ in range(rng.randint(2, 7))) for _ in range(merged)}
    ranks = {bytes([b]): b for b in range(256)} | {
        token: 256 + i for i, token in enumerate(rng.sample(sorted(tokens), len(tokens)))
    }
    if streamcodec.backend() == "native":
        assert compiled_merge(ranks) is not None  # the fast path is the one taken
    assert unreachable_tokens(ranks) == unreachable_tokens(ranks, native=False)


def test_the_pure_backend_checks_reachability_with_the_pure_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    monkeypatch.setenv("STREAMCODEC_BACKEND", "python")
    assert compiled_merge(ranks) is None
    assert compiled_merge({b"a": 0, b"ab": 1}) is None  # bytes missing: the core refuses it
    assert unreachable_tokens(ranks | {b"xyz": 257}) == [b"xyz"]


def test_tokens_hugging_face_would_treat_differently_are_refused(tmp_path: Path) -> None:
    whole = {b"ab": 256, b"xyz": 257}  # no merge builds "xyz", and it is no two tokens joined
    doc = _hf_doc(BYTES_ONLY | whole)
    doc["model"]["merges"] = ["a b"]
    # With ignore_merges both output "xyz" only as a whole piece: the same.
    assert read_huggingface(_write_json(tmp_path, doc)).mergeable_ranks == BYTES_ONLY | whole
    # Without it Hugging Face never outputs "xyz"; streamcodec does.
    doc["model"]["ignore_merges"] = False
    path = _write_json(tmp_path, doc)
    with pytest.raises(VocabularyError, match=r"model\.ignore_merges: is false, .* 1 token\(s\)"):
        read_huggingface(path)
    assert read_huggingface(path, allow_unreachable=True).mergeable_ranks == BYTES_ONLY | whole
    # "abc" is ab + c: streamcodec merges the two into it, Hugging Face without a merge cannot.
    joined = {b"ab": 256, b"abc": 257}
    doc = _hf_doc(BYTES_ONLY | joined)
    doc["model"]["merges"] = ["a b"]
    path = _write_json(tmp_path, doc)
    with pytest.raises(
        VocabularyError,
        match=r"model\.merges: no merge builds 1 token\(s\) \(model.vocab\['abc'\]\)",
    ):
        read_huggingface(path)
    assert read_huggingface(path, allow_unreachable=True).mergeable_ranks == BYTES_ONLY | joined


def test_formats_doctests() -> None:
    from streamcodec import formats
    from streamcodec.formats import (
        gpt2,
        huggingface,
        jsondoc,
        merges,
        minbpe,
        oniguruma,
        split_gaps,
    )

    for module in [formats, gpt2, huggingface, jsondoc, merges, minbpe, oniguruma, split_gaps]:
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# ---------------------------------------------------------------- malformed files


def _hf_doc(ranks: dict[bytes, int], *, ignore_merges: bool = True) -> dict:  # type: ignore[type-arg]
    doc = huggingface_json(Vocabulary(ranks))
    doc["model"]["ignore_merges"] = ignore_merges
    return doc


def _write_json(tmp_path: Path, doc: object, name: str = "tok.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _gpt2_files(tmp_path: Path, encoder: str, merges: str) -> tuple[Path, Path]:
    (tmp_path / "encoder.json").write_text(encoder, encoding="utf-8")
    (tmp_path / "vocab.bpe").write_text(merges, encoding="utf-8")
    return tmp_path / "encoder.json", tmp_path / "vocab.bpe"


def _encoder(extra: str = "", drop: int | None = None) -> str:
    entries = [f"{json.dumps(token_to_unicode(bytes([b])))}: {b}" for b in range(256) if b != drop]
    return "{" + ", ".join(entries) + extra + "}"


@pytest.mark.parametrize(
    ("encoder", "merges", "message"),
    [
        (_encoder(', "ab": 256'), "#version: 0.2\na b\n", None),
        (_encoder(', "ab": 256, "ab": 257'), "#version: 0.2\na b\n", r"key 'ab' appears twice"),
        (_encoder(', "ab": 97'), "#version: 0.2\na b\n", r"encoder.json: id 97 is given to both"),
        (_encoder(drop=0x61), "", r"encoder.json: single byte 0x61 \(written 'a'\) is missing"),
        (
            _encoder(', "ab": 256, "<|endoftext|>": 5'),
            "#version: 0.2\na b\n",
            r"id 5 is given to both",
        ),
        (
            _encoder(', "ab": 257'),
            "#version: 0.2\na b\n",
            r"encoder.json: 'ab' has id 257, but the merge on .*vocab.bpe:2 makes it rank 256",
        ),
        (
            _encoder(', "ab": 256'),
            "#version: 0.2\na b\nab\n",
            r"vocab.bpe:3: expected two tokens separated by a space",
        ),
        (
            _encoder(', "ab": 256'),
            "#version: 0.2\na b\na b\n",
            r"vocab.bpe:3: this merge builds b'ab', already built by line 2",
        ),
        (_encoder(', "ab": 256'), "#version: 0.2\na c\n", r"vocab.bpe:2: .*'ac', absent from"),
        (_encoder(', "a b": 256'), "", r"encoder.json: \['a b'\]: character ' '"),
        (_encoder(', "ab": 256')[:-5], "", r"encoder.json:1:\d+: invalid JSON"),
    ],
)
def test_malformed_gpt2_files(
    tmp_path: Path, encoder: str, merges: str, message: str | None
) -> None:
    paths = _gpt2_files(tmp_path, encoder, merges)
    if message is None:
        assert read_gpt2(*paths).mergeable_ranks == BYTES_ONLY | {b"ab": 256}
    else:
        with pytest.raises(VocabularyError, match=message):
            read_gpt2(*paths)


def _hf_case(change: str) -> dict:  # type: ignore[type-arg]
    doc = _hf_doc(BYTES_ONLY | {b"ab": 256, b"bc": 257})
    model = doc["model"]
    if change == "pair merges":
        model["merges"] = [["a", "b"], ["b", "c"]]
    elif change == "duplicate id":
        model["vocab"]["bc"] = 256
    elif change == "missing byte":
        del model["vocab"]["a"]
        model["merges"] = ["b c"]
    elif change == "special collides":
        doc["added_tokens"] = [{"id": 256, "content": "<s>", "special": True}]
    elif change == "out of order":
        model["merges"] = ["b c", "a b"]
    elif change == "bad merge":
        model["merges"] = ["a b c"]
    elif change == "unknown part":
        model["merges"] = ["a b", "b cc"]
    elif change == "not byte-level":
        model["vocab"]["▁x"] = 300
    elif change == "normalizer":
        doc["normalizer"] = {"type": "Lowercase"}
    elif change == "prefix space":
        doc["pre_tokenizer"]["add_prefix_space"] = True
    elif change == "wordpiece":
        model["type"] = "WordPiece"
    return doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("pair merges", None),
        ("duplicate id", r"tok.json: model.vocab\['bc'\]: id 256 is already model.vocab\['ab'\]"),
        ("special collides", r"model.vocab\['ab'\]: id 256 is special token '<s>'"),
        ("out of order", r"model.merges\[1\]: it builds 'ab' \(id 256\) after model.merges\[0\]"),
        ("bad merge", r"model.merges\[0\]: expected \"left right\""),
        ("unknown part", r"model.merges\[1\]: 'cc' is not in model.vocab"),
        ("normalizer", r"tok.json: normalizer: Lowercase changes the text"),
        ("prefix space", r"pre_tokenizer.add_prefix_space: a leading space"),
        ("wordpiece", r"model.type: 'WordPiece' is not a BPE model"),
    ],
)
def test_malformed_tokenizer_json(tmp_path: Path, change: str, message: str | None) -> None:
    path = _write_json(tmp_path, _hf_case(change))
    if message is None:
        assert read_huggingface(path).mergeable_ranks == BYTES_ONLY | {b"ab": 256, b"bc": 257}
    else:
        with pytest.raises(VocabularyError, match=message):
            read_huggingface(path)


def test_tokenizer_json_duplicate_key_and_invalid_json(tmp_path: Path) -> None:
    text = json.dumps(_hf_doc(BYTES_ONLY | {b"ab": 256}))
    duplicated = text.replace('"ab": 256', '"ab": 256, "ab": 257')
    path = tmp_path / "tok.json"
    path.write_text(duplicated, encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"tok.json: key 'ab' appears twice in model.vocab"):
        read_huggingface(path)
    path.write_text(text[:-10], encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"tok.json:1:\d+: invalid JSON"):
        read_huggingface(path)


def _minbpe(*lines: str) -> bytes:
    return ("\n".join(["minbpe v1", r"\w+", *lines]) + "\n").encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (_minbpe("1", "<|end|> 258", "97 98", "256 99"), None),
        (b"minbpe v2\n\n0\n", r"toy.model:1: expected 'minbpe v1'"),
        (_minbpe("1", "<|end|> 257", "97 98", "256 99"), r"toy.model:4: special token '<|end|>'"),
        (_minbpe("0", "97 98", "97 98"), r"toy.model:5: merge builds b'ab', already id 256"),
        (_minbpe("0", "97 98", "256"), r"toy.model:5: expected a merge 'id1 id2', got '256'"),
        (_minbpe("0", "97 300"), r"toy.model:4: merge \(97, 300\) uses an id not defined yet"),
        (_minbpe("2", "<a> 300", "<a> 301"), r"toy.model:5: special token '<a>' appears twice"),
        (_minbpe("x"), r"toy.model:3: expected the number of special tokens"),
        (_minbpe("2", "<a> 300"), r"toy.model:5: expected 'special id' \(special 2 of 2\)"),
    ],
)
def test_malformed_minbpe(tmp_path: Path, content: bytes, message: str | None) -> None:
    path = tmp_path / "toy.model"
    path.write_bytes(content)
    if message is None:
        assert read_minbpe(path) == Vocabulary(TOY, {"<|end|>": 258}, r"\w+")
    else:
        with pytest.raises(VocabularyError, match=message):
            read_minbpe(path)


def test_writers_refuse_what_a_format_cannot_hold(tmp_path: Path) -> None:
    gappy = Vocabulary(BYTES_ONLY | {b"ab": 300})
    with pytest.raises(VocabularyError, match="GPT-2's format numbers single bytes 0-255"):
        save_vocabulary(gappy, tmp_path / "gpt2", format="gpt2")
    with pytest.raises(VocabularyError, match="it has whitespace"):
        write_minbpe(Vocabulary(TOY, {"<| end |>": 258}), tmp_path / "x.model")
    with pytest.raises(ValueError, match="cannot tell the vocabulary format"):
        save_vocabulary(TOY_VOCAB, tmp_path / "vocab.txt")
    assert not any(tmp_path.iterdir())  # nothing half-written


@pytest.mark.parametrize("backend", ["native", "python"])
def test_a_vocabulary_without_some_bytes_loads(tmp_path: Path, backend: str) -> None:
    """Open models lack bytes UTF-8 never uses (issue 29): the file loads, text that needs a
    missing byte is refused with a line naming it, and entries outside the byte alphabet that
    no text can reach are skipped, as Hugging Face never outputs them."""
    from streamcodec.formats.open_model import load_encoding

    doc = _hf_case("missing byte")
    doc["model"]["vocab"]["▁x"] = 300
    enc = load_encoding(_write_json(tmp_path, doc), backend=backend)
    assert b"a" not in enc.mergeable_ranks and 300 not in enc.mergeable_ranks.values()
    assert enc.encode("bc b") == enc.encode_ordinary("bc b") == [257, 32, 98]
    with pytest.raises(ValueError, match=r"^character 2 \('a'\) needs byte 0x61, which is not"):
        enc.encode("b a")
    with pytest.raises(ValueError, match="needs byte 0x61"):
        enc.count_tokens("aaa") if hasattr(enc, "count_tokens") else enc.encode("aaa")


def test_each_vocabulary_has_dicts_of_its_own(tmp_path: Path) -> None:
    # Vocabulary and ModelRules are named tuples (a command's start): a default of one shared
    # dict let a caller's additions to one vocabulary's special tokens (a `.tiktoken` file
    # stores none) reach every vocabulary read after it, and the encodings made from them.
    path = tmp_path / "bytes.tiktoken"
    write_tiktoken({bytes([b]): b for b in range(256)}, path)
    first = load_vocabulary(path)
    first.special_tokens["<|endoftext|>"] = 256
    first.rules.added_tokens["<|pad|>"] = 257
    for later in (load_vocabulary(path), Vocabulary({b"a": 0}), Vocabulary({b"a": 0})._replace()):
        assert later.special_tokens == {} and later.rules.added_tokens == {}
    assert ModelRules().added_tokens == {}
