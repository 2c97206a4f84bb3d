"""Long texts through the fused pass (``engine/_fused.c``): the ids' buffer grown as the pass
goes, past a million code units, including a text of an id a code unit. Every list, array and
count must equal tiktoken's ids, on a first call and again on a warm cache, and arrays alive at
once keep their own ids while others are made and freed (no two share a buffer). Skipped unless
the compiled code is built.
"""

from __future__ import annotations

import functools
import gc
from typing import Any

import pytest

import streamcodec
from fuzz.corpus import samples
from tests.conftest import tiktoken_twin

pytest.importorskip("streamcodec.engine._fused")
LONG = 1_200_000  # code units: their ids take 1-5 MB


@functools.cache
def _encoding() -> streamcodec.Encoding:
    encoding = streamcodec.get_encoding("cl100k_base")
    if encoding.ordinary._fused is None:
        pytest.skip("the fused pass is not built")
    return encoding


@functools.cache
def _expected(text: str) -> list[int]:
    return tiktoken_twin(_encoding()).encode_ordinary(text)


def _long(kind: str) -> str:
    """A text of about LONG code units: a fuzz sample repeated (the word cache hits), or
    ``1!`` repeated (an id a code unit)."""
    if kind == "dense":
        return "1!" * (LONG // 2)
    sample = samples()[kind]
    return (sample * (LONG // len(sample) + 1))[:LONG]


def _array(text: str) -> list[int]:
    fused = _encoding().ordinary._fused
    return list(memoryview(fused.encode_array(text, 0, len(text), "strict")))


@pytest.mark.parametrize("kind", ["prose", "code", "multilingual", "dense"])
def test_a_long_texts_list_array_and_count(kind: str) -> None:
    text = _long(kind)
    expected = _expected(text)
    encoding = _encoding()
    for _ in range(2):  # cold, then warm
        assert encoding.encode_ordinary(text) == expected
        assert _array(text) == expected
        assert encoding.ordinary.count(text) == len(expected)


def test_arrays_alive_at_once_share_no_buffer() -> None:
    """Arrays made one after another while the others live, lists made between them, and one
    freed and made again: each keeps its own ids."""
    numpy = pytest.importorskip("numpy")
    encoding = _encoding()
    texts = [_long("prose"), _long("code"), _long("dense")]
    arrays = []
    for text in texts:
        encoding.encode_ordinary(text)
        arrays.append(encoding.encode_to_numpy(text))
    del arrays[1]
    gc.collect()
    arrays.insert(1, encoding.encode_to_numpy(texts[1]))
    encoding.encode_ordinary(texts[0])
    for text, array in zip(texts, arrays, strict=True):
        assert array.dtype == numpy.uint32
        assert array.tolist() == _expected(text)


def test_a_short_text_after_a_long_one() -> None:
    """Short texts after a long one: their ids from a buffer of their own size."""
    encoding = _encoding()
    encoding.encode_to_numpy(_long("prose"))
    for text in (samples()["code"], "", "a"):
        assert _array(text) == _expected(text)


def _made(encoding: streamcodec.Encoding, text: str) -> Any:
    numpy = pytest.importorskip("numpy")
    ids = encoding.ordinary._fused.encode_array(text, 0, len(text), "strict")
    return numpy.frombuffer(ids, numpy.uint32)


def _idle(encoding: streamcodec.Encoding) -> int:
    return int(encoding.ordinary.cache_info()["id_buffer_bytes"])


def test_a_freed_arrays_buffer_is_the_next_arrays() -> None:
    """A large array's buffer goes back to its encoder when the array is freed (``id_buffer_bytes``)
    and the next large array takes it (its ids its own); one alive keeps its own; a small array's
    stays the heap's. An array that outlives its encoder keeps its ids."""
    base = _encoding()
    encoding = streamcodec.Encoding(
        "fresh", pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks, special_tokens={}
    )
    prose, code = _long("prose"), _long("code")
    first = _made(encoding, prose)
    del first
    gc.collect()
    assert _idle(encoding) >= 4 * len(_expected(prose))
    second = _made(encoding, prose)
    assert _idle(encoding) == 0  # taken (its address is the allocator's: realloc may move it)
    third = _made(encoding, code)  # the second alive: a buffer of its own
    assert third.ctypes.data != second.ctypes.data
    assert second.tolist() == _expected(prose) and third.tolist() == _expected(code)
    del second, third
    small = samples()["prose"][:20_000]  # some 4,500 ids: not pooled
    kept = _idle(encoding)
    assert _made(encoding, small).tolist() == _expected(small)
    assert _idle(encoding) == kept
    last = _made(encoding, code)
    del encoding
    gc.collect()
    assert last.tolist() == _expected(code)


def test_an_array_larger_than_the_cache_bound_is_not_kept() -> None:
    """A buffer of more than ``cache_bytes`` is freed with its array: an encoder keeps no more
    than its word cache's bound again for single arrays."""
    base = _encoding()
    encoding = streamcodec.Encoding(
        "small",
        pat_str=base.pat_str,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens={},
        cache_bytes=4 << 20,  # 1 M ids: not the dense text's 1.2 M (the pools' bound: 4 M)
    )
    dense = _long("dense")
    for _ in range(2):
        assert _made(encoding, dense).tolist() == _expected(dense)
        assert _idle(encoding) == 0
