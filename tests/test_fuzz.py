"""A short budget of every differential target (the campaign runs them for longer), the
regression corpus the campaign fills, and the fuzzing building blocks themselves."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fuzz import strategies
from fuzz.campaign import REGRESSIONS, run_batch, save_failures, work
from fuzz.strategies import Case, Vocab, real_vocab
from fuzz.targets import TARGETS, Mismatch, Tally, corpus_divergence, hypothesis_test
from streamcodec.reference import longest_match, rank_merge

EXAMPLES = 40


@pytest.mark.parametrize("name", list(TARGETS))
def test_target_short_budget(name: str) -> None:
    tallies: list[Tally] = []
    hypothesis_test(TARGETS[name], max_examples=EXAMPLES, record=lambda c, t: tallies.append(t))()
    assert len(tallies) >= EXAMPLES // 2
    assert sum(t.cases for t in tallies) > 0


def test_every_target_of_a_short_budget_gets_examples() -> None:
    """Regression: the targets shared one deadline, so a budget the first batches used up (5 s
    under the sanitizers: one target's batch took 22 s) left the targets after them none
    (``tools/sanitize.sh`` with ``FUZZ_SECONDS=10``: jsonl, backends, real_tiktoken 0)."""
    names = ["merge_piece", "round_trip", "longest_match"]
    summary = work(names, 0.001, seed=1, batch=10)
    assert all(summary.examples[name] >= 1 for name in names)
    assert not summary.mismatches


def _regressions() -> list[dict[str, str]]:
    return json.loads(REGRESSIONS.read_text(encoding="utf-8")) if REGRESSIONS.is_file() else []


@pytest.mark.parametrize("entry", _regressions(), ids=lambda e: e["target"])
def test_regression_found_by_fuzzing(entry: dict[str, str]) -> None:
    case = eval(entry["case"], vars(strategies))  # written by fuzz.campaign from repr(case)
    TARGETS[entry["target"]].check(case)


def test_a_planted_bug_is_found_shrunk_and_saved(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A "fast path" that drops the last token of long pieces: the campaign must catch it.
    def broken(case: Case) -> Tally:
        for piece in case.pieces:
            expected = rank_merge(piece, case.vocab.ranks)
            got = expected[:-1] if len(piece) > 3 else expected
            if got != expected:
                raise Mismatch(f"piece {piece!r}")
        return Tally(len(case.pieces))

    planted = dataclasses.replace(TARGETS["merge_piece"], name="merge_piece", check=broken)
    summary = run_batch(planted, examples=200, seed=1)
    assert summary.mismatches["merge_piece"] == 1
    failure = summary.failures[0]
    shrunk = eval(failure["case"], vars(strategies))
    assert [len(p) for p in shrunk.pieces] == [4]  # hypothesis shrank it to one 4-byte piece
    saved = tmp_path / "found.json"
    save_failures(summary.failures, saved)
    save_failures(summary.failures, saved)  # saved once only
    assert json.loads(saved.read_text()) == summary.failures


def test_vocab_repr_round_trips() -> None:
    vocab = Vocab((b"ab", b"abc"), r"\S+", ("<s>",))
    assert eval(repr(vocab), vars(strategies)) == vocab
    assert eval(repr(real_vocab("cl100k_base")), vars(strategies)) is real_vocab("cl100k_base")
    assert vocab.ranks[b"abc"] == 257 and vocab.encoding.special_tokens == {"<s>": 258}


def test_longest_match_is_not_bpe_on_real_text() -> None:
    pieces, differing, examples = corpus_divergence("cl100k_base")
    assert 0 < differing < pieces
    ranks = real_vocab("cl100k_base").ranks
    for piece in examples:
        data = piece.encode()
        assert longest_match(data, ranks) != rank_merge(data, ranks)


def test_atheris_harness_runs_bounded() -> None:
    pytest.importorskip("atheris")
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "fuzz.atheris_harness", "merge_piece", "-runs=300"],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"Done 300 runs" in done.stderr
    assert b" cov: " in done.stderr  # inputs were accepted and reached streamcodec


def test_the_fuzz_modules_import_each_other_in_no_cycle() -> None:
    """Regression (issue 22 §6): fuzz/targets.py and the target modules imported each other
    (a cycle held by imports at the end of the file); fuzz/registry.py breaks it."""
    import ast
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "fuzz"
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
        graph[f"fuzz.{path.stem}"] = {name for name in found if name.startswith("fuzz.")}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n}))
            for n in graph.get(start, ())
        )

    assert [module for module in graph if reaches(module, module, set())] == []
