"""The corpus tool (issue 21): shards read back by numpy's own reader, exact, deterministic.

Every shard is read with ``numpy.load(path, mmap_mode="r")``; each document's slice must be
tiktoken's ``encode_ordinary`` of the document plus the separator.
"""

from __future__ import annotations

import errno
import gzip
import itertools
import json
import lzma
import os
import random
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import streamcodec
from streamcodec.corpus import check_corpus, read_documents, tokenize
from streamcodec.corpus import job as job_module
from streamcodec.corpus import tasks as tasks_module
from streamcodec.corpus.check import CorpusCheckError
from streamcodec.corpus.shards import Layout, TokenShard
from streamcodec.corpus.writers import dtype_for, shard_format
from streamcodec.registry import SPECS
from tests.conftest import tiktoken_twin

ENC = streamcodec.get_encoding("cl100k_base")
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def stdlib_documents(n: int, seed: int) -> list[Path]:
    """``n`` Python sources and docs of the standard library, drawn at random (seeded)."""
    paths = sorted(p for p in STDLIB.glob("*.py") if p.stat().st_size < 200_000)
    return random.Random(seed).sample(paths, n)


def shard_documents(out: Path) -> list[np.ndarray]:
    """Each document's slice, separator included, read with numpy's own reader."""
    manifest = json.loads((out / "manifest.json").read_text())
    docs = []
    for entry in manifest["shards"]:
        ids = np.load(out / entry["files"][0]["name"], mmap_mode="r")
        offsets = np.load(out / entry["files"][1]["name"], mmap_mode="r")
        assert ids.dtype == np.dtype(manifest["layout"]["dtype"]) and offsets.dtype == np.int64
        docs += [ids[a:b] for a, b in itertools.pairwise(offsets)]
    return docs


def folder_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "manifest.json"}


def test_random_stdlib_documents_are_tiktokens_encode_ordinary_plus_separator(
    tmp_path: Path,
) -> None:
    paths = stdlib_documents(40, seed=21)
    tokenize(paths, tmp_path / "out", shard_bytes=100_000, jobs=2, special_as_text=True)
    twin = tiktoken_twin(ENC)
    docs = shard_documents(tmp_path / "out")
    assert len(docs) == len(paths)
    for path, ids in zip(paths, docs, strict=True):
        text = path.read_text(encoding="utf-8")
        assert ids.tolist() == [*twin.encode_ordinary(text), ENC.eot_token], path
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [d[:-1].tolist() for d in docs]


@pytest.fixture
def mixed(tmp_path: Path) -> list[Path]:
    """Plain text, JSON Lines (plain and compressed), Parquet, a separator-split file."""
    import pyarrow
    import pyarrow.parquet
    import zstandard

    texts = [p.read_text(encoding="utf-8") for p in stdlib_documents(12, seed=5)]
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text(texts[0], encoding="utf-8")
    lines = "".join(json.dumps({"id": i, "text": t[:3000]}) + "\n" for i, t in enumerate(texts))
    (folder / "b.jsonl").write_text(lines, encoding="utf-8")
    (folder / "c.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    (folder / "d.txt.xz").write_bytes(lzma.compress(texts[1].encode()))
    (folder / "e.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines.encode()))
    table = pyarrow.table({"text": [t[:2000] for t in texts], "n": list(range(len(texts)))})
    pyarrow.parquet.write_table(table, folder / "f.parquet", row_group_size=4)
    (folder / "g.md").write_text("\n\n".join(t[:500] for t in texts), encoding="utf-8")
    return sorted(folder.iterdir())


def test_every_kind_of_input_and_the_same_bytes_for_any_jobs(
    mixed: list[Path], tmp_path: Path
) -> None:
    options = {"shard_bytes": 8000, "separator": None, "special_as_text": True}
    one = tokenize([mixed[0].parent], tmp_path / "one", jobs=1, **options)  # type: ignore[arg-type]
    two = tokenize([str(mixed[0].parent / "*")], tmp_path / "two", jobs=2, **options)  # type: ignore[arg-type]
    assert folder_bytes(tmp_path / "one") == folder_bytes(tmp_path / "two")
    assert one["shards"] == two["shards"] and len(one["shards"]) > 5
    texts = [p.read_text(encoding="utf-8") for p in stdlib_documents(12, seed=5)]
    expected = [texts[0]]
    expected += [t[:3000] for t in texts] * 2  # b.jsonl, c.jsonl.gz
    expected += [texts[1]] + [t[:3000] for t in texts] + [t[:2000] for t in texts]
    expected += ["\n\n".join(t[:500] for t in texts)]  # g.md: one document without --separator
    docs = [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "one")]
    assert docs == expected
    tokenize([mixed[-1]], tmp_path / "split", separator="\n\n", special_as_text=True)
    split = [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "split")]
    assert split == "\n\n".join(t[:500] for t in texts).split("\n\n") and len(split) > 12
    assert "shards" in check_corpus(tmp_path / "one" / "manifest.json", text=50)


def test_a_json_lines_file_cut_anywhere_gives_each_line_once(tmp_path: Path) -> None:
    lines = [json.dumps({"text": "é" * random.Random(i).randrange(0, 90)}) for i in range(120)]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    for shard_bytes in (700, 10**6):
        out = tmp_path / f"out{shard_bytes}"
        tokenize([path], out, shard_bytes=shard_bytes, separator_token=None)
        docs = [ENC.decode(ids.tolist()) for ids in read_documents(out)]
        assert docs == [json.loads(line)["text"] for line in lines], shard_bytes


def test_the_smallest_type_that_holds_every_id_and_never_an_overflow(tmp_path: Path) -> None:
    assert dtype_for("streamcodec", 65536) == "uint16"
    assert dtype_for("streamcodec", 65537) == "uint32"
    assert dtype_for("streamcodec", ENC.n_vocab) == "uint32"
    writer = shard_format("streamcodec")
    with pytest.raises(OverflowError), writer(str(tmp_path), 0, Layout("x", "uint16")) as shard:
        shard.add([65536])
    assert list(tmp_path.iterdir()) == []  # nothing half-written
    small = streamcodec.get_encoding("streamcodec_py4k")
    (tmp_path / "a.txt").write_text("def f(x):\n    return x\n")
    manifest = tokenize([tmp_path / "a.txt"], tmp_path / "out", encoding=small)
    assert manifest["layout"]["dtype"] == "uint16"
    [ids] = shard_documents(tmp_path / "out")
    assert ids.dtype == np.uint16 and ids.tolist() == [
        *small.encode("def f(x):\n    return x\n"),
        small.eot_token,
    ]


def test_the_separator_token_none_or_named(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "b.txt").write_text("two")
    inputs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    tokenize(inputs, tmp_path / "none", separator_token=None)
    assert [d.tolist() for d in shard_documents(tmp_path / "none")] == [[606], [20375]]
    tokenize(inputs, tmp_path / "fim", separator_token="<|fim_middle|>")
    fim = ENC.special_tokens["<|fim_middle|>"]
    assert [d.tolist() for d in shard_documents(tmp_path / "fim")] == [[606, fim], [20375, fim]]
    with pytest.raises(ValueError, match=r"no special token '<nope>' for --eos.*name one with"):
        tokenize(inputs, tmp_path / "bad", separator_token="<nope>")


def test_a_large_document_is_streamed_to_the_same_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in stdlib_documents(5, seed=1))
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    tokenize([tmp_path / "big.txt"], tmp_path / "whole")
    monkeypatch.setattr(tasks_module, "LARGE_DOCUMENT", 1000)
    tokenize([tmp_path / "big.txt"], tmp_path / "streamed", jobs=2)
    assert folder_bytes(tmp_path / "whole") == folder_bytes(tmp_path / "streamed")


# ---------------------------------------------------------------------- bad input


def test_invalid_utf8_is_named_with_its_byte_offset_and_the_flag(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"good text\xff more")
    with pytest.raises(
        ValueError, match=r"bad.txt: invalid UTF-8 at byte offset 9 .*--errors replace"
    ):
        tokenize([tmp_path / "bad.txt"], tmp_path / "out")
    (tmp_path / "bad.jsonl").write_bytes(b'{"text": "a"}\n{"text": "\xc3("}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl: invalid UTF-8 at byte offset 24 "):
        tokenize([tmp_path / "bad.jsonl"], tmp_path / "out", restart=True)
    tokenize([tmp_path / "bad.txt"], tmp_path / "ok", errors="replace")
    [ids] = read_documents(tmp_path / "ok")
    assert ENC.decode(ids.tolist()) == "good text\ufffd more"


def test_a_json_line_without_the_field_is_named_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "a"}\n\n{"body": "b"}\n')
    with pytest.raises(ValueError, match=r"a.jsonl:3: no field 'text' .*has: body.*--field"):
        tokenize([tmp_path / "a.jsonl"], tmp_path / "out", shard_bytes=16)
    (tmp_path / "b.jsonl").write_text('{"text": "a"}\nnot json\n')
    with pytest.raises(ValueError, match=r"b.jsonl:2: not a JSON line"):
        tokenize([tmp_path / "b.jsonl"], tmp_path / "out", restart=True)
    (tmp_path / "c.jsonl").write_text('{"text": "a"}\n{"text": "cut\n')  # json's "...at"
    with pytest.raises(
        ValueError, match=r"c.jsonl:2: not a JSON line \(Invalid control character at column 14\)$"
    ):
        tokenize([tmp_path / "c.jsonl"], tmp_path / "out", restart=True)


def test_an_unreadable_parquet_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ValueError, match=r"bad.parquet: not a readable Parquet file"):
        tokenize([tmp_path / "bad.parquet"], tmp_path / "out")


def test_special_tokens_in_documents_are_refused_unless_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("héllo <|endoftext|> bye")
    with pytest.raises(
        ValueError, match=r"a.txt at byte offset 7: .*'<\|endoftext\|>'.*--special-as-text"
    ):
        tokenize([tmp_path / "a.txt"], tmp_path / "out")
    tokenize([tmp_path / "a.txt"], tmp_path / "out", special_as_text=True, restart=True)
    [ids] = read_documents(tmp_path / "out")
    assert ids.tolist() == ENC.encode_ordinary("héllo <|endoftext|> bye")


def test_zstandard_missing_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(
        ImportError, match=r"a.txt.zst: reading .zst needs zstandard: pip install zstandard"
    ):
        tokenize([tmp_path / "a.txt.zst"], tmp_path / "out")


# ---------------------------------------------------------------------- resuming


def test_a_full_disk_leaves_finished_shards_and_a_manifest_that_resumes(
    mixed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"shard_bytes": 20_000, "special_as_text": True}
    tokenize(mixed, tmp_path / "clean", **options)  # type: ignore[arg-type]
    original = TokenShard._write

    def full_on_shard_3(self: TokenShard, ids: Any) -> None:
        if self.paths[0].endswith("shard_00003.npy"):
            raise OSError(errno.ENOSPC, "No space left on device", self.paths[0])
        original(self, ids)

    monkeypatch.setattr(TokenShard, "_write", full_on_shard_3)
    with pytest.raises(OSError, match="No space left"):
        tokenize(mixed, tmp_path / "out", jobs=2, **options)  # type: ignore[arg-type]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [e["index"] for e in manifest["shards"]] == [0, 1, 2] and not manifest["complete"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "manifest.json", *(f"shard_0000{i}{k}.npy" for i in range(3) for k in ("", ".offsets"))
    ]  # fmt: skip
    monkeypatch.setattr(TokenShard, "_write", original)
    made = []
    monkeypatch.setattr(
        job_module,
        "shard_format",
        lambda f: lambda d, i, t: made.append(i) or shard_format(f)(d, i, t),
    )
    tokenize(mixed, tmp_path / "out", **options)  # type: ignore[arg-type]
    assert made[0] == 3  # the finished shards were kept
    assert folder_bytes(tmp_path / "out") == folder_bytes(tmp_path / "clean")


def test_another_job_in_the_folder_is_refused_unless_restart(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    tokenize([tmp_path / "a.txt"], tmp_path / "out")
    with pytest.raises(
        ValueError,
        match=r"another job \(the encoding \(cl100k_base, now streamcodec_py4k\) changed\); "
        "pass --restart",
    ):
        tokenize([tmp_path / "a.txt"], tmp_path / "out", encoding="streamcodec_py4k")
    (tmp_path / "a.txt").write_text("two!")
    with pytest.raises(ValueError, match=r"a.txt changed"):
        tokenize([tmp_path / "a.txt"], tmp_path / "out")
    tokenize([tmp_path / "a.txt"], tmp_path / "out", restart=True)
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [ENC.encode("two!")]


def test_restart_removes_another_jobs_shards_and_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    # Another job's shards are moved aside and removed on a thread while the run goes on.
    olds = [tmp_path / f"{n}.txt" for n in range(3)]
    for path in olds:
        path.write_text("one " * 3000)
    tokenize(olds, tmp_path / "out", shard_bytes=4000)
    assert len(list((tmp_path / "out").glob("shard_*.npy"))) == 6  # ids and offsets of 3
    (tmp_path / "b.txt").write_text("two")
    tokenize([tmp_path / "b.txt"], tmp_path / "out", restart=True, jobs=2)
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["manifest.json", "shard_00000.npy", "shard_00000.offsets.npy"]
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [ENC.encode("two")]


def test_a_slow_first_save_never_overwrites_a_shard_listed_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's first manifest is saved on a thread: a shard finished meanwhile is listed
    # only after it, so the manifest on disk ends listing every shard.
    module = sys.modules["streamcodec.corpus.tokenize"]  # the package's name is the function
    saved = module.save_manifest
    calls: list[int] = []

    def save(out: str, manifest: dict[str, Any]) -> None:
        first = not calls
        calls.append(-1)
        if first:
            time.sleep(0.3)  # the shards are written meanwhile
        calls[calls.index(-1)] = len(manifest["shards"])  # in the order saved
        saved(out, manifest)

    monkeypatch.setattr(module, "save_manifest", save)
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("one two")
    tokenize([tmp_path / "a.txt", tmp_path / "b.txt"], tmp_path / "out", shard_bytes=4)
    assert calls == [0, 1, 2]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["complete"] and len(manifest["shards"]) == 2


def test_a_failed_first_save_is_raised_and_another_jobs_shards_still_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("one")
    tokenize([tmp_path / "a.txt"], tmp_path / "out")
    module = sys.modules["streamcodec.corpus.tokenize"]

    def save(out: str, manifest: dict[str, Any]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", out)

    monkeypatch.setattr(module, "save_manifest", save)
    with pytest.raises(OSError, match="No space left"):
        tokenize([tmp_path / "a.txt"], tmp_path / "out", restart=True, eos=None)
    assert list((tmp_path / "out").iterdir()) == []  # no manifest listing the shards gone


def test_shards_of_the_engines_id_type_are_written_without_numpy(tmp_path: Path) -> None:
    # Importing numpy (0.08-0.28 s) on the writer thread held up every command's first shard.
    (tmp_path / "a.jsonl").write_text('{"text": "one"}\n{"text": "two"}\n')
    code = (
        "import sys; from streamcodec.corpus import tokenize; "
        f"tokenize([{str(tmp_path / 'a.jsonl')!r}], {str(tmp_path / 'out')!r}, jobs=2); "
        "print('numpy' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(streamcodec.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "False", done.stderr
    assert [d.tolist() for d in read_documents(tmp_path / "out")] == [
        ENC.encode("one"),
        ENC.encode("two"),
    ]


def test_check_corpus_finds_a_changed_shard_and_a_changed_input(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world")
    tokenize([tmp_path / "a.txt"], tmp_path / "out")
    manifest = tmp_path / "out" / "manifest.json"
    assert check_corpus(manifest, text=5) == f"{manifest}: 1 shards, 1 documents, 3 tokens"
    assert check_corpus(tmp_path / "out") == f"{manifest}: 1 shards, 1 documents, 3 tokens"
    (tmp_path / "a.txt").write_text("hello World")
    with pytest.raises(CorpusCheckError, match=r"a\.txt: the input changed since the corpus was"):
        check_corpus(manifest, text=5)
    shard = tmp_path / "out" / "shard_00000.npy"
    data = bytearray(shard.read_bytes())
    data[-5] ^= 1
    shard.write_bytes(bytes(data))
    with pytest.raises(CorpusCheckError, match=r"shard_00000\.npy: its SHA-256"):
        check_corpus(manifest)
    os.unlink(shard)
    with pytest.raises(CorpusCheckError, match=r"shard_00000\.npy: the file is missing"):
        check_corpus(manifest)


def test_the_output_folder_is_never_an_input(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    for _ in range(2):  # the second run's glob and walk reach tokens/ and its manifest
        tokenize([str(tmp_path / "**"), tmp_path], tmp_path / "tokens")
    manifest = json.loads((tmp_path / "tokens" / "manifest.json").read_text())
    assert [i["path"] for i in manifest["inputs"]] == ["../a.txt"] * 2  # as tokens/ sees it


def test_progress_counts_every_input_byte_and_token(mixed: list[Path], tmp_path: Path) -> None:
    seen = [0, 0]

    def progress(done: int, tokens: int) -> None:
        seen[0] += done
        seen[1] += tokens

    manifest = tokenize(mixed, tmp_path / "out", shard_bytes=8000, jobs=2, special_as_text=True,
                        progress=progress)  # fmt: skip
    assert seen == [
        sum(p.stat().st_size for p in mixed),
        sum(e["tokens"] for e in manifest["shards"]),
    ]


def test_temporary_files_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    """Regression: a kill while the manifest was written left ``.manifest.json.*.tmp``."""
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "out").mkdir()
    left = [".manifest.json.k1ll3d.tmp", ".shard_00000.npy.k1ll3d.tmp"]
    for name in left:
        (tmp_path / "out" / name).write_bytes(b"half")
    tokenize([tmp_path / "a.txt"], tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "manifest.json", "shard_00000.npy", "shard_00000.offsets.npy"
    ]  # fmt: skip


def test_separators_across_read_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamcodec.corpus import inputs

    rng = random.Random(3)
    text = "".join(rng.choice(["a", "é", "\n", "--", "-"]) for _ in range(3000)) + "x"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    for block in (1, 2, 3, 7, 1 << 20):
        monkeypatch.setattr(inputs, "CHUNK_SIZE", block)
        out = tmp_path / f"out{block}"
        tokenize([tmp_path / "a.txt"], out, separator="\n--\n", separator_token=None)
        assert [ENC.decode(ids.tolist()) for ids in read_documents(out)] == text.split("\n--\n")


def test_the_encoding_record_is_the_one_earlier_manifests_hold() -> None:
    """A manifest's encoding SHA-256 decides whether a rerun resumes it: made faster (no sort
    of a vocabulary already in rank order), it must stay the same bytes, in any order."""
    import types

    from streamcodec.corpus.manifest import encoding_record, hashed_record

    record = encoding_record(streamcodec.get_encoding("cl100k_base"))
    assert record["sha256"] == "57d304fe8399bc0e6be53f379b2e22f5433ec6136a26be82994b8338446f8fc2"
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    shuffled = dict(reversed(ranks.items()))
    assert list(shuffled) != list(ranks)
    fields = {"name": "toy", "n_vocab": 5, "pat_str": r"\w+", "special_tokens": {"<e>": 4}}
    ordered = hashed_record(types.SimpleNamespace(mergeable_ranks=ranks, **fields))  # type: ignore[arg-type]
    assert hashed_record(types.SimpleNamespace(mergeable_ranks=shuffled, **fields)) == ordered  # type: ignore[arg-type]


@pytest.mark.parametrize("name", list(SPECS))
def test_a_named_encodings_record_is_its_digest_computed(name: str) -> None:
    """The named encodings' digests are written down (hashing 2.3 MB of ranks was a third of
    the command's start): each equals the one computed from the encoding, which a rerun of an
    earlier run's manifest compares; an encoding of the same name not made by get_encoding
    has its own computed."""
    from streamcodec.corpus.manifest import NAMED_SHA256, encoding_record, hashed_record

    enc = streamcodec.get_encoding(name)
    assert encoding_record(enc) == hashed_record(enc)
    assert encoding_record(enc)["sha256"] == NAMED_SHA256[name]
    other = streamcodec.Encoding(
        name, pat_str=r"\S+|\s+", mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )  # fmt: skip
    assert encoding_record(other) == hashed_record(other) != encoding_record(enc)
