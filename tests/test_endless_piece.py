"""A count limit on one endless pre-token (issue 23, section 2): bounded by the limit, not the
input.

A run of NUL bytes has no safe cut, so the stream holds it whole; ``count --limit N`` must stop
once the run is longer than ``N`` tokens can be (``N`` times the longest token's bytes).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamcodec
from streamcodec.cli.idformats import MAX_DIGITS, WRITE_IDS, write_ids
from streamcodec.stream.cuts import last_safe_cut, may_cut
from streamcodec.stream.parallel import NoCutFound, split_points
from streamcodec.vocab import CL100K_PATTERN

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20


def cl100k() -> streamcodec.Encoding:
    return streamcodec.get_encoding("cl100k_base")


def test_an_endless_piece_stops_the_count_within_the_limit() -> None:
    read: list[int] = []

    def nul_chunks() -> Iterator[str]:
        for i in range(20):  # "endless": far more than the limit needs
            read.append(i)
            yield "\0" * MB

    assert cl100k().count_tokens(nul_chunks(), limit=8192) is None
    assert len(read) <= 2  # 8192 tokens of at most 128 bytes: 1 MB


def test_the_held_piece_bounds_the_count_exactly() -> None:
    enc = cl100k()
    longest = enc.ordinary.longest_token
    assert longest == max(map(len, enc.token_byte_values()))
    # 'a' * n merges into tokens no longer than the longest: the bound never says "over" wrongly.
    for n in (1, longest, longest + 1, 10 * longest + 3):
        text = "a" * n
        count = len(enc.encode(text))
        assert enc.count_tokens(text, limit=count) == count
        assert enc.count_tokens(text, limit=count - 1) is None
        stream = enc.stream_encoder()
        stream.feed(text)
        assert stream.fewest_pending_ids == -(-n // longest) <= count


def test_jobs_stop_on_a_stretch_without_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "nul.txt"
    with open(path, "wb") as f:
        f.truncate(20 * MB)  # sparse
    with pytest.raises(NoCutFound, match="no safe cut"):
        list(split_points(path, cl100k(), longest_stretch=MB))
    assert cl100k().count_tokens(path, jobs=2, limit=8192) is None
    path.write_bytes(b"hello world " * 50_000)  # cuts everywhere: exact on either side
    n = len(cl100k().encode("hello world " * 50_000))
    assert cl100k().count_tokens(path, jobs=2, limit=n) == n
    assert cl100k().count_tokens(path, jobs=2, limit=n - 1) is None


@given(text=st.text(alphabet="\0!a1 \n\r\u00e9\u0300'/\t\x1c", max_size=12), lo=st.integers(1, 12))
def test_may_cut_rules_out_only_text_without_cuts(text: str, lo: int) -> None:
    if not may_cut(text, lo, len(text)):
        assert last_safe_cut(CL100K_PATTERN).find(text, lo) is None


def test_may_cut_rules_out_punctuation_runs() -> None:
    assert not may_cut("\0" * 100, 1, 100) and not may_cut("!?" * 50, 1, 100)
    assert may_cut("a\0", 1, 2) and may_cut("\0 ", 1, 2)


@pytest.mark.parametrize("backend", ["native", "python"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_count_limit_on_nul_bytes_in_bounded_memory(
    tmp_path: Path, backend: str, jobs: str
) -> None:
    path = tmp_path / "nul.txt"
    with open(path, "wb") as f:
        f.truncate(20 * MB)
    # A fresh parent, so that RUSAGE_CHILDREN is the CLI's peak alone.
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(r.stderr, end='')\n"
    )
    command = [sys.executable, "-m", "streamcodec", "count", str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STREAMCODEC_BACKEND": backend}
    out = subprocess.run(
        [sys.executable, "-c", probe, *command, "--limit", "8192", "--jobs", jobs, "-q"],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    ).stdout  # fmt: skip
    status, peak_kb, message = out.split(maxsplit=2)
    assert status == "1"
    assert message.strip() == f"streamcodec: {path} has more than 8,192 tokens"
    assert int(peak_kb) < 150_000  # was 392 MB for these 20 MB (and grew with the input)


class Writes(io.BytesIO):
    """A binary output that remembers its longest write."""

    longest = 0

    def write(self, data: Any) -> int:
        self.longest = max(self.longest, len(data))
        return super().write(data)


def test_decimal_ids_are_written_a_slice_at_a_time() -> None:
    # One huge piece gives one chunk of millions of ids: its digits are not made all at once
    # (50M 'a' through `encode -o` peaked at 768 MB, 395 MB now).
    ids = list(range(300_000))
    out = Writes()
    assert write_ids([ids, [], [7]], out) == 300_001
    assert out.getvalue() == "".join(f"{i}\n" for i in [*ids, 7]).encode()
    assert out.longest <= WRITE_IDS * (MAX_DIGITS + 1)
