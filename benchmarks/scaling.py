"""Scaling over cores: MB/s of each batch encoder at 1, 2, 4, ... threads, up to every core.

    python benchmarks/scaling.py [--docs 10000] [--threads 1,2] [--runs 2] [--json out.json]
                                 [--corpus docs.pickle] [--only "sc batch numpy,sc count batch"]

The documents: ``--docs`` real texts of 200 B to 20 KB (sizes log-uniform), cut from this
machine's Python sources, the standard library's docstrings and multilingual text
(``fuzz/corpus.py``), built once and pickled. Each contender runs at each thread count in a
fresh process (so no cache is shared between contenders, and the peers' thread pools are sized
before they load: ``RAYON_NUM_THREADS``); the figure is the least wall time of ``--runs`` runs
in that process. Rounds (``--rounds``) run every contender in turn again and keep each one's
best, so a busy machine slows them alike. Every contender's output is checked against
streamcodec's (a digest of the ids or counts): a peer that differs is marked.

Contenders (peers where installed): streamcodec's ``encode_ordinary_batch_to_numpy``,
``count_tokens_batch``, ``encode_ordinary_batch`` (lists), ``encode_to_numpy`` per document on
a thread pool; tiktoken's ``encode_ordinary_batch``; toktok-rs's ``encode_batch`` and
``count_batch``; snaptokens' ``encode_batch_flat`` (from a tokenizer.json of the vocabulary);
gigatoken-cachefix's ``encode_batch`` (an awkward array; from a ``.tiktoken`` file).
At one thread, also ``encode_to_numpy`` and ``count`` of all the documents joined as one text:
the batch should cost no more per byte than one long text. ``count_tokens_batch`` also cold
(``COLD``: its first call in a fresh process, the encoder loaded untimed, as
``benchmarks/throughput.py`` times a cold cell): the reference of a one-pass job over a corpus,
which learns every word as it goes. And ``streamcodec tokenize-corpus
--jobs N`` on the documents written as JSON Lines (its figure: the same text bytes over the
command's wall time, its process start included: Python, the imports (their bytecode cached, as
an installed package's), the vocabulary), and
``streamcodec.corpus.tokenize(jobs=N)`` on them in a process already started (the run alone).
The command's start is timed on its own too, as the same command on a one-line input, and
printed with the command's MB/s less it, so a small corpus's figure is read for what it is; and
the command on the documents written four times (``LARGE``: several shards, the start a small
part), the figure a user preparing a real corpus meets.

Printed: a table of MB/s (UTF-8 bytes of the documents / wall seconds), then the ratios the
issue sets targets for: n threads over one (ids, counts; with the CPU of a run, user and system
of all the process's threads, the least of its runs: on a busy machine, where the wall clock
says little, n threads reach n x one's speed only as far as their CPU stays one's; and the
least minor page faults of a run: a warm run that faults hundreds of times makes fresh memory
at each call), one thread over the joined text, and the most threads against the fastest peer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pickle
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# A pattern snaptokens reads, equal to cl100k_base's (tiktoken's original spelling).
CL100K_HF = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
    r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
IDS = ("sc batch numpy", "sc lists", "sc pool numpy", "tiktoken batch", "toktok encode_batch",
       "snaptokens flat", "gigatoken encode_batch")  # fmt: skip
COLD = "sc count batch (cold)"  # its first call in a fresh process: a one-pass job's reference
COUNTS = ("sc count batch", COLD, "toktok count_batch")
JOINED = ("sc joined numpy", "sc joined count")
CORPUS = "sc tokenize-corpus --jobs N"  # the command line on the documents as JSON Lines
IN_PROCESS = "sc tokenize() jobs=N"  # the same run called in a process already started
START = "sc tokenize-corpus start"  # the command on a one-line input: its start, timed alone
LARGE = "sc tokenize-corpus --jobs N (documents x4)"  # the command on the documents 4 times over
REPEAT = 4  # how many times LARGE's input holds the documents
KNOWN = (*IDS, *COUNTS, *JOINED, CORPUS, IN_PROCESS, START, LARGE)  # what --only may name


def chosen(only: str | None) -> list[str]:
    """The contenders ``--only`` names (comma-separated), or every installed one; an unknown
    name is refused, naming the known ones (a misspelt one ran the thread pool's path and only
    printed "(differs)")."""
    if not only:
        return installed(IDS + COUNTS)
    names = only.split(",")
    unknown = [name for name in names if name not in KNOWN]
    if unknown:
        raise SystemExit(
            f"--only: unknown contender(s) {', '.join(map(repr, unknown))}; known: "
            + ", ".join(map(repr, KNOWN))
        )
    return names


def documents(count: int, seed: int = 28) -> list[str]:
    """``count`` documents of 200 B-20 KB: 60% code, 25% prose, 15% other scripts."""
    from fuzz.corpus import english_prose, multilingual, stdlib_source

    rng = random.Random(seed)
    sources = [stdlib_source(40_000_000), english_prose(8_000_000), multilingual(3_000_000)]
    at = [0, 0, 0]
    docs = []
    for _ in range(count):
        which = rng.choices((0, 1, 2), weights=(60, 25, 15))[0]
        size = int(math.exp(rng.uniform(math.log(200), math.log(20_000))))
        text = sources[which]
        if at[which] + size > len(text):
            at[which] = 0
        docs.append(text[at[which] : at[which] + size])
        at[which] += size
    return docs


def contender(name: str, threads: int, folder: Path) -> Callable[[list[str]], Any]:
    """The function that encodes a batch, built (outside the timing) for ``threads``."""
    import numpy as np

    import streamcodec

    if name in (CORPUS, START, LARGE):  # the process start is in its figure
        inputs = {CORPUS: "docs.jsonl", START: "one.jsonl", LARGE: "docs4.jsonl"}
        jsonl = str(folder / inputs[name])
        shards = str(folder / "shards")
        command = [
            "tokenize-corpus",
            "-q",
            "--restart",
            "--jobs",
            str(threads),
            jsonl,
            "-o",
            shards,
        ]
        return lambda docs: subprocess.run(
            [sys.executable, "-m", "streamcodec", *command], check=True
        )
    if name == IN_PROCESS:
        from streamcodec.corpus import tokenize

        enc = streamcodec.get_encoding("cl100k_base")
        return lambda docs: tokenize(
            [folder / "docs.jsonl"], folder / f"shards-{threads}", encoding=enc, jobs=threads,
            restart=True,
        )  # fmt: skip
    if name.startswith("sc"):
        enc = streamcodec.get_encoding("cl100k_base")
        if name == "sc batch numpy":
            return lambda docs: enc.encode_ordinary_batch_to_numpy(docs, num_threads=threads)
        if name in ("sc count batch", COLD):
            return lambda docs: enc.count_tokens_batch(docs, num_threads=threads)
        if name == "sc lists":
            return lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
        if name == "sc joined numpy":
            return lambda docs: enc.encode_to_numpy("".join(docs))
        if name == "sc joined count":
            return lambda docs: enc.ordinary.count("".join(docs))
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(threads)
        return lambda docs: list(pool.map(enc.encode_to_numpy, docs))
    if name == "tiktoken batch":
        import tiktoken

        base = streamcodec.get_encoding("cl100k_base")
        ranks = base.mergeable_ranks
        ref = tiktoken.Encoding("cl100k_base", pat_str=base.pat_str, mergeable_ranks=ranks,
                                special_tokens={})  # fmt: skip
        return lambda docs: ref.encode_ordinary_batch(docs, num_threads=threads)
    if name.startswith("toktok"):
        from toktok import _toktok

        tok = _toktok.Tokenizer("cl100k_base", "")
        if name == "toktok count_batch":
            return lambda docs: np.array(tok.count_batch(docs, threads), dtype=np.int64)
        return lambda docs: tok.encode_batch(docs, threads)
    if name == "gigatoken encode_batch":
        import gigatoken

        tok = gigatoken.Tokenizer.from_tiktoken(str(folder / "cl100k_base.tiktoken"))
        return lambda docs: tok.encode_batch(docs)
    import snaptokens

    tok = snaptokens.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return lambda docs: tok.encode_batch_flat(docs)


def digest(name: str, result: Any, docs: list[str]) -> str:
    """The ids of every document (or the counts), hashed: equal outputs, equal digests."""
    import numpy as np

    if name in COUNTS:
        counts = np.asarray(result, dtype=np.int64)
        return hashlib.sha256(counts.tobytes()).hexdigest()[:16]
    if name in (*JOINED, CORPUS, IN_PROCESS, START, LARGE):
        return "-"  # the joined text is not the documents; the shards hold separators
    if name in ("sc lists", "tiktoken batch", "sc pool numpy"):
        arrays = [np.asarray(ids, dtype=np.uint32) for ids in result]
        ids = np.concatenate(arrays) if arrays else np.zeros(0, np.uint32)
        offsets = np.cumsum([0, *map(len, arrays)], dtype=np.int64)
    elif name == "gigatoken encode_batch":
        import awkward as ak

        ids = ak.to_numpy(ak.flatten(result))
        offsets = np.cumsum([0, *ak.to_numpy(ak.num(result))], dtype=np.int64)
    else:
        ids = np.frombuffer(result[0], np.uint32)
        offsets = np.frombuffer(result[1], np.int64)
    data = ids.astype(np.uint32).tobytes() + offsets.astype(np.int64).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def cpu_seconds() -> tuple[float, float, int]:
    """User and system CPU of this process's threads and its finished children so far, their
    system CPU alone, and their minor page faults."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    system = own.ru_stime + children.ru_stime
    return own.ru_utime + children.ru_utime + system, system, own.ru_minflt + children.ru_minflt


def child(name: str, threads: int, folder: Path, runs: int) -> None:
    """Time one contender at one thread count; print seconds (wall), CPU seconds and minor page
    faults (each the least of the runs: what a busy machine moves less; the last result is kept
    alive while the next run runs, as a loop that keeps its output) and the output's digest."""
    with open(folder / "docs.pickle", "rb") as f:
        docs = pickle.load(f)
    encode = contender(name, threads, folder)
    runs = 1 if name == COLD else runs  # its word cache empty: the first call alone
    best, cpu, system, faults, result = math.inf, math.inf, math.inf, math.inf, None
    for _ in range(runs):
        start, (used, kernel, faulted) = time.perf_counter(), cpu_seconds()
        result = encode(docs)
        best = min(best, time.perf_counter() - start)
        now, kernel_now, faulted_now = cpu_seconds()
        cpu, faults = min(cpu, now - used), min(faults, faulted_now - faulted)
        system = min(system, kernel_now - kernel)
        if best > 3:  # enough for a slow one
            break
    out = {"seconds": best, "cpu": cpu, "system": system, "faults": faults,
           "digest": digest(name, result, docs)}  # fmt: skip
    print(json.dumps(out))


def measure(name: str, threads: int, folder: Path, runs: int) -> dict[str, Any] | None:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads), "PYTHONPATH": path}
    # The command's start as an installed package's: its modules' bytecode cached (the first of
    # the runs writes it), not compiled at each start as PYTHONDONTWRITEBYTECODE=1 makes them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, str(threads), str(folder), str(runs)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        print(f"  {name} at {threads}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def installed(names: tuple[str, ...]) -> list[str]:
    import importlib.util

    module = {"tiktoken": "tiktoken", "toktok": "toktok", "snaptokens": "snaptokens",
              "gigatoken": "gigatoken"}  # fmt: skip
    found = [n for n in names if importlib.util.find_spec(module.get(n.split()[0], "streamcodec"))]
    return [*found, CORPUS, IN_PROCESS, LARGE]


def table(results: dict[tuple[str, int], dict[str, Any]], counts: list[int], size: float) -> None:
    """The MB/s table (markdown), and the ratios of the issue's targets."""
    names = list(dict.fromkeys(name for name, _ in results if name != START))

    def mb(name: str) -> float:  # the text a contender's run encodes
        return size * (REPEAT if name == LARGE else 1)

    print("| MB/s at N threads | " + " | ".join(map(str, counts)) + " |")
    print("|---|" + "---|" * len(counts))
    reference = {d for (n, _), r in results.items() if n == "sc batch numpy" for d in [r["digest"]]}
    counted = {d for (n, _), r in results.items() if n == "sc count batch" for d in [r["digest"]]}
    for name in names:
        cells = []
        for n in counts:
            found = results.get((name, n))
            if found is None:
                cells.append("")
                continue
            same = found["digest"] in (counted if name in COUNTS else reference) or name in (
                *JOINED,
                CORPUS,
                IN_PROCESS,
                LARGE,
            )
            cells.append(f"{mb(name) / found['seconds']:.0f}" + ("" if same else " (differs)"))
        print(f"| {name} | " + " | ".join(cells) + " |")

    def mbps(name: str, n: int) -> float:
        found = results.get((name, n))
        return mb(name) / found["seconds"] if found else math.nan

    def cpu(name: str, n: int) -> float:
        found = results.get((name, n))
        return float(found["cpu"]) if found else math.nan

    def system(name: str, n: int) -> float:
        found = results.get((name, n))
        return float(found.get("system", math.nan)) if found else math.nan

    def faults(name: str, n: int) -> float:
        found = results.get((name, n))
        return float(found.get("faults", math.nan)) if found else math.nan

    most = counts[-1]
    for name in ("sc batch numpy", "sc count batch"):
        for n in counts[1:]:
            print(f"{name}: {n} threads / 1 = {mbps(name, n) / mbps(name, 1):.2f}x; CPU a run "
                  f"{1000 * cpu(name, n):.0f} / {1000 * cpu(name, 1):.0f} ms = "
                  f"{cpu(name, n) / cpu(name, 1):.2f}x; minor faults a run "
                  f"{faults(name, n):.0f} / {faults(name, 1):.0f}")  # fmt: skip
    for ours, joined in (
        ("sc batch numpy", "sc joined numpy"),
        ("sc count batch", "sc joined count"),
    ):
        print(f"{ours}, 1 thread / joined text = {mbps(ours, 1) / mbps(joined, 1):.2f}x")
    for corpus in (CORPUS, IN_PROCESS, LARGE):
        if (corpus, 1) not in results:
            continue
        for n in counts[1:]:
            print(f"{corpus}: {n} / 1 = {mbps(corpus, n) / mbps(corpus, 1):.2f}x")
        # the system part apart: on a VM that hands free memory back to its host, each page
        # the run touches first can cost a host fault too, and this part moves 5x between runs
        cpus = ", ".join(f"{1000 * cpu(corpus, n):.0f} ({1000 * system(corpus, n):.0f} system) "
                         f"at {n}" for n in counts if (corpus, n) in results)  # fmt: skip
        print(f"{corpus}: CPU a run, least, ms: {cpus}")
        for count in ("sc count batch", COLD):
            if (count, 1) in results:
                ratio = mbps(corpus, 1) / mbps(count, 1)
                print(f"{corpus} at 1 / {count}, 1 thread = {ratio:.2f}x")
    for n, corpus in ((n, c) for c in (CORPUS, LARGE) for n in counts):
        start, whole = results.get((START, n)), results.get((corpus, n))
        if start is not None and whole is not None and whole["seconds"] > start["seconds"]:
            less = mb(corpus) / (whole["seconds"] - start["seconds"])
            print(f"{corpus} at {n}: its start (a one-line input) {1000 * start['seconds']:.0f} "
                  f"ms; less it, {less:.0f} MB/s")  # fmt: skip
    peers = [n for n in names if not n.startswith(("sc", "tiktoken")) and (n, most) in results]
    for ours, kind in (("sc batch numpy", IDS), ("sc count batch", COUNTS)):
        rivals = [p for p in peers if p in kind]
        if rivals:
            fastest = max(rivals, key=lambda p: mbps(p, most))
            ratio = mbps(ours, most) / mbps(fastest, most)
            print(f"{ours} at {most} threads / {fastest} = {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--threads", help="thread counts (default 1, 2, 4, ... every core)")
    parser.add_argument("--runs", type=int, default=2, help="runs in each process (least kept)")
    parser.add_argument("--rounds", type=int, default=1, help="passes over every contender")
    parser.add_argument("--only", help="contenders, comma-separated (default: all installed)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--corpus", help="the documents pickled here (built and saved if missing)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, threads, folder, runs = args.child
        return child(name, int(threads), Path(folder), int(runs))
    from streamcodec.engine.batch import default_threads

    cores = default_threads()
    counts = [int(n) for n in args.threads.split(",")] if args.threads else [
        n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n < cores] + [cores]  # fmt: skip
    names = chosen(args.only)
    with tempfile.TemporaryDirectory(prefix="streamcodec-scaling-") as name:
        folder = Path(name)
        kept = Path(args.corpus) if args.corpus else None
        if kept is not None and kept.exists():
            with open(kept, "rb") as f:
                docs = pickle.load(f)
        else:
            docs = documents(args.docs)
        size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs) / 1e6
        for path in filter(None, [folder / "docs.pickle", kept]):
            with open(path, "wb") as f:
                pickle.dump(docs, f)
        if "snaptokens flat" in names:
            _tokenizer_json(folder)
        if "gigatoken encode_batch" in names:
            _tiktoken_file(folder)
        if CORPUS in names or IN_PROCESS in names or LARGE in names:
            with open(folder / "docs.jsonl", "w", encoding="utf-8") as f:
                f.writelines(json.dumps({"text": d}) + "\n" for d in docs)
            if LARGE in names:
                with open(folder / "docs.jsonl", "rb") as f:
                    (folder / "docs4.jsonl").write_bytes(f.read() * REPEAT)
            (folder / "one.jsonl").write_text(json.dumps({"text": docs[0]}) + "\n")
        print(f"{len(docs)} documents, {size:.1f} MB; {cores} cores ({platform.processor() or platform.machine()}); "  # noqa: E501
              f"Python {platform.python_version()}")  # fmt: skip
        results: dict[tuple[str, int], dict[str, Any]] = {}
        starts = [START] if CORPUS in names or LARGE in names else []
        plan = [(n, t) for t in counts for n in [*names, *starts]] + [(n, 1) for n in JOINED]
        for _ in range(args.rounds):
            for name, threads in plan:
                found = measure(name, threads, folder, args.runs)
                kept = results.get((name, threads))
                if found and (kept is None or found["seconds"] < kept["seconds"]):
                    results[(name, threads)] = found
        table(results, counts, size)
        if args.json:
            rows = [{"contender": n, "threads": t, **r} for (n, t), r in results.items()]
            Path(args.json).write_text(json.dumps({"mb": size, "cores": cores, "rows": rows}))


def _tokenizer_json(folder: Path) -> None:
    """cl100k_base as a tokenizer.json that snaptokens reads (its pattern spelled as tiktoken
    first spelled it)."""
    import streamcodec
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    save_vocabulary(Vocabulary(ranks, pat_str=CL100K_HF), folder / "tokenizer.json")


def _tiktoken_file(folder: Path) -> None:
    """cl100k_base's ranks as a ``.tiktoken`` file (base64 token, rank), named so that gigatoken
    knows its pre-tokenizer."""
    import base64

    import streamcodec

    ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
    lines = (f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())
    (folder / "cl100k_base.tiktoken").write_text("".join(lines), encoding="ascii")


if __name__ == "__main__":
    main()
