"""How fast the pre-tokenizer cuts text: the native scanner against ``re``, ``regex`` and tiktoken.

    python benchmarks/scan_throughput.py [--runs 5] [--other-build OLD/_scan.cpython-...so]

For cl100k_base and o200k_base (when its file is found: ``STREAMCODEC_DATA_DIR``) and each sample
of ``fuzz/corpus.py``, it prints MB/s (CPU time, median of ``--runs``) of cutting the text into
a list of pieces with the native scanner (``streamcodec.text.native``), with the ``re`` fast path
(``streamcodec.text.pretokenize.fast_pattern``) and with ``regex`` itself, and of tiktoken's
*whole* ``encode_ordinary`` (cutting and merging), then the native scanner's speed as a multiple
of each. Every path's pieces are checked equal to ``regex``'s first.

``--other-build`` loads another build of ``streamcodec.text._scan`` (a copy of the ``.so`` from
before a change, e.g. before the SWAR fast paths of ``_scan_ascii.h``) and adds its speed and
the native scanner's ratio to it, measured in the same run.
"""

from __future__ import annotations

import argparse
import functools
import importlib.machinery
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import regex
import tiktoken

import streamcodec
from fuzz.corpus import samples
from streamcodec.text.native import NativeScanner, native_scanner
from streamcodec.text.pretokenize import fast_pattern


def cpu_seconds(run: Callable[[], object], runs: int) -> float:
    """Median CPU time of ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--other-build", type=Path, help="another build's _scan .so to compare")
    args = parser.parse_args()
    other = _load(args.other_build) if args.other_build else None
    print("MB/s, CPU time, median of", args.runs, "runs; native / each other path")
    print(
        "| encoding | input | MB | native | re | regex | tiktoken encode | vs re | vs regex"
        " | vs tiktoken |" + (" other build | vs other build |" if other else "")
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if other else ""))
    for name in ("cl100k_base", "o200k_base"):
        try:
            ours = streamcodec.get_encoding(name)
        except FileNotFoundError:
            print(f"({name}: vocabulary not found, skipped)")
            continue
        scanner = native_scanner(ours.pat_str)
        if scanner is None:
            sys.exit("the native scanner is not built: python setup.py build_ext --inplace")
        theirs = tiktoken.Encoding(
            name, pat_str=ours.pat_str, mergeable_ranks=ours.mergeable_ranks, special_tokens={}
        )
        compiled, fast = regex.compile(ours.pat_str), fast_pattern(ours.pat_str)
        for label, text in samples().items():
            expected = compiled.findall(text)
            if scanner.pieces(text, 0, len(text)) != expected or fast.findall(text) != expected:
                raise AssertionError(f"{name} {label}: pieces differ from regex's")
            size = len(text.encode("utf-8")) / 1e6
            paths = [
                functools.partial(scanner.pieces, text, 0, len(text)),
                functools.partial(fast.findall, text),
                functools.partial(compiled.findall, text),
                functools.partial(theirs.encode_ordinary, text),
            ]
            seconds = [cpu_seconds(path, args.runs) for path in paths]
            speeds = " | ".join(f"{size / s:.1f}" for s in seconds)
            ratios = " | ".join(f"{s / seconds[0]:.1f}x" for s in seconds[1:])
            row = f"| {name} | {label} | {size:.2f} | {speeds} | {ratios} |"
            if other is not None:
                old = NativeScanner(other, scanner.number, scanner.name)
                if old.pieces(text, 0, len(text)) != expected:
                    raise AssertionError(f"{name} {label}: the other build's pieces differ")
                before = cpu_seconds(functools.partial(old.pieces, text, 0, len(text)), args.runs)
                row += f" {size / before:.1f} | {before / seconds[0]:.2f}x |"
            print(row)


def _load(path: Path) -> ModuleType:
    """Another build of ``streamcodec.text._scan``, from its ``.so`` file."""
    loader = importlib.machinery.ExtensionFileLoader("streamcodec.text._scan", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
