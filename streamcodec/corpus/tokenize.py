"""``tokenize``: a corpus in, shards and a manifest out; resumed where a run stopped.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("hello world")
    >>> manifest = tokenize([folder / "a.txt"], folder / "out")
    >>> [ids.tolist() for ids in read_documents(folder / "out")]
    [[15339, 1917]]

The shards are planned from the inputs' names and sizes (:mod:`streamcodec.corpus.plan`), made
one after another here (each spread over ``jobs`` threads, :mod:`streamcodec.corpus.job`) or as
tasks of a Dask cluster (``client=``, :mod:`streamcodec.corpus.cluster`), and recorded in the
manifest as each is finished. A rerun of the same job makes only the shards the manifest lacks.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from streamcodec.corpus.inputs import STDIN, Kind, Reading, find_inputs
from streamcodec.corpus.job import Job, make_shard, source_records
from streamcodec.corpus.manifest import (
    FORMAT,
    MANIFEST,
    changed,
    encoding_record,
    load_manifest,
    save_manifest,
)
from streamcodec.corpus.plan import make_plan
from streamcodec.corpus.shards import dtype_for
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding

__all__ = ["DEFAULT_SHARD_BYTES", "read_documents", "tokenize"]

DEFAULT_SHARD_BYTES = 64 << 20
EOT = "<|endoftext|>"
_SHARD_FILE = re.compile(r"shard_\d{5,}(\.offsets)?\.npy")


def tokenize(
    inputs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    encoding: str | Encoding = "cl100k_base",
    jobs: int = 1,
    client: Any = None,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    field: str = "text",
    column: str = "text",
    separator: str | None = None,
    separator_token: str | None = EOT,
    special_as_text: bool = False,
    errors: str = "strict",
    stdin_kind: Kind = "text",
    restart: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> dict[str, Any]:
    """Tokenize the files, folders and globs ``inputs`` into shards in ``out_dir``.

    Each document is encoded as ``encode_ordinary`` encodes it alone, followed by the special
    token ``separator_token`` (None: nothing). A plain-text file is one document, or documents
    split at ``separator``; JSON Lines documents are the ``field`` of each line, Parquet ones the
    ``column`` of each row. Special tokens in a document are refused unless ``special_as_text``;
    invalid UTF-8 is refused unless ``errors="replace"``. A shard is closed once it holds
    ``shard_bytes`` bytes of input. ``client`` (a ``distributed.Client``) makes the shards on
    its cluster instead of here, with ``jobs`` threads. ``progress(bytes, tokens)`` is called as
    work is done. Returns the manifest, also written to ``out_dir/manifest.json``.

    A rerun with the same inputs and options makes only the missing shards; anything else in
    the manifest's job is refused unless ``restart``, which starts over.
    """
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    out = os.fspath(out_dir)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    found = find_inputs(inputs, stdin_kind=stdin_kind, skip=out)
    if client is not None and any(inp.path == STDIN for inp in found):
        raise ValueError("standard input cannot be shared with a cluster: name files")
    sep_bytes = None if separator is None else separator.encode("utf-8")
    if sep_bytes == b"":
        raise ValueError("the document separator is empty: leave out --separator instead")
    reading = Reading(field, column, sep_bytes, errors, stdin_kind)
    plan = make_plan(found, shard_bytes)
    record = {"encoding": encoding_record(enc), "streamcodec_version": _version()}
    options = {
        "shard_bytes": shard_bytes, "field": field, "column": column, "separator": separator,
        "separator_token": separator_token, "special_as_text": special_as_text,
        "errors": errors, "stdin_kind": stdin_kind,
    }  # fmt: skip
    job_record = {
        "encoding": record["encoding"],
        "options": options,
        "inputs": [
            {"path": i.path, "kind": i.kind, "size": i.size, "mtime_ns": i.mtime_ns} for i in found
        ],
        "plan": [source_records(tuple(found), shard) for shard in plan],
    }
    job = Job(tuple(found), reading, out, enc, dtype_for(enc.n_vocab),
              _separator_id(enc, separator_token), special_as_text, record)  # fmt: skip
    manifest = _start(out, job_record, restart=restart, stdin=job.inputs)
    manifest["dtype"] = job.dtype
    manifest["separator"] = job.separator
    done = {entry["index"] for entry in manifest["shards"]}
    pending = [shard for shard in plan if shard.index not in done]
    if progress is not None:
        progress(sum(shard.size for shard in plan if shard.index in done), 0)

    def finished(entry: dict[str, Any]) -> None:
        manifest["shards"] = sorted([*manifest["shards"], entry], key=lambda e: e["index"])
        manifest["complete"] = len(manifest["shards"]) == len(plan)
        save_manifest(out, manifest)

    manifest["complete"] = not pending
    save_manifest(out, manifest)
    if client is not None:
        from streamcodec.corpus.cluster import run_on_cluster

        run_on_cluster(client, job, pending, finished, jobs=jobs, progress=progress)
    else:
        for shard in pending:
            finished(make_shard(job, shard, jobs, progress))
    _remove_temporary(out)
    return manifest


def _version() -> str:
    import streamcodec

    return streamcodec.__version__


def _separator_id(enc: Encoding, token: str | None) -> int | None:
    if token is None:
        return None
    if token not in enc.special_tokens:
        known = ", ".join(sorted(enc.special_tokens)) or "none"
        raise ValueError(
            f"{enc.name} has no special token {token!r} to put between documents (it has: "
            f"{known}); name one with --separator-token, or none"
        )
    return enc.special_tokens[token]


def _start(out: str, job: dict[str, Any], *, restart: bool, stdin: Sequence[Any]) -> dict[str, Any]:
    """The manifest to go on with: the last run's when it is the same job, else a new one."""
    os.makedirs(out, exist_ok=True)
    old = None if restart else load_manifest(out)
    if old is not None:
        where = os.path.join(out, MANIFEST)
        if any(inp.path == STDIN for inp in stdin):
            raise ValueError(
                f"{where} exists and standard input cannot be read again to resume it; pass "
                "--restart to start over, or another -o"
            )
        difference = changed(old, job)
        if difference is not None:
            raise ValueError(
                f"{where} is of another job ({difference} changed); pass --restart to start "
                "over (restart=True), or another -o"
            )
        return old
    for name in os.listdir(out):  # shards of another job: not ours to keep
        if _SHARD_FILE.fullmatch(name):
            os.unlink(os.path.join(out, name))
    return {"format": FORMAT, **job, "shards": [], "complete": False}


def _remove_temporary(out: str) -> None:
    """Temporary files a killed run (or worker) left: of a shard or of the manifest (never
    finished in one: a file is whole only once renamed)."""
    for pattern in (".shard_*.tmp", f".{MANIFEST}.*.tmp"):
        for path in glob.glob(os.path.join(glob.escape(out), pattern)):
            os.unlink(path)


def read_documents(out_dir: str | os.PathLike[str]) -> Iterator[Any]:
    """Each document's ids (a read-only numpy array mapped from its shard, without the
    separator), in input order. The corpus must be complete."""
    import numpy

    out = os.fspath(out_dir)
    manifest = load_manifest(out)
    if manifest is None:
        raise FileNotFoundError(2, "no manifest.json: not a corpus folder", out)
    if not manifest["complete"]:
        raise ValueError(f"{out}: the corpus is not complete; run tokenize-corpus again")
    cut = 0 if manifest["separator"] is None else 1
    for entry in manifest["shards"]:
        ids = numpy.load(os.path.join(out, entry["file"]), mmap_mode="r")
        offsets = numpy.load(os.path.join(out, entry["offsets_file"]))
        for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
            yield ids[start : end - cut]
