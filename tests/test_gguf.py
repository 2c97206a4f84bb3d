"""GGUF metadata: the reader on small files written by ``gguf_bytes``, and its refusals."""

from __future__ import annotations

import io
import struct

import pytest

from streamcodec.formats import gguf
from streamcodec.formats.gguf import gguf_bytes, read_gguf_metadata, read_metadata
from streamcodec.vocab import VocabularyError


def _read(data: bytes) -> dict[str, object]:
    return read_metadata(io.BytesIO(data), source="m.gguf")


def test_round_trip_of_the_tokenizer_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    meta = {
        "general.name": "toy",
        "general.architecture": "llama",  # not kept
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.tokens": ["a", "b", "ab", "ü"],
        "tokenizer.ggml.token_type": [1, 1, 1, 3],
        "tokenizer.ggml.merges": ["a b"],
        "tokenizer.ggml.bos_token_id": 3,
        "tokenizer.ggml.add_bos_token": True,
    }
    path = tmp_path / "toy.gguf"
    path.write_bytes(gguf_bytes(meta))
    read = read_gguf_metadata(path)
    del meta["general.architecture"]
    assert read == meta


def test_numeric_arrays_of_every_width() -> None:
    # An array of float32 (type 6) and one of uint64 (type 10), as real files hold for scores.
    data = bytearray(gguf_bytes({}))
    struct.pack_into("<Q", data, 16, 2)
    for key, kind, values in (("tokenizer.ggml.scores", 6, [0.5, -1.0]), ("x.y", 10, [1, 2])):
        encoded = key.encode()
        data += struct.pack("<Q", len(encoded)) + encoded + struct.pack("<IIQ", 9, kind, 2)
        data += struct.pack(f"<2{'f' if kind == 6 else 'Q'}", *values)
    assert _read(bytes(data)) == {"tokenizer.ggml.scores": [0.5, -1.0]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"GGUX" + bytes(20), "not a GGUF file"),
        (b"GGUF" + struct.pack("<IQQ", 7, 0, 0), "GGUF version 7"),
        (gguf_bytes({"tokenizer.ggml.tokens": ["a", "b"]})[:-1], "byte 86 .*truncated GGUF"),
        (b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 1 << 40), "byte 32: a string of"),
    ],
    ids=["magic", "version", "truncated", "length"],
)
def test_malformed_files_name_the_offset(data: bytes, message: str) -> None:
    with pytest.raises(VocabularyError, match=f"^m.gguf: .*{message}"):
        _read(data)


def test_an_unknown_value_type_names_the_key() -> None:
    data = bytearray(gguf_bytes({"tokenizer.ggml.model": "gpt2"}))
    kind_at = 24 + 8 + len("tokenizer.ggml.model")
    struct.pack_into("<I", data, kind_at, 99)
    with pytest.raises(VocabularyError, match=r"key 'tokenizer.ggml.model'\): unknown value type"):
        _read(bytes(data))


def test_string_arrays_across_the_reads_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of a few bytes put most strings across a chunk's end: each read as one by one.
    tokens = [f"t{i}" * (i % 5) for i in range(300)] + ["ü", ""]
    meta = {"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.merges": ["a b"] * 40}
    for chunk in (1, 7, 64, 1 << 20):
        monkeypatch.setattr(gguf, "_CHUNK", chunk)
        assert _read(gguf_bytes(meta)) == meta


@pytest.mark.parametrize("chunk", [1, 9, 1 << 20])
def test_a_bad_string_in_an_array_names_its_offset(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(gguf, "_CHUNK", chunk)
    data = gguf_bytes({"tokenizer.ggml.tokens": ["ab", "cd", "ef"]})
    bad = data.index(b"cd") - 8
    with pytest.raises(VocabularyError, match=rf"byte {bad + 10} .*not UTF-8"):
        _read(data[: bad + 8] + b"\xff" + data[bad + 9 :])
    with pytest.raises(VocabularyError, match=rf"byte {bad + 8} .*1 byte\(s\) early"):
        _read(data[: bad + 9])
    huge = struct.pack("<Q", 1 << 40)
    with pytest.raises(VocabularyError, match=rf"byte {bad + 8} .*: a string of"):
        _read(data[:bad] + huge + data[bad + 8 :])
