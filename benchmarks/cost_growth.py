"""Does doubling the input at most double the time? Cost growth on inputs built to hurt.

    STREAMCODEC_DATA_DIR=... python benchmarks/cost_growth.py [--limit 2.2]

Each case encodes a text of n and of 2n bytes (best of seven runs each, taking turns) and
prints the ratio of the CPU times; a linear encoder gives about 2. The cases are long tokens
sharing their first bytes with the text (a vocabulary of the 256 bytes, ``ab`` and ``ab`` +
100,000 ``c``; one with ``ab`` + ``c`` * k for every k to 600; one with every run of ``a`` to
500 bytes, each position of a run starting 500 candidates), o200k_base on pieces that start many
tokens (``"--+" * n``, ``"  x" * n``, ``"-+" * n``: one piece, from 400 K to 800 K characters;
``"-" * n``: 28 runs of ``-`` are tokens) and the pathological inputs (one letter, spaces, digits,
CJK). The C candidate search was once cubic here (it hashed every prefix length), then quadratic
in the longest run (a trie walk per candidate), and runs cost 10-100 tries a byte until the
search gave way to the merge by heap. Exits 1 when a ratio is over ``--limit``; rerun a failing
case before believing it. Timing belongs here, never in the unit tests.

The time is the thread's CPU time, not the wall clock: on a machine shared by more runnable
processes than cores, a run longer than the scheduler's slice (a few ms) is preempted and its
wall time counts the others' slices too, so the wall clock showed a step (``"-+" * n`` at 127
MB/s to 400 K characters, 30 MB/s from 600 K, with a load of 4 a core) where the CPU time is
linear (docs/performance.md, "Cost growth").
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamcodec
from streamcodec import Encoding

Case = tuple[str, Callable[[], Encoding], Callable[[int], str], int]


def toy(ranks: dict[bytes, int], backend: str) -> Encoding:
    """A vocabulary over the 256 bytes plus ``ranks``, pieces split at whitespace."""
    full = {bytes([i]): i for i in range(256)}
    full.update({data: 256 + i for i, data in enumerate(ranks)})
    return Encoding(
        "hostile", pat_str=r"\S+|\s+", mergeable_ranks=full, special_tokens={}, backend=backend
    )


def cases(backend: str) -> list[Case]:
    """(name, encoding, text of about n bytes, n) for each case on ``backend``."""
    shared = lambda: toy({b"ab": 0, b"ab" + b"c" * 100_000: 0}, backend)  # noqa: E731
    lengths = lambda: toy({b"ab" + b"c" * k: 0 for k in range(600)}, backend)  # noqa: E731
    runs = lambda: toy({b"a" * k: 0 for k in range(2, 501)}, backend)  # noqa: E731
    run_bytes = 100_000 if backend == "native" else 4_000  # the pure search gives way later
    cases: list[Case] = [
        ("ab + ab c*100000: 'ab'*n", shared, lambda n: "ab" * (n // 2), 16_000),
        ("ab c*k, k < 600: 'ab'*n", lengths, lambda n: "ab" * (n // 2), 16_000),
        ("a*k, k <= 500: 'a'*n + 'b'", runs, lambda n: "a" * (n - 1) + "b", run_bytes),
    ]
    if backend == "python":
        return cases
    o200k = lambda: streamcodec.get_encoding("o200k_base")  # noqa: E731
    return [
        *cases,
        ("o200k '--+'*n", o200k, lambda n: "--+" * (n // 3), 300_000),
        ("o200k '  x'*n", o200k, lambda n: "  x" * (n // 3), 400_000),
        ("o200k '-+'*n", o200k, lambda n: "-+" * (n // 2), 400_000),
        ("o200k '-'*n", o200k, lambda n: "-" * n, 1 << 19),
        ("o200k one letter", o200k, lambda n: "a" * n, 1 << 19),
        ("o200k spaces", o200k, lambda n: " " * n, 1 << 19),
        ("o200k digits", o200k, lambda n: "7" * n, 1 << 19),
        ("o200k CJK", o200k, lambda n: "漢" * (n // 3), 1 << 19),
    ]


def best_times(encode: Callable[[str], object], texts: list[str], runs: int = 7) -> list[float]:
    """The least CPU time of ``runs`` encodes of each text, in seconds; the texts take turns, so
    that a busy moment of the machine (caches shared, clocks lowered) weighs on both alike."""
    best = [float("inf")] * len(texts)
    for _ in range(runs):
        for i, text in enumerate(texts):
            start = time.thread_time()
            encode(text)
            best[i] = min(best[i], time.thread_time() - start)
    return best


def main() -> int:
    """Print the table; 1 when a ratio is over the limit."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=float, default=2.2)
    args = parser.parse_args()
    backends = ["native", "python"] if streamcodec.backend() == "native" else ["python"]
    print("| backend | case | n bytes | time n (ms) | time 2n (ms) | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    over = []
    for backend in backends:
        for name, make, text, n in cases(backend):
            encode = make().encode_ordinary
            small, large = best_times(encode, [text(n), text(2 * n)])
            ratio = large / small
            times = f"{small * 1e3:.2f} | {large * 1e3:.2f}"
            print(f"| {backend} | {name} | {n} | {times} | {ratio:.2f} |")
            if ratio > args.limit:
                over.append(f"{backend} {name}: {ratio:.2f}")
    for line in over:
        print(f"over {args.limit}: {line}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
