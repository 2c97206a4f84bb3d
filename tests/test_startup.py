"""Start-up stays cheap: loading the package compiles no safe-cut rule and starts no workers'
machinery (issue 22 §3; the figures: benchmarks/startup.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamcodec import Encoding
from streamcodec.pieces import LONG_PIECE
from streamcodec.pieces.packed import PackedRanks
from streamcodec.registry import SPECS
from streamcodec.vocabularies import SHIPPED, shipped_packed

ROOT = Path(__file__).resolve().parents[1]


def _fresh_python(code: str, **env: str) -> str:
    """What ``code`` prints, run by a fresh interpreter that imports streamcodec from here
    (with ``env`` added to its environment)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), **env},
    ).stdout


def test_loading_encoding_compiles_no_safe_cut_rule() -> None:
    """Regression: stream/windows.py compiled the reverse safe-cut rules at import (130 ms of
    every start-up, the CLI's too); multiprocessing was imported for runs that use no worker."""
    code = (
        "import sys\n"
        "from streamcodec import Encoding\n"
        "import streamcodec.stream.cuts as cuts\n"
        "print(cuts.safe_cuts.cache_info().currsize, cuts.last_safe_cut.cache_info().currsize,\n"
        "      'multiprocessing' in sys.modules)\n"
    )
    out = _fresh_python(code)
    assert out.split() == ["0", "0", "False"]


def test_the_pure_backend_imports_no_compiled_module() -> None:
    """Regression: a shipped vocabulary's ranks were unpacked by the compiled core even under
    ``STREAMCODEC_BACKEND=python`` (the backend is the one choice of path, engine/backend.py)."""
    code = (
        "import sys, streamcodec\n"
        "streamcodec.get_encoding('cl100k_base').encode('hello world')\n"
        "print([m for m in sys.modules if m.rpartition('.')[2] in ('_core', '_scan', '_fused')])\n"
    )
    assert _fresh_python(code, STREAMCODEC_BACKEND="python").strip() == "[]"


def test_a_named_encoding_encodes_without_the_dict_of_its_ranks() -> None:
    """``get_encoding`` hands the compiled core the shipped arrays (``Core.packed``): the dict of
    100,000 bytes objects, the decoding table and the manifest's hash of the ranks were half of a
    command's start. Encoding (ids, counts, arrays, a batch) and the corpus's record make
    neither; the first decode makes the table, ``mergeable_ranks`` the dict."""
    code = (
        "import streamcodec\n"
        "from streamcodec.corpus.manifest import encoding_record\n"
        "enc = streamcodec.get_encoding('cl100k_base')\n"
        "ids = enc.encode('hello world'); enc.count_tokens('hello world')\n"
        "enc.encode_ordinary_batch_to_numpy(['a b', 'c']); encoding_record(enc)\n"
        "made = lambda: sorted(set(vars(enc._bytes)) & {'ranks', 'by_id'})\n"
        "print(made(), enc.backend)\n"
        "assert enc.decode(ids) == 'hello world'\n"
        "print(made())\n"
        "assert enc.mergeable_ranks[b'hello'] == 15339\n"
        "print(made())\n"
    )
    lines = _fresh_python(code).splitlines()
    assert lines == ["[] native", "['by_id', 'ranks']", "['by_id', 'ranks']"]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_tables_from_the_packed_arrays_equal_those_from_the_dict(name: str) -> None:
    """``Core.packed`` (the arrays as the file holds them) encodes as ``Core(ranks)`` (the dict
    made from them), the lazily made dict and decoding table equal tiktoken's, and an encoding
    built from the packed ranks equals one built from the dict."""
    core = pytest.importorskip("streamcodec.pieces._core")
    packed = shipped_packed(name)
    assert packed is not None
    ranks = packed.ranks()
    from_arrays = core.Core.packed(packed.lengths, packed.blob, packed.runs, long_piece=LONG_PIECE)
    from_dict = core.Core(ranks, long_piece=LONG_PIECE)
    pieces = [t.decode("utf-8", "replace") for t in list(ranks)[::97]]
    pieces += ["hello", " world", "x" * 700, "ab" * 300, "\u00e9t\u00e9", " " * 40, "1234567"]
    assert from_arrays.encode_pieces(pieces) == from_dict.encode_pieces(pieces)
    spec = SPECS[name]
    lazy = Encoding(name, pat_str=spec.pat_str, mergeable_ranks=packed,
                    special_tokens=spec.special_tokens)  # fmt: skip
    eager = Encoding(name, pat_str=spec.pat_str, mergeable_ranks=ranks,
                     special_tokens=spec.special_tokens)  # fmt: skip
    assert lazy.max_token_value == eager.max_token_value and lazy.n_vocab == eager.n_vocab
    text = "Hello, w\u00f6rld! 12345 \U0001f600 <|endoftext|> " * 20
    ids = eager.encode(text, allowed_special="all")
    assert lazy.encode(text, allowed_special="all") == ids
    assert lazy.decode_tokens_bytes(ids) == eager.decode_tokens_bytes(ids)
    assert lazy.mergeable_ranks == ranks and lazy._bytes.by_id == eager._bytes.by_id


def test_packed_ranks_that_clash_or_repeat_are_refused() -> None:
    """A special token's id equal to a packed rank is refused when the encoding is made, as for
    a dict; packed ranks whose runs overlap are refused when read."""
    packed = shipped_packed("r50k_base")
    assert packed is not None
    with pytest.raises(ValueError, match="1 token ids are used twice"):
        Encoding("x", pat_str=SPECS["r50k_base"].pat_str, mergeable_ranks=packed,
                 special_tokens={"<|x|>": 50000})  # fmt: skip
    with pytest.raises(ValueError, match="overlap"):
        PackedRanks(packed.lengths, packed.blob, [(0, 300), (299, len(packed) - 300)])


def test_a_dicts_ranks_that_clash_or_repeat_are_refused_its_table_made_when_asked() -> None:
    """A dict's ranks answer as packed ones do (one interface, ``pieces/ranks.py``): a rank two
    tokens have, or a special token's id equal to a rank, is refused when the encoding is
    made; the decoding table is made at the first decode, not at load (cl100k's dict: 41 ->
    25 ms an encoding)."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    for more, specials in (({b"cd": 256}, {}), ({}, {"<|x|>": 256})):
        with pytest.raises(ValueError, match="1 token ids are used twice"):
            Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks | more,
                     special_tokens=specials)  # fmt: skip
    enc = Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<|x|>": 257})
    assert "by_id" not in vars(enc._bytes) and enc.max_token_value == 257
    assert enc.decode([256, 257]) == "ab<|x|>" and "by_id" in vars(enc._bytes)


def test_the_candidates_index_is_built_once_by_the_first_long_piece_of_any_thread() -> None:
    """The backtracking candidates' index (a sort of every token, half of the tables' build) is
    built by the first long piece, not at load: threads whose first long pieces race on a new
    core (the GIL released) get the ids one thread gets, and the merge loop's (short pieces)
    never needed it."""
    from concurrent.futures import ThreadPoolExecutor

    core = pytest.importorskip("streamcodec.pieces._core")
    packed = shipped_packed("cl100k_base")
    assert packed is not None

    def fresh() -> Any:
        return core.Core.packed(packed.lengths, packed.blob, packed.runs, long_piece=LONG_PIECE)

    pieces = [("ab" * 400)[k:] + "x" * k for k in range(16)] + ["hello", " world"] * 8
    expected = fresh().encode_pieces(pieces)
    assert fresh().encode_pieces(["hello", " world"]) == [15339, 1917]
    for _ in range(5):
        shared = fresh()
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(shared.encode_pieces, [pieces] * 8))
        assert got == [expected] * 8


def test_a_command_imports_no_standard_module_it_does_not_use(tmp_path: Path) -> None:
    """The one-line ``tokenize-corpus`` run and ``count`` import none of the standard modules
    their start used to pay for without using them: socket (the host's name is uname's),
    secrets and hmac (a temporary's name is ``os.urandom``'s), tempfile and importlib.resources
    (the pure path's Unicode table and stdout's spool import them where they are used),
    pkgutil (only a plugin's encoding needs it); nor does ``count`` import hashlib (OpenSSL's:
    only a file checked against its sha256, and the corpus tool, hash), nor ctypes (glibc's
    mallopt is called through ``_ctypes``: 2.0 -> 0.45 ms). Nor dataclasses (with inspect and
    ast: its records are named tuples, 384 -> 306 M instructions of the one-line run), nor the
    readers of steps and of patterns no scanner knows (the encoding's pattern is a named one);
    nor does ``tokenize-corpus`` import pathlib (with urllib.parse and ipaddress: 5%; ``count``
    hands its input to the stream as a ``Path``)."""
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "hello world"}\n')
    unwanted = {"socket", "secrets", "hmac", "tempfile", "importlib.resources", "pkgutil"}
    unwanted |= {"dataclasses", "inspect", "ast"}
    unwanted |= {f"streamcodec.text.{name}" for name in ("sequence", "pinned", "regex_patterns")}
    for command, also in (
        (["tokenize-corpus", "-q", str(path), "-o", str(tmp_path / "out")], {"pathlib"}),
        (["count", str(path)], {"hashlib", "_hashlib", "ctypes"}),
    ):
        names = unwanted | also
        # What the interpreter's start imported is not the command's (an editable install's
        # finder, run by site, imports pathlib).
        script = (
            "import sys; started = set(sys.modules); from streamcodec.cli import main; status = "
            f"main({command!r}); print(status, *sorted(m for m in sys.modules if m in {names!r}"
            " and m not in started))"
        )
        assert _fresh_python(script).split()[-1:] == ["0"], command


def test_the_command_line_imports_with_the_collector_off_then_freezes_them(
    tmp_path: Path,
) -> None:
    """The command's process (``main()`` with no argv: ``python -m streamcodec``) imports its
    modules with the garbage collector off and freezes them out of later collections (3.5 ms
    of a start); a caller passing argv (an embedding program, the tests) keeps its collector
    as it was and nothing of its own frozen."""
    path = tmp_path / "in.txt"
    path.write_text("hello world\n")
    code = (
        "import gc, sys\n"
        "from streamcodec.cli import main\n"
        f"argv = ['count', {str(path)!r}]\n"
        "if sys.argv[1:] == ['process']:\n"
        "    sys.argv = ['streamcodec', *argv]; argv = None\n"
        "status = main(argv)\n"
        "print(status, gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)\n"
    )
    for mode, frozen in (("process", "True"), ("caller", "False")):
        done = subprocess.run(
            [sys.executable, "-c", code, mode],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": str(ROOT)},
        )
        assert done.stderr.split() == ["0", "True", frozen], mode


def test_count_reads_through_the_corpus_package_without_its_run(tmp_path: Path) -> None:
    """``count`` and ``encode`` read their input through ``corpus.files`` and
    ``corpus.document``; the package no longer imports its run and its check with them (11 ms
    of their start); and ``streamcodec.corpus.tokenize`` is the function whatever was imported
    first, as when the package imported it eagerly."""
    path = tmp_path / "in.txt"
    path.write_text("hello world\n")
    run = {"streamcodec.corpus.tokenize", "streamcodec.corpus.check", "streamcodec.corpus.job"}
    script = (
        "import sys; from streamcodec.cli import main; status = main("
        f"['count', {str(path)!r}]); print(status, *sorted(m for m in sys.modules if m in {run!r}))"
    )
    assert _fresh_python(script).split()[-1:] == ["0"]
    for first in ("import streamcodec.corpus.tokenize", "from streamcodec.corpus import tokenize"):
        script = (
            f"{first}\nimport streamcodec.corpus, streamcodec.corpus.tokenize\n"
            "from streamcodec.corpus import check_corpus, read_documents, tokenize\n"
            "print(*(type(f).__name__ for f in (streamcodec.corpus.tokenize, tokenize,"
            " check_corpus, read_documents)))\n"
        )
        assert _fresh_python(script).split() == ["function"] * 4, first


def test_a_named_encoding_loads_without_the_modules_only_files_and_models_need() -> None:
    """``import streamcodec; get_encoding(name).encode(...)`` (a library's start) imports no JSON
    (only a Hugging Face steps pattern is JSON), no unicodedata (only an NFC model), no hashlib
    (only a file checked against its sha256), nor the command line's modules."""
    code = (
        "import sys, streamcodec\n"
        "streamcodec.get_encoding('cl100k_base').encode('hello world')\n"
        "print('-', *sorted(m for m in sys.modules if m in {'json', 'unicodedata', 'hashlib',"
        " 'argparse', 'socket', 'tempfile', 'pkgutil', 'ctypes', 'shutil', 'random'}))\n"
    )
    assert _fresh_python(code).split() == ["-"]
