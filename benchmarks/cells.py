"""The fresh-process harness of benchmarks/throughput.py: every cell (one contender, one output,
one encoding, one text) is timed in a process of its own.

A process-wide cache (gigatoken's, or any encoder kept alive) has seen the texts of earlier cells,
so figures measured one after another in one process flatter whoever caches most. Here a child
process builds the contender (not timed), then times its first encode of the text ("cold": its
caches empty, warmed only by the text's own repetition, as a one-pass job over a file) and the
least of three more ("warm"), in CPU time, and checks the ids against tiktoken's.

    python benchmarks/throughput.py --only outputs --quick     # one encoding, small texts
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy

from benchmarks.contenders import (
    Maker,
    folder,
    peer_outputs,
    prepare,
    streamcodec_outputs,
    tiktoken_outputs,
    twin,
)
from fuzz.corpus import english_prose, multilingual, samples, stdlib_source

KINDS = ("list", "numpy", "count")
WARM_RUNS = 3


def texts(quick: bool) -> dict[str, str]:
    """The texts: the fuzz samples (~0.3 MB each) when quick, else the larger corpora this
    machine has (prose ~1.6 MB, code 4 MB, multilingual ~0.8 MB; none repeated)."""
    if quick:
        return samples()
    return {
        "prose": english_prose(4_000_000),
        "code": stdlib_source(4_000_000),
        "multilingual": multilingual(4_000_000),
    }


def makers(name: str) -> dict[str, dict[str, Maker]]:
    """Every contender's outputs, by contender (tiktoken first: the baseline)."""
    return {
        "tiktoken": tiktoken_outputs(name),
        "streamcodec": streamcodec_outputs(name),
        **peer_outputs(name),
    }


def child(who: str, kind: str, name: str, text_path: str, expected_path: str) -> None:
    """Time one cell in this (fresh) process; print its figures as one JSON line."""
    text = Path(text_path).read_bytes().decode("utf-8")  # newlines as they are
    expected = numpy.load(expected_path)
    encode = makers(name)[who][kind]()
    start = time.process_time()
    got = encode(text)
    cold = time.process_time() - start
    warm = min(_timed(encode, text) for _ in range(WARM_RUNS))
    if kind == "count":
        exact = got == len(expected)
    else:
        exact = numpy.array_equal(numpy.asarray(got, dtype=numpy.int64), expected)
    print(json.dumps({"cold": cold, "warm": warm, "exact": bool(exact)}))


def _timed(encode: Callable[[str], Any], text: str) -> float:
    start = time.process_time()
    encode(text)
    return time.process_time() - start


def _run_cell(script: str, who: str, kind: str, name: str, text: Path, ids: Path) -> dict[str, Any]:
    """One cell in a new process: its figures, or {"error": ...}."""
    done = subprocess.run(
        [
            sys.executable,
            script,
            "--cell",
            f"{who}:{kind}",
            "--encodings",
            name,
            "--text",
            str(text),
            "--expected",
            str(ids),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "STREAMCODEC_BENCH_DIR": str(folder())},
    )
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
    except (IndexError, json.JSONDecodeError):
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:120]}


def table(
    script: str,
    name: str,
    *,
    quick: bool,
    who_only: set[str] | None = None,
    texts_only: set[str] | None = None,
) -> None:
    """The cells of one encoding, printed as a table of cold / warm ratios to tiktoken's
    ``encode_ordinary`` (above 1: faster than tiktoken); ``texts_only``: only these texts."""
    prepare(name)
    theirs = twin(name)
    contenders = makers(name)
    columns = [("tiktoken", "list")] + [
        (who, kind)
        for who, outputs in contenders.items()
        for kind in KINDS
        if who != "tiktoken" and kind in outputs and (who_only is None or who in who_only)
    ]
    every = texts(quick)
    unknown = sorted((texts_only or set()) - set(every))
    if unknown:
        raise SystemExit(
            f"--texts: no text named {', '.join(unknown)} (the texts: {', '.join(every)})"
        )
    labels = {k: t for k, t in every.items() if texts_only is None or k in texts_only}
    print(
        f"\n{name}: cold / warm, ratio to tiktoken's encode_ordinary (CPU time; each cell in a "
        f"fresh process: cold = its first encode, warm = the least of {WARM_RUNS} more)"
    )
    print("| contender | " + " | ".join(f"{k} ({_mb(t):.1f} MB)" for k, t in labels.items()) + " |")
    print("|---|" + "---:|" * len(labels))
    rows: dict[tuple[str, str], list[str]] = {column: [] for column in columns}
    for label, text in labels.items():
        text_path = folder() / f"{name}-{label}.txt"
        ids_path = folder() / f"{name}-{label}.npy"
        text_path.write_bytes(text.encode("utf-8"))
        numpy.save(ids_path, numpy.asarray(theirs.encode_ordinary(text), dtype=numpy.int64))
        base = _run_cell(script, "tiktoken", "list", name, text_path, ids_path)
        for who, kind in columns:
            cell = (
                base
                if who == "tiktoken"
                else _run_cell(script, who, kind, name, text_path, ids_path)
            )
            rows[who, kind].append(_shown(cell, base, _mb(text)))
    for (who, kind), cells in rows.items():
        print(f"| {who} {kind} | " + " | ".join(cells) + " |")


def _mb(text: str) -> float:
    return len(text.encode("utf-8")) / 1e6


def _shown(cell: dict[str, Any], base: dict[str, Any], mb: float) -> str:
    if "error" in cell or "error" in base:
        return f"error: {cell.get('error') or base.get('error')}"
    if not cell["exact"]:
        return "differs"
    if cell is base:
        return f"{mb / cell['cold']:.1f} / {mb / cell['warm']:.1f} MB/s"
    return f"{base['cold'] / cell['cold']:.1f} / {base['warm'] / cell['warm']:.1f}x"
