"""Throughput of streamcodec against tiktoken, measured in one process on the same text.

    python benchmarks/throughput.py [--encoding cl100k_base] [--runs 5] [--quick]

For each input it prints MB/s of both and their ratio (streamcodec / tiktoken; above 1 is
faster), the median of ``--runs`` runs. "cold" builds a fresh
``Encoding`` for every run, so its caches start empty; "warm" encodes the same text again with
the caches filled by a first run; "warm after cold" repeats the warm runs after the cold ones
(see ``measure`` for why they differ). Times are CPU time of this process (the machine this was
written on is shared, and CPU time is steadier than wall time there). The inputs: English prose,
Python source and multilingual text from ``fuzz/corpus.py``, then pathological pieces: 1 MB of
``"a"``, 1 MB of spaces, 1 MB of random digits, and 4 MB of ``"a"`` to show the time is linear.

Peers: when installed (``pip install -e '.[bench]'``), quicktok and bpe-openai, the fastest exact
encoders, are measured beside tiktoken on the same text, each built once from its bundled
vocabulary (warm). A peer whose ids differ from tiktoken's on an input shows ``differs``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tiktoken

import streamcodec
from fuzz.corpus import samples


def inputs(quick: bool) -> dict[str, str]:
    """The texts to encode, by name."""
    rng = random.Random(0)
    mb = 200_000 if quick else 1_000_000
    texts = dict(samples())
    texts["1 MB 'a'"] = "a" * mb
    texts["1 MB spaces"] = " " * mb
    texts["1 MB digits"] = "".join(rng.choice("0123456789") for _ in range(mb))
    texts["4 MB 'a'"] = "a" * (4 * mb)
    return texts


def peers(name: str) -> dict[str, Callable[[str], list[int]]]:
    """The installed peer encoders of the encoding ``name``: their ``encode_ordinary``."""
    found: dict[str, Callable[[str], list[int]]] = {}
    if importlib.util.find_spec("quicktok") is not None:
        import quicktok

        found["quicktok"] = quicktok.get_encoding(name).encode_ordinary
    if importlib.util.find_spec("bpe_openai") is not None:
        import bpe_openai

        found["bpe-openai"] = bpe_openai.get_encoding(name).encode_ordinary
    return found


def peer_cells(
    text: str,
    others: dict[str, Callable[[str], list[int]]],
    theirs_s: float,
    expected: list[int] | None,
    runs: int,
) -> str:
    """Table cells for each peer: MB/s and ratio to tiktoken, or ``differs``."""
    size = len(text.encode("utf-8")) / 1e6
    cells = []
    for encode in others.values():
        if encode(text) != expected:
            cells.append("differs | -")
            continue
        seconds = statistics.median(
            cpu_seconds(functools.partial(encode, text)) for _ in range(runs)
        )
        cells.append(f"{size / seconds:.1f} | {theirs_s / seconds:.2f}x")
    return "".join(f" {cell} |" for cell in cells)


def cpu_seconds(run: Callable[[], object]) -> float:
    """CPU time of one call."""
    start = time.process_time()
    run()
    return time.process_time() - start


def measure(
    text: str, ours: streamcodec.Encoding, theirs: tiktoken.Encoding, runs: int
) -> tuple[float, float, float, float]:
    """Median seconds: streamcodec cold, warm, tiktoken, streamcodec warm after the cold runs."""

    def fresh() -> streamcodec.Encoding:
        return streamcodec.Encoding(
            ours.name,
            pat_str=ours.pat_str,
            mergeable_ranks=ours.mergeable_ranks,
            special_tokens=ours.special_tokens,
        )

    warm = fresh()
    try:
        expected: list[int] | None = theirs.encode_ordinary(text)
    except BaseException:  # tiktoken panics (not an Exception): o200k on 1 MB of spaces
        expected = None
    if warm.encode_ordinary(text) != expected and expected is not None:
        raise AssertionError("streamcodec and tiktoken disagree")

    # Each figure comes from back-to-back runs, so each library finds its own data in the CPU
    # caches. Warm runs go first: the cold runs construct and drop encodings, which leaves
    # Python's heap fragmented, and warm runs measured after them ("warm after cold") are
    # slower, although the same code does the same work.
    def median(run: Callable[[], object]) -> float:
        return statistics.median(cpu_seconds(run) for _ in range(runs))

    warm_s = median(functools.partial(warm.encode_ordinary, text))
    theirs_s = median(functools.partial(theirs.encode_ordinary, text)) if expected else float("nan")
    cold = statistics.median(
        cpu_seconds(functools.partial(fresh().encode_ordinary, text)) for _ in range(runs)
    )
    return cold, warm_s, theirs_s, median(functools.partial(warm.encode_ordinary, text))


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 kB pathological inputs")
    args = parser.parse_args()
    ours = streamcodec.get_encoding(args.encoding)
    theirs = tiktoken.Encoding(
        ours.name,
        pat_str=ours.pat_str,
        mergeable_ranks=ours.mergeable_ranks,
        special_tokens=ours.special_tokens,
    )
    others = peers(args.encoding)
    print(f"{args.encoding}, median of {args.runs} runs, CPU time, MB/s (ratio = ours / tiktoken)")
    heads = "".join(f" {peer} | ratio |" for peer in others)
    print(
        f"| input | MB | tiktoken | cold | ratio | warm | ratio | warm after cold | ratio |{heads}"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|---:|" * len(others))
    seconds = {}
    for name, text in inputs(args.quick).items():
        size = len(text.encode("utf-8")) / 1e6
        cold, warm, theirs_s, later = measure(text, ours, theirs, args.runs)
        seconds[name] = cold
        cells = [f"{size / s:.1f} | {theirs_s / s:.2f}x" for s in (cold, warm, later)]
        expected = theirs.encode_ordinary(text) if theirs_s == theirs_s else None  # not NaN
        row = f"| {name} | {size:.2f} | {size / theirs_s:.1f} | {' | '.join(cells)} |"
        print(row + peer_cells(text, others, theirs_s, expected, args.runs))
    ratio = seconds["4 MB 'a'"] / seconds["1 MB 'a'"]
    print(f"linearity: 4x the 'a' input takes {ratio:.1f}x the time (cold)")


if __name__ == "__main__":
    main()
