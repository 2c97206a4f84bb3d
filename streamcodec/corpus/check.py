"""``check_corpus``: the shards read again against the manifest, and documents against the text.

Every finished shard is re-read, whatever its format: each file's SHA-256, the headers and
index its format has (:mod:`streamcodec.corpus.writers`), the offsets (from 0, rising, ending
at the token count, one per document) and the boundary tokens around each document. With
``text=N``, N documents drawn at random (seeded) are decoded and compared with the documents of
the inputs they came from, read again.

    >>> check_corpus("tokens/manifest.json", text=20)  # doctest: +SKIP
    ['tokens/manifest.json: 12 shards, 3,456 documents, 1,234,567 tokens']
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from typing import Any

from streamcodec.corpus.document import STDIN, Input, Range, Reading, open_input
from streamcodec.corpus.files import COMPRESSIONS, InputChangedError
from streamcodec.corpus.inputs import documents
from streamcodec.corpus.manifest import (
    encoding_record,
    load_manifest,
    need_numpy,
    shard_problem,
)
from streamcodec.corpus.writers import manifest_layout, read_entry
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding
from streamcodec.stream.sources import read_blocks
from streamcodec.text.unicode import decode_utf8

__all__ = ["CorpusCheckError", "check_corpus", "input_problem"]

_SLICE = 1 << 16  # ids, or characters, compared at a time


class CorpusCheckError(ValueError):
    """A shard does not match the manifest, or a document its input (the message says which)."""


def check_corpus(
    manifest_path: str | os.PathLike[str],
    *,
    text: int = 0,
    seed: int = 0,
    encoding: str | Encoding | None = None,
    inputs: bool = False,
) -> str:
    """Check the corpus of ``manifest_path`` (or of the folder holding it); its summary, or
    :class:`CorpusCheckError`. ``text`` decodes with the manifest's encoding, or ``encoding``
    (a model's own, loaded from its file: it must be the one the corpus was made with).
    ``inputs``: also read every input again and compare it with what the run read
    (:func:`input_problem`), which finds a change at the same size and time."""
    need_numpy("check-corpus")
    path = os.fspath(manifest_path)
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    out = os.path.dirname(path) or "."
    manifest = load_manifest(out) if os.path.basename(path) == "manifest.json" else None
    if manifest is None:
        raise FileNotFoundError(2, "no corpus manifest here", path)
    if not manifest["complete"]:
        done, planned = len(manifest["shards"]), len(manifest["plan"])
        raise CorpusCheckError(
            f"{path}: {done} of {planned} shards are done; run tokenize-corpus again to finish"
        )
    documents_total = tokens_total = 0
    for entry in manifest["shards"]:
        _check_shard(out, manifest, entry)
        documents_total += entry["documents"]
        tokens_total += entry["tokens"]
    if inputs and any(i["path"] == STDIN for i in manifest["inputs"]):
        raise CorpusCheckError("the corpus was read from standard input: leave out --inputs")
    for entry in manifest["shards"] if inputs else []:
        if (problem := input_problem(out, manifest, entry)) is not None:
            raise CorpusCheckError(problem)
    if text:
        _check_text(out, manifest, text, seed, encoding)
    shards = len(manifest["shards"])
    return f"{path}: {shards} shards, {documents_total:,} documents, {tokens_total:,} tokens"


def _check_shard(out: str, manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    import numpy

    problem = shard_problem(out, entry, verify=True)
    if problem is not None:
        raise CorpusCheckError(problem)
    try:
        ids, offsets = read_entry(out, manifest, entry)
    except ValueError as exc:
        raise CorpusCheckError(str(exc)) from None
    shown = os.path.join(out, entry["files"][0]["name"])
    if len(ids) != entry["tokens"] or len(offsets) != entry["documents"] + 1:
        raise CorpusCheckError(
            f"{shown}: {len(ids)} ids in {len(offsets) - 1} documents, not the manifest's "
            f"{entry['tokens']} in {entry['documents']}"
        )
    rising = bool(numpy.all(offsets[1:] >= offsets[:-1]))
    if not (offsets[0] == 0 and offsets[-1] == len(ids) and rising):
        raise CorpusCheckError(f"{shown}: the offsets are not 0, rising, then {len(ids)}")
    layout = manifest_layout(manifest)
    bos, eos = numpy.array(layout.bos), numpy.array(layout.eos)
    if not entry["documents"] or not (len(bos) or len(eos)):
        return
    starts, ends = offsets[:-1], offsets[1:]
    if bool(numpy.any(ends - starts < len(bos) + len(eos))):
        raise CorpusCheckError(f"{shown}: a document is shorter than its boundary tokens")
    for k, token in enumerate(bos):
        if not bool(numpy.all(ids[starts + k] == token)):
            raise CorpusCheckError(f"{shown}: a document does not start with --bos {layout.bos}")
    for k, token in enumerate(eos):
        if not bool(numpy.all(ids[ends - len(eos) + k] == token)):
            raise CorpusCheckError(f"{shown}: a document does not end with --eos {layout.eos}")


def _encoding(manifest: dict[str, Any], given: str | Encoding | None) -> Encoding:
    if isinstance(given, Encoding):
        return given
    name = given or manifest["encoding"]["name"]
    try:
        return get_encoding(name)
    except ValueError:
        raise CorpusCheckError(
            f"the corpus was made with {name!r}, no registered encoding (a model's own file?): "
            "pass -e with its file (encoding=) to check its text"
        ) from None


def _check_text(
    out: str, manifest: dict[str, Any], sample: int, seed: int, encoding: str | Encoding | None
) -> None:
    """Decode ``sample`` documents drawn at random; compare each with its input's document,
    as a stream of bytes (a document is never held as text or ids)."""
    if any(i["path"] == STDIN for i in manifest["inputs"]):
        raise CorpusCheckError("the corpus was read from standard input: leave out --text")
    enc = _encoding(manifest, encoding)
    if encoding_record(enc)["sha256"] != manifest["encoding"]["sha256"]:
        raise CorpusCheckError(
            f"{enc.name} here is not the encoding the corpus was made with (another SHA-256 of "
            "its ranks, pattern and special tokens)"
        )
    import random  # here: tokenize-corpus imports this module for input_problem (0.9 ms)

    total = sum(entry["documents"] for entry in manifest["shards"])
    chosen = sorted(random.Random(seed).sample(range(total), min(sample, total)))
    reading = _reading(manifest)
    inputs = [_input(out, record) for record in manifest["inputs"]]
    layout = manifest_layout(manifest)
    before, after = len(layout.bos), len(layout.eos)
    first = 0
    for entry in manifest["shards"]:
        wanted = [n - first for n in chosen if first <= n < first + entry["documents"]]
        first += entry["documents"]
        if not wanted:
            continue
        ids, offsets = read_entry(out, manifest, entry)
        with _changed_is_a_mismatch():
            for n, doc in enumerate(_shard_texts(inputs, entry, reading)):
                if n in wanted:
                    tokens = ids[offsets[n] + before : offsets[n + 1] - after]
                    if not _same_bytes(_token_bytes(enc, tokens), doc):
                        raise CorpusCheckError(
                            f"{os.path.join(out, entry['files'][0]['name'])}: document {n} "
                            "does not decode to the text of its input"
                        )
                if n >= wanted[-1]:
                    break


def _reading(job: dict[str, Any]) -> Reading:
    """How the run read its documents, from its options."""
    options = job["options"]
    separator = options["separator"]
    return Reading(
        options["field"], options["column"], None if separator is None else separator.encode(),
        options["errors"], options["stdin_kind"],
    )  # fmt: skip


def input_problem(out: str, job: dict[str, Any], entry: dict[str, Any]) -> str | None:
    """Whether the inputs of shard ``entry`` of the corpus in ``out`` (whose manifest, or
    job, is ``job``) no longer hold what it was made from: each source read again and hashed
    as the run hashed it (``read_sha256``); the changed input named, or None."""
    reading = _reading(job)
    for source, expected in zip(entry["sources"], entry["read_sha256"], strict=True):
        if expected is None:  # a streamed document: its size and time are its fingerprint
            continue
        inp = _input(out, job["inputs"][source["input"]])
        digest = hashlib.sha256()
        end = -1 if source["unit"] == "bytes" and source["end"] in (-1, inp.size) else source["end"]
        try:
            for _ in documents(inp, Range(source["input"], source["start"], end), reading,
                               digest=digest):  # fmt: skip
                pass
        except ValueError as exc:
            return f"{inp.shown}: changed since shard {entry['index']} was made ({exc})"
        if digest.hexdigest() != expected:
            return (
                f"{inp.shown}: its content is not what shard {entry['index']} was made from "
                "(at the same size and time)"
            )
    return None


def _input(out: str, record: dict[str, Any]) -> Input:
    """An input of the manifest (its path relative to the corpus folder, or absolute)."""
    path = os.path.normpath(os.path.join(out, record["path"]))
    compression = COMPRESSIONS.get(os.path.splitext(path)[1].lower())
    return Input(path, record["kind"], compression, record["size"], record["mtime_ns"])


def _token_bytes(enc: Any, tokens: Any) -> Iterator[bytes]:
    """The bytes of ``tokens`` (a numpy array) in slices: memory bounded by the slice."""
    for start in range(0, len(tokens), _SLICE):
        yield enc.decode_bytes(tokens[start : start + _SLICE].tolist())


def _same_bytes(a: Iterator[bytes], b: Iterator[bytes]) -> bool:
    """Whether two streams of bytes are the same bytes, however they are cut."""
    a, b = (piece for piece in a if piece), (piece for piece in b if piece)
    left: bytes | None = b""
    right: bytes | None = b""
    while True:
        left = left or next(a, None)
        right = right or next(b, None)
        if left is None or right is None:
            return left is None and right is None
        common = min(len(left), len(right))
        if left[:common] != right[:common]:
            return False
        left, right = left[common:], right[common:]


@contextlib.contextmanager
def _changed_is_a_mismatch() -> Iterator[None]:
    """An input changed since the corpus was made, reported as a mismatch."""
    try:
        yield
    except InputChangedError as exc:
        raise CorpusCheckError(
            f"{exc.name}: the input changed since the corpus was made (its size or time): "
            "its documents may not be the shards' any more; tokenize it again"
        ) from None


def _shard_texts(
    inputs: list[Input], entry: dict[str, Any], reading: Reading
) -> Iterator[Iterator[bytes]]:
    """Each document of the shard as a stream of its UTF-8 bytes, read again as the run read
    it (invalid UTF-8 and lone surrogates replaced as the options said)."""
    for source in entry["sources"]:
        inp = inputs[source["input"]]
        if inp.kind == "text" and reading.separator is None:  # a whole file: streamed
            yield _streamed_text(inp, reading)
            continue
        end = -1 if source["unit"] == "bytes" and source["end"] == inp.size else source["end"]
        for doc in documents(inp, Range(source["input"], source["start"], end), reading):
            yield _encoded(doc.text)


def _streamed_text(inp: Input, reading: Reading) -> Iterator[bytes]:
    with open_input(inp) as f:
        blocks = read_blocks(f)
        for text in decode_utf8(blocks, errors=reading.errors, name=inp.shown):
            yield text.encode("utf-8")


def _encoded(text: str) -> Iterator[bytes]:
    """``text`` as UTF-8 in slices (a slice never ends between the halves of a pair)."""
    start = 0
    while start < len(text):
        end = start + _SLICE
        if end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
            end += 1
        yield text[start:end].encode("utf-8", "surrogatepass")
        start = end
