"""A fuzzing campaign: every registered target, each its part of a time budget, on all cores.

    python -m fuzz.campaign --seconds 600            # all targets, one worker per core
    python -m fuzz.campaign --seconds 60 --targets merge_piece,tiktoken --workers 1

Each worker runs hypothesis batches (a fresh seed each) of one target after another. A mismatch
is shrunk by hypothesis to a minimal case, which is appended to
``tests/regressions/fuzz_found.json``: tests/test_fuzz.py replays every entry there, so a bug
found once stays a failing test until it is fixed. The summary gives, per target, the examples
generated, the cases compared (pieces, their prefixes, texts), the mismatches, and, for
greedy longest-match, how often it differs from rank-merge.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from hypothesis import seed as hypothesis_seed

from fuzz.strategies import Case
from fuzz.targets import TARGETS, Tally, Target, corpus_divergence, hypothesis_test
from streamcodec.atomicfile import atomic_output

__all__ = ["REGRESSIONS", "Summary", "main", "run_batch", "save_failures", "work"]

REGRESSIONS = Path(__file__).resolve().parents[1] / "tests" / "regressions" / "fuzz_found.json"


@dataclasses.dataclass
class Summary:
    """What a campaign (or one chunk of it) did, per target."""

    examples: Counter[str] = dataclasses.field(default_factory=Counter)
    cases: Counter[str] = dataclasses.field(default_factory=Counter)
    divergences: Counter[str] = dataclasses.field(default_factory=Counter)
    mismatches: Counter[str] = dataclasses.field(default_factory=Counter)
    vocabs: set[str] = dataclasses.field(default_factory=set)
    failures: list[dict[str, str]] = dataclasses.field(default_factory=list)

    def __iadd__(self, other: Summary) -> Summary:
        for mine, theirs in [
            (self.examples, other.examples),
            (self.cases, other.cases),
            (self.divergences, other.divergences),
            (self.mismatches, other.mismatches),
        ]:
            mine.update(theirs)
        self.vocabs |= other.vocabs
        self.failures += other.failures
        return self


def run_batch(chosen: Target, *, examples: int, seed: int) -> Summary:
    """Run ``examples`` hypothesis examples of ``chosen``; a failure is shrunk and recorded."""
    summary = Summary()
    failing: list[Case] = []

    def record(case: Case, tally: Tally) -> None:
        summary.examples[chosen.name] += 1
        summary.cases[chosen.name] += tally.cases
        summary.divergences[chosen.name] += tally.divergences
        summary.vocabs.add(case.vocab.fingerprint)

    def check(case: Case) -> Tally:
        try:
            return chosen.check(case)
        except Exception:
            failing.append(case)
            raise

    test = hypothesis_test(
        dataclasses.replace(chosen, check=check), max_examples=examples, record=record
    )
    try:
        hypothesis_seed(seed)(test)()
    except Exception as exc:  # any exception of a check is a finding, not only Mismatch
        summary.mismatches[chosen.name] += 1
        # Hypothesis replays the shrunk example last.
        minimal = failing[-1] if failing else None
        summary.failures.append(
            {"target": chosen.name, "case": repr(minimal), "error": _first_line(exc)}
        )
    return summary


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:2000]


def work(names: Sequence[str], seconds: float, seed: int, batch: int) -> Summary:
    """One worker's share: each target in turn for an equal part of ``seconds``, in batches of
    1, 2, 4, ... up to ``batch`` examples. A target's part is its own: a slow one (under the
    sanitizers 10 examples of ``batch`` took 22 s) once took a short budget whole, leaving the
    targets after it none; the small first batches bound how far a part runs over."""
    rng = random.Random(seed)
    summary = Summary()
    for name in names:
        deadline = time.monotonic() + seconds / len(names)
        examples = 1
        while True:
            summary += run_batch(TARGETS[name], examples=examples, seed=rng.getrandbits(32))
            if time.monotonic() >= deadline:
                break
            examples = min(batch, 2 * examples)
    return summary


def save_failures(failures: Sequence[dict[str, str]], path: Path = REGRESSIONS) -> None:
    """Append shrunk failing cases to the regression corpus replayed by tests/test_fuzz.py."""
    entries = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    known = {(e["target"], e["case"]) for e in entries}
    entries += [f for f in failures if (f["target"], f["case"]) not in known]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as f:
        f.write(json.dumps(entries, indent=1, ensure_ascii=True).encode() + b"\n")


def campaign(
    names: Sequence[str],
    *,
    seconds: float,
    workers: int,
    seed: int,
    batch: int,
    chunk: float = 30.0,
    progress: Callable[[Summary, float], None] = lambda summary, elapsed: None,
) -> Summary:
    """Run ``workers`` processes for ``seconds``, in chunks of ``chunk`` seconds each so that
    ``progress`` sees the running totals."""
    total = Summary()
    start = time.monotonic()
    rng = random.Random(seed)
    with ProcessPoolExecutor(workers) as pool:
        running: set[Future[Summary]] = set()
        while True:
            left = seconds - (time.monotonic() - start)
            while left > 1 and len(running) < workers:
                share = min(chunk, left)
                running.add(pool.submit(work, names, share, rng.getrandbits(32), batch))
            if not running:
                return total
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                total += future.result()
            progress(total, time.monotonic() - start)


def _print_progress(summary: Summary, elapsed: float) -> None:
    print(
        f"  {elapsed:7.0f} s  {sum(summary.cases.values()):>12,} cases  "
        f"{len(summary.vocabs):>9,} vocabularies  {sum(summary.mismatches.values())} mismatches",
        flush=True,
    )


def _print_summary(summary: Summary, names: Sequence[str], elapsed: float) -> None:
    print(f"\n{'target':<18}{'examples':>10}{'cases':>13}{'mismatches':>12}  longest-match differs")
    for name in names:
        rate = ""
        if TARGETS[name].diverges and summary.cases[name]:
            share = summary.divergences[name] / summary.cases[name]
            rate = f"{share:.1%} ({summary.divergences[name]:,} of {summary.cases[name]:,})"
        print(
            f"{name:<18}{summary.examples[name]:>10,}{summary.cases[name]:>13,}"
            f"{summary.mismatches[name]:>12}  {rate}".rstrip()
        )
    checked = sum(summary.cases[n] for n in names if not TARGETS[n].diverges)
    print(
        f"\ntotal: {checked:,} cases compared with their reference, over {len(summary.vocabs):,} "
        f"distinct vocabularies, in {elapsed:.0f} s; "
        f"{sum(summary.mismatches.values())} mismatches"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run a campaign; exit status 1 if any target mismatched."""
    parser = argparse.ArgumentParser(prog="python -m fuzz.campaign", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated names")
    parser.add_argument("--seed", type=int, default=None, help="campaign seed (default random)")
    parser.add_argument("--batch", type=int, default=100, help="examples per hypothesis run")
    parser.add_argument(
        "--no-save", action="store_true", help=f"do not append failures to {REGRESSIONS}"
    )
    args = parser.parse_args(argv)
    names = [name for name in args.targets.split(",") if name]
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; known: {', '.join(TARGETS)}")
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    print(
        f"campaign: {len(names)} targets, {args.seconds:.0f} s on {args.workers} workers, "
        f"seed {seed}",
        flush=True,
    )
    start = time.monotonic()
    summary = campaign(
        names,
        seconds=args.seconds,
        workers=args.workers,
        seed=seed,
        batch=args.batch,
        progress=_print_progress,
    )
    _print_summary(summary, names, time.monotonic() - start)
    pieces, differing, examples = corpus_divergence("cl100k_base")
    print(
        f"real text (fuzz/corpus.py), cl100k_base: longest-match differs on {differing:,} of "
        f"{pieces:,} distinct pre-tokens ({differing / pieces:.2%}), e.g. {list(examples[:5])}"
    )
    for failure in summary.failures:
        print(f"MISMATCH {failure['target']}: {failure['error']}\n  case: {failure['case']}")
    if summary.failures and not args.no_save:
        save_failures(summary.failures)
        print(f"saved {len(summary.failures)} shrunk cases to {REGRESSIONS}")
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
