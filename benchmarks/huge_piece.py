"""One huge piece (100 MB by default) on both backends: the same ids, in linear time.

    python benchmarks/huge_piece.py [--mb 100] [--tiktoken]

The piece is letters only, so the pattern keeps it whole: a long word repeated, with a
letter between repeats that changes with a period of 7 repeats (so that the merges cross the
repeats differently), which only the backtracking encoder takes in linear time.
Prints each backend's time and whether the ids are identical; ``--tiktoken`` adds tiktoken
(slow on such pieces). Too slow for the test suite, which has a 3 MB piece
(tests/test_native.py::test_a_multi_megabyte_piece).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamcodec

WORD = "Donaudampfschifffahrtsgesellschaftskapitaenswitwe"


def piece(megabytes: float) -> str:
    """About ``megabytes`` of letters that the pattern keeps as one piece."""
    unit = "".join(WORD + letter for letter in "abcdefg")
    return (unit * (int(megabytes * 1e6) // len(unit) + 1))[: int(megabytes * 1e6)]


def main() -> int:
    """Encode the piece on each backend and compare."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--tiktoken", action="store_true")
    args = parser.parse_args()
    text = piece(args.mb)
    base = streamcodec.get_encoding("cl100k_base")
    results = {}
    for backend in ("native", "python"):
        enc = streamcodec.Encoding(
            "cl100k_base",
            pat_str=base.pat_str,
            mergeable_ranks=base.mergeable_ranks,
            special_tokens={},
            backend=backend,
        )
        start = time.perf_counter()
        results[backend] = enc.encode_ordinary(text)
        print(f"{backend}: {time.perf_counter() - start:.1f} s, {len(results[backend]):,} ids")
    if args.tiktoken:
        from tests.conftest import tiktoken_twin

        start = time.perf_counter()
        results["tiktoken"] = tiktoken_twin(base).encode_ordinary(text)
        print(f"tiktoken: {time.perf_counter() - start:.1f} s")
    same = all(ids == results["native"] for ids in results.values())
    print(f"{args.mb:g} MB piece: ids identical on {', '.join(results)}: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
