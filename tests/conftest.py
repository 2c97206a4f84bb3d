"""Shared fixtures: the genuine vocabularies and tiktoken built from the same ranks."""

from __future__ import annotations

import functools

import pytest

import streamcodec
from streamcodec import Encoding

REAL_ENCODINGS = ["cl100k_base", "o200k_base"]
BACKENDS = ["native", "python"]


def _skip_unless_built(backend: str) -> None:
    if backend == "native" and streamcodec.backend() != "native":
        pytest.skip("the compiled core is not built (or STREAMCODEC_BACKEND=python)")


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: tests that take it run on the compiled core and on pure Python."""
    _skip_unless_built(request.param)
    return str(request.param)


@functools.cache
def _on_backend(name: str, backend: str) -> Encoding:
    registered = streamcodec.get_encoding(name)
    if registered.backend == backend:
        return registered
    return Encoding(
        name,
        pat_str=registered.pat_str,
        mergeable_ranks=registered.mergeable_ranks,
        special_tokens=registered.special_tokens,
        backend=backend,
    )


@pytest.fixture(
    scope="session",
    params=[(name, backend) for name in REAL_ENCODINGS for backend in BACKENDS],
    ids=lambda param: "-".join(param),
)
def real_encoding(request: pytest.FixtureRequest) -> Encoding:
    """A genuine encoding on each backend (the registered one where its backend matches)."""
    name, backend = request.param
    _skip_unless_built(backend)
    return _on_backend(name, backend)


def tiktoken_twin(enc: Encoding):  # type: ignore[no-untyped-def]
    """tiktoken's Encoding built from the same ranks, pattern and special tokens."""
    import tiktoken

    return tiktoken.Encoding(
        enc.name,
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )


@pytest.fixture(scope="session")
def real_pair(real_encoding: Encoding):  # type: ignore[no-untyped-def]
    return real_encoding, tiktoken_twin(real_encoding)
