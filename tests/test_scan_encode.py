"""One pass from text to ids: the native scanner hands each piece to the compiled core as soon as
it is cut. ``NativeScanner.encode`` must equal ``Core.encode_pieces`` of ``regex``'s pieces (the
two steps it fuses), errors included. Skipped unless both the scanner and the core are built.
"""

from __future__ import annotations

import functools
import threading

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from fuzz.strategies import class_texts
from streamcodec.text import native
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from tests.conftest import tiktoken_twin

core_module = pytest.importorskip("streamcodec.pieces._core")
NAMED = (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN)
pytestmark = pytest.mark.skipif(
    native.native_scanner(GPT2_PATTERN) is None, reason="the native scanner is not built"
)


@functools.cache
def _core() -> object:
    """cl100k_base's ranks in the core (any ranks do: every pattern is checked with them)."""
    return core_module.Core(streamcodec.get_encoding("cl100k_base").mergeable_ranks)


def _both(pattern: str, text: str, start: int, end: int, errors: str) -> tuple[object, object]:
    """(one pass, the pieces then the core), each as ("ok", ids) or ("raises", error)."""
    scanner = native.native_scanner(pattern)
    assert scanner is not None
    results = []
    for run in (
        lambda: scanner.encode(text, start, end, _core(), errors),
        lambda: _core().encode_pieces(
            regex.compile(pattern).findall(text, start, end), errors=errors
        ),  # type: ignore[attr-defined]
    ):
        try:
            results.append(("ok", run()))
        except UnicodeEncodeError as exc:
            results.append(("raises", str(exc)))
    return results[0], results[1]


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(class_texts(), class_texts().map(lambda t: t * 40)),
    data=st.data(),
    errors=st.sampled_from(["strict", "surrogateescape"]),
)
def test_one_pass_equals_pieces_then_core(text: str, data: st.DataObject, errors: str) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for pattern in NAMED:
        one_pass, two_steps = _both(pattern, text, start, end, errors)
        assert one_pass == two_steps, (pattern, text[start:end], errors)


@pytest.mark.parametrize(
    ("text", "errors", "raises"),
    [
        ("ok \udc80 escaped", "surrogateescape", False),
        ("ok \udc80 refused", "strict", True),
        ("high \ud800 never escaped", "surrogateescape", True),
        ("a" * 5000 + " long piece: backtracking", "strict", False),
    ],
)
def test_surrogates_and_long_pieces(text: str, errors: str, raises: bool) -> None:
    one_pass, two_steps = _both(CL100K_PATTERN, text, 0, len(text), errors)
    assert one_pass == two_steps
    assert (one_pass[0] == "raises") == raises


def test_real_text_equals_tiktoken(real_encoding: streamcodec.Encoding) -> None:
    scanner = native.native_scanner(real_encoding.pat_str)
    assert scanner is not None
    core = core_module.Core(real_encoding.mergeable_ranks)
    theirs = tiktoken_twin(real_encoding)
    for text in samples().values():
        assert scanner.encode(text, 0, len(text), core, "strict") == theirs.encode_ordinary(text)


def test_threads_encode_at_once() -> None:
    text = "".join(samples().values())
    scanner = native.native_scanner(O200K_PATTERN)
    assert scanner is not None
    expected = scanner.encode(text, 0, len(text), _core(), "strict")
    results: list[list[int]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(scanner.encode(text, 0, len(text), _core(), "strict"))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 3


def test_bad_core_and_errors_are_refused() -> None:
    scanner = native.native_scanner(CL100K_PATTERN)
    assert scanner is not None
    with pytest.raises(TypeError, match="Core"):
        scanner.encode("text", 0, 4, object(), "strict")
    with pytest.raises(ValueError, match="errors must be"):
        scanner.encode("text", 0, 4, _core(), "replace")
