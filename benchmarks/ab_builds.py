"""Two builds of the fused pass, each timed warm in fresh processes of its own, alternated.

    python benchmarks/ab_builds.py OLD/_fused.cpython-...so NEW/_fused.cpython-...so
    python benchmarks/ab_builds.py A.so B.so --encoding o200k_base --output numpy --pairs 30

Each process loads one build of ``streamcodec.engine._fused`` (the ``.so`` given), makes its
encoder (the registered vocabulary's, a fresh word cache), encodes the text once, then times
``--calls`` more calls in a row (CPU time), as the harness's warm cell does
(``benchmarks/cells.py``). The builds alternate, the order swapped each pair; printed: each
build's mean least and median, and B's speed over A's as the median of the pairs' ratios.

Why not both builds in one process, called alternately: each call then follows the other
encoder's, whose tables (10-15 MB) have taken this one's place in the CPU's caches, so the
warm calls timed are partly cold (9-26% slower by the median on a shared 2-vCPU VM,
docs/performance.md, the eighth session's issue-27 section): right for a change of instructions,
biased for a change of what stays in the caches. An A/A run of this script shows the host's
noise (0.97 there at 24 pairs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.contenders import fresh
from fuzz.corpus import english_prose, multilingual, stdlib_source

TEXTS = {"prose": english_prose, "code": stdlib_source, "multilingual": multilingual}
OUTPUTS = ("count", "numpy", "list")


def child(build: str, encoding: str, output: str, text_name: str, calls: int) -> None:
    """Time one build's warm calls in this (fresh) process; print their least and median."""
    spec = importlib.util.spec_from_file_location("streamcodec.engine._fused", build)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{build}: not a loadable build of streamcodec.engine._fused")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ordinary = fresh(encoding).ordinary
    if ordinary.pretokenizer.scanner is None:
        raise SystemExit(f"{encoding}: no native scanner for its pattern")
    bound = ordinary.cache_info()["bytes_each"]
    fused = module.FusedEncoder(
        ordinary._core, ordinary.pretokenizer.scanner.number, cache_bytes=bound
    )
    text = TEXTS[text_name](4_000_000)
    n = len(text)
    encode = {
        "count": lambda: fused.count(text, 0, n, "strict", -1),
        "numpy": lambda: fused.encode_array(text, 0, n, "strict"),
        "list": lambda: fused.encode(text, 0, n, "strict"),
    }[output]
    encode()
    times = []
    for _ in range(calls):
        start = time.process_time()
        encode()
        times.append(time.process_time() - start)
    print(json.dumps({"least": min(times), "median": statistics.median(times)}))


def _timed(args: argparse.Namespace, build: str) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", build, "--encoding", args.encoding]
    command += ["--output", args.output, "--text", args.text, "--calls", str(args.calls)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="*", help="two .so files: A (before) and B (after)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--output", choices=OUTPUTS, default="count")
    parser.add_argument("--text", choices=sorted(TEXTS), default="multilingual")
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--calls", type=int, default=10, help="warm calls timed in each process")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.encoding, args.output, args.text, args.calls)
        return
    if len(args.builds) != 2:
        parser.error("give two builds of streamcodec/engine/_fused (.so files)")
    a_build, b_build = args.builds
    pairs = []
    for i in range(args.pairs):
        if i % 2 == 0:
            a, b = _timed(args, a_build), _timed(args, b_build)
        else:
            b, a = _timed(args, b_build), _timed(args, a_build)
        pairs.append((a, b))
    for name, side in (("A", 0), ("B", 1)):
        least = statistics.mean(pair[side]["least"] for pair in pairs) * 1e3
        median = statistics.mean(pair[side]["median"] for pair in pairs) * 1e3
        print(
            f"{name}: least {least:.3f} ms, median {median:.3f} ms ({len(pairs)} processes' mean)"
        )
    for kind in ("least", "median"):
        ratio = statistics.median(a[kind] / b[kind] for a, b in pairs)
        print(f"B's speed over A's, the median of the pairs' ratios of the {kind}: {ratio:.3f}x")


if __name__ == "__main__":
    main()
