"""llama.cpp's tokenizer test vectors (issue 29's done-when): every byte-level BPE model among
them gives exactly the recorded ids (Hugging Face's) on both backends, from one
``load_encoding`` of its GGUF and from its tokenizer.json rebuilt as Hugging Face writes it.

The vectors come from ``tools/llama_vectors.py`` (CI runs it before the suite); without them
the tests skip, saying so. The loaders are tested without them on small fixtures in
tests/test_open_models.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from streamcodec.formats.gguf import read_gguf_metadata
from streamcodec.formats.gguf_pre import huggingface_document
from streamcodec.formats.open_model import load_encoding

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from llama_vectors import MODELS, read_vectors, vectors_folder

FOLDER = vectors_folder()


def _need(model: str) -> Path:
    path = FOLDER / f"ggml-vocab-{model}.gguf"
    if not path.is_file():
        pytest.skip(f"llama.cpp's test vectors are not in {FOLDER}: run tools/llama_vectors.py")
    return path


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("backend", ["native", "python"])
def test_the_gguf_gives_the_recorded_ids(model: str, backend: str) -> None:
    enc = load_encoding(_need(model), backend=backend)
    vectors = read_vectors(FOLDER, model)
    assert [enc.encode(text) for text, _ in vectors] == [ids for _, ids in vectors]


@pytest.mark.parametrize("model", MODELS)
def test_the_rebuilt_tokenizer_json_gives_the_recorded_ids(model: str, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    gguf = _need(model)
    path = tmp_path / "tokenizer.json"
    document = huggingface_document(read_gguf_metadata(gguf), source=str(gguf))
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    vectors = read_vectors(FOLDER, model)
    hugging_face = tokenizers.Tokenizer.from_file(str(path))
    expected = [ids for _, ids in vectors]
    assert [hugging_face.encode(text).ids for text, _ in vectors] == expected
    for backend in ("native", "python"):
        enc = load_encoding(path, backend=backend)
        assert [enc.encode(text) for text, _ in vectors] == expected, backend
