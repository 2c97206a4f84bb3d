"""streamcodec in Pyodide (Node) beside streamcodec native, pure CPython and tiktoken.

    bash tools/pyodide_setup.sh && python benchmarks/pyodide_throughput.py [--size 200000]

No target (issue 32): the point is that the pure wheel runs in a browser or a notebook with
tiktoken's ids. Each contender encodes the same prose, code and multilingual text (``--size``
characters each, fuzz/corpus.py): the best of three encodes, each by a fresh encoder (cold
caches, as on a new document), in MB of UTF-8 per second, and its ratio to tiktoken's; the ids
are compared too. Then, for Pyodide, its start, the wheels' install and ``get_encoding`` (the
vocabulary read and its tables built). Pyodide runs this file itself (``--inside``), as
tests/test_pyodide.py runs its checks; the host measures the rest in this process, one
contender after another, so a shared machine's noise touches each: run it twice, compare ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

NAMES = ("cl100k_base", "o200k_base")


Encode = Callable[[str], list[int]]


def measure(fresh: dict[str, Callable[[], Encode]], texts: dict[str, str]) -> dict[str, object]:
    """Per encoding and text: the best of three encodes, each by a fresh encoder (``fresh``
    makes one: cold caches, as on a new document), and its ids."""
    out: dict[str, object] = {}
    for name, make in fresh.items():
        for label, text in texts.items():
            best, ids = float("inf"), []
            for _ in range(3):
                encode = make()
                start = time.perf_counter()
                ids = encode(text)
                best = min(best, time.perf_counter() - start)
            out[f"{name}/{label}"] = {"seconds": best, "ids": ids}
    return out


def like(enc: Any, *, backend: str | None = None) -> Callable[[], Encode]:
    """Fresh streamcodec encoders with ``enc``'s vocabulary (on ``backend``, else its own)."""
    from streamcodec import Encoding

    options = {"backend": backend} if backend else {}
    return lambda: (
        Encoding(
            enc.name,
            pat_str=enc.pat_str,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
            **options,  # type: ignore[arg-type]
        ).encode_ordinary
    )


def inside(cases: str, result: str) -> None:
    """In Pyodide (or any Python): streamcodec's default backend on the cases' texts."""
    import streamcodec

    texts = json.loads(Path(cases).read_text(encoding="utf-8"))
    loads, fresh = {}, {}
    for name in NAMES:
        start = time.perf_counter()
        enc = streamcodec.get_encoding(name)
        loads[name] = time.perf_counter() - start
        fresh[name] = like(enc)
    out = {"load": loads, "runs": measure(fresh, texts), "backend": enc.backend}
    startup = globals().get("_times")  # set by tools/browser/run_in_node.mjs
    out["startup"] = dict(startup) if startup is not None else {}
    Path(result).write_text(json.dumps(out), encoding="utf-8")


def _host(size: int) -> None:
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root)]
    import tiktoken

    import streamcodec
    from fuzz.corpus import samples
    from tools.browser.build import wheels
    from tools.browser.node import run_in_pyodide

    texts = {label: text[:size] for label, text in samples().items()}
    with tempfile.TemporaryDirectory() as folder:
        io = Path(folder)
        (io / "cases.json").write_text(json.dumps(texts), encoding="utf-8")
        wheels(io / "wheels")
        run_in_pyodide(io / "wheels", io, Path(__file__), "--inside", "cases.json", "out.json")
        pyodide = json.loads((io / "out.json").read_text(encoding="utf-8"))
    native = {name: streamcodec.get_encoding(name) for name in NAMES}
    twins = {
        name: tiktoken.Encoding(
            name,
            pat_str=enc.pat_str,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
        )
        for name, enc in native.items()
    }
    runs = {
        "tiktoken": measure({n: lambda t=t: t.encode_ordinary for n, t in twins.items()}, texts),
        f"streamcodec {streamcodec.backend()}": measure(
            {n: like(e) for n, e in native.items()}, texts
        ),
        "streamcodec pure (CPython)": measure(
            {n: like(e, backend="python") for n, e in native.items()}, texts
        ),
        "streamcodec in Pyodide": pyodide["runs"],
    }
    _report(runs, texts, pyodide)


def _report(runs: dict[str, Any], texts: dict[str, str], pyodide: dict[str, Any]) -> None:
    mb = {label: len(text.encode("utf-8")) / 1e6 for label, text in texts.items()}
    print(f"{'contender':28} {'case':26} {'MB/s':>8} {'vs tiktoken':>12}")
    for contender, results in runs.items():
        for case, row in results.items():
            reference = runs["tiktoken"][case]
            same = "" if row["ids"] == reference["ids"] else "  IDS DIFFER"
            speed = mb[case.split("/")[1]] / row["seconds"]
            ratio = reference["seconds"] / row["seconds"]
            print(f"{contender:28} {case:26} {speed:8.2f} {ratio:11.3f}x{same}")
    startup = pyodide["startup"]
    print(
        f"Pyodide: started in {startup.get('load_ms', 0) / 1000:.1f} s, wheels installed in "
        f"{startup.get('install_ms', 0) / 1000:.1f} s; get_encoding "
        + ", ".join(f"{n} {s:.2f} s" for n, s in pyodide["load"].items())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=200_000, help="characters of each text")
    parser.add_argument("--inside", nargs=2, metavar=("CASES", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        inside(*args.inside)
    else:
        _host(args.size)


if __name__ == "__main__":
    main()
