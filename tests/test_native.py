"""The compiled core equals its Python twin: piece functions, whole encodings, bad input.

Every native function is checked against the Python function it names (merge_piece,
backtrack_piece, PieceEncoder) on trained and shuffled random vocabularies (deep merge chains,
unreachable tokens, rank gaps), and whole ``Encoding``s on both backends against each other,
the reference and tiktoken. Skipped when the core is not built.
"""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding
from streamcodec.engine import backend as native
from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.piece import LONG_PIECE, PieceEncoder
from streamcodec.reference import rank_merge
from streamcodec.vocab import PATTERNS
from tests.test_fast import ALPHABET, LONG_PIECES, pieces_strategy, random_vocabulary

core_module = pytest.importorskip("streamcodec.pieces._core")
Core = core_module.Core


def both(ranks: dict[bytes, int], **options: object) -> tuple[Encoding, Encoding]:
    """The same vocabulary on the native and the Python backend."""
    made = tuple(
        Encoding(
            "toy",
            pat_str=str(options.get("pat_str", PATTERNS["cl100k_base"])),
            mergeable_ranks=ranks,
            special_tokens=dict(options.get("special_tokens", {})),  # type: ignore[call-overload]
            backend=backend,
        )
        for backend in ("native", "python")
    )
    assert [e.backend for e in made] == ["native", "python"]
    return made  # type: ignore[return-value]


def with_gaps(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """The same merge order with gaps between the ranks of multi-byte tokens."""
    return {t: r if r < 256 else 256 + 7 * (r - 256) + 3 for t, r in ranks.items()}


# ---------------------------------------------------------------- piece functions


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans(), gaps=st.booleans(), piece=pieces_strategy)
def test_core_equals_python_twins(seed: int, shuffle: bool, gaps: bool, piece: bytes) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    if gaps:
        ranks = with_gaps(ranks)
    core, twin = Core(ranks, long_piece=LONG_PIECE), PieceEncoder(ranks)
    expected = rank_merge(piece, ranks, whole_piece=False)
    assert core.merge_piece(piece) == merge_piece(piece, ranks) == expected
    assert core.backtrack_piece(piece) == backtrack_piece(piece, twin.order, twin._trie)
    assert core.backtrack_piece(piece) == expected
    assert core.encode_piece(piece) == twin(piece) == rank_merge(piece, ranks)
    assert Core(ranks, long_piece=1).encode_piece(piece) == twin(piece)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans(), data=st.data())
def test_core_takes_unreachable_tokens_only_as_whole_pieces(
    seed: int, shuffle: bool, data: st.DataObject
) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    core, twin = Core(ranks, long_piece=1), PieceEncoder(ranks, long_piece=1)
    tokens = [t for t in ranks if len(t) > 1]
    if not tokens:
        return
    for token in data.draw(st.lists(st.sampled_from(tokens), min_size=1, max_size=6)):
        for piece in (token, token + token, b"a" + token, token + b"c"):
            assert core.encode_piece(piece) == twin(piece) == rank_merge(piece, ranks)


@pytest.mark.parametrize("width", [8, 9, 11, 12, 13, 254, 255, 256, 300])
def test_lookup_tells_tokens_apart_past_the_slots_bytes(width: int) -> None:
    """A slot holds a key's first 12 bytes and its length up to 255 (255: that or more): tokens
    that share those (a common start, lengths from 255 on) are told apart by their own bytes."""
    ranks = {bytes([b]): b for b in range(256)}
    stem = b"abcdefghijkl"[: min(width, 12)] + b"x" * max(0, width - 12)
    for token in (stem, stem + b"y", stem + b"yy", stem[:-1] + b"z", stem + b"y" * 300):
        ranks.setdefault(token, len(ranks))
    core, twin = Core(ranks, long_piece=LONG_PIECE), PieceEncoder(ranks)
    for token in ranks:
        for piece in (token, token[:-1], token + b"y", token[:-1] + b"q"):
            if piece:
                assert core.encode_piece(piece) == twin(piece) == rank_merge(piece, ranks)


def test_long_and_real_pieces_equal_the_python_path(real_encoding: Encoding) -> None:
    ranks = real_encoding.mergeable_ranks
    core, twin = Core(ranks, long_piece=LONG_PIECE), PieceEncoder(ranks)
    text = "".join(samples().values())
    pieces = sorted({p.encode() for p in real_encoding.ordinary.pretokenizer.pieces(text)}, key=len)
    for piece in pieces[-300:] + pieces[::40] + [t.encode() for t in LONG_PIECES]:
        assert core.encode_piece(piece) == twin(piece), piece[:40]
        assert core.backtrack_piece(piece) == twin.merge(piece) or piece in ranks


def test_a_multi_megabyte_piece(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    native_enc, python_enc = both(ours.mergeable_ranks, pat_str=ours.pat_str)
    rng = random.Random(5)
    text = "".join(rng.choice("aaab") for _ in range(3_000_000))  # one 3 MB piece of letters
    expected = theirs.encode_ordinary(text)
    assert native_enc.encode_ordinary(text) == expected
    assert python_enc.encode_ordinary(text[:300_000]) == theirs.encode_ordinary(text[:300_000])


# ---------------------------------------------------------------- whole encodings


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    shuffle=st.booleans(),
    gaps=st.booleans(),
    text=st.text(st.sampled_from("ab c\n\ud800é<"), max_size=80),
)
def test_backends_agree_on_random_vocabularies(
    seed: int, shuffle: bool, gaps: bool, text: str
) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    if gaps:
        ranks = with_gaps(ranks)
    special = {"<|s|>": max(ranks.values()) + 5}
    fast, slow = both(ranks, special_tokens=special)
    assert fast.encode(text, allowed_special="all") == slow.encode(text, allowed_special="all")
    data = text.encode("utf-8", "surrogatepass") + b"\xff\xc3"
    assert fast.encode_bytes(data) == slow.encode_bytes(data)
    assert fast.decode_bytes(fast.encode_bytes(data)) == data


SURROGATE_TEXTS = ["a\ud800b", "\udcff" * 3, "caf\udce9 ok", "x \ud83d\ude00 \ude00\ud83d"]


@pytest.mark.parametrize("text", SURROGATE_TEXTS)
def test_lone_surrogates_and_invalid_utf8_on_both_backends(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    fast, slow = both(ours.mergeable_ranks, pat_str=ours.pat_str)
    assert fast.encode(text) == slow.encode(text) == theirs.encode(text)
    data = text.encode("utf-8", "surrogatepass") + b"\x80\xfe abc \xe9"
    assert fast.encode_bytes(data) == slow.encode_bytes(data)
    assert fast.decode_bytes(fast.encode_bytes(data)) == data


def test_special_tokens_on_both_backends(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    fast, slow = both(
        ours.mergeable_ranks, pat_str=ours.pat_str, special_tokens=ours.special_tokens
    )
    text = "hi <|endoftext|> there<|endoftext|>"
    for enc in (fast, slow):
        assert enc.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
        with pytest.raises(ValueError, match="endoftext"):
            enc.encode(text)


def test_the_default_encodings_take_the_core() -> None:
    assert streamcodec.backend() in ("native", "python")
    assert (
        Encoding(
            "x",
            pat_str=r"\S+",
            mergeable_ranks={bytes([b]): b for b in range(256)},
            special_tokens={},
        ).backend
        == streamcodec.backend()
    )


# ---------------------------------------------------------------- bad input


def test_vocabularies_the_core_cannot_take_stay_exact_in_python() -> None:
    bytes_ = {bytes([b]): b for b in range(256)}
    huge = bytes_ | {b"ab": 2**40}
    missing = {t: r for t, r in bytes_.items() if t != b"z"} | {b"za": 300}
    # A rank past 2**32 - 2 keeps the pure path; a missing byte no longer does: the encoding
    # gives the core stand-ins for it and refuses text that needs it (engine/model.py).
    for ranks, backend in ((huge, "python"), (missing, "native")):
        enc = Encoding("x", pat_str=r"\S+| ", mergeable_ranks=ranks, special_tokens={})
        slow = Encoding(
            "x", pat_str=r"\S+| ", mergeable_ranks=ranks, special_tokens={}, backend="python"
        )
        assert enc.backend == backend
        assert enc.encode_ordinary("ab za") == slow.encode_ordinary("ab za")
    with pytest.raises(ValueError, match="not a token"):
        Encoding("x", pat_str=r"\S+", mergeable_ranks=missing, special_tokens={}).encode("zz")
    with pytest.raises(ValueError, match="single byte"):
        Core(missing, long_piece=LONG_PIECE)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        Core(huge, long_piece=LONG_PIECE)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        Core(bytes_ | {b"ab": -1}, long_piece=LONG_PIECE)


def test_bad_arguments_raise_never_crash() -> None:
    core = Core({bytes([b]): b for b in range(256)}, long_piece=LONG_PIECE)
    with pytest.raises(TypeError):
        Core({"a": 1}, long_piece=LONG_PIECE)  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        Core({b"a": "1"}, long_piece=LONG_PIECE)  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        Core([], long_piece=LONG_PIECE)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="long_piece"):  # its one home: pieces.piece.LONG_PIECE
        Core({bytes([b]): b for b in range(256)})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="str"):
        core.encode_pieces(["a", b"b"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        core.encode_pieces(("a",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="errors"):
        core.encode_pieces(["a"], errors="replace")
    with pytest.raises(UnicodeEncodeError):
        core.encode_pieces(["ok", "a\ud800"])
    with pytest.raises(UnicodeEncodeError):
        core.encode_pieces(["\ud800"], errors="surrogateescape")
    with pytest.raises(TypeError):
        core.encode_piece("text")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="__init__"):
        Core.__new__(Core).encode_pieces(["a"])
    assert core.encode_pieces([]) == [] and core.encode_piece(b"") == []
    assert core.encode_pieces(["\udcff"], errors="surrogateescape") == [255]


def test_a_buffer_written_during_the_call_cannot_crash_the_core() -> None:
    """Regression (review of the core): a bytearray rewritten by another thread while the GIL
    was released made merge_piece index past its ids and crash. Only bytes are used in place
    now; other buffers are copied first. Run in a child process: a crash must not take pytest."""
    code = """
import threading, time
from streamcodec.pieces._core import Core
ranks = {bytes([b]): b for b in range(256)}
for t in [b"ab", b"abab", b"abababab", b"cd", b"cdcd", b"cdcdcdcd"]:
    ranks[t] = len(ranks)
core = Core(ranks, long_piece=512)
data = bytearray(b"ab" * 20000)
stop = False
def write():
    i = 0
    while not stop:
        data[:] = b"ab" * 20000 if i % 2 else b"ax" * 20000
        i += 1
writer = threading.Thread(target=write)
writer.start()
start = time.monotonic()
try:
    while time.monotonic() - start < 3:
        for encode in (core.merge_piece, core.encode_piece, core.backtrack_piece):
            encode(data)
finally:
    stop = True
    writer.join()
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.BACKEND_ENV, "python")
    assert streamcodec.backend() == "python"
    monkeypatch.setenv(native.BACKEND_ENV, "native")
    assert streamcodec.backend() == "native"
    monkeypatch.setenv(native.BACKEND_ENV, "rust")
    with pytest.raises(ValueError, match="STREAMCODEC_BACKEND=rust"):
        streamcodec.backend()
    monkeypatch.setattr(native, "_load_compiled", lambda: "no module named _core")
    monkeypatch.setenv(native.BACKEND_ENV, "native")
    with pytest.raises(ImportError, match=r"STREAMCODEC_BACKEND=native.*not built"):
        streamcodec.backend()
    monkeypatch.setenv(native.BACKEND_ENV, "auto")
    assert streamcodec.backend() == "python"
    with pytest.raises(ImportError, match="backend='native'"):
        Encoding("x", pat_str=".", mergeable_ranks={}, special_tokens={}, backend="native")


# ---------------------------------------------------------------- fork


def _in_a_child(check: Callable[[], bool]) -> bool:
    """Whether ``check()`` holds in a child of a fork, which an alarm ends if it hangs."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's result is its exit status
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(20)
        try:
            ok = check()
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_children_of_a_fork_use_or_build_the_candidates_index() -> None:
    """The backtracking candidates' index (``sc__prefix_index``), built lazily by one thread, in
    children of a fork: one built before the fork is used as it is; one not yet built is built
    by the child and by its own child. (A fork while another thread builds it, which left the
    child waiting forever, is simulated in tools/tsan_core.c, run by tools/tsan.sh.)"""
    ranks = random_vocabulary(11, shuffle=False)
    piece = bytes(random.Random(11).choice(ALPHABET) for _ in range(2 * LONG_PIECE))
    expected = rank_merge(piece, ranks, whole_piece=False)
    built, fresh = Core(ranks, long_piece=LONG_PIECE), Core(ranks, long_piece=LONG_PIECE)
    assert built.backtrack_piece(piece) == expected
    assert _in_a_child(lambda: built.backtrack_piece(piece) == expected)
    assert _in_a_child(
        lambda: (
            _in_a_child(lambda: fresh.backtrack_piece(piece) == expected)
            and fresh.backtrack_piece(piece) == expected
        )
    )
    assert fresh.backtrack_piece(piece) == expected


# ---------------------------------------------------------------- memory


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


@pytest.mark.skipif(not Path("/proc/self/statm").is_file(), reason="needs /proc")
def test_memory_stays_flat_over_many_calls() -> None:
    core = Core(streamcodec.get_encoding("cl100k_base").mergeable_ranks, long_piece=LONG_PIECE)
    pieces = ["hello", " world", "ünïcödé", "a" * 600, "\udcff"]

    def calls(n: int) -> None:
        for _ in range(n):
            core.encode_pieces(pieces, errors="surrogateescape")
            core.encode_piece(b"xyzzy")
            with pytest.raises(UnicodeEncodeError):
                core.encode_pieces(pieces)

    calls(2000)  # warm up allocators
    gc.collect()
    before = _rss_bytes()
    calls(30_000)
    gc.collect()
    assert _rss_bytes() - before < 8_000_000


def test_the_command_line_names_the_backend_and_refuses_a_bad_one(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    def run(*args: str, backend: str) -> subprocess.CompletedProcess[str]:
        env = os.environ | {native.BACKEND_ENV: backend}
        command = [sys.executable, "-m", "streamcodec", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    assert f"(backend: {streamcodec.backend()})" in run("--version", backend="auto").stdout
    assert "(backend: python)" in run("--version", backend="python").stdout
    (tmp_path / "t.txt").write_text("hello")
    refused = run("count", str(tmp_path / "t.txt"), backend="rust")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "STREAMCODEC_BACKEND=rust" in refused.stderr
