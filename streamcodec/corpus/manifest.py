"""``OUT_DIR/manifest.json``: what the corpus was made from, and each shard finished so far.

The manifest is rewritten whole (atomically) after every shard, so it never lists a shard that
is not on disk whole. It holds the *job* (encoding name and hash, the reading options, the inputs
with their sizes and times, the plan of every shard's sources) and, for each finished shard, its
files (each with its size and SHA-256s), token and document counts and the streamcodec version.
A rerun compares the job it would do with the manifest's: the same job resumes (the finished
shards whose files are on disk at their sizes are kept, the others made again), inputs added
after the old ones are planned after them, and another job is refused with what changed. A
manifest is read as untrusted: one of another shape is refused naming the field. A manifest of
the previous format (``streamcodec-corpus/2``, whose files have no header digests: each
``sha256`` the whole file's) is read as this one with ``header_bytes`` 0, so its corpus still
checks and resumes (and is saved in this format by the run that resumes it).

    >>> job = {"encoding": {"name": "cl100k_base"}, "inputs": [], "plan": [], "options": {}}
    >>> changed(job, {**job, "encoding": {"name": "o200k_base"}})
    'the encoding (cl100k_base, now o200k_base)'
"""

from __future__ import annotations

import array
import hashlib
import itertools
import json
import operator
import os
import struct
import weakref
from typing import Any

from streamcodec.atomicfile import atomic_output
from streamcodec.corpus.files import regular_file
from streamcodec.corpus.shards import file_digests
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding

__all__ = [
    "FORMAT",
    "MANIFEST",
    "changed",
    "encoding_record",
    "kept_shards",
    "lists_shard",
    "load_manifest",
    "save_manifest",
    "shard_problem",
]

MANIFEST = "manifest.json"
# 2: any shard format, each file listed with its size; 3: an ids' file's header hashed apart
# (``header_bytes``, ``header_sha256``), so the ids are hashed as written (corpus/shards.py)
FORMAT = "streamcodec-corpus/3"
FORMAT_2 = "streamcodec-corpus/2"
JOB_KEYS = ("encoding", "options", "inputs", "plan")


# Each live Encoding's record, made once: hashing its vocabulary (20-40 ms for cl100k_base)
# was serial work at the start of every run; an Encoding does not change, so neither does it.
_RECORDS: weakref.WeakKeyDictionary[Encoding, dict[str, Any]] = weakref.WeakKeyDictionary()


def encoding_record(enc: Encoding) -> dict[str, Any]:
    """The encoding's name, size and a SHA-256 of everything that decides its ids (the ranks,
    the pattern, the special tokens); made once per :class:`~streamcodec.Encoding`, a new dict
    each call."""
    record = _RECORDS.get(enc)
    if record is None:
        record = _RECORDS[enc] = _hashed_record(enc)
    return dict(record)


# The digests of the named encodings as get_encoding makes them (their ranks are the shipped
# ones, zlib-checked, or a file checked against tiktoken's sha256, so the digest is fixed):
# hashing 2.3 MB of ranks, and making their dict, was a third of the command's start.
# tests/test_corpus.py computes each again.
NAMED_SHA256 = {
    "gpt2": "e4cd510970cb4f7468ea83985da8c758bd2a181878885ac48a54c078e4f2bf2d",
    "r50k_base": "e4cd510970cb4f7468ea83985da8c758bd2a181878885ac48a54c078e4f2bf2d",
    "p50k_base": "3ee5339cadbd919e884ed5d628192cd3c9e1412b2b40ccc69de8f3cee1f5b528",
    "p50k_edit": "6120ebe4110afb7aeb17e980a7bfd1e197ba0b627751551a74211630d5eb23aa",
    "cl100k_base": "57d304fe8399bc0e6be53f379b2e22f5433ec6136a26be82994b8338446f8fc2",
    "o200k_base": "7ac692385d3c3d7584227156ff83ebc4e85b487135562e4890b588c9cbc48f9f",
    "o200k_harmony": "28da11abf727da12c9036544f1ff40db38bb80d5bc6f0c7ea741dca503051681",
    "streamcodec_py4k": "9caf2ebe3ea10163bc75dac1a0c32c247daabb6754f47bce3532332259584f7c",
}


def _hashed_record(enc: Encoding) -> dict[str, Any]:
    if enc.recipe == (get_encoding, (enc.name,)) and enc.name in NAMED_SHA256:
        return {"name": enc.name, "sha256": NAMED_SHA256[enc.name], "n_vocab": enc.n_vocab}
    return hashed_record(enc)


def hashed_record(enc: Encoding) -> dict[str, Any]:
    """The record of any encoding, its digest computed (the definition ``NAMED_SHA256`` holds
    the results of)."""
    digest = hashlib.sha256(enc.pat_str.encode("utf-8", "surrogatepass") + b"\0")
    ranks = enc.mergeable_ranks
    tokens, order = list(ranks), list(ranks.values())
    # The tokens in rank order: a loaded vocabulary is already in it (checked in C, no sort:
    # the sort was 20-40 ms of every command's start); else sorted, ties in their order
    if not all(map(operator.le, order, itertools.islice(order, 1, None))):
        tokens = sorted(ranks, key=ranks.__getitem__)
        order = [ranks[token] for token in tokens]
    digest.update(array.array("Q", order).tobytes())
    digest.update(array.array("Q", map(len, tokens)).tobytes() + b"".join(tokens))
    for text, rank in sorted(enc.special_tokens.items()):
        digest.update(struct.pack("<Q", rank) + text.encode("utf-8", "surrogatepass") + b"\0")
    return {"name": enc.name, "sha256": digest.hexdigest(), "n_vocab": enc.n_vocab}


def lists_shard(out_dir: str, entry: dict[str, Any]) -> bool:
    """Whether the manifest in ``out_dir`` lists the shard of ``entry`` with its files."""
    try:
        manifest = load_manifest(out_dir)
    except (OSError, ValueError):
        return False
    return manifest is not None and any(
        e["index"] == entry["index"] and e["files"] == entry["files"] for e in manifest["shards"]
    )


def load_manifest(out_dir: str) -> dict[str, Any] | None:
    """The manifest in ``out_dir``, or None when there is none; ``ValueError`` naming the
    field for one of another shape (a key missing, a value of the wrong type, a shard listed
    twice or a file name that is not a plain name), never trusted."""
    path = os.path.join(out_dir, MANIFEST)
    try:
        regular_file(path)  # a FIFO would block the open
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a manifest ({exc}); pass --restart to start over") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in _SHAPES:
        raise ValueError(
            f"{path}: not a manifest of {FORMAT} (or {FORMAT_2}); pass --restart to start over"
        )
    problem = _shape_problem(manifest, _SHAPES[manifest["format"]], "")
    if problem is None and manifest["format"] == FORMAT_2:
        _from_format_2(manifest)
    problem = problem or _shards_problem(manifest)
    if problem is not None:
        raise ValueError(f"{path}: {problem}; pass --restart to start over")
    return manifest


def _from_format_2(manifest: dict[str, Any]) -> None:
    """A manifest of :data:`FORMAT_2` (its shape checked) as one of :data:`FORMAT`: each file
    hashed whole, so with no header."""
    for entry in manifest["shards"]:
        for record in entry["files"]:
            record.update(header_bytes=0, header_sha256=None)
    manifest["format"] = FORMAT


class _Count(int):
    """A whole number of at least 0 (a shape, never built)."""


class _Digest(str):
    """A SHA-256 in hex, or null (a shape, never built)."""


_FILE_2 = {"name": str, "bytes": _Count, "sha256": str}
_FILE = {**_FILE_2, "header_bytes": _Count, "header_sha256": _Digest}  # null: no header
_SOURCE = {"input": _Count, "path": str, "unit": str, "start": _Count, "end": int}
_ENCODING = {"name": str, "sha256": str, "n_vocab": _Count}


def _shape(file: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": str,
        "encoding": _ENCODING,
        "options": dict,
        "inputs": [{"path": str, "kind": str, "size": int, "mtime_ns": int}],  # size -1: stdin
        "plan": [[_SOURCE]],
        "shards": [{"index": _Count, "files": [file], "sources": [_SOURCE],
                    "read_sha256": [_Digest], "tokens": _Count, "documents": _Count,
                    "encoding": _ENCODING, "streamcodec_version": str}],
        "layout": {"format": str, "dtype": str, "bos": [_Count], "eos": [_Count],
                   "keep": [str]},
        "complete": bool,
    }  # fmt: skip


#: Each format's shape: the manifest's, of a type, a dict of keys, or a one-item list.
_SHAPES = {FORMAT: _shape(_FILE), FORMAT_2: _shape(_FILE_2)}
_NAMES = {bool: "true or false", int: "a whole number", _Count: "a whole number of at least 0",
          str: "text", dict: "an object", _Digest: "a SHA-256 or null"}  # fmt: skip


def _shape_problem(value: Any, shape: Any, where: str) -> str | None:
    """What in ``value`` is not of ``shape``, naming the field (``shards[2].files[0].bytes``)."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            what = f"the field {where}" if where else "the manifest"
            return f"{what} is {_kind(value)}, not an object"
        for key, inner in shape.items():
            field = f"{where}.{key}" if where else key
            if key not in value:
                return f"the field {field} is missing"
            if (problem := _shape_problem(value[key], inner, field)) is not None:
                return problem
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"the field {where} is {_kind(value)}, not a list"
        for i, item in enumerate(value):
            if (problem := _shape_problem(item, shape[0], f"{where}[{i}]")) is not None:
                return problem
        return None
    if shape is _Digest and (value is None or (isinstance(value, str) and len(value) == 64)):
        return None
    kind = int if shape is _Count else shape
    wrong = isinstance(value, bool) != (kind is bool) or not isinstance(value, kind)
    if wrong or (shape is _Count and value < 0):
        return f"the field {where} is {json.dumps(value)[:40]}, not {_NAMES[shape]}"
    return None


def _kind(value: Any) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "text"}
    return kinds.get(type(value)) or json.dumps(value)


def _shards_problem(manifest: dict[str, Any]) -> str | None:
    """A shard listed twice, outside the plan, or with a file name that is not a plain name
    in the folder (a manifest may not point elsewhere)."""
    seen: set[int] = set()
    for i, entry in enumerate(manifest["shards"]):
        if entry["index"] in seen:
            return f"shards[{i}] lists shard {entry['index']} again"
        if entry["index"] >= len(manifest["plan"]):
            return f"shards[{i}] is shard {entry['index']}, past the plan's {len(manifest['plan'])}"
        if len(entry["read_sha256"]) != len(entry["sources"]):
            return f"shards[{i}] has {len(entry['read_sha256'])} read_sha256 for its sources"
        seen.add(entry["index"])
        for j, record in enumerate(entry["files"]):
            name = record["name"]
            if os.path.basename(name) != name or name.startswith(".") or not name:
                return f"shards[{i}] names the file {name!r}, not a file of this folder"
            if record["header_bytes"] > record["bytes"]:  # never read: a bound on the read
                return (
                    f"the field shards[{i}].files[{j}].header_bytes is {record['header_bytes']}, "
                    f"more than the file's {record['bytes']} bytes"
                )
            if (record["header_sha256"] is None) != (record["header_bytes"] == 0):
                return (
                    f"the field shards[{i}].files[{j}].header_sha256 is "
                    f"{json.dumps(record['header_sha256'])[:40]}, for a header of "
                    f"{record['header_bytes']} bytes (null for 0, else a SHA-256)"
                )
    return None


def save_manifest(out_dir: str, manifest: dict[str, Any]) -> None:
    """Write the manifest whole, replacing the last one atomically."""
    with atomic_output(os.path.join(out_dir, MANIFEST)) as f:
        f.write(json.dumps(manifest, indent=1).encode("utf-8") + b"\n")


def changed(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What differs between two jobs so that the old one's shards cannot be kept, in words, or
    None when the new job goes on from the old (the same job, or inputs added after its own)."""
    if old["encoding"] != new["encoding"]:
        return f"the encoding ({old['encoding']['name']}, now {new['encoding']['name']})"
    if old["options"] != new["options"]:
        keys = sorted(k for k in {*old["options"], *new["options"]}
                      if old["options"].get(k) != new["options"].get(k))  # fmt: skip
        return "the options (" + ", ".join(keys) + ")"
    now = {i["path"]: i for i in new["inputs"]}
    for i, inp in enumerate(old["inputs"]):
        if inp["path"] not in now:
            return f"the inputs ({inp['path']} is gone)"
        if now[inp["path"]] != inp:
            return f"the inputs ({inp['path']} changed: size or time)"
        if new["inputs"][i] != inp:
            return f"the inputs ({inp['path']} is in another place in their order)"
    return None


def kept_shards(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The old manifest's finished shards that the new job's plan has as they are: all of them
    for the same job; with inputs added, all but a last shard that was not full (the new plan
    fills it from the new inputs, as a run of them all would)."""
    plan = new["plan"]
    return [e for e in old["shards"] if e["index"] < len(plan) and e["sources"] == plan[e["index"]]]


def shard_problem(out_dir: str, entry: dict[str, Any], *, verify: bool = False) -> str | None:
    """What is wrong on disk with shard ``entry``'s files, naming the file (missing, of another
    size, or, with ``verify``, of another SHA-256), or None when they are as listed."""
    for record in entry["files"]:
        path = os.path.join(out_dir, record["name"])
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return f"{path}: the file is missing"
        if size != record["bytes"]:
            return f"{path}: {size:,} bytes, not the manifest's {record['bytes']:,}"
        if verify and _digests_problem(path, record):
            return f"{path}: its SHA-256 is not the manifest's: it changed"
    return None


def _digests_problem(path: str, record: dict[str, Any]) -> bool:
    """Whether the file at ``path`` has other digests than its manifest ``record``'s."""
    digests = file_digests(path, record["header_bytes"])
    return any(record[key] != value for key, value in digests.items())


def need_numpy(what: str) -> None:
    """``ImportError`` naming the install that brings numpy, which ``what`` needs to read
    shards back (tokenizing needs none)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise ImportError(
            f"{what} reads shards with numpy: pip install 'streamcodec[corpus]' (or numpy)"
        ) from None
