"""Differential targets of the compiled core: native == Python == reference == tiktoken.

Registered in :data:`fuzz.registry.TARGETS` (:mod:`fuzz.targets` imports this module), so the
suite, the campaign and the atheris harness run them like every other target. Where the core is
not built, the native side is the Python path and the targets still check it against the
reference and tiktoken.

    python -m fuzz.campaign --seconds 60 --targets backends,real_backends,native_core
"""

from __future__ import annotations

from fuzz.registry import Tally, expect_equal, outcome, prefixes, reference_encode, target
from fuzz.strategies import Case, case
from streamcodec.engine.backend import backend
from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.piece import PieceEncoder
from streamcodec.reference import rank_merge

__all__: list[str] = []


@target("backends", case(surrogates=True, max_pieces=6))
def _check_backends(case: Case) -> Tally:
    """Encoding on the native and the Python backend == reference == tiktoken: ordinary text,
    special tokens, lone surrogates, encode_bytes of invalid UTF-8."""
    fast, slow = case.vocab.encoding, case.vocab.python_encoding
    theirs = case.vocab.tiktoken
    checked = prefixes(case.texts)
    for text in checked:
        expected = outcome(theirs.encode_ordinary, text)
        expect_equal(case, "text", text, outcome(fast.encode_ordinary, text), expected)
        expect_equal(case, "text", text, outcome(slow.encode_ordinary, text), expected)
        try:
            valid = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        expect_equal(
            case, "text", text, fast.encode_ordinary(text), reference_encode(text, case.vocab)
        )
        expect_equal(case, "bytes", valid, fast.encode_bytes(valid), slow.encode_bytes(valid))
    for text in case.texts:
        everything = outcome(fast.encode, text, allowed_special="all")
        expect_equal(
            case, "text", text, everything, outcome(slow.encode, text, allowed_special="all")
        )
        expect_equal(case, "text", text, outcome(fast.encode, text), outcome(theirs.encode, text))
    for data in [t.encode("utf-8", "surrogatepass") for t in case.texts] + list(case.pieces):
        data += b"\\xff\\xc3"  # invalid UTF-8 at the end whatever came before
        ids = fast.encode_bytes(data)
        expect_equal(case, "bytes", data, ids, slow.encode_bytes(data))
        expect_equal(case, "bytes", data, fast.decode_bytes(ids), data)
    return Tally(2 * len(checked) + 2 * len(case.texts) + len(case.pieces))


@target("real_backends", case(real=True, surrogates=True, max_repeat=400, max_pieces=4))
def _check_real_backends(case: Case) -> Tally:
    """The same on the genuine encodings, with long repetitions."""
    return _check_backends(case)


@target("native_core", case(max_texts=0, max_pieces=24))
def _check_native_core(case: Case) -> Tally:
    """Core.merge_piece / backtrack_piece / encode_piece == their Python twins == rank_merge."""
    if backend() != "native":
        return Tally()
    from streamcodec.pieces._core import Core

    ranks = case.vocab.ranks
    core, every_length = Core(ranks), Core(ranks, long_piece=1)
    twin = PieceEncoder(ranks, long_piece=1)
    checked = prefixes(case.pieces)
    for piece in checked:
        merged = merge_piece(piece, ranks)
        expect_equal(case, "piece", piece, core.merge_piece(piece), merged)
        expect_equal(
            case,
            "piece",
            piece,
            core.merge_piece(piece),
            rank_merge(piece, ranks, whole_piece=False),
        )
        backtracked = backtrack_piece(piece, twin.order, twin._trie)
        expect_equal(case, "piece", piece, core.backtrack_piece(piece), backtracked)
        expect_equal(case, "piece", piece, every_length.encode_piece(piece), twin(piece))
        expect_equal(case, "piece", piece, core.encode_piece(piece), rank_merge(piece, ranks))
    return Tally(5 * len(checked))


@target("real_native_core", case(real=True, max_texts=0, max_pieces=12))
def _check_real_native_core(case: Case) -> Tally:
    """The same on the genuine encodings."""
    return _check_native_core(case)
