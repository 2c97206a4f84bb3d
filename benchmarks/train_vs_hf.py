"""streamcodec's trainer against Hugging Face tokenizers' BpeTrainer: time and peak memory.

Both sides train on the same corpus file (each reading it itself), with the same pattern (HF: a
``Split`` pre-tokenizer then ``ByteLevel(use_regex=False)`` for the byte alphabet), the same
number of merges and ``min_frequency``, on one thread (``RAYON_NUM_THREADS=1``,
``TOKENIZERS_PARALLELISM=false``).
Each run is a fresh subprocess, so its peak resident memory (``ru_maxrss``) is its own; the time
covers reading the file, counting and merging, not starting Python.

    python benchmarks/train_vs_hf.py            # 1 MB of prose / 1,000 merges, 12 MB mixed / 10,000
    python benchmarks/train_vs_hf.py --quick    # 1 MB only

Needs the ``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATTERN = "cl100k_base"
MIN_FREQUENCY = 2


def run_ours(corpus: Path, merges: int) -> dict[str, object]:
    from streamcodec.training import train

    start, cpu = time.perf_counter(), time.process_time()
    enc = train(corpus, vocab_size=256 + merges, pat_str=PATTERN, min_frequency=MIN_FREQUENCY)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    tokens = sorted(enc.mergeable_ranks, key=enc.mergeable_ranks.__getitem__)[256:]
    return {"seconds": seconds, "cpu_seconds": cpu, "tokens": [t.hex() for t in tokens]}


def run_hf(corpus: Path, merges: int) -> dict[str, object]:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    from streamcodec.vocab import PATTERNS

    start, cpu = time.perf_counter(), time.process_time()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PATTERNS[PATTERN]), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=256 + merges,
        min_frequency=MIN_FREQUENCY,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # HF's own file reader, its fastest and leanest way in (it feeds the text line by line, so
    # its pre-tokens never span a newline; streamcodec's may, as in whole-text pre-tokenization).
    tokenizer.train([str(corpus)], trainer)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    vocab = tokenizer.get_vocab()
    byte_of = {ch: b for b, ch in enumerate(_bytes_to_unicode())}
    tokens = [
        bytes(byte_of[ch] for ch in token)
        for token, _ in sorted(vocab.items(), key=lambda item: item[1])
        if len(token) > 1
    ]
    return {"seconds": seconds, "cpu_seconds": cpu, "tokens": [t.hex() for t in tokens]}


def _bytes_to_unicode() -> list[str]:
    """GPT-2's printable stand-in for each byte, in byte order."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    extra = iter(range(256, 512))
    return [chr(b) if b in printable else chr(next(extra)) for b in range(256)]


def write_corpus(label: str, path: Path) -> None:
    from fuzz.corpus import english_prose, mixed

    text = english_prose(1_000_000) if label == "prose" else mixed(12_000_000)
    path.write_text(text, encoding="utf-8", newline="")


def child(side: str, corpus: Path, merges: int) -> None:
    if side == "corpus":
        write_corpus(corpus.stem, corpus)
        return
    result = (run_ours if side == "ours" else run_hf)(corpus, merges)
    result["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def measure(side: str, corpus: Path, merges: int) -> dict[str, object]:
    """Run one side in a fresh process. The parent stays small: a child's ``ru_maxrss`` starts
    from its parent's size at fork, so the corpora are written by a child too."""
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, __file__, "--child", side, str(corpus), str(merges)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout) if side != "corpus" else {}


def compare(label: str, corpus: Path, merges: int, repeat: int) -> None:
    """Best of ``repeat`` runs per side, alternating, as the machine is shared and noisy."""
    size = corpus.stat().st_size
    runs: dict[str, list[dict[str, object]]] = {"ours": [], "hf": []}
    for _ in range(repeat):
        for side in runs:
            runs[side].append(measure(side, corpus, merges))
    best = {side: min(rs, key=lambda r: float(r["seconds"])) for side, rs in runs.items()}
    ours, hf = best["ours"], best["hf"]
    same = len(set(ours["tokens"]) & set(hf["tokens"]))
    print(f"{label}: {size / 1e6:.1f} MB, {merges:,} merges (best of {repeat})")
    for name, side in (("streamcodec", "ours"), ("HF tokenizers", "hf")):
        r = best[side]
        peak = max(float(x["maxrss_mb"]) for x in runs[side])
        print(
            f"  {name:14} {r['seconds']:6.2f} s wall  {r['cpu_seconds']:6.2f} s cpu  "
            f"peak RSS {peak:6.1f} MB"
        )
    ratio_t = float(ours["seconds"]) / float(hf["seconds"])
    peaks = {s: max(float(x["maxrss_mb"]) for x in rs) for s, rs in runs.items()}
    print(
        f"  ratio (streamcodec / HF): time {ratio_t:.2f}x, peak memory "
        f"{peaks['ours'] / peaks['hf']:.2f}x"
    )
    print(f"  learned tokens in common: {same:,} of {merges:,}")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 1 MB case")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (best is shown)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        side, corpus, merges = args.child
        child(side, Path(corpus), int(merges))
        return
    print(
        f"machine: {_cpu_name()}, {os.cpu_count()} cpus, "
        f"Python {platform.python_version()}, pattern {PATTERN}, min_frequency {MIN_FREQUENCY}"
    )
    cases = [("prose", 1000)] if args.quick else [("prose", 1000), ("mixed", 10_000)]
    with tempfile.TemporaryDirectory() as folder:
        for label, merges in cases:
            corpus = Path(folder) / f"{label}.txt"
            measure("corpus", corpus, 0)
            compare(label, corpus, merges, args.repeat)


if __name__ == "__main__":
    main()
