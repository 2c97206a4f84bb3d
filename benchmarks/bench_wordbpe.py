"""Word-level BPE: streamcodec against subword-nmt 0.3.8, in the same run, on the same text.

Prints, for each corpus of fuzz/corpus.py, the seconds to learn N merges and to apply them, for
both, and whether the outputs are identical. Run from the repository root:

    python benchmarks/bench_wordbpe.py [--merges 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subword_nmt import apply_bpe, learn_bpe

from fuzz.corpus import samples
from streamcodec.wordbpe import (
    WordBPE,
    count_words,
    format_codes,
    learn_merges,
    parse_codes,
)


def median_seconds(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The median time of ``repeat`` runs and the last result."""
    times = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def theirs_learn(text: str, merges: int) -> str:
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(io.StringIO(text), out, merges)
    return out.getvalue()


def theirs_apply(codes: str, text: str) -> str:
    bpe = apply_bpe.BPE(io.StringIO(codes))
    return "".join(bpe.process_line(line) for line in text.splitlines(keepends=True))


def ours_learn(text: str, merges: int) -> str:
    return format_codes(learn_merges(count_words(text), merges))


def ours_apply(codes: str, text: str) -> str:
    return WordBPE.from_codes(parse_codes(codes)).apply(text)


def report(
    corpus: str, task: str, theirs: tuple[float, object], ours: tuple[float, object]
) -> None:
    print(
        f"{corpus:14} {task:6} {theirs[0]:12.3f} {ours[0]:12.3f} {theirs[0] / ours[0]:6.2f}"
        f"  {theirs[1] == ours[1]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'corpus':14} {'task':6} {'subword-nmt':>12} {'streamcodec':>12} {'ratio':>6}  same")
    for name, text in samples().items():
        theirs = median_seconds(functools.partial(theirs_learn, text, args.merges), args.repeat)
        ours = median_seconds(functools.partial(ours_learn, text, args.merges), args.repeat)
        report(name, "learn", theirs, ours)
        codes = str(theirs[1])
        theirs = median_seconds(functools.partial(theirs_apply, codes, text), args.repeat)
        ours = median_seconds(functools.partial(ours_apply, codes, text), args.repeat)
        report(name, "apply", theirs, ours)
    print("ratio = subword-nmt seconds / streamcodec seconds (above 1: streamcodec is faster)")


if __name__ == "__main__":
    main()
