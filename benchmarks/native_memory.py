"""Resident memory of the compiled core over a million calls: it must stay flat.

    python benchmarks/native_memory.py [--calls 1000000]

Each call encodes a small batch of pieces (a long one among them, which takes the backtracking
encoder) on a shared ``Core``; every tenth call fails (a lone surrogate in strict mode) so that
the error paths are counted too. Prints resident memory (``/proc/self/statm``) every tenth of
the run and the growth after the first tenth; exits 1 if it grew by more than 8 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamcodec
from streamcodec.pieces import LONG_PIECE
from streamcodec.pieces._core import Core

PIECES = ["hello", " world", "ünïcödé", "日本語", "a" * 600, "\udcff"]


def rss_mb() -> float:
    """Resident memory of this process, MB."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 1e6


def main() -> int:
    """Run the calls and report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    args = parser.parse_args()
    core = Core(streamcodec.get_encoding("cl100k_base").mergeable_ranks, long_piece=LONG_PIECE)
    tenth = max(1, args.calls // 10)
    baseline = 0.0
    for call in range(args.calls):
        if call % 10 == 9:
            with contextlib.suppress(UnicodeEncodeError):
                core.encode_pieces(PIECES)
        else:
            core.encode_pieces(PIECES, errors="surrogateescape")
        if call % tenth == tenth - 1:
            gc.collect()
            now = rss_mb()
            baseline = baseline or now
            print(f"{call + 1:>9,} calls: {now:.1f} MB resident")
    growth = rss_mb() - baseline
    print(f"growth after the first tenth: {growth:+.1f} MB")
    return 1 if growth > 8 else 0


if __name__ == "__main__":
    sys.exit(main())
