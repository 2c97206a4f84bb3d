"""Shared fixtures: the genuine vocabularies and tiktoken built from the same ranks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import streamcodec
from streamcodec import Encoding

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
O200K_FILE = SHARED_DATA / "o200k_base.tiktoken"


def _o200k_available() -> bool:
    data_dir = os.environ.get("STREAMCODEC_DATA_DIR")
    in_data_dir = bool(data_dir) and (Path(str(data_dir)) / "o200k_base.tiktoken").is_file()
    return O200K_FILE.is_file() or in_data_dir


@pytest.fixture(scope="session", autouse=True)
def _shared_data_dir() -> None:
    """Let get_encoding find o200k_base in ../shared/data when the user has not said otherwise."""
    if O200K_FILE.is_file() and "STREAMCODEC_DATA_DIR" not in os.environ:
        os.environ["STREAMCODEC_DATA_DIR"] = str(SHARED_DATA)


REAL_ENCODINGS = ["cl100k_base", "o200k_base"]


@pytest.fixture(scope="session", params=REAL_ENCODINGS)
def real_encoding(request: pytest.FixtureRequest, _shared_data_dir: None) -> Encoding:
    if request.param == "o200k_base" and not _o200k_available():
        pytest.skip("o200k_base.tiktoken is not in ../shared/data")
    return streamcodec.get_encoding(request.param)


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
