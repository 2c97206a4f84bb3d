"""The batch methods (issue 28): many texts at once, the GIL released once, on native threads.

Every document's ids must equal tiktoken's ``encode_ordinary`` of it, for str, bytes and pyarrow
inputs, on both backends and any number of threads; invalid UTF-8, nulls and wrong types are
refused with one clear line; Ctrl-C ends a long batch within a second.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec import Encoding
from streamcodec.batch import encode_flat_uint32
from streamcodec.engine.batch import FlatTexts
from streamcodec.text.unicode import InvalidUTF8Error
from tests.children import reaped
from tests.conftest import tiktoken_twin

pa = pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["hello", " world", " déjà", " vu", "你好", " 🦙", "\n\n", "  ", "123", " x=1;", "?!", "é"]
# Over the size below which a batch runs on the calling thread (_fused_batch.h INLINE_BYTES).
FILLER = "The quick brown fox, 12 times; déjà vu 你好 🦙.\n" * 1600


def corpus(seed: int, count: int = 300) -> list[str]:
    """Documents of 0-20 KB of mixed scripts (every PEP 393 kind), some empty."""
    rng = random.Random(seed)
    docs = ["", " ", "a" * 5000, "\ud83d lone, \ud83d\ude00 joined, \udc80 lone"]
    while len(docs) < count:
        docs.append("".join(rng.choice(WORDS) for _ in range(rng.choice([1, 10, 300, 3000]))))
    return docs


def split(ids: Any, offsets: Any) -> list[list[int]]:
    return [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


@pytest.fixture(scope="module")
def docs() -> list[str]:
    return corpus(28)


def test_every_input_kind_equals_tiktoken_per_document(real_pair: Any, docs: list[str]) -> None:
    enc, ref = real_pair
    want = [ref.encode_ordinary(text) for text in docs]
    valid = [text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for text in docs]
    want_valid = [ref.encode_ordinary(text) for text in valid]
    for threads in (1, 3):
        ids, offsets = enc.encode_ordinary_batch_to_numpy(docs, num_threads=threads)
        assert ids.dtype == np.uint32 and offsets.dtype == np.int64
        assert offsets[0] == 0 and len(offsets) == len(docs) + 1
        assert split(ids, offsets) == want
        assert enc.count_tokens_batch(docs, num_threads=threads).tolist() == list(map(len, want))
        assert enc.encode_ordinary_batch(docs, num_threads=threads) == want
        data = [text.encode() for text in valid]
        assert split(*enc.encode_ordinary_batch_to_numpy(data, num_threads=threads)) == want_valid
        for kind in (pa.string(), pa.large_string()):
            array = pa.array(valid, type=kind)
            assert split(*enc.encode_ordinary_batch_to_numpy(array)) == want_valid
            assert enc.count_tokens_batch(array[7:]).tolist() == list(map(len, want_valid[7:]))
            chunked = pa.chunked_array([array[:50], array[50:]])
            assert enc.encode_ordinary_batch(chunked.to_pylist()) == want_valid
            assert split(*enc.encode_ordinary_batch_to_numpy(chunked)) == want_valid


def flat(texts: list[str]) -> FlatTexts:
    data = [text.encode() for text in texts]
    return FlatTexts(np.cumsum([0, *map(len, data)], dtype=np.int64).tobytes(), b"".join(data))


def test_flat_texts_equal_tiktoken_per_document(real_pair: Any, docs: list[str]) -> None:
    """One run of UTF-8 and its offsets (the corpus tool's JSON Lines reader gives them), read
    in place as a pyarrow array is."""
    enc, ref = real_pair
    valid = [text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for text in docs]
    want = [ref.encode_ordinary(text) for text in valid]
    for threads in (1, 3):
        assert split(*enc.encode_ordinary_batch_to_numpy(flat(valid), num_threads=threads)) == want
        counts = enc.count_tokens_batch(flat(valid), num_threads=threads)
        assert counts.tolist() == list(map(len, want))
    for texts in ([], [""], ["", "a", ""]):
        ids, offsets = enc.encode_ordinary_batch_to_numpy(flat(texts))
        assert split(ids, offsets) == [ref.encode_ordinary(t) for t in texts]
    with pytest.raises(InvalidUTF8Error, match=r"texts\[1\].*byte offset 1"):
        enc.count_tokens_batch(FlatTexts(np.array([0, 1, 3], np.int64).tobytes(), b"aa\xff"))
    # unwatched (the corpus tool's tasks: signals checked between them), on the calling thread
    for watch in (False, None):
        ids, offsets = encode_flat_uint32(enc, flat(valid), watch=watch)
        assert split(np.frombuffer(ids, np.uint32), np.frombuffer(offsets, np.int64)) == want


def test_empty_batches_and_empty_texts(real_encoding: Encoding) -> None:
    ids, offsets = real_encoding.encode_ordinary_batch_to_numpy([])
    assert ids.tolist() == [] and offsets.tolist() == [0]
    assert real_encoding.count_tokens_batch([]).tolist() == []
    assert real_encoding.encode_ordinary_batch([]) == []
    assert real_encoding.count_tokens_batch(pa.array([], pa.string())).tolist() == []
    ids, offsets = real_encoding.encode_ordinary_batch_to_numpy(["", b"", ""])
    assert ids.tolist() == [] and offsets.tolist() == [0, 0, 0, 0]
    for kind in (pa.string(), pa.large_binary()):  # no data buffer, or an empty one
        counts = real_encoding.count_tokens_batch(pa.array(["", ""], kind)[1:])
        assert counts.tolist() == [0]


def test_a_thread_with_only_empty_documents(real_encoding: Encoding) -> None:
    # Regression (found by UBSan, tools/sanitize.sh): a thread that encoded only empty
    # documents has no id buffer, and copying its zero ids passed memcpy a null pointer.
    for batch in (["", ""], [FILLER, *[""] * 400]):
        for threads in (1, 2, 8):
            ids, offsets = real_encoding.encode_ordinary_batch_to_numpy(batch, num_threads=threads)
            assert split(ids, offsets) == [real_encoding.encode_ordinary(t) for t in batch]


@pytest.mark.parametrize("threads", range(1, 9))
def test_any_number_of_threads(real_pair: Any, docs: list[str], threads: int) -> None:
    enc, ref = real_pair
    batch = [*docs[:40], FILLER]
    want = [ref.encode_ordinary(text) for text in batch]
    assert split(*enc.encode_ordinary_batch_to_numpy(batch, num_threads=threads)) == want


texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="ab é你🦙\n\t0.\ud83d", max_size=60),
    st.lists(st.sampled_from(WORDS), max_size=30).map("".join),
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    batch=st.lists(
        st.one_of(texts, texts.map(lambda t: t.encode("utf-8", "replace"))), max_size=12
    ),
    threads=st.integers(1, 8),
    filler=st.booleans(),
)
def test_random_batches_equal_encode_ordinary(
    real_encoding: Encoding, batch: list[str | bytes], threads: int, filler: bool
) -> None:
    # With the filler the batch is large enough to run on the threads.
    batch = [*batch, FILLER] if filler else batch
    want = [
        real_encoding.encode_ordinary(text.decode() if isinstance(text, bytes) else text)
        for text in batch
    ]
    ids, offsets = real_encoding.encode_ordinary_batch_to_numpy(batch, num_threads=threads)
    assert split(ids, offsets) == want
    counts = real_encoding.count_tokens_batch(batch, num_threads=threads)
    assert counts.tolist() == list(map(len, want))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(st.binary(max_size=30), min_size=1, max_size=8), threads=st.integers(1, 4))
def test_bytes_are_read_as_bytes_decode_reads_them(
    real_encoding: Encoding, batch: list[bytes], threads: int
) -> None:
    batch = [*batch, FILLER.encode()]
    replaced = [real_encoding.encode_ordinary(data.decode("utf-8", "replace")) for data in batch]
    got = real_encoding.encode_ordinary_batch_to_numpy(batch, num_threads=threads, errors="replace")
    assert split(*got) == replaced
    kept = [real_encoding.encode_bytes(data) for data in batch]
    got = real_encoding.encode_ordinary_batch_to_numpy(
        batch, num_threads=threads, errors="surrogateescape"
    )
    assert split(*got) == kept
    first_bad = next((i for i, data in enumerate(batch) if not _valid(data)), None)
    if first_bad is None:
        return
    exc = _decode_error(batch[first_bad])
    with pytest.raises(InvalidUTF8Error) as raised:
        real_encoding.count_tokens_batch(batch, num_threads=threads)
    assert str(raised.value).startswith(
        f"texts[{first_bad}]: invalid UTF-8 at byte offset {exc.start} ({exc.reason})"
    )


def _valid(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _decode_error(data: bytes) -> UnicodeDecodeError:
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        return exc
    raise AssertionError("valid")


def test_invalid_utf8_names_the_first_bad_document(real_encoding: Encoding) -> None:
    batch = [b"fine"] * 50 + [b"ok " * 30000 + b"caf\xc3("] + [b"\xff"] * 50
    with pytest.raises(
        InvalidUTF8Error, match=r"^texts\[50\]: invalid UTF-8 at byte offset 90003 "
    ):
        real_encoding.encode_ordinary_batch_to_numpy(batch, num_threads=4)


@pytest.mark.parametrize("threads", [2, 4])
def test_a_fresh_encoders_first_part_names_the_first_bad_document(
    real_encoding: Encoding, threads: int
) -> None:
    """A fresh encoder's first batch on threads encodes its last 16th first (batch_phase_one):
    an invalid document there must not hide an earlier one, which the error names."""
    batch = [b"plain words here %d" % i for i in range(20_000)]
    batch[3], batch[-2] = b"bad \xff here", b"also \xfe bad"
    fresh = Encoding(
        "fresh", pat_str=real_encoding._pat_str, special_tokens={},
        mergeable_ranks=real_encoding._mergeable_ranks, backend=real_encoding.backend,
    )  # fmt: skip
    with pytest.raises(InvalidUTF8Error, match=r"^texts\[3\]: invalid UTF-8 at byte offset 4 "):
        fresh.count_tokens_batch(batch, num_threads=threads)


def test_huge_documents_cross_the_block(real_pair: Any) -> None:
    enc, ref = real_pair
    # Over a block of 2**20 code points, in each kind, and one as bytes.
    huge = [("ab " * 400_000) + suffix for suffix in ("", "é", "你", "🦙")]
    batch = [huge[0], "short", huge[1], huge[2], huge[3].encode(), ""]
    want = [ref.encode_ordinary(text) for text in [*huge[:3], huge[3]]]
    want = [want[0], ref.encode_ordinary("short"), want[1], want[2], want[3], []]
    assert split(*enc.encode_ordinary_batch_to_numpy(batch, num_threads=3)) == want


def test_nulls_and_wrong_types_are_refused(real_encoding: Encoding) -> None:
    with pytest.raises(ValueError, match=r"^texts\[2\] is null: "):
        real_encoding.encode_ordinary_batch_to_numpy(pa.array(["a", "b", None, "c"]))
    with pytest.raises(TypeError, match=r"^texts\[1\] is int: each text is a str or UTF-8 bytes"):
        real_encoding.count_tokens_batch(["a", 3])
    with pytest.raises(TypeError, match="int64"):
        real_encoding.count_tokens_batch(pa.array([1, 2]))
    with pytest.raises(TypeError, match=r"^texts is one str: a batch is a sequence of texts"):
        real_encoding.encode_ordinary_batch_to_numpy("hello")
    with pytest.raises(ValueError, match="num_threads=0"):
        real_encoding.count_tokens_batch(["a"], num_threads=0)
    with pytest.raises(ValueError, match="errors='ignore'"):
        real_encoding.count_tokens_batch(["a"], errors="ignore")


def test_sliced_binary_arrays_are_read_from_their_offset(real_encoding: Encoding) -> None:
    data = [b"one", b"caf\xc3\xa9", b"", b"three four"] * 3
    for kind in (pa.binary(), pa.large_binary()):
        array = pa.array(data, type=kind)[5:]
        want = [real_encoding.encode_ordinary(d.decode()) for d in data[5:]]
        assert real_encoding.encode_ordinary_batch(array.to_pylist()) == want  # type: ignore[arg-type]
        assert split(*real_encoding.encode_ordinary_batch_to_numpy(array)) == want


def test_encode_batch_keeps_the_special_token_policy(real_encoding: Encoding) -> None:
    batch = ["a<|endoftext|>b", "plain", "<|endoftext|><|endoftext|>", ""]
    allowed = real_encoding.encode_batch(batch, allowed_special="all")
    assert allowed == [real_encoding.encode(t, allowed_special="all") for t in batch]
    ordinary = real_encoding.encode_batch(batch, disallowed_special=())
    assert ordinary == [real_encoding.encode_ordinary(t) for t in batch]
    with pytest.raises(ValueError, match=r"<\|endoftext\|>"):
        real_encoding.encode_batch(batch)


def test_a_pattern_the_scanner_does_not_know_goes_the_pure_way() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    enc = Encoding("toy", pat_str=r"\w+|\s+|.", mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken_twin(enc)
    batch = ["ab ab", "", "xab", "é ab"] * 10
    assert split(*enc.encode_ordinary_batch_to_numpy(batch, num_threads=3)) == [
        ref.encode_ordinary(t) for t in batch
    ]


@pytest.mark.parametrize("threads", [1, 3])
def test_ranks_that_are_not_the_token_indices_on_one_thread_and_several(threads: int) -> None:
    # A gap in the ranks: the pass writes token indices, turned into ranks in the array (in
    # place when one thread's buffer becomes the array, in the copy with several).
    from streamcodec.vocab import CL100K_PATTERN

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 1000, b" w": 1001, b"or": 1002}
    enc = Encoding("gappy", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken_twin(enc)
    batch = ["about a world of ab or", "", "x wor", FILLER] * 4  # over INLINE_BYTES: threads
    want = [ref.encode_ordinary(t) for t in batch]
    assert split(*enc.encode_ordinary_batch_to_numpy(batch, num_threads=threads)) == want


def test_a_one_thread_batch_off_the_main_thread(real_pair: Any, docs: list[str]) -> None:
    # Run on the calling thread itself (it handles no signal), not on a thread made for it.
    enc, ref = real_pair
    batch = [*docs, FILLER]
    got: list[Any] = []
    worker = threading.Thread(
        target=lambda: got.append(enc.encode_ordinary_batch_to_numpy(batch, num_threads=1))
    )
    worker.start()
    worker.join()
    assert split(*got[0]) == [ref.encode_ordinary(t) for t in batch]
    assert list(enc.count_tokens_batch(batch, num_threads=1)) == [len(x) for x in split(*got[0])]


@pytest.mark.skipif(streamcodec.backend() != "native", reason="the native batch's caches")
def test_a_small_batch_takes_a_thread_for_each_64_kb_of_text_at_most(real_pair: Any) -> None:
    # Each thread costs its start and its private cache: 16 of them for 64 short documents cost
    # more time than the work. The batch's threads share one cache (tests/test_batch_cache.py).
    base, ref = real_pair
    enc = Encoding(base.name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                   special_tokens={})  # fmt: skip  # a new encoder: one cache made
    doc = "The quick brown fox jumps over it. " * 30  # 1,050 bytes of ASCII
    counts = enc.count_tokens_batch([doc] * 130, num_threads=16)  # 136 kB: two threads
    assert list(counts) == [len(ref.encode_ordinary(doc))] * 130
    assert enc.ordinary.cache_info()["caches"] == 1


CTRL_C = """
import sys, time
sys.path.insert(0, {root!r})
import streamcodec
enc = streamcodec.get_encoding("cl100k_base")
docs = ["word{{}} ".format(i) * 2000 for i in range(400)]
enc.count_tokens_batch(docs[:1])  # numpy imported: a signal in its import is not the batch's
print("ready", flush=True)
while True:
    enc.count_tokens_batch(docs, num_threads=2)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
@pytest.mark.skipif(streamcodec.backend() != "native", reason="the native batch")
def test_ctrl_c_ends_a_long_batch_within_a_second() -> None:
    env = {**os.environ, "STREAMCODEC_BACKEND": "native"}
    for _ in range(5):
        command = [sys.executable, "-c", CTRL_C.format(root=str(ROOT))]
        popen = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        with reaped(popen) as child:  # its loop never ends but by Ctrl-C
            assert child.stdout is not None and child.stdout.readline() == b"ready\n"
            time.sleep(random.uniform(0.05, 0.8))
            child.send_signal(signal.SIGINT)
            sent = time.monotonic()
            child.wait(timeout=5)
            assert time.monotonic() - sent < 1.0
            _, err = child.communicate()
        assert b"KeyboardInterrupt" in err
