"""JSON Lines read natively and Parquet by pyarrow (issue 28, item 2): the Python readers' ids
and errors.

The native JSON Lines reader (``corpus/_jsonl.c``) and pyarrow's Parquet columns must read a
block exactly as the Python readers (the reference: ``json.loads`` of each line) do, or leave it
to them, so that the shards and the messages are the same whichever reads. (pyarrow's JSON
reader, used before, was not ``json.loads``: it read two objects on one line, skipped a byte
order mark, refused a number beyond a double; the edge cases below come from it.)
"""

from __future__ import annotations

import array
import functools
import hashlib
import io
import itertools
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec.corpus import job as job_module
from streamcodec.corpus import read_documents, tokenize
from streamcodec.corpus import tasks as tasks_module
from streamcodec.corpus.columns import holds_special, json_column, json_reads
from streamcodec.corpus.document import Input, Range, Reading
from streamcodec.corpus.jsonlines import Lines, json_documents, line_blocks
from streamcodec.engine.batch import FlatTexts

pyarrow = pytest.importorskip("pyarrow")
ENC = streamcodec.get_encoding("cl100k_base")
SPECIALS = frozenset(ENC.special_tokens)
native = pytest.mark.skipif(not json_reads(Reading()), reason="corpus._jsonl is not built")


def folder_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture
def python_reader(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make the run read every block with the Python readers (the reference)."""

    def use() -> None:
        monkeypatch.setattr(tasks_module, "json_reads", lambda reading: False)
        monkeypatch.setattr(tasks_module, "parquet_column", lambda values: None)

    return use


def _outcome(run: Callable[[], Any], out: Path) -> Any:
    """The shards' bytes (the manifest's entries too), or the error's message."""
    try:
        manifest = run()
    except (ValueError, UnicodeError) as exc:
        return type(exc).__name__, str(exc).replace(str(out), "OUT")
    files = folder_bytes(out)
    files.pop("manifest.json")
    return files, [{k: v for k, v in e.items() if k != "sources"} for e in manifest["shards"]]


def both_readers(
    tmp_path: Path, python_reader: Callable[[], None], inputs: list[Path], **options: Any
) -> tuple[Any, Any]:
    """The outcome of a run with the native reader and pyarrow reading, then of one with the
    Python readers."""
    runs = []
    for name in ("arrow", "python"):
        if name == "python":
            python_reader()
        out = tmp_path / name
        run = functools.partial(tokenize, inputs, out, restart=True, **options)
        runs.append(_outcome(run, out))
    return runs[0], runs[1]


def _lines(data: bytes) -> Lines:
    """``data`` as a block of lines at the start of an input."""
    return Lines(data, 0, 1, data.count(b"\n") + (not data.endswith(b"\n")))


def _texts(column: FlatTexts) -> list[str]:
    bounds = array.array("q", column.offsets)
    return [column.data[start:end].decode("utf-8") for start, end in itertools.pairwise(bounds)]


def _check_native(block: Lines) -> None:
    """The native reader reads ``block`` as the Python reader does, or leaves it to it (always
    where the Python reader refuses it)."""
    column = json_column(block, Reading(), SPECIALS)
    texts = _python_texts(block)
    if texts is None:
        assert column is None
    elif column is not None:
        assert _texts(column) == texts


def _python_texts(block: Lines) -> list[str] | None:
    """The Python reader's documents of ``block``, or None where it refuses the block (or a
    document holds a special token, which the run refuses)."""
    try:
        texts = [d.text for d in json_documents(Input("a", "jsonl", None, 1, 0), block, Reading())]
    except ValueError:
        return None
    return None if any(t in text for t in SPECIALS for text in texts) else texts


EDGE_LINES = {
    "a key given twice": b'{"text": "a", "text": "b"}',
    "a key given twice, escaped": b'{"text": "a", "te\\u0078t": "b"}',
    "an escaped key": b'{"te\\u0078t": "escaped key"}',
    "a huge int elsewhere": b'{"text": "a", "id": 123456789012345678901234567890}',
    "NaN elsewhere": b'{"text": "a", "x": NaN, "y": -Infinity}',
    "a number beyond a double elsewhere": b'{"text": "a", "x": 1e400}',
    "not an object": b'["text"]',
    "a string": b'"text"',
    "the field an int": b'{"text": 5}',
    "the field null": b'{"text": null}',
    "the field an object": b'{"text": {"text": "a"}}',
    "the field absent": b'{"other": "a"}',
    "a lone surrogate": b'{"text": "a\\ud800b"}',
    "a surrogate pair": b'{"text": "\\ud83d\\ude00 emoji"}',
    "invalid UTF-8 in the field": b'{"text": "a\xffb"}',
    "invalid UTF-8 elsewhere": b'{"text": "a", "x": "\xff"}',
    "two objects on a line": b'{"text": "a"} {"text": "b"}',
    "a carriage return between objects": b'{"text": "a"}\r{"text": "b"}',
    "a blank line": b"   ",
    "a byte order mark": b'\xef\xbb\xbf{"text": "a"}',
    "a raw tab in the string": b'{"text": "a\tb"}',
    "an escaped NUL": b'{"text": "a\\u0000b"}',
    "a special token": b'{"text": "a <|endoftext|> b"}',
    "a special token, escaped": b'{"text": "a <|endoftext\\u007c> b"}',
    "a trailing comma": b'{"text": "a",}',
    "CRLF": b'{"text": "crlf"}\r',
    "two objects and a blank line": b'{"text": "a"} {"text": "b"}\n \t',
}


@pytest.mark.parametrize("case", sorted(EDGE_LINES))
@pytest.mark.parametrize("errors", ["strict", "replace"])
@pytest.mark.parametrize("where", [0, 3])
def test_where_pyarrow_reads_otherwise_the_python_reader_decides(
    tmp_path: Path, python_reader: Callable[[], None], case: str, errors: str, where: int
) -> None:
    good = [json.dumps({"text": f"line {i} é"}).encode() for i in range(5)]
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join([*good[:where], EDGE_LINES[case], *good[where:]]) + b"\n")
    arrow, python = both_readers(tmp_path, python_reader, [path], errors=errors)
    assert arrow == python


@native
@pytest.mark.parametrize("case", sorted(EDGE_LINES))
@pytest.mark.parametrize("first", [True, False])
def test_the_native_reader_reads_only_blocks_it_reads_as_json_loads_does(
    case: str, first: bool
) -> None:
    lines = [EDGE_LINES[case], b'{"text": "x"}'] if first else [b'{"text": "x"}', EDGE_LINES[case]]
    block = _lines(b"\n".join(lines) + b"\n")
    _check_native(block)


@native
def test_a_field_name_that_no_utf8_spells_is_the_python_readers() -> None:
    """A lone surrogate in ``--field`` (from argv's undecodable bytes) names no key in UTF-8."""
    block = _lines(b'{"text": "a"}\n')
    reading = Reading(field="te\udcffxt")
    assert json_column(block, reading, SPECIALS) is None
    assert json_column(block, Reading(), SPECIALS) is not None


NATIVE_READS = [
    "a surrogate pair",
    "an escaped NUL",
    "CRLF",
    "a blank line",
    "a huge int elsewhere",
]


@native
@pytest.mark.parametrize("case", NATIVE_READS)
def test_the_native_reader_reads_the_common_cases_itself(case: str) -> None:
    block = _lines(b'{"text": "x", "n": [1.5e3, -0, true, false, null, {}]}\n' + EDGE_LINES[case])
    column = json_column(block, Reading(), SPECIALS)
    assert column is not None and _texts(column) == _python_texts(block)


@native
@pytest.mark.parametrize("escape", [b"\\u00E9", b"\\ud83d\\uDE00"])
def test_every_byte_in_each_place_of_an_escape_is_read_as_json_loads_reads_it(
    escape: bytes,
) -> None:
    # the escapes are read by tables (a hex digit's value, a one-character escape's byte):
    # each of the 256 bytes in each place after the first backslash is read as json.loads
    # reads it, or the block left to the Python reader
    for at in range(1, len(escape)):
        for byte in range(256):
            changed = escape[:at] + bytes([byte]) + escape[at + 1 :]
            _check_native(_lines(b'{"text": "a' + changed + b'b"}\n'))


_LINE = st.one_of(
    st.builds(
        lambda text, ascii_only, extra: json.dumps(
            {**extra, "text": text}, ensure_ascii=ascii_only
        ).encode("utf-8", "surrogatepass"),
        st.text(),
        st.booleans(),
        st.dictionaries(
            st.sampled_from(["id", "url", "n", "é"]),
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3)
                ),
                max_leaves=6,
            ),
        ),
    ),
    st.sampled_from(sorted(EDGE_LINES.values())),
)


@native
@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=8), st.sampled_from([b"\n", b"\r\n"]), st.booleans(), st.data())
def test_random_blocks_the_native_reader_equals_the_python_reader_or_leaves_them(
    lines: list[bytes], newline: bytes, final: bool, data: st.DataObject
) -> None:
    raw = newline.join(lines) + (newline if final and lines else b"")
    if raw and data.draw(st.booleans()):  # a byte changed, removed or put in, anywhere
        at = data.draw(st.integers(0, len(raw) - 1))
        byte = bytes([data.draw(st.integers(0, 255))])
        changed = [
            raw[:at] + byte + raw[at + 1 :],
            raw[:at] + raw[at + 1 :],
            raw[:at] + byte + raw[at:],
        ]
        raw = data.draw(st.sampled_from(changed))
    block = _lines(raw)
    _check_native(block)


def _old_line_reader(data: bytes, start: int, end: int) -> tuple[list[bytes], bytes]:
    """The reading before blocks (readline by readline): the lines starting in the range,
    and the bytes read for it (what its digest was fed)."""
    f = io.BytesIO(data)
    read = b""
    position = start
    if position > 0:
        f.seek(position - 1)
        rest = f.readline()
        read += rest
        position += len(rest) - 1
    lines = []
    while end < 0 or position < end:
        line = f.readline()
        if not line:
            break
        read += line
        lines.append(line)
        position += len(line)
    return lines, read


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.booleans(),
    st.data(),
)
def test_line_blocks_read_each_range_as_lines_were_read(
    lines: list[bytes], final: bool, data: st.DataObject
) -> None:
    raw = b"\n".join(lines) + (b"\n" if final else b"")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=4)))
    size = data.draw(st.integers(1, 40))
    first = data.draw(st.integers(0, 40))  # a ramp from it to size, or none
    bounds = [0, *cuts, -1]
    for start, end in itertools.pairwise(bounds):
        if end >= 0 and end < start:
            continue
        digest = hashlib.sha256()
        f = io.BytesIO(raw)
        blocks = list(line_blocks(f, Range(0, start, end), digest=digest, size=size, first=first))
        expected, read = _old_line_reader(raw, start, end)
        assert b"".join(b.data for b in blocks) == b"".join(expected)
        assert digest.hexdigest() == hashlib.sha256(read).hexdigest()
        for block in blocks:
            assert block.data.endswith(b"\n") or block is blocks[-1]
            assert block.number == (0 if start > 0 else raw[: block.start].count(b"\n") + 1)
            assert block.line_count == len(block.data.split(b"\n")) - block.data.endswith(b"\n")


@pytest.fixture
def lines_file(tmp_path: Path) -> Path:
    rng = random.Random(28)
    words = ["word", "é", "日本語", "🙂", "  ", "\n", "x" * 50, "def f():"]
    docs = ["".join(rng.choices(words, k=rng.randrange(0, 400))) for _ in range(600)]
    path = tmp_path / "in" / "docs.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    return path


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_shards_are_the_same_bytes_for_any_jobs_and_either_reader(
    tmp_path: Path,
    python_reader: Callable[[], None],
    lines_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
) -> None:
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 5000)  # many blocks, several shards
    options: dict[str, Any] = {"shard_bytes": 40_000, "jobs": jobs}
    arrow, python = both_readers(tmp_path, python_reader, [lines_file], **options)
    assert arrow == python and len(arrow[1]) > 3
    texts = [json.loads(line)["text"] for line in lines_file.read_text().splitlines()]
    assert [ENC.decode(ids.tolist()) for ids in read_documents(tmp_path / "arrow")] == texts


def _parquet(path: Path, values: list[Any], kind: Any, **extra: list[Any]) -> Path:
    import pyarrow.parquet

    table = pyarrow.table({"text": pyarrow.array(values, kind), **extra})
    pyarrow.parquet.write_table(table, path, row_group_size=3)
    return path


PARQUET = {
    "string": (["a", "é 日本", "", "🙂" * 3, "x"], "string"),
    "large_string": (["a", "é 日本", "", "🙂" * 3, "x"], "large_string"),
    "binary": ([b"a", b"\xc3\xa9", b"", b"x"], "binary"),
    "invalid UTF-8": ([b"a", b"b\xff\xfe c", b"\xe2\x82", b"x"], "binary"),
    "a null row": (["a", None, "b"], "string"),
    "ints": ([1, 2, 3], "int64"),
    "a special token": (["a", "b <|endoftext|>", "c"], "string"),
}


@pytest.mark.parametrize("case", sorted(PARQUET))
@pytest.mark.parametrize("errors", ["strict", "replace"])
@pytest.mark.parametrize("keep", [(), ("n",)])
def test_parquet_columns_read_in_place_give_the_python_readers_ids_and_errors(
    tmp_path: Path,
    python_reader: Callable[[], None],
    case: str,
    errors: str,
    keep: tuple[str, ...],
) -> None:
    values, kind = PARQUET[case]
    path = _parquet(tmp_path / "in.parquet", values, kind, n=list(range(len(values))))
    arrow, python = both_readers(tmp_path, python_reader, [path], errors=errors, keep=keep)
    assert arrow == python


def test_a_multi_shard_run_resumes_byte_identical_with_several_jobs(
    tmp_path: Path, lines_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 5000)
    whole = tmp_path / "whole"
    tokenize([lines_file], whole, shard_bytes=40_000, jobs=2)
    made: list[int] = []

    def stop_after_two(done: int, tokens: int) -> None:
        made.append(done)
        if len(made) == 12:
            raise KeyboardInterrupt

    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        tokenize([lines_file], out, shard_bytes=40_000, jobs=2, progress=stop_after_two)
    kept = json.loads((out / "manifest.json").read_text())["shards"]
    assert 0 < len(kept) < len(json.loads((whole / "manifest.json").read_text())["shards"])
    tokenize([lines_file], out, shard_bytes=40_000, jobs=4)
    assert folder_bytes(out) == folder_bytes(whole)


def test_tasks_in_flight_are_bounded(
    tmp_path: Path, lines_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory: the reading runs at most ``2 * jobs + 6`` tasks ahead of the writing: ``2 *
    jobs`` in flight, and one in each hand and queue of the reader, the scheduler and the
    writer (``corpus.overlap``: the pipeline's ends on threads of their own; 2 more blocks wait
    for the input's hash at most)."""
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 2000)
    tasks = job_module.shard_tasks
    read, written = [0], [0]
    ahead = []

    def counted(*args: Any) -> Iterator[Any]:
        for task in tasks(*args):
            read[0] += 1
            ahead.append(read[0] - written[0])
            yield task

    def progress(done: int, tokens: int) -> None:
        written[0] += 1

    monkeypatch.setattr(job_module, "shard_tasks", counted)
    tokenize([lines_file], tmp_path / "out", shard_bytes=40_000, jobs=2, progress=progress)
    assert max(ahead) <= 2 * 2 + 6 and read[0] > 20


def _stopped_run(lines_file: Path, out: Path) -> tuple[set[str], set[str]]:
    """A run stopped by ``KeyboardInterrupt``: the files its manifest lists, the files there."""
    with pytest.raises(KeyboardInterrupt):
        tokenize([lines_file], out, shard_bytes=40_000, jobs=2)
    listed = {f["name"] for e in json.loads((out / "manifest.json").read_text())["shards"]
              for f in e["files"]}  # fmt: skip
    return listed, {p.name for p in out.iterdir()} - {"manifest.json"}


def test_a_stop_while_a_shard_is_put_in_place_leaves_none_of_its_files(
    tmp_path: Path, lines_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal while a finished shard's files are hashed for its entry (after they were put
    in place, before the manifest lists it) left them behind, unlisted: none are now."""
    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 5000)
    records = job_module.file_records
    calls = []

    def stopped_at_the_second(paths: Any, sha256: Any) -> Any:
        calls.append(paths)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return records(paths, sha256)

    monkeypatch.setattr(job_module, "file_records", stopped_at_the_second)
    listed, present = _stopped_run(lines_file, tmp_path / "out")
    assert listed and present == listed


def test_a_stop_just_after_the_manifest_lists_a_shard_keeps_its_files(
    tmp_path: Path, lines_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal after the manifest listing a shard was put in place, before that save returned,
    removed the shard's files: the manifest listed files that were gone (seen once in
    test_ctrl_c_leaves_whole_shards_and_no_temporary_file). Listed, they are kept."""
    import importlib

    module = importlib.import_module("streamcodec.corpus.tokenize")
    save = module.save_manifest
    calls = []

    def stopped_after_the_third(out: str, manifest: Any) -> None:
        save(out, manifest)
        calls.append(out)
        if len(calls) == 3:  # the start's save, the first shard's, the second's
            raise KeyboardInterrupt

    monkeypatch.setattr(tasks_module, "BATCH_SIZE", 5000)
    monkeypatch.setattr(module, "save_manifest", stopped_after_the_third)
    listed, present = _stopped_run(lines_file, tmp_path / "out")
    assert len(listed) == 4 and present == listed


_PIECES = st.sampled_from(["a", "é", "日", "🙂", "<|", "|>", ".", "*", "\\", "[", "]", "(", "?",
                           "$", "^", "{1}", "\x00", "\x7f", "\n", " ", "\ud800"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_PIECES, min_size=1, max_size=4).map("".join), max_size=4),
    st.lists(st.lists(_PIECES, max_size=12).map("".join), max_size=5),
    st.sampled_from(["string", "large_string", "binary"]),
)
@example(specials=["aa"], texts=["a", "a"], kind="binary")  # across two values: a yes
def test_a_special_token_is_found_in_any_column_as_in_the_text(
    specials: list[str], texts: list[str], kind: str
) -> None:
    """Arrow's RE2 (string columns, the GIL released) and ``re`` over the data (binary) find a
    special token's text exactly where ``in`` does, whatever its characters; over a binary
    column's data, also where it spans two values (a yes the Python reader then answers: no
    false no)."""
    rows = [t.encode("utf-8", "replace") for t in texts]
    if kind != "binary":
        rows = [r.decode("utf-8") for r in rows]  # type: ignore[misc]
    column = pyarrow.array(rows, kind)
    decoded = [r if isinstance(r, str) else r.decode("utf-8") for r in rows]
    expected = any(token in text for token in specials for text in decoded)
    across = kind == "binary" and any(token in "".join(decoded) for token in specials)
    assert holds_special(column, frozenset(specials)) == (expected or across)
    if json_reads(Reading()):  # the native JSON Lines reader, in each document alone
        block = _lines(b"".join(json.dumps({"text": t}).encode() + b"\n" for t in decoded))
        found = json_column(block, Reading(), frozenset(specials))
        assert (found is None) == expected
