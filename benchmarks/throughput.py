"""Throughput of streamcodec's two backends beside tiktoken and the fastest exact peers.

    python benchmarks/throughput.py [--encodings cl100k_base,o200k_base] [--runs 5]
    python benchmarks/throughput.py --quick             # small texts, cl100k_base, fewer runs
    python benchmarks/throughput.py --only outputs --who streamcodec,gigatoken
    python benchmarks/throughput.py --only outputs --texts multilingual   # one text's cells
    python benchmarks/throughput.py --count-mb 400      # also count a 400 MB file (slow)

Every ratio is tiktoken's time / ours (above 1: streamcodec is faster), tiktoken measured in the
same run, so that a busy machine shifts both alike. Single-thread figures are CPU time; the
threads section uses wall time.

- **outputs**: ``encode_ordinary`` (list), ``encode_to_numpy`` and counting (the engine's
  ``count``, which builds no ids) of prose, code and multilingual text, beside the peers
  toktok-rs, gigatoken-cachefix and snaptokens when installed (``benchmarks/contenders.py``):
  each cell in a fresh process, cold (its first encode) and warm (the least of three more), its
  ids checked against tiktoken's (``benchmarks/cells.py``). Every ratio is over tiktoken's
  ``encode_ordinary``.
- **memory**: the RSS kept after ten different 12 MB texts of unseen words, in a new process
  for streamcodec and each peer (the word caches must stay bounded: at most +64 MB).
- **whole text**: ``encode_ordinary`` of prose, Python source and multilingual text
  (``fuzz/corpus.py``), on a fresh ``Encoding`` ("cold": its caches empty) and again on the
  same one ("warm"), for the native and the pure-Python backend.
- **streamed**: a novel file (``fuzz/corpus.mixed``: prose, other scripts, code; nothing
  repeated) read through ``iter_encode_chunks``, against tiktoken's ``encode_ordinary`` of the
  whole text.
- **threads**: ``encode_ordinary_batch`` of 8 large texts with 2 threads against 1 (native).
- **count** (``--count-mb``): ``count_tokens`` of a file of that size, native, one process.
- **peers**: quicktok and bpe-openai, the fastest exact encoders, when installed (``pip install
  -e '.[bench]'``): ``encode_ordinary`` of the same samples, each built once from its bundled
  vocabulary, beside tiktoken and the native backend (warm); a peer whose ids differ from
  tiktoken's shows ``differs``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import tiktoken

import streamcodec
from benchmarks import cells
from benchmarks.contenders import fresh, peer_outputs, streamcodec_outputs, twin
from fuzz.corpus import mixed, samples

BACKENDS = ("native", "python")
T = TypeVar("T")


def least(
    runs: int, work: Callable[[], object], clock: Callable[[], float] = time.process_time
) -> float:
    """The least time of ``runs`` calls of ``work``."""
    times = []
    for _ in range(runs):
        start = clock()
        work()
        times.append(clock() - start)
    return min(times)


def least_fresh(runs: int, make: Callable[[], T], work: Callable[[T], object]) -> float:
    """The least CPU time of ``runs`` calls of ``work(made)``, each on a ``made = make()`` just
    before (untimed).

    Just before, as a user makes an encoder and encodes: one made several builds earlier has had
    its vocabulary's tables pushed out of the CPU's caches by the later builds, which made
    streamcodec's fresh runs up to 30% slower and tiktoken's 2-3%, a cost no user meets."""
    times = []
    for _ in range(runs):
        made = make()
        start = time.process_time()
        work(made)
        times.append(time.process_time() - start)
    return min(times)


def whole_text(name: str, runs: int) -> None:
    """The whole-text table of one encoding."""
    theirs = twin(name)
    print(f"\n{name}: whole text, MB/s and ratio to tiktoken (CPU time, least of {runs})")
    print("| input | MB | tiktoken | native cold | native warm | python cold | python warm |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, text in samples().items():
        size = len(text.encode("utf-8")) / 1e6
        expected = theirs.encode_ordinary(text)
        base = least(runs, functools.partial(theirs.encode_ordinary, text))
        cells = []
        for backend in BACKENDS:
            warm = fresh(name, backend)
            if warm.encode_ordinary(text) != expected:
                raise AssertionError(f"{backend} and tiktoken disagree on {label}")
            cold = least_fresh(
                runs,
                functools.partial(fresh, name, backend),
                lambda e, t=text: e.encode_ordinary(t),
            )
            hot = least(runs, functools.partial(warm.encode_ordinary, text))
            cells += [
                f"{size / cold:.1f} ({base / cold:.2f}x)",
                f"{size / hot:.1f} ({base / hot:.2f}x)",
            ]
        print(f"| {label} | {size:.2f} | {size / base:.1f} | {' | '.join(cells)} |")


def streamed(name: str, runs: int, folder: Path) -> None:
    """A novel file through iter_encode_chunks, on both backends."""
    theirs = twin(name)
    text = mixed()
    path = folder / "novel.txt"
    path.write_text(text, encoding="utf-8")
    size = path.stat().st_size / 1e6
    base = least(runs, functools.partial(theirs.encode_ordinary, text))
    line = f"{name}: novel {size:.1f} MB streamed (iter_encode_chunks): tiktoken "
    line += f"{size / base:.1f} MB/s"
    for backend in BACKENDS:
        took = least_fresh(
            runs,
            functools.partial(fresh, name, backend),
            lambda e: sum(map(len, e.iter_encode_chunks(path))),
        )
        line += f"; {backend} {size / took:.1f} MB/s ({base / took:.2f}x)"
    print(line)


def threads(name: str, runs: int) -> None:
    """encode_ordinary_batch of 8 large texts on 2 threads against 1 (wall time)."""
    enc = fresh(name, "native")
    unit = "".join(samples().values())
    texts = [unit[i * 1000 :] + unit[: i * 1000] for i in range(8)]  # 8 x ~1 MB, all different
    one = least(runs, lambda: enc.encode_ordinary_batch(texts, num_threads=1), time.perf_counter)
    two = least(runs, lambda: enc.encode_ordinary_batch(texts, num_threads=2), time.perf_counter)
    theirs = twin(name)
    tik1 = least(
        runs, lambda: theirs.encode_ordinary_batch(texts, num_threads=1), time.perf_counter
    )
    tik2 = least(
        runs, lambda: theirs.encode_ordinary_batch(texts, num_threads=2), time.perf_counter
    )
    print(
        f"{name}: encode_ordinary_batch of 8 x {len(texts[0].encode()) / 1e6:.1f} MB, wall time: "
        f"native 2 threads {one / two:.2f}x of 1 thread ({one:.2f} s -> {two:.2f} s); "
        f"tiktoken {tik1 / tik2:.2f}x"
    )


def installed_peers(name: str) -> dict[str, Callable[[str], list[int]]]:
    """The installed peer encoders of the encoding ``name``: their ``encode_ordinary``."""
    found: dict[str, Callable[[str], list[int]]] = {}
    if importlib.util.find_spec("quicktok") is not None:
        import quicktok

        found["quicktok"] = quicktok.get_encoding(name).encode_ordinary
    if importlib.util.find_spec("bpe_openai") is not None:
        import bpe_openai

        found["bpe-openai"] = bpe_openai.get_encoding(name).encode_ordinary
    return found


def peers(name: str, runs: int) -> None:
    """The peers' table of one encoding (warm: every encoder built once)."""
    theirs, others = twin(name), installed_peers(name)
    if not others:
        print(f"\n{name}: no peer installed (pip install -e '.[bench]')")
        return
    others = {"streamcodec native": fresh(name, "native").encode_ordinary, **others}
    print(f"\n{name}: peers, MB/s and ratio to tiktoken (CPU time, least of {runs}, warm)")
    print(f"| input | MB | tiktoken | {' | '.join(others)} |")
    print("|---|---:|---:|" + "---:|" * len(others))
    for label, text in samples().items():
        size = len(text.encode("utf-8")) / 1e6
        expected = theirs.encode_ordinary(text)
        base = least(runs, functools.partial(theirs.encode_ordinary, text))
        cells = []
        for encode in others.values():
            if encode(text) != expected:
                cells.append("differs")
                continue
            took = least(runs, functools.partial(encode, text))
            cells.append(f"{size / took:.1f} ({base / took:.2f}x)")
        print(f"| {label} | {size:.2f} | {size / base:.1f} | {' | '.join(cells)} |")


def memory(name: str) -> None:
    """The RSS kept after ten different texts of unseen words (12 MB each), in a new process."""
    import subprocess

    for who in ("streamcodec", *peer_outputs(name)):
        done = subprocess.run(
            [sys.executable, __file__, "--rss-child", who, "--encodings", name],
            capture_output=True,
            text=True,
            check=False,
        )
        print(f"{name}: {who}: {done.stdout.strip() or done.stderr.strip()[-300:]}")


def _rss_child(who: str, name: str) -> None:
    """Encode ten different 12 MB texts of words never seen before; print the RSS growth."""
    import random

    makers = streamcodec_outputs(name) if who == "streamcodec" else peer_outputs(name)[who]
    encode = makers["numpy"]()
    letters = "abcdefghijklmnopqrstuvwxyz"
    rss = []
    for seed in range(10):
        rng = random.Random(seed)
        words = ("".join(rng.choices(letters, k=rng.randint(3, 12))) for _ in range(1_500_000))
        text = " ".join(words)[:12_000_000]
        encode(text)
        del text
        rss.append(_rss_mb())
    print(
        f"RSS after text 1: {rss[0]:.0f} MB, after text 10: {rss[-1]:.0f} MB "
        f"(+{rss[-1] - rss[0]:.0f} MB; target: at most +64 MB)"
    )


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def count(name: str, megabytes: int, folder: Path) -> None:
    """count_tokens of a file of ``megabytes`` (the novel text repeated), native, one process."""
    path = folder / "big.txt"
    unit = mixed().encode("utf-8")
    with path.open("wb") as out:
        for _ in range(max(1, megabytes * 1_000_000 // len(unit))):
            out.write(unit)
    size = path.stat().st_size / 1e6
    start = time.perf_counter()
    tokens = fresh(name, "native").count_tokens(path)
    took = time.perf_counter() - start
    rate = f"{took:.1f} s ({size / took:.1f} MB/s)"
    print(f"{name}: count_tokens of {size:.0f} MB: {rate}, {tokens:,} tokens")


def main() -> None:
    """Print every table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encodings", help="default: cl100k_base,o200k_base (quick: cl100k_base)")
    parser.add_argument("--runs", type=int, help="runs of each timing (default 5; quick: 2)")
    parser.add_argument("--quick", action="store_true", help="small texts, fewer runs")
    parser.add_argument("--who", help="outputs: only these contenders (comma-separated)")
    parser.add_argument(
        "--texts", help="outputs: only these texts (comma-separated: prose,code,multilingual)"
    )
    parser.add_argument("--count-mb", type=int, default=0, help="also count a file this large")
    parser.add_argument(
        "--only", default="outputs,whole,streamed,threads,peers,memory", help="sections to run"
    )
    for hidden in ("--rss-child", "--cell", "--text", "--expected"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    encodings = args.encodings or ("cl100k_base" if args.quick else "cl100k_base,o200k_base")
    runs = args.runs or (2 if args.quick else 5)
    if args.cell:
        who, kind = args.cell.split(":")
        return cells.child(who, kind, encodings, args.text, args.expected)
    if args.rss_child:
        return _rss_child(args.rss_child, encodings)
    if streamcodec.backend() != "native":
        raise SystemExit("the compiled core is not built: pip install -e . with a C compiler")
    versions = f"streamcodec {streamcodec.__version__}, tiktoken {tiktoken.__version__}"
    print(f"{versions}, {os.cpu_count()} CPUs")
    sections = args.only.split(",")
    with tempfile.TemporaryDirectory() as folder:
        for name in encodings.split(","):
            if "outputs" in sections:
                who = set(args.who.split(",")) | {"tiktoken"} if args.who else None
                shown = set(args.texts.split(",")) if args.texts else None
                cells.table(__file__, name, quick=args.quick, who_only=who, texts_only=shown)
            if "whole" in sections:
                whole_text(name, runs)
            if "streamed" in sections:
                streamed(name, max(1, runs // 2), Path(folder))
            if "threads" in sections:
                threads(name, runs)
            if "peers" in sections:
                peers(name, runs)
            if "memory" in sections:
                memory(name)
            if args.count_mb:
                count(name, args.count_mb, Path(folder))


if __name__ == "__main__":
    main()
