"""``tokenize``: a corpus in, shards and a manifest out; resumed where a run stopped.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("hello world")
    >>> manifest = tokenize([folder / "a.txt"], folder / "out")
    >>> [ids.tolist() for ids in read_documents(folder / "out")]
    [[15339, 1917]]

The shards are planned from the inputs' names and sizes (:mod:`streamcodec.corpus.plan`), made
here in order through one pipeline of ``jobs`` workers (the next shard read and encoded while
the last is written, :mod:`streamcodec.corpus.job`) or as tasks of a Dask cluster
(``client=``, :mod:`streamcodec.corpus.cluster`), and recorded in the manifest as each is
finished. A rerun of the same job makes only the shards the manifest lacks.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from streamcodec.corpus.check import input_problem
from streamcodec.corpus.document import STDIN, Input, Kind, Reading
from streamcodec.corpus.finding import find_inputs
from streamcodec.corpus.job import Job, make_shards
from streamcodec.corpus.manifest import (
    FORMAT,
    MANIFEST,
    changed,
    encoding_record,
    kept_shards,
    load_manifest,
    need_numpy,
    save_manifest,
    shard_problem,
)
from streamcodec.corpus.overlap import OnThread
from streamcodec.corpus.plan import make_plan, source_records
from streamcodec.corpus.shards import FIELDS, Layout
from streamcodec.corpus.writers import SUFFIXES, dtype_for, manifest_layout, read_entry
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding
from streamcodec.stream.workers import surely

_SUFFIXES = {s for suffixes in SUFFIXES.values() for s in suffixes} | {FIELDS}
_SHARD_FILE = re.compile(r"shard_\d{5,}(?:" + "|".join(map(re.escape, sorted(_SUFFIXES))) + ")")

__all__ = ["DEFAULT_SHARD_BYTES", "ENCODING_DEFAULT", "boundaries", "read_documents", "tokenize"]

DEFAULT_SHARD_BYTES = 64 << 20
EOT = "<|endoftext|>"
#: ``bos=`` and ``eos=`` left to the encoding (:func:`boundaries`).
ENCODING_DEFAULT = "<the encoding's default>"


def tokenize(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    encoding: str | Encoding = "cl100k_base",
    jobs: int = 1,
    client: Any = None,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    field: str | None = None,
    column: str | None = None,
    separator: str | None = None,
    format: str = "streamcodec",
    bos: str | None = ENCODING_DEFAULT,
    eos: str | None = ENCODING_DEFAULT,
    keep: Sequence[str] = (),
    separator_token: str | None = ENCODING_DEFAULT,
    special_as_text: bool = False,
    errors: str = "strict",
    stdin_kind: Kind = "text",
    restart: bool = False,
    verify: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> dict[str, Any]:
    """Tokenize the files, folders and globs ``inputs`` (or one of them) into shards in
    ``out_dir``, with ``encoding`` (a registered name, or an :class:`~streamcodec.Encoding`:
    ``streamcodec.load_encoding(path)`` for a model's own tokenizer file).

    Each document is encoded as ``encode_ordinary`` encodes it alone, between the special
    tokens ``bos`` and ``eos`` (None: nothing; by default the encoding's, :func:`boundaries`:
    tiktoken's put ``<|endoftext|>`` after each document; ``separator_token`` is the old name of
    ``eos``). The shards are written in the trainer's ``format`` (docs/corpus.md:
    ``streamcodec``, ``nanogpt``, ``llmc``, ``megatron``, ``datatrove``, ``parquet``). The
    fields (JSON Lines) or columns (Parquet) named in ``keep`` are carried with each document:
    into Parquet's rows, or a ``.fields.jsonl`` file beside each shard (null where absent). A
    plain-text file is one document, or documents split at ``separator``; JSON Lines documents
    are the ``field`` of each line, Parquet ones the ``column`` of each row (both ``"text"`` by
    default; each option is refused when no input is of its kind). Special tokens in
    a document are refused unless ``special_as_text``; invalid UTF-8 is refused unless
    ``errors="replace"``. A shard is closed once it holds ``shard_bytes`` bytes of input.
    ``client`` (a ``distributed.Client``) makes the shards on its cluster instead of here.
    ``jobs``: the cores used (threads on the compiled path, processes on the pure one; the
    shards' bytes are the same for any). ``progress(bytes, tokens)`` is called as work is
    done. Returns the manifest, also written to ``out_dir/manifest.json``.

    A rerun with the same inputs and options makes only the shards not on disk as the manifest
    lists them (a file missing or of another size; of another SHA-256 too with ``verify``,
    which also reads the inputs of the kept shards again and refuses one whose content changed
    at the same size and time);
    inputs named after the old ones are planned after them. Anything else in the manifest's
    job (the encoding, an option, an input changed or gone) is refused, naming it, unless
    ``restart``, which starts over.
    """
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of at least 1, not {jobs!r}")
    if isinstance(inputs, (str, os.PathLike)):  # one path, not its characters
        inputs = [inputs]
    out = os.fspath(out_dir)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    found = find_inputs(inputs, stdin_kind=stdin_kind, skip=out)
    if client is not None and any(inp.path == STDIN for inp in found):
        raise ValueError("standard input cannot be shared with a cluster: name files")
    _refuse_unused(found, field=field, column=column, separator=separator)
    field, column = field or "text", column or "text"
    sep_bytes = None if separator is None else separator.encode("utf-8")
    if sep_bytes == b"":
        raise ValueError("the document separator is empty: leave out --separator instead")
    if field in keep or column in keep:
        raise ValueError("--keep names the text's own field or column: the ids are its tokens")
    if keep and not {inp.kind for inp in found} & {"jsonl", "parquet"}:
        raise ValueError("--keep applies to JSON Lines and Parquet inputs and none is one (plain "
                         "text has no fields): leave it out")  # fmt: skip
    reading = Reading(field, column, sep_bytes, errors, stdin_kind, tuple(keep))
    if separator_token != ENCODING_DEFAULT:
        if eos != ENCODING_DEFAULT:
            raise ValueError("separator_token is the old name of eos: pass eos alone")
        eos = separator_token
    begin, end = boundaries(enc)
    bos = begin if bos == ENCODING_DEFAULT else bos
    eos = end if eos == ENCODING_DEFAULT else eos
    layout = Layout(format, dtype_for(format, enc.n_vocab, enc.name),
                    _token_ids(enc, bos, "--bos"), _token_ids(enc, eos, "--eos"),
                    tuple(keep), enc.name)  # fmt: skip
    plan = make_plan(found, shard_bytes)
    record = {"encoding": encoding_record(enc), "streamcodec_version": _version()}
    options = {
        "shard_bytes": shard_bytes, "field": field, "column": column, "separator": separator,
        "format": format, "bos": bos, "eos": eos, "keep": list(keep),
        "special_as_text": special_as_text, "errors": errors,
        # read only for standard input: a default spelled out elsewhere is the same job
        "stdin_kind": stdin_kind if any(i.path == STDIN for i in found) else "text",
    }  # fmt: skip
    job_record: dict[str, Any] = {
        "encoding": record["encoding"],
        "options": options,
        "inputs": [_input_record(i, out) for i in found],
        "plan": [_relative(source_records(tuple(found), shard), out) for shard in plan],
    }
    job = Job(tuple(found), reading, out, enc, layout, special_as_text, record)
    manifest, others = _start(out, job_record, restart=restart, stdin=job.inputs, verify=verify)
    manifest["layout"] = _layout_record(layout)
    done = {entry["index"] for entry in manifest["shards"]}
    pending = [shard for shard in plan if shard.number not in done]
    manifest["complete"] = not pending
    aside: list[str] = []  # another job's files, moved aside: removed even if stopped
    first: _FirstSave | None = None

    def finished(entry: dict[str, Any]) -> None:
        assert first is not None
        first.result()  # listed after the first save, never overwritten by it
        entry["sources"] = job_record["plan"][entry["index"]]  # the paths as the manifest has them
        manifest["shards"] = sorted([*manifest["shards"], entry], key=lambda e: e["index"])
        manifest["complete"] = len(manifest["shards"]) == len(plan)
        save_manifest(out, manifest)

    try:
        first = _FirstSave(out, manifest, others, aside)
        if progress is not None:
            progress(sum(shard.size for shard in plan if shard.number in done), 0)
        if client is not None:
            from streamcodec.corpus.cluster import run_on_cluster

            run_on_cluster(client, job, pending, finished, jobs=jobs, progress=progress)
        else:
            make_shards(job, pending, finished, jobs=jobs, progress=progress)
    finally:
        if first is not None:
            surely(first.wait)  # its thread outlives no run
        surely(_remove, aside)  # those of a start stopped before its thread took them
    first.result()
    _remove_temporary(out)
    return manifest


class _FirstSave(OnThread):
    """The run's first manifest saved, then another job's files removed, on a thread of their
    own: the save's ``fsync`` and the removal of large files (7 ms, and 9 ms a shard here:
    ext4) overlap the first shard's work instead of delaying the whole run. The files are
    first moved aside here, to temporary names listed in ``aside`` before each move (a rename
    is quick), so that the run's own shards may take their names at once; the old manifest
    first of all, so that no manifest on disk ever lists a shard moved aside (nor one of this
    run's under its name). The thread is no daemon: stopped anywhere, the interpreter's exit
    waits for its save to end whole. :meth:`result` waits for it and raises its error."""

    def __init__(self, out: str, manifest: dict[str, Any], others: list[str], aside: list[str]):
        for name in others:  # a name _remove_temporary takes, should this process die
            aside.append(os.path.join(out, f".{name}.old.tmp"))
            os.replace(os.path.join(out, name), aside[-1])
        work = functools.partial(_save_and_remove, out, dict(manifest), list(aside))
        super().__init__(work, daemon=False)


def _save_and_remove(out: str, manifest: dict[str, Any], aside: list[str]) -> None:
    try:
        save_manifest(out, manifest)
    finally:
        _remove(aside)  # even after a failed save (its error goes on; the removal's are left)


def _remove(paths: list[str]) -> None:
    """Remove ``paths``, any left (an error) to _remove_temporary, at the end of this run or
    the next."""
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _refuse_unused(
    found: Sequence[Input], *, field: str | None, column: str | None, separator: str | None
) -> None:
    """Refuse an option no input reads (``--column`` with no Parquet input, ...), as
    ``encode`` does: it would be ignored, and the user meant something by it."""
    kinds = {inp.kind for inp in found}
    names = {"jsonl": "JSON Lines", "parquet": "Parquet", "text": "plain-text"}
    for given, option, kind in [(field, "--field", "jsonl"), (column, "--column", "parquet"),
                                (separator, "--separator", "text")]:  # fmt: skip
        if given is not None and kind not in kinds:
            have = ", ".join(sorted(names[k] for k in kinds))
            raise ValueError(
                f"{option} applies to {names[kind]} inputs and none is one (the inputs are "
                f"{have}): leave it out"
            )


def _version() -> str:
    import streamcodec

    return streamcodec.__version__


def boundaries(enc: Encoding) -> tuple[str | None, str | None]:
    """The special tokens an encoding puts before and after each document by default.

    An open model's, where its post-processor adds them (``enc.rules``: a ``tokenizer.json``'s
    ``TemplateProcessing``, a GGUF's ``add_bos_token``; Llama 3 puts ``<|begin_of_text|>``
    first and nothing after); else nothing before and, after, the model's end-of-sequence
    token, or tiktoken's convention, ``<|endoftext|>`` (as nanoGPT's ``prepare.py`` and
    datatrove put it), when the encoding has it.

        >>> boundaries(get_encoding("cl100k_base"))
        (None, '<|endoftext|>')
    """
    rules = enc.rules
    if rules.add_bos or rules.add_eos:
        return (rules.bos_token if rules.add_bos else None), (
            rules.eos_token if rules.add_eos else None
        )
    eos = rules.eos_token
    return None, eos if eos is not None else EOT if EOT in enc.special_tokens else None


def _token_ids(enc: Encoding, token: str | None, flag: str) -> tuple[int, ...]:
    if token is None:
        return ()
    if token not in enc.special_tokens:
        known = ", ".join(sorted(enc.special_tokens)) or "none"
        raise ValueError(
            f"{enc.name} has no special token {token!r} for {flag} (it has: {known}); name "
            f"one with {flag}, or none"
        )
    return (enc.special_tokens[token],)


def _layout_record(layout: Layout) -> dict[str, Any]:
    return {"format": layout.format, "dtype": layout.dtype, "bos": list(layout.bos),
            "eos": list(layout.eos), "keep": list(layout.keep)}  # fmt: skip


def _start(
    out: str, job: dict[str, Any], *, restart: bool, stdin: Sequence[Any], verify: bool
) -> tuple[dict[str, Any], list[str]]:
    """The manifest to go on with: the last run's finished shards that the job keeps (whose
    files are on disk as listed), or a new one (a last run that finished no shard, a failed
    first run, blocks nothing); and the names of the files in ``out`` that are not ours (the
    old manifest, another job's shards), for :class:`_FirstSave` to remove."""
    os.makedirs(out, exist_ok=True)
    old = None if restart else load_manifest(out)
    if old is not None and old["shards"]:
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
        kept = [e for e in kept_shards(old, job) if shard_problem(out, e, verify=verify) is None]
        for entry in kept if verify else []:  # the inputs too: content, not size and time
            if (problem := input_problem(out, job, entry)) is not None:
                raise ValueError(
                    f"{problem}; pass --restart to start over (restart=True), or another -o"
                )
        return {"format": FORMAT, **job, "shards": kept, "complete": False}, []
    others = [n for n in os.listdir(out) if n == MANIFEST or _SHARD_FILE.fullmatch(n)]
    others.sort(key=lambda name: name != MANIFEST)  # the old manifest first
    return {"format": FORMAT, **job, "shards": [], "complete": False}, others


def _input_record(inp: Input, out: str) -> dict[str, Any]:
    return {"path": _recorded(inp.path, out), "kind": inp.kind, "size": inp.size,
            "mtime_ns": inp.mtime_ns}  # fmt: skip


def _recorded(path: str, out: str) -> str:
    """An input's path as the manifest records it: relative to the output folder, so the two
    move together (standard input stays ``-``)."""
    return path if path == STDIN else os.path.relpath(path, out)


def _relative(sources: list[dict[str, Any]], out: str) -> list[dict[str, Any]]:
    return [{**source, "path": _recorded(source["path"], out)} for source in sources]


def _remove_temporary(out: str) -> None:
    """Temporary files a killed run (or worker) left: of a shard or of the manifest (never
    finished in one: a file is whole only once renamed)."""
    for pattern in (".shard_*.tmp", f".{MANIFEST}.*.tmp"):
        for path in glob.glob(os.path.join(glob.escape(out), pattern)):
            os.unlink(path)


def read_documents(out_dir: str | os.PathLike[str], *, verify: bool = False) -> Iterator[Any]:
    """Each document's ids (a read-only numpy array mapped from its shard, without the
    boundary tokens), in input order, whatever the format. The corpus must be complete, and
    each shard's files of the manifest's sizes (and SHA-256s, with ``verify``): ``ValueError``
    naming the file, never ids read from a file that is not the one listed."""
    need_numpy("read_documents")
    out = os.fspath(out_dir)
    manifest = load_manifest(out)
    if manifest is None:
        raise FileNotFoundError(2, "no manifest.json: not a corpus folder", out)
    if not manifest["complete"]:
        raise ValueError(f"{out}: the corpus is not complete; run tokenize-corpus again")
    layout = manifest_layout(manifest)
    before, after = len(layout.bos), len(layout.eos)
    for entry in manifest["shards"]:
        problem = shard_problem(out, entry, verify=verify)
        if problem is not None:
            raise ValueError(f"{problem}; run tokenize-corpus again to make the shard again")
        ids, offsets = read_entry(out, manifest, entry)
        for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
            yield ids[start + before : end - after]
