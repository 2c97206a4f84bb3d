"""Differential targets of the compiled core: native == Python == reference == tiktoken.

Registered in :data:`fuzz.registry.TARGETS` (:mod:`fuzz.targets` imports this module), so the
suite, the campaign and the atheris harness run them like every other target. Where the core is
not built, the native side is the Python path and the targets still check it against the
reference and tiktoken.

    python -m fuzz.campaign --seconds 60 --targets backends,real_backends,native_core
"""

from __future__ import annotations

import array
import json
from itertools import pairwise
from typing import Any

from fuzz.registry import Tally, expect_equal, outcome, prefixes, reference_encode, target
from fuzz.strategies import Case, case
from streamcodec.engine.backend import backend
from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.piece import LONG_PIECE, PieceEncoder
from streamcodec.reference import rank_merge

__all__: list[str] = []


@target("backends", case(surrogates=True, max_pieces=6))
def _check_backends(case: Case) -> Tally:
    """Encoding on the native and the Python backend == reference == tiktoken: ordinary text,
    special tokens (``encode`` and ``encode_to_numpy`` refusing them), lone surrogates,
    encode_bytes of invalid UTF-8."""
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
        refused = outcome(theirs.encode, text)
        expect_equal(case, "text", text, outcome(fast.encode, text), refused)
        # the disallowed-special check fused into the pass (engine/_fused_parts.h)
        expect_equal(case, "text", text, outcome(_numpy_list, fast, text), refused)
    for data in [t.encode("utf-8", "surrogatepass") for t in case.texts] + list(case.pieces):
        data += b"\\xff\\xc3"  # invalid UTF-8 at the end whatever came before
        ids = fast.encode_bytes(data)
        expect_equal(case, "bytes", data, ids, slow.encode_bytes(data))
        expect_equal(case, "bytes", data, fast.decode_bytes(ids), data)
    return Tally(2 * len(checked) + 2 * len(case.texts) + len(case.pieces))


def _numpy_list(encoding: Any, text: str) -> list[int]:
    return encoding.encode_to_numpy(text).tolist()  # type: ignore[no-any-return]


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
    core, every_length = Core(ranks, long_piece=LONG_PIECE), Core(ranks, long_piece=1)
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


@target("batch", case(surrogates=True, max_pieces=6))
def _check_batch(case: Case) -> Tally:
    """The batch pass (native threads, and the pure twin) == tiktoken's encode_ordinary per
    document, and for bytes == decode(errors="replace") then encode / encode_bytes; 1-4 threads.
    The native pass gets two long documents (64 kB each: two threads, which share a word
    cache); the pure twin (also the native backend's where the scanner does not know the
    pattern), which slices the documents by their number, gets them once over: long, they were
    most of an example's time, and the pure encode_bytes of them half the rest (under the
    sanitizers, a campaign's batch of 8 on two seeds: 4.8 and 9.1 s an example, now 0.8 and 3.1)."""
    fast, slow = case.vocab.encoding, case.vocab.python_encoding
    theirs = case.vocab.tiktoken
    filler = "".join(case.texts) or "filler "
    native = fast.ordinary.native_pattern is not None  # the native pass, not the pure twin
    compared = 0
    for enc, repeat in ((fast, 70_000 // len(filler) + 1 if native else 1), (slow, 1)):
        texts, data = _batch_documents(case, filler * repeat)
        expected = [theirs.encode_ordinary(text) for text in texts]
        replaced = [theirs.encode_ordinary(d.decode("utf-8", "replace")) for d in data]
        # encode_bytes of valid UTF-8 is its text's ids (tiktoken's, just made); the pure
        # path's only where bytes are kept as escapes.
        kept = [
            r if _is_utf8(d) else slow.encode_bytes(d) for d, r in zip(data, replaced, strict=True)
        ]
        for threads in (1, 2, 4):
            got = _split(*enc.encode_ordinary_batch_to_numpy(texts, num_threads=threads))
            expect_equal(case, "texts", texts, got, expected)
            counts = enc.count_tokens_batch(texts, num_threads=threads).tolist()
            expect_equal(case, "texts", texts, counts, list(map(len, expected)))
            for errors, want in (("replace", replaced), ("surrogateescape", kept)):
                batch = enc.encode_ordinary_batch_to_numpy(data, num_threads=threads, errors=errors)
                got = _split(*batch)
                expect_equal(case, errors, data, got, want)
        compared += 3 * (len(texts) + len(data))
    return Tally(compared)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _batch_documents(case: Case, long: str) -> tuple[list[str], list[bytes]]:
    """The batch target's documents: the case's texts and two of ``long`` (the second after a
    space), and as bytes those, each piece with invalid UTF-8 after it, and each piece after an
    ASCII run of 0-40 bytes (across the UTF-8 decoder's 16-byte blocks, engine/_fused_decode.h)
    in a document with a byte past ASCII (so it is decoded)."""
    texts = [*case.texts, long, " " + long]
    data = [t.encode("utf-8", "surrogatepass") for t in case.texts]
    data += [piece + b"\xff\xc3" for piece in case.pieces]
    data += [b"a" * (len(piece) * 7 % 41) + piece + "é".encode() for piece in case.pieces]
    data += [text.encode("utf-8", "surrogatepass") for text in texts[-2:]]
    return texts, data


@target("jsonl", case(surrogates=True, max_pieces=6))
def _check_jsonl(case: Case) -> Tally:
    """The corpus tool's native JSON Lines reader == the Python reader (``json.loads`` of each
    line), or it leaves the block to it (always where that one refuses it): lines of the case's
    texts, escaped or raw UTF-8, and with each piece's bytes put in somewhere."""
    from streamcodec.corpus.columns import json_column, json_reads
    from streamcodec.corpus.document import Input, Reading
    from streamcodec.corpus.jsonlines import Lines, json_documents

    if not json_reads(Reading()):
        return Tally()
    specials = frozenset(case.vocab.encoding.special_tokens)
    lines = [
        json.dumps({"id": n, "text": text}, ensure_ascii=n % 2 == 0).encode(
            "utf-8", "surrogatepass"
        )
        for n, text in enumerate(case.texts)
    ]
    whole = b"\n".join(lines) + b"\n"
    blocks = [whole]
    for piece in case.pieces:  # where its length says
        at = len(piece) * 7919 % (len(whole) + 1)
        blocks.append(whole[:at] + piece + whole[at:])
    for data in blocks:
        block = Lines(data, 0, 1, data.count(b"\n") + (not data.endswith(b"\n")))
        column = json_column(block, Reading(), specials)
        got = None
        if column is not None:
            bounds = array.array("q", column.offsets)
            got = [column.data[start:end].decode() for start, end in pairwise(bounds)]
        try:
            inp = Input("fuzz", "jsonl", None, len(data), 0)
            texts = [doc.text for doc in json_documents(inp, block, Reading())]
        except ValueError:
            texts = None
        if texts is None or any(token in text for token in specials for text in texts):
            expect_equal(case, "lines", data, got, None)
        elif got is not None:
            expect_equal(case, "lines", data, got, texts)
    return Tally(len(blocks))


def _split(ids: Any, offsets: Any) -> list[list[int]]:
    """A batch's flat ids as one list a document."""
    return [ids[start:end].tolist() for start, end in pairwise(offsets)]
