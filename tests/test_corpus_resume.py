"""Resume and read-back that trust nothing they can check (issue 30 item 3-4, issue 31).

A rerun checks every listed shard's files on disk (sizes always, SHA-256s with ``verify``) and
makes again what is missing or short; inputs added after the old ones are planned after them,
byte-identical to a clean run; a manifest of another shape names the field; ``read_documents``
names a short shard; a lone surrogate from a JSON escape is bad text; ``check-corpus`` checks
the encoding's hash and streams documents in bounded memory.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import streamcodec
from streamcodec.cli import main
from streamcodec.corpus import check_corpus, read_documents, tokenize
from streamcodec.corpus.check import CorpusCheckError
from streamcodec.corpus.manifest import load_manifest

ENC = streamcodec.get_encoding("cl100k_base")


def lines(tag: str, n: int) -> str:
    records = ({"text": f"{tag} {i} " + "word " * (i % 40)} for i in range(n))
    return "".join(json.dumps(record) + "\n" for record in records)


def corpus_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "manifest.json"}


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    paths = []
    for name, n in [("a", 900), ("b", 700), ("c", 500)]:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(lines(name, n))
        paths.append(path)
    return paths


def _run(paths: list[Path], out: Path, **options: Any) -> dict[str, Any]:
    return tokenize(paths, out, shard_bytes=20_000, **options)


@pytest.mark.parametrize("damage", ["delete", "truncate", "offsets"])
def test_a_deleted_or_short_shard_is_made_again_byte_identical(
    tmp_path: Path, inputs: list[Path], damage: str
) -> None:
    _run(inputs, tmp_path / "clean")
    _run(inputs, tmp_path / "out")
    name = "shard_00002.offsets.npy" if damage == "offsets" else "shard_00002.npy"
    shard = tmp_path / "out" / name
    if damage == "delete":
        shard.unlink()
    else:
        shard.write_bytes(shard.read_bytes()[:-8])
    with pytest.raises(ValueError, match=rf"{shard.name}: "):
        list(read_documents(tmp_path / "out"))
    untouched = (tmp_path / "out" / "shard_00001.npy").stat().st_mtime_ns
    manifest = _run(inputs, tmp_path / "out")
    assert manifest["complete"]
    assert corpus_files(tmp_path / "out") == corpus_files(tmp_path / "clean")
    assert (tmp_path / "out" / "shard_00001.npy").stat().st_mtime_ns == untouched


def test_a_flipped_byte_is_found_with_verify(tmp_path: Path, inputs: list[Path]) -> None:
    _run(inputs, tmp_path / "clean")
    _run(inputs, tmp_path / "out")
    shard = tmp_path / "out" / "shard_00001.npy"
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0x40
    shard.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"shard_00001\.npy: its SHA-256 is not the manifest's"):
        list(read_documents(tmp_path / "out", verify=True))
    _run(inputs, tmp_path / "out", verify=True)
    assert corpus_files(tmp_path / "out") == corpus_files(tmp_path / "clean")


def test_inputs_added_are_planned_after_without_restart(tmp_path: Path, inputs: list[Path]) -> None:
    _run(inputs, tmp_path / "clean")
    first = _run(inputs[:2], tmp_path / "out")
    full = [e["index"] for e in first["shards"]][:-1]  # the last one was not full
    times = {i: (tmp_path / "out" / f"shard_{i:05d}.npy").stat().st_mtime_ns for i in full}
    manifest = _run(inputs, tmp_path / "out")
    assert manifest["complete"]
    assert corpus_files(tmp_path / "out") == corpus_files(tmp_path / "clean")
    assert (
        json.loads((tmp_path / "out" / "manifest.json").read_text())["plan"]
        == json.loads((tmp_path / "clean" / "manifest.json").read_text())["plan"]
    )
    for i, mtime in times.items():  # the finished full shards were not written again
        assert (tmp_path / "out" / f"shard_{i:05d}.npy").stat().st_mtime_ns == mtime


def test_a_changed_or_gone_input_is_named(tmp_path: Path, inputs: list[Path]) -> None:
    _run(inputs, tmp_path / "out")
    with open(inputs[1], "a") as f:
        f.write(lines("more", 1))
    with pytest.raises(ValueError, match=r"the inputs \(\.\./b\.jsonl changed: size or time\)"):
        _run(inputs, tmp_path / "out")
    with pytest.raises(ValueError, match=r"the inputs \(\.\./b\.jsonl is gone\)"):
        _run([inputs[0], inputs[2]], tmp_path / "out")


def test_the_manifest_records_input_paths_relative_to_itself(
    tmp_path: Path, inputs: list[Path]
) -> None:
    manifest = _run(inputs, tmp_path / "out")
    assert [i["path"] for i in manifest["inputs"]] == ["../a.jsonl", "../b.jsonl", "../c.jsonl"]
    assert {s["path"] for e in manifest["shards"] for s in e["sources"]} <= {
        "../a.jsonl", "../b.jsonl", "../c.jsonl"
    }  # fmt: skip
    assert check_corpus(tmp_path / "out", text=50).endswith("tokens")


def _every_field(value: Any, where: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path to every key and list item of a manifest."""
    found = [where] if where else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _every_field(inner, (*where, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += _every_field(inner, (*where, i))
    return found


def test_every_manifest_field_missing_or_of_the_wrong_type_is_named(
    tmp_path: Path, inputs: list[Path]
) -> None:
    out = tmp_path / "out"
    good = _run(inputs[:1], out)
    checked = 0
    for path in _every_field(good):
        source_path = path[-1] == "path" and path[0] in ("plan", "shards")
        if not isinstance(path[-1], str) or path[:1] == ("options",) or source_path:
            continue  # options are compared as a whole; list items are checked by their keys
        for wrong in ("missing", [], "7", -1, True):
            manifest = json.loads(json.dumps(good))
            parent = manifest
            for key in path[:-1]:
                parent = parent[key]
            if wrong == "missing":
                del parent[path[-1]]
            elif type(parent[path[-1]]) is type(wrong) or (wrong == -1 and path[-1] == "end"):
                continue
            else:
                parent[path[-1]] = wrong
            if path == ("format",):
                continue
            (out / "manifest.json").write_text(json.dumps(manifest))
            field = ".".join(f"[{k}]" if isinstance(k, int) else k for k in path).replace(".[", "[")
            message = r"manifest\.json: the field " + re.escape(field) + " "
            with pytest.raises(ValueError, match=message):
                load_manifest(str(out))
            checked += 1
    assert checked > 60


def test_a_manifest_of_another_shape_or_a_repeated_shard_is_refused(
    tmp_path: Path, inputs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    good = _run(inputs, out)
    (out / "manifest.json").write_text("[1, 2]")
    assert main(["check-corpus", str(out)]) == 1
    assert "manifest.json: not a manifest of streamcodec-corpus/3" in capsys.readouterr().err
    twice = {**good, "shards": [*good["shards"], good["shards"][0]]}
    (out / "manifest.json").write_text(json.dumps(twice))
    with pytest.raises(ValueError, match=r"shards\[\d+\] lists shard 0 again"):
        list(read_documents(out))
    outside = copy.deepcopy(good)
    outside["shards"][0]["files"][0]["name"] = "../a.jsonl"
    (out / "manifest.json").write_text(json.dumps(outside))
    with pytest.raises(ValueError, match=r"names the file '\.\./a\.jsonl', not a file of this"):
        check_corpus(out)
    for header in (10**18, 2**63):  # a bound on what a check reads: named, no MemoryError
        past = copy.deepcopy(good)
        past["shards"][0]["files"][0]["header_bytes"] = header
        (out / "manifest.json").write_text(json.dumps(past))
        with pytest.raises(
            ValueError, match=rf"shards\[0\]\.files\[0\]\.header_bytes is {header}, more"
        ):
            check_corpus(out)


def test_defaults_spelled_out_and_a_failed_first_run_block_nothing(
    tmp_path: Path, inputs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out")
    assert main(["tokenize-corpus", str(inputs[0]), "-o", out, "-q", "--field", "nope"]) == 1
    assert "no field 'nope'" in capsys.readouterr().err
    assert main(["tokenize-corpus", str(inputs[0]), "-o", out, "-q"]) == 0
    spelled = ["--field", "text", "--errors", "strict", "--shard-size", "64M", "--jobs", "1"]
    assert main(["tokenize-corpus", str(inputs[0]), "-o", out, "-q", *spelled]) == 0, (
        capsys.readouterr().err
    )


def test_a_lone_surrogate_is_refused_under_strict_and_replaced_under_replace(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.jsonl"
    bad, pair = '{"text": "bad \\ud800 here"}', '{"text": "pair \\ud83d\\ude00"}'
    path.write_text(f'{{"text": "fine"}}\n{bad}\n{pair}\n')
    with pytest.raises(ValueError, match=r"a\.jsonl:2: the field 'text' holds a lone surrogate"):
        tokenize([path], tmp_path / "out")
    tokenize([path], tmp_path / "out", errors="replace")
    got = [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "out")]
    assert got == ["fine", "bad \ufffd here", "pair \U0001f600"]
    assert check_corpus(tmp_path / "out", text=3).endswith("tokens")


def test_check_corpus_checks_the_encodings_hash_not_its_size(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world, again and again")
    other = streamcodec.Encoding(
        name="cl100k_base", pat_str=r"\S+|\s+", mergeable_ranks=ENC._mergeable_ranks,
        special_tokens=ENC._special_tokens,
    )  # fmt: skip
    tokenize([tmp_path / "a.txt"], tmp_path / "out", encoding=other)
    with pytest.raises(CorpusCheckError, match="cl100k_base here is not the encoding the corpus"):
        check_corpus(tmp_path / "out", text=1)


def test_the_encodings_record_is_made_once_per_encoding_and_each_its_own() -> None:
    from streamcodec.corpus.manifest import encoding_record

    first = encoding_record(ENC)
    first["sha256"] = "changed by the caller"
    again = encoding_record(ENC)
    assert again["sha256"] != first["sha256"]  # a new dict each call
    other = streamcodec.Encoding(
        name="cl100k_base", pat_str=r"\S+|\s+", mergeable_ranks=ENC._mergeable_ranks,
        special_tokens=ENC._special_tokens,
    )  # fmt: skip
    # same name and size, another pattern: another hash, though ENC's is cached
    assert encoding_record(other)["sha256"] != again["sha256"]
    assert {k: v for k, v in encoding_record(other).items() if k != "sha256"} == {
        k: v for k, v in again.items() if k != "sha256"
    }


_BOUNDED_CHECK = """
import resource, sys
import streamcodec
from streamcodec.corpus import check_corpus
streamcodec.get_encoding("cl100k_base").decode([0])  # its decoding table too: only the check counts
data = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmData"))
limit = data * 1024 + (96 << 20)  # the heap may grow 96 MB: mapped shards are not counted
resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
print(check_corpus(sys.argv[1], text=1))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA as Linux has it")
def test_check_corpus_text_streams_a_large_document(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    with open(path, "w") as f:
        for i in range(50):  # 50 MB in one document: it held 1.7 GB
            f.write(f"block {i} " + "the quick brown fox jumps over the lazy dog " * 23_800)
    tokenize([path], tmp_path / "out")
    env = {**os.environ, "PYTHONPATH": str(Path(streamcodec.__file__).parents[1])}
    check = [sys.executable, "-c", _BOUNDED_CHECK, str(tmp_path / "out")]
    done = subprocess.run(check, capture_output=True, text=True, env=env, timeout=300)
    assert os.path.getsize(path) > 50_000_000
    assert done.returncode == 0 and done.stdout.endswith("tokens\n"), done.stderr[-500:]
    mtime = os.stat(path).st_mtime_ns
    with open(path, "r+b") as f:  # the same size and time, one byte other: found
        f.seek(30_000_000)
        f.write(b"X")
    os.utime(path, ns=(mtime, mtime))
    with pytest.raises(CorpusCheckError, match="does not decode to the text of its input"):
        check_corpus(tmp_path / "out", text=1)


@pytest.mark.parametrize(
    ("option", "kinds"),
    [("--column", "JSON Lines"), ("--separator", "JSON Lines"), ("--field", "Parquet")],
)
def test_options_no_input_reads_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, kinds: str
) -> None:
    import pyarrow
    import pyarrow.parquet

    if kinds == "Parquet":
        path = tmp_path / "a.parquet"
        pyarrow.parquet.write_table(pyarrow.table({"text": ["one"]}), path)
    else:
        path = tmp_path / "a.jsonl"
        path.write_text(lines("a", 3))
    args = ["tokenize-corpus", str(path), "-o", str(tmp_path / "out"), "-q", option, "x"]
    assert main(args) == 1
    wanted = {"--column": "Parquet", "--separator": "plain-text", "--field": "JSON Lines"}[option]
    assert capsys.readouterr().err == (
        f"streamcodec: error: {option} applies to {wanted} inputs and none is one (the inputs "
        f"are {kinds}): leave it out\n"
    )


def test_reading_shards_back_without_numpy_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("hello")
    tokenize(tmp_path / "a.txt", tmp_path / "out")
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert main(["check-corpus", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        "streamcodec: error: check-corpus reads shards with numpy: pip install "
        "'streamcodec[corpus]' (or numpy)\n"
    )
    with pytest.raises(ImportError, match="read_documents reads shards with numpy"):
        next(read_documents(tmp_path / "out"))


_GENERATOR = """
import sys
import datasets
import streamcodec.corpus

def documents():
    for ids in streamcodec.corpus.read_documents(sys.argv[1]):
        yield {"ids": ids.tolist()}

print(datasets.Dataset.from_generator(documents, cache_dir=sys.argv[2])[0]["ids"])
"""


def test_read_documents_in_a_datasets_generator_from_a_source_tree(tmp_path: Path) -> None:
    """datasets hashes the generator with dill, which pickles a module by value when it is not
    in site-packages (an editable install, or this source tree): a thread-local and a Struct
    at module level made that fail."""
    pytest.importorskip("datasets")
    (tmp_path / "a.txt").write_text("hello world")
    tokenize(tmp_path / "a.txt", tmp_path / "out")
    env = {**os.environ, "PYTHONPATH": str(Path(streamcodec.__file__).parents[1])}
    script = [sys.executable, "-c", _GENERATOR, str(tmp_path / "out"), str(tmp_path / "cache")]
    done = subprocess.run(script, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "[15339, 1917]", done.stderr[
        -800:
    ]


@pytest.mark.parametrize("name", ["nanogpt", "llmc", "megatron", "datatrove", "parquet"])
def test_every_format_resumes_appended_and_damaged_byte_identical(
    tmp_path: Path, inputs: list[Path], name: str
) -> None:
    options: dict[str, Any] = {"encoding": "r50k_base", "format": name}
    _run(inputs, tmp_path / "clean", **options)
    _run(inputs[:2], tmp_path / "out", **options)
    _run(inputs, tmp_path / "out", **options)
    assert corpus_files(tmp_path / "out") == corpus_files(tmp_path / "clean")
    short = min(p for p in (tmp_path / "out").iterdir() if p.name.startswith("shard_00001"))
    short.write_bytes(short.read_bytes()[:-3])
    max(p for p in (tmp_path / "out").iterdir() if p.name.startswith("shard_00002")).unlink()
    assert _run(inputs, tmp_path / "out", **options)["complete"]
    assert corpus_files(tmp_path / "out") == corpus_files(tmp_path / "clean")


def test_a_lone_surrogate_in_a_kept_field_is_bad_text_too(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"text": "ok", "id": ["x\\ud800y"]}\n')
    with pytest.raises(ValueError, match=r"a\.jsonl:1: the field 'id' holds a lone surrogate"):
        tokenize([path], tmp_path / "out", keep=["id"])
    tokenize([path], tmp_path / "out", keep=["id"], errors="replace")
    kept = (tmp_path / "out" / "shard_00000.fields.jsonl").read_text(encoding="utf-8")
    assert json.loads(kept) == {"id": ["x\ufffdy"]}


@pytest.mark.parametrize("suffix", [".jsonl", ".txt", ".jsonl.gz"])
def test_an_input_rewritten_at_the_same_size_and_time_is_found_by_its_hash(
    tmp_path: Path, suffix: str
) -> None:
    import gzip

    data = lines("a", 900).encode()
    path = tmp_path / f"a{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    manifest = _run([path], tmp_path / "out")
    assert all(len(e["read_sha256"]) == len(e["sources"]) for e in manifest["shards"])
    info = path.stat()
    changed = bytearray(path.read_bytes())
    changed[len(changed) // 2] ^= 0x01  # a digit or letter one apart; in .gz, a bit of the stream
    path.write_bytes(bytes(changed))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # as `touch -r`, or a coarse clock
    assert _run([path], tmp_path / "out")["complete"]  # sizes and times only: not seen
    found = rf"a{re.escape(suffix)}: (its content is not what shard|changed since shard)"
    with pytest.raises(ValueError, match=found):
        _run([path], tmp_path / "out", verify=True)
    with pytest.raises(CorpusCheckError, match=found):
        check_corpus(tmp_path / "out", inputs=True)


def _as_format_2(out: Path) -> None:
    """The manifest in ``out`` rewritten as the previous format wrote it (streamcodec-corpus/2:
    each file's SHA-256 the whole file's, no header digests)."""
    from streamcodec.corpus.shards import file_digests

    manifest = json.loads((out / "manifest.json").read_text())
    manifest["format"] = "streamcodec-corpus/2"
    for entry in manifest["shards"]:
        entry["files"] = [
            {
                "name": r["name"],
                "bytes": r["bytes"],
                "sha256": file_digests(str(out / r["name"]))["sha256"],
            }
            for r in entry["files"]
        ]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))


@pytest.mark.parametrize("name", ["streamcodec", "llmc", "nanogpt"])
def test_a_manifest_of_the_previous_format_still_checks_and_resumes(
    tmp_path: Path, inputs: list[Path], name: str
) -> None:
    """A corpus made before its ids' header was hashed apart (streamcodec-corpus/2) checks,
    reads back verified, finds a changed byte, and resumes (inputs added, a shard damaged)
    byte-identical to a run of today, saved in today's format with the old shards' records."""
    options: dict[str, Any] = {"encoding": "r50k_base", "format": name}
    _run(inputs, tmp_path / "clean", **options)
    out = tmp_path / "out"
    _run(inputs[:2], out, **options)
    _as_format_2(out)
    old = json.loads((out / "manifest.json").read_text())
    manifest = load_manifest(str(out))
    assert manifest is not None and manifest["format"] == "streamcodec-corpus/3"
    assert {(r["header_bytes"], r["header_sha256"]) for e in manifest["shards"]
            for r in e["files"]} == {(0, None)}  # fmt: skip
    check_corpus(out, text=5, inputs=True)
    assert len(list(read_documents(out, verify=True))) == 900 + 700
    first = out / old["shards"][0]["files"][0]["name"]
    kept = first.read_bytes()
    first.write_bytes(kept[:-3] + bytes([kept[-3] ^ 0x40]) + kept[-2:])
    with pytest.raises(CorpusCheckError, match=f"{first.name}: its SHA-256 is not the manifest's"):
        check_corpus(out)
    first.write_bytes(kept)
    (out / old["shards"][1]["files"][0]["name"]).unlink()
    resumed = _run(inputs, out, **options, verify=True)
    assert resumed["complete"] and resumed["format"] == "streamcodec-corpus/3"
    assert corpus_files(out) == corpus_files(tmp_path / "clean")
    saved = json.loads((out / "manifest.json").read_text())["shards"]
    clean = json.loads((tmp_path / "clean" / "manifest.json").read_text())["shards"]
    upgraded = [[{**r, "header_bytes": 0, "header_sha256": None} for r in e["files"]]
                for e in old["shards"]]  # fmt: skip
    made = {1, len(old["shards"]) - 1, *range(len(old["shards"]), len(clean))}  # not full: again
    for i, entry in enumerate(saved):  # the kept shards listed as before, the others as today
        assert entry["files"] == (clean[i]["files"] if i in made else upgraded[i])
    assert any(r["header_bytes"] for e in saved for r in e["files"]) == (name != "nanogpt")
    check_corpus(out, text=5)
