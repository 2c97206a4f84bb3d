"""The trainers' formats (issue 30): each shard read back as its trainer reads it.

nanoGPT's ``np.memmap(..., dtype=np.uint16)``, llm.c's header then its ids, Megatron-Core's and
datatrove's files compared byte for byte with files their own writers made
(tests/data/corpus_formats, made once by tools/corpus_fixtures.py), Parquet through pyarrow
(and Hugging Face ``datasets`` where installed). Every document is tiktoken's
``encode_ordinary`` between its boundary tokens.
"""

from __future__ import annotations

import array
import errno
import itertools
import json
import os
import random
import struct
import sys
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec.corpus import check_corpus, read_documents, tokenize
from streamcodec.corpus import tasks as tasks_module
from streamcodec.corpus.check import CorpusCheckError
from streamcodec.corpus.shards import TokenShard
from streamcodec.corpus.writers import FORMATS
from tests.conftest import tiktoken_twin

FIXTURES = Path(__file__).parent / "data" / "corpus_formats"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
R50K = streamcodec.get_encoding("r50k_base")
CL100K = streamcodec.get_encoding("cl100k_base")


def json_lines(folder: Path, texts: list[str], name: str = "docs.jsonl") -> Path:
    path = folder / name
    rows = [
        json.dumps({"text": t, "id": f"doc-{i}"}, ensure_ascii=False) for i, t in enumerate(texts)
    ]
    path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    return path


def stdlib_texts(n: int, seed: int) -> list[str]:
    paths = sorted(p for p in STDLIB.glob("*.py") if p.stat().st_size < 60_000)
    return [p.read_text(encoding="utf-8")[:5000] for p in random.Random(seed).sample(paths, n)]


def expected(enc: Any, texts: list[str], bos: list[int], eos: list[int]) -> list[list[int]]:
    twin = tiktoken_twin(enc)
    return [[*bos, *twin.encode_ordinary(text), *eos] for text in texts]


def shard_files(out: Path, suffix: str) -> list[Path]:
    return sorted(out.glob(f"shard_*{suffix}"))


# ------------------------------------------------------------------ each trainer's reader


def test_nanogpt_memmaps_uint16_with_no_header(tmp_path: Path) -> None:
    texts = stdlib_texts(12, seed=1)
    tokenize([json_lines(tmp_path, texts)], tmp_path / "out", encoding="r50k_base",
             format="nanogpt", shard_bytes=20_000, special_as_text=True)  # fmt: skip
    bins = shard_files(tmp_path / "out", ".bin")
    assert len(bins) > 1
    # nanoGPT's train.py: np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16)
    ids = np.concatenate([np.memmap(p, dtype=np.uint16, mode="r") for p in bins])
    flat = [i for doc in expected(R50K, texts, [], [R50K.eot_token]) for i in doc]
    assert ids.tolist() == flat


def test_a_vocabulary_that_does_not_fit_names_the_formats_that_do(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    with pytest.raises(ValueError) as caught:
        tokenize([tmp_path / "a.txt"], tmp_path / "out", format="nanogpt")
    assert str(caught.value) == (
        "nanogpt stores ids as uint16 (at most 65,536 ids) and cl100k_base has 100,277: use "
        "--format streamcodec, llmc, megatron, datatrove or parquet"
    )
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match=r"no shard format 'npy'; --format takes streamcodec, "):
        tokenize([tmp_path / "a.txt"], tmp_path / "out", format="npy")


def _llmc_load(path: Path) -> np.ndarray:
    """llm.c's ``_load_data_shard`` (train_gpt2.py), both of its headers."""
    with open(path, "rb") as f:
        header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        magic, version, count = header[:3].tolist()
        dtype = {(20240520, 1): np.uint16, (20240801, 7): np.uint32}[(magic, version)]
        tokens = np.frombuffer(f.read(), dtype=dtype)
    assert len(tokens) == count and not header[3:].any()
    return tokens


@pytest.mark.parametrize(("enc", "magic"), [(R50K, 20240520), (CL100K, 20240801)])
def test_llmc_header_and_ids_in_the_type_its_writer_picks(
    tmp_path: Path, enc: Any, magic: int
) -> None:
    texts = stdlib_texts(8, seed=2)
    eot = enc.eot_token
    tokenize([json_lines(tmp_path, texts)], tmp_path / "out", encoding=enc, format="llmc",
             bos=enc.decode([eot]), eos=None, shard_bytes=15_000, special_as_text=True)  # fmt: skip
    bins = shard_files(tmp_path / "out", ".bin")
    assert len(bins) > 1 and all(struct.unpack("<i", p.read_bytes()[:4])[0] == magic for p in bins)
    ids = np.concatenate([_llmc_load(p) for p in bins])
    # llm.c's fineweb.py: the end-of-text token first, then the document
    assert ids.tolist() == [i for doc in expected(enc, texts, [eot], []) for i in doc]
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [
        doc[1:] for doc in expected(enc, texts, [eot], [])
    ]


@pytest.mark.parametrize("enc", [R50K, CL100K], ids=lambda e: e.name)
@pytest.mark.parametrize("name", ["megatron", "datatrove"])
def test_megatron_and_datatrove_files_are_their_own_writers_bytes(
    tmp_path: Path, name: str, enc: Any
) -> None:
    texts = json.loads((FIXTURES / "texts.json").read_text(encoding="utf-8"))
    tokenize([json_lines(tmp_path, texts)], tmp_path / "out", encoding=enc, format=name)
    ours = sorted(p for p in (tmp_path / "out").iterdir() if p.name.startswith("shard_"))
    theirs = sorted(FIXTURES.glob(f"{name}_{enc.name}.*"))
    assert [p.name.split(".", 1)[1] for p in ours] == [p.name.split(".", 1)[1] for p in theirs]
    for mine, fixture in zip(ours, theirs, strict=True):
        assert mine.read_bytes() == fixture.read_bytes(), mine.name
    docs = expected(enc, texts, [], [enc.eot_token])
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [d[:-1] for d in docs]


def test_parquet_one_row_per_document_with_kept_fields(tmp_path: Path) -> None:
    import pyarrow.parquet

    texts = stdlib_texts(10, seed=3)
    tokenize([json_lines(tmp_path, texts)], tmp_path / "out", format="parquet",
             shard_bytes=20_000, special_as_text=True)  # fmt: skip
    files = shard_files(tmp_path / "out", ".parquet")
    assert len(files) > 1
    table = pyarrow.concat_tables([pyarrow.parquet.read_table(p) for p in files])
    kind = table.schema.field("input_ids").type
    assert pyarrow.types.is_list(kind) and kind.value_type == pyarrow.int32()
    assert table.column("input_ids").to_pylist() == expected(CL100K, texts, [], [CL100K.eot_token])


def test_hugging_face_datasets_loads_the_parquet_shards(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    texts = stdlib_texts(6, seed=4)
    tokenize([json_lines(tmp_path, texts)], tmp_path / "out", format="parquet",
             special_as_text=True)  # fmt: skip
    files = [str(p) for p in shard_files(tmp_path / "out", ".parquet")]
    loaded = datasets.load_dataset("parquet", data_files=files, split="train",
                                   cache_dir=str(tmp_path / "cache"))  # fmt: skip
    assert loaded["input_ids"] == expected(CL100K, texts, [], [CL100K.eot_token])


# ------------------------------------------------------------------ boundaries


def test_bos_and_eos_around_every_document_and_left_off_when_read(tmp_path: Path) -> None:
    texts = ["one", "", "two three"]
    source = json_lines(tmp_path, texts)
    enc = streamcodec.get_encoding("p50k_edit")  # n_vocab 50,284: every format holds it
    fim = enc.special_tokens["<|fim_prefix|>"]
    for name in FORMATS:
        out = tmp_path / name
        tokenize([source], out, encoding=enc, format=name, bos="<|fim_prefix|>",
                 eos="<|endoftext|>")  # fmt: skip
        docs = expected(enc, texts, [fim], [enc.eot_token])
        assert [d.tolist() for d in read_documents(out)] == [d[1:-1] for d in docs], name
        assert "3 documents" in check_corpus(out, text=3), name


def test_separator_token_is_the_old_name_of_eos(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    manifest = tokenize([tmp_path / "a.txt"], tmp_path / "out", separator_token=None)
    assert manifest["layout"]["eos"] == [] and manifest["options"]["eos"] is None
    with pytest.raises(ValueError, match="separator_token is the old name of eos: pass eos alone"):
        tokenize([tmp_path / "a.txt"], tmp_path / "o2", separator_token=None, eos=None)


def test_check_corpus_finds_a_missing_boundary(tmp_path: Path) -> None:
    source = json_lines(tmp_path, ["one", "two"])
    tokenize([source], tmp_path / "out", encoding="r50k_base", format="nanogpt")
    manifest_path = tmp_path / "out" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["layout"]["eos"] = [R50K.special_tokens["<|endoftext|>"] - 1]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CorpusCheckError, match=r"shard_00000.bin: a document does not end with"):
        check_corpus(manifest_path)


# ------------------------------------------------------------------ damage and interruption


@pytest.mark.parametrize("name", list(FORMATS))
def test_check_corpus_finds_a_changed_byte_and_a_bad_header(tmp_path: Path, name: str) -> None:
    source = json_lines(tmp_path, stdlib_texts(3, seed=5))
    tokenize([source], tmp_path / "out", encoding="r50k_base", format=name, special_as_text=True)
    assert "3 documents" in check_corpus(tmp_path / "out", text=3)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    first = tmp_path / "out" / manifest["shards"][0]["files"][0]["name"]
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0x40
    first.write_bytes(bytes(data))
    with pytest.raises(CorpusCheckError, match=f"{first.name}: its SHA-256 is not the manifest's"):
        check_corpus(tmp_path / "out")
    header = manifest["shards"][0]["files"][0]["header_bytes"]
    if header:  # a byte of the header's padding, which its parse would not see, is seen
        data[len(data) // 2] ^= 0x40
        data[header - 2] ^= 0x01
        first.write_bytes(bytes(data))
        with pytest.raises(CorpusCheckError, match=f"{first.name}: its SHA-256 is not the"):
            check_corpus(tmp_path / "out")


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("name", list(FORMATS))
def test_the_manifests_hashes_are_the_files_own(
    tmp_path: Path, name: str, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each file is hashed as it is written, not read back after (the ids' file with a header:
    # the header apart, the bytes after it as written): every hash listed must still be the
    # file's real SHA-256s, the side files' and a streamed document's (add, end_document)
    # included; the writeback started every few kB here (8 MB in use) changes no byte
    import gzip
    import hashlib

    from streamcodec.corpus import shards
    from streamcodec.corpus.writers import shard_format

    monkeypatch.setattr(shards, "_WRITEBACK", 3000)

    source = json_lines(tmp_path, stdlib_texts(12, seed=8))
    streamed = tmp_path / "whole.txt.gz"
    streamed.write_bytes(gzip.compress("".join(stdlib_texts(2, seed=9)).encode("utf-8")))
    tokenize([source, streamed], tmp_path / "out", encoding="r50k_base", format=name,
             keep=["id"], shard_bytes=12_000, special_as_text=True, jobs=jobs)  # fmt: skip
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["shards"]) > 2
    for entry in manifest["shards"]:
        for record in entry["files"]:
            data = (tmp_path / "out" / record["name"]).read_bytes()
            first = record is entry["files"][0]
            header = getattr(shard_format(name), "header_size", 0) if first else 0
            assert record == {
                "name": record["name"],
                "bytes": len(data),
                "sha256": hashlib.sha256(data[header:]).hexdigest(),
                "header_bytes": header,
                "header_sha256": hashlib.sha256(data[:header]).hexdigest() if header else None,
            }


@pytest.mark.parametrize("name", ["llmc", "streamcodec"])
def test_a_failed_write_of_the_header_leaves_no_shard(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the header of the ids' file is written last, over its placeholder: its error is the run's
    source = json_lines(tmp_path, stdlib_texts(3, seed=10))

    def failing(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "pwrite", failing)
    with pytest.raises(OSError, match="Input/output error"):
        tokenize([source], tmp_path / "out", encoding="r50k_base", format=name,
                 special_as_text=True)  # fmt: skip
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name != "manifest.json"]


@pytest.mark.parametrize("name", ["llmc", "megatron", "streamcodec", "datatrove"])
def test_a_truncated_shard_is_named_when_read(tmp_path: Path, name: str) -> None:
    source = json_lines(tmp_path, stdlib_texts(3, seed=6))
    tokenize([source], tmp_path / "out", encoding="r50k_base", format=name, special_as_text=True)
    first = sorted(p for p in (tmp_path / "out").iterdir() if p.name.startswith("shard_"))[0]
    first.write_bytes(first.read_bytes()[:-3])
    with pytest.raises(ValueError, match=rf"{first.name}: .*"):
        list(read_documents(tmp_path / "out"))


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_failed_shard_leaves_no_file_and_the_rerun_gives_the_same_bytes(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = json_lines(tmp_path, stdlib_texts(12, seed=7))
    options: dict[str, Any] = {"encoding": "r50k_base", "format": name, "shard_bytes": 12_000,
                               "special_as_text": True}  # fmt: skip
    tokenize([source], tmp_path / "clean", **options)
    from streamcodec.corpus.writers import parquet

    calls = {"n": 0}

    def full_disk(original: Any) -> Any:
        def write(self: Any, *args: Any) -> None:
            if "shard_00002" in self.paths[0]:
                raise OSError(errno.ENOSPC, "No space left on device", self.paths[0])
            calls["n"] += 1
            original(self, *args)

        return write

    monkeypatch.setattr(TokenShard, "_write", full_disk(TokenShard._write))
    monkeypatch.setattr(parquet.Shard, "add_documents", full_disk(parquet.Shard.add_documents))
    with pytest.raises(OSError, match="No space left"):
        tokenize([source], tmp_path / "out", **options)
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert not any(n.startswith(("shard_00002", ".")) for n in names), names
    monkeypatch.undo()
    tokenize([source], tmp_path / "out", **options)
    clean = {p.name: p.read_bytes() for p in (tmp_path / "clean").iterdir()}
    again = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert clean.keys() == again.keys()
    assert {k: v for k, v in clean.items() if k != "manifest.json"} == {
        k: v for k, v in again.items() if k != "manifest.json"
    }


# ------------------------------------------------------------------ kept fields


def test_kept_fields_go_into_parquet_rows_or_a_side_file(tmp_path: Path) -> None:
    import pyarrow
    import pyarrow.parquet

    lines = [{"text": "one", "id": 7, "url": "u1"}, {"text": "two", "id": 8}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = pyarrow.table({"text": ["three"], "id": [9], "url": ["u3"]})
    pyarrow.parquet.write_table(table, tmp_path / "in.parquet")
    (tmp_path / "in.txt").write_text("four")  # plain text: no fields
    inputs = [source, tmp_path / "in.parquet", tmp_path / "in.txt"]
    want = [{"id": 7, "url": "u1"}, {"id": 8, "url": None}, {"id": 9, "url": "u3"},
            {"id": None, "url": None}]  # fmt: skip
    tokenize(inputs, tmp_path / "pq", format="parquet", keep=["id", "url"])
    rows = pyarrow.parquet.read_table(tmp_path / "pq" / "shard_00000.parquet").to_pylist()
    assert [{k: r[k] for k in ("id", "url")} for r in rows] == want
    texts = ["one", "two", "three", "four"]
    assert [r["input_ids"][:-1] for r in rows] == [CL100K.encode(t) for t in texts]
    tokenize(inputs, tmp_path / "megatron", format="megatron", keep=["id", "url"])
    side = (tmp_path / "megatron" / "shard_00000.fields.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in side] == want
    assert "4 documents" in check_corpus(tmp_path / "megatron", text=4)


def test_kept_fields_that_cannot_be_kept_are_named(tmp_path: Path) -> None:
    import pyarrow
    import pyarrow.parquet

    pyarrow.parquet.write_table(pyarrow.table({"text": ["a"]}), tmp_path / "in.parquet")
    with pytest.raises(
        ValueError, match=r"in.parquet: no column 'id' \(it has: text\); check --keep"
    ):
        tokenize([tmp_path / "in.parquet"], tmp_path / "out", keep=["id"])
    with pytest.raises(ValueError, match="--keep names the text's own field"):
        tokenize([tmp_path / "in.parquet"], tmp_path / "out", keep=["text"], restart=True)
    (tmp_path / "in.txt").write_text("plain")
    with pytest.raises(
        ValueError, match=r"--keep applies to JSON Lines and Parquet inputs and none"
    ):
        tokenize([tmp_path / "in.txt"], tmp_path / "out", keep=["id"], restart=True)


def test_the_command_line_options(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = json_lines(tmp_path, ["one", "two"])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "streamcodec", "tokenize-corpus", str(source), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    done = run("-o", str(tmp_path / "out"), "-e", "r50k_base", "--format", "llmc", "--bos",
               "<|endoftext|>", "--eos", "none", "--keep", "id")  # fmt: skip
    assert done.returncode == 0 and "2 documents, 4 tokens (llmc, uint16)" in done.stderr
    assert [json.loads(x) for x in (tmp_path / "out" / "shard_00000.fields.jsonl").open()] == [
        {"id": "doc-0"}, {"id": "doc-1"}
    ]  # fmt: skip
    both = run("-o", str(tmp_path / "o2"), "--separator-token", "none", "--eos", "none")
    assert both.returncode == 1 and both.stderr == (
        "streamcodec: error: --separator-token is the old name of --eos: pass --eos alone\n"
    )
    wrong = run("-o", str(tmp_path / "o3"), "--bos", "<|begin_of_text|>")
    assert wrong.returncode == 1 and wrong.stderr == (
        "streamcodec: error: cl100k_base has no special token '<|begin_of_text|>' for --bos "
        "(it has: <|endofprompt|>, <|endoftext|>, <|fim_middle|>, <|fim_prefix|>, "
        "<|fim_suffix|>); name one with --bos, or none\n"
    )


def test_the_default_boundaries_are_the_models_own(tmp_path: Path) -> None:
    """A model's post-processor (``Encoding.rules``, issue 29) decides; else end-of-sequence
    after each document."""
    from streamcodec.corpus.tokenize import boundaries
    from streamcodec.vocab import ModelRules

    specials = {"<|begin_of_text|>": 50257, "<|end_of_text|>": 50258}

    def llama_like(**rules: Any) -> Any:
        return streamcodec.Encoding("llama-like", pat_str=R50K.pat_str, special_tokens=specials,
                                    mergeable_ranks=R50K.mergeable_ranks,
                                    rules=ModelRules(**rules))  # fmt: skip

    assert boundaries(llama_like()) == (None, None)  # no end-of-text token of tiktoken's name
    llama = {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}
    enc = llama_like(**llama, add_bos=True)
    assert boundaries(enc) == ("<|begin_of_text|>", None)
    source = json_lines(tmp_path, ["one", "two"])
    tokenize([source], tmp_path / "out", encoding=enc, format="megatron")
    ids = (tmp_path / "out" / "shard_00000.bin").read_bytes()
    assert np.frombuffer(ids, np.uint16).tolist() == [50257, *R50K.encode("one"), 50257,
                                                       *R50K.encode("two")]  # fmt: skip
    assert boundaries(llama_like(**llama)) == (None, "<|end_of_text|>")  # its end, after each
    assert boundaries(R50K) == (None, "<|endoftext|>")


def test_a_models_tokenizer_json_as_hugging_face_encodes_each_document(tmp_path: Path) -> None:
    """``-e tokenizer.json`` (issue 30 item 6): its post-processor's BOS first, by default;
    every document as Hugging Face's ``encode(text).ids`` with its special tokens."""
    import subprocess
    import sys

    tokenizers = pytest.importorskip("tokenizers")
    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import Vocabulary

    specials = {"<|begin_of_text|>": 50257, "<|end_of_text|>": 50258}
    document = huggingface_json(Vocabulary(R50K.mergeable_ranks, specials, R50K.pat_str))
    single = [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
              {"Sequence": {"id": "A", "type_id": 0}}]  # fmt: skip
    bos = {"id": "<|begin_of_text|>", "ids": [50257], "tokens": ["<|begin_of_text|>"]}
    processor = {"type": "TemplateProcessing", "single": single, "pair": single}
    document["post_processor"] = processor | {"special_tokens": {"<|begin_of_text|>": bos}}
    model = tmp_path / "model" / "tokenizer.json"
    model.parent.mkdir()
    model.write_text(json.dumps(document), encoding="utf-8")
    texts = stdlib_texts(4, seed=9)
    source = json_lines(tmp_path, texts)
    command = [sys.executable, "-m", "streamcodec", "tokenize-corpus", str(source), "-o",
               str(tmp_path / "out"), "-e", str(model.parent), "--format", "llmc",
               "--special-as-text"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    hugging_face = tokenizers.Tokenizer.from_file(str(model))
    header = 256 * 4
    ids = np.frombuffer((tmp_path / "out" / "shard_00000.bin").read_bytes()[header:], np.uint16)
    assert ids.tolist() == [i for text in texts for i in hugging_face.encode(text).ids]
    assert hugging_face.encode("x").ids[0] == 50257
    check = [sys.executable, "-m", "streamcodec", "check-corpus", str(tmp_path / "out"), "--text"]
    alone = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert alone.returncode == 1 and alone.stderr == (
        "streamcodec: error: the corpus was made with 'model', no registered encoding (a "
        "model's own file?): pass -e with its file (encoding=) to check its text\n"
    )
    named = subprocess.run([*check, "-e", str(model)], capture_output=True, text=True, timeout=120)
    assert named.returncode == 0 and "4 documents" in named.stdout, named.stderr
    wrong = subprocess.run([*command[:-1], "--eos", "<|endoftext|>", "--restart"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert wrong.returncode == 1 and wrong.stderr == (
        "streamcodec: error: model has no special token '<|endoftext|>' for --eos (it has: "
        "<|begin_of_text|>, <|end_of_text|>); name one with --eos, or none\n"
    )


def test_a_tiktoken_file_with_its_pattern(tmp_path: Path) -> None:
    import subprocess
    import sys

    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    path = tmp_path / "gpt2.tiktoken"
    save_vocabulary(Vocabulary(R50K.mergeable_ranks), path)
    source = json_lines(tmp_path, ["hello world"])
    command = [sys.executable, "-m", "streamcodec", "tokenize-corpus", str(source), "-o",
               str(tmp_path / "out"), "-e", str(path), "--format", "nanogpt"]  # fmt: skip
    missing = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and missing.stderr == (
        f"streamcodec: error: {path}: a .tiktoken file holds no pre-tokenizer pattern; pass "
        "--pattern (an encoding's name such as cl100k_base, or a regex)\n"
    )
    done = subprocess.run([*command, "--pattern", "r50k_base"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ids = np.memmap(tmp_path / "out" / "shard_00000.bin", dtype=np.uint16, mode="r")
    assert ids.tolist() == R50K.encode("hello world")  # no special token: no boundary


# ------------------------------------------------------------------ properties

P50K_EDIT = streamcodec.get_encoding("p50k_edit")  # 50,284 ids: every format holds them
BOUNDARY = st.sampled_from([(), (P50K_EDIT.eot_token,), (50281,)])


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(list(FORMATS)),
    docs=st.lists(st.lists(st.integers(0, P50K_EDIT.n_vocab - 1), max_size=40), max_size=8),
    bos=BOUNDARY,
    eos=BOUNDARY,
    cuts=st.lists(st.integers(0, 40), max_size=4),
    whole=st.sampled_from(["documents", "flat", "pieces"]),
)
def test_any_documents_in_any_format_read_back_whole(
    name: str, docs: list[list[int]], bos: tuple[int, ...], eos: tuple[int, ...],
    cuts: list[int], whole: str,
) -> None:  # fmt: skip
    """Documents written whole (add_documents), as one run of ids (add_flat: numpy's steps) or
    in pieces (add, end_document) read back as written, between their boundaries."""
    import shutil
    import tempfile

    from streamcodec.corpus.shards import Layout
    from streamcodec.corpus.writers import dtype_for, shard_format

    folder = tempfile.mkdtemp()
    try:
        writer = shard_format(name)
        layout = Layout(name, dtype_for(name, P50K_EDIT.n_vocab), bos, eos, (), "p50k_edit")
        with writer(folder, 3, layout) as shard:
            if whole == "documents":
                shard.add_documents(docs)
            elif whole == "flat":
                flat = array.array("I", [i for doc in docs for i in doc])
                shard.add_flat(flat, array.array("q", [0, *itertools.accumulate(map(len, docs))]))
            else:
                for doc in docs:
                    for start, end in itertools.pairwise([0, *sorted(cuts), len(doc)]):
                        shard.add(doc[start:end])
                    shard.end_document()
        ids, offsets = writer.read(list(shard.paths[: len(writer.suffixes)]), layout)
        assert shard.documents == len(docs) == len(offsets) - 1
        assert shard.tokens == len(ids) == sum(len(bos) + len(d) + len(eos) for d in docs)
        got = [ids[a:b].tolist() for a, b in itertools.pairwise(offsets.tolist())]
        assert got == [[*bos, *doc, *eos] for doc in docs]
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("backend", ["native", "python"])
@settings(max_examples=15, deadline=None)
@given(
    texts=st.lists(st.text(st.characters(exclude_categories=("Cs",)), max_size=60), max_size=6),
    name=st.sampled_from(list(FORMATS)),
)
def test_random_text_in_any_format_is_tiktokens_on_both_backends(
    backend: str, texts: list[str], name: str
) -> None:
    import shutil
    import tempfile

    base = P50K_EDIT
    enc = streamcodec.Encoding(base.name, pat_str=base.pat_str, backend=backend,
                               mergeable_ranks=base.mergeable_ranks,
                               special_tokens=base.special_tokens)  # fmt: skip
    assert enc.backend == backend
    folder = Path(tempfile.mkdtemp())
    try:
        source = json_lines(folder, texts)
        tokenize([source], folder / "out", encoding=enc, format=name, special_as_text=True,
                 shard_bytes=150)  # fmt: skip
        docs = expected(P50K_EDIT, texts, [], [P50K_EDIT.eot_token])
        assert [d.tolist() for d in read_documents(folder / "out")] == [d[:-1] for d in docs]
        assert f"{len(texts):,} documents" in check_corpus(folder / "out", text=len(texts))
    finally:
        shutil.rmtree(folder)


def test_llmc_refuses_a_shard_past_its_limit_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamcodec.corpus.writers import llmc

    monkeypatch.setattr(llmc, "_MOST", 5)  # llm.c's 2**31 - 1, made small
    source = json_lines(tmp_path, ["one two three four five six"])
    with pytest.raises(
        ValueError, match=r"shard_00000.bin: 7 ids, past llm.c's limit .* smaller --shard-size"
    ):
        tokenize([source], tmp_path / "out", encoding="r50k_base", format="llmc")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json"]


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_parquet_interrupted_after_a_row_group_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamcodec.corpus.writers import parquet

    """Regression: pyarrow's writer, left open on the discarded file, failed when collected."""
    monkeypatch.setattr(parquet, "_GROUP_IDS", 10)  # a row group every few documents
    original = parquet.Shard.add_documents
    seen = {"n": 0}

    def interrupted(self: Any, *args: Any) -> None:
        seen["n"] += 1
        if seen["n"] == 3:
            raise KeyboardInterrupt
        original(self, *args)

    monkeypatch.setattr(parquet.Shard, "add_documents", interrupted)
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 1)  # one document a batch
    source = json_lines(tmp_path, [f"document number {i}" for i in range(6)])
    with pytest.raises(KeyboardInterrupt):
        tokenize([source], tmp_path / "out", format="parquet")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json"]


@pytest.mark.parametrize("name", ["nanogpt", "megatron"])
def test_the_engines_uint32s_narrowed_never_wrap(tmp_path: Path, name: str) -> None:
    """The engine's ids come as array('I'); narrowed to uint16 (or int32), an id that does
    not fit is an OverflowError, and no file is left."""
    import array

    from streamcodec.corpus.shards import Layout
    from streamcodec.corpus.writers import shard_format

    dtype = {"nanogpt": "uint16", "megatron": "int32"}[name]
    too_big = {"uint16": 65536, "int32": 1 << 31}[dtype]
    with shard_format(name)(str(tmp_path), 0, Layout(name, dtype)) as shard:
        shard.add_documents([array.array("I", [1, too_big - 1]), array.array("I")])
    ids, _ = shard_format(name).read(list(shard.paths), Layout(name, dtype))
    assert ids.tolist() == [1, too_big - 1]
    for path in shard.paths:
        os.unlink(path)
    writer = shard_format(name)(str(tmp_path), 1, Layout(name, dtype))
    with pytest.raises(OverflowError, match=f"id {too_big} does not fit"), writer as shard:
        shard.add_documents([array.array("I", [1, too_big, 2])])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("n_vocab", [50257, 100277])
@pytest.mark.parametrize("native", [True, False])
def test_ids_of_the_shards_type_joined_are_the_documents_files(
    tmp_path: Path, name: str, n_vocab: int, native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``add_flat`` of ids already of the shard's type joins each document with its boundaries
    into one buffer a task (by the native ``join_documents``, or its parts joined where it is
    not built; the buffer kept, grown when a task needs more): the files ``add_documents``
    writes."""
    from streamcodec.corpus import shards
    from streamcodec.corpus.shards import Layout
    from streamcodec.corpus.writers import dtype_for, shard_format

    try:
        dtype = dtype_for(name, n_vocab)
    except ValueError:
        pytest.skip(f"{name} holds no {n_vocab:,} ids")
    if native and shards._native_join() is None:
        pytest.skip("the corpus tool's native helpers are not built")
    if not native:
        monkeypatch.setattr(shards, "_native_join", lambda: None)
    docs = [[1, 2, 3], [], [50000, 7], list(range(100, 140))]
    flat = array.array(shards.TYPECODES[dtype], [i for doc in docs for i in doc])
    offsets = array.array("q", [0, *itertools.accumulate(map(len, docs))])
    layout = Layout(name, dtype, (50256,), (50256,), (), "cl100k_base")
    written = []
    for flat_run in (True, False):
        folder = tmp_path / str(flat_run)
        folder.mkdir()
        with shard_format(name)(str(folder), 0, layout) as shard:
            if flat_run:
                shard.add_flat(memoryview(flat), offsets)
                shard.add_flat(flat[3:], array.array("q", [0, 0, 2, 42]))  # the buffer reused
                shard.add_flat(flat, offsets)  # and grown
            else:
                shard.add_documents(docs + docs[1:] + docs)
        written.append({p.name: p.read_bytes() for p in folder.iterdir()})
    assert written[0] == written[1]


def test_the_native_join_refuses_offsets_outside_its_ids() -> None:
    """``join_documents`` reads only inside the ids and writes only inside its buffer."""
    from streamcodec.corpus import shards

    join = shards._native_join()
    if join is None:
        pytest.skip("the corpus tool's native helpers are not built")
    ids, out = array.array("I", [1, 2, 3]), bytearray(64)
    assert join(ids, array.array("q", [0, 1, 3]), 4, b"", b"\xff" * 4, out) == 20
    assert bytes(out[:20]) == array.array("I", [1, 0xFFFFFFFF, 2, 3, 0xFFFFFFFF]).tobytes()
    for bad in ([0, 4], [2, 1], [-1, 2]):
        with pytest.raises(ValueError, match="outside the ids"):
            join(ids, array.array("q", bad), 4, b"", b"", out)
    with pytest.raises(ValueError, match="do not fit"):
        join(ids, array.array("q", [0, 3]), 4, b"", b"", bytearray(11))


@pytest.mark.parametrize("name", list(FORMATS))
def test_documents_as_one_run_of_ids_without_numpy_are_written_alike(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``add_flat`` without numpy cuts the run into documents: the same files."""
    from streamcodec.corpus.shards import Layout
    from streamcodec.corpus.writers import dtype_for, shard_format

    docs = [[1, 2, 3], [], [50000, 7]]
    flat = array.array("I", [i for doc in docs for i in doc])
    offsets = array.array("q", [0, 3, 3, 5])
    layout = Layout(name, dtype_for(name, 50257), (50256,), (50256,), ("id",), "r50k_base")
    written = []
    for numpy in (True, False):
        if not numpy:
            monkeypatch.setitem(sys.modules, "numpy", None)
        folder = tmp_path / str(numpy)
        folder.mkdir()
        with shard_format(name)(str(folder), 0, layout) as shard:
            shard.add_flat(flat, offsets, [{"id": 1}, None, {"id": 3}])
        monkeypatch.undo()
        written.append({p.name: p.read_bytes() for p in folder.iterdir()})
    assert written[0] == written[1]
