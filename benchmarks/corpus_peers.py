"""``tokenize-corpus`` beside the trainers' own data-prep steps, on the same JSON Lines.

The peers, each in a fresh process, on one JSON Lines file of real documents (the standard
library's Python sources, :func:`corpus_throughput.documents`), with GPT-2's vocabulary:

- nanoGPT's ``data/openwebtext/prepare.py``, its logic as written (Hugging Face ``datasets``
  ``load_dataset`` and ``map`` with ``num_proc``, tiktoken's ``encode_ordinary`` plus the
  end-of-text token, a ``np.memmap`` of uint16 filled in batches), less its random train/val
  split (every document goes to ``train.bin``, in order, so the ids can be compared); tiktoken
  loads r50k_base from a ``.tiktoken`` file written here (``get_encoding`` would download it).
- datatrove's tokenizer step (``JsonlReader`` then ``DocumentTokenizer`` with
  ``shuffle_documents=False``, Hugging Face ``tokenizers`` on GPT-2's ``tokenizer.json``
  written here), when ``--datatrove-python`` names an interpreter that has datatrove (it is not
  one of the project's dependencies: ``python -m venv /tmp/dt && /tmp/dt/bin/pip install
  datatrove tokenizers``).

and ``streamcodec tokenize-corpus --format nanogpt`` / ``--format datatrove`` beside each. The
outputs must be the same bytes (nanoGPT's ``train.bin`` against our one shard's ``.bin``;
datatrove's ``.ds`` and ``.ds.index`` against ours). Printed: wall time (best of ``--runs``),
MB/s, CPU time and peak RSS of each, and our time against the peer's.

Run: ``python benchmarks/corpus_peers.py [--mb 20] [--runs 2] [--datatrove-python PATH]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_throughput import documents

ROOT = Path(__file__).resolve().parents[1]

# nanoGPT's data/openwebtext/prepare.py, from load_dataset on, with a local file and no split.
NANOGPT = """
import sys, numpy as np, tiktoken
from tiktoken.load import load_tiktoken_bpe
from datasets import load_dataset
source, ranks, out, num_proc, cache = sys.argv[1:6]
enc = tiktoken.Encoding("gpt2", pat_str=sys.argv[6], mergeable_ranks=load_tiktoken_bpe(ranks),
                        special_tokens={"<|endoftext|>": 50256})
dataset = load_dataset("json", data_files=source, cache_dir=cache)
def process(example):
    ids = enc.encode_ordinary(example["text"])
    ids.append(enc.eot_token)
    return {"ids": ids, "len": len(ids)}
num_proc = int(num_proc)
procs = num_proc if num_proc > 1 else None
tokenized = dataset.map(process, remove_columns=["text"], num_proc=procs)
dset = tokenized["train"]
arr_len = np.sum(dset["len"], dtype=np.uint64)
arr = np.memmap(out, dtype=np.uint16, mode="w+", shape=(arr_len,))
total_batches = min(1024, len(dset))  # 1024 in prepare.py, for 8M documents
idx = 0
for batch_idx in range(total_batches):
    batch = dset.shard(num_shards=total_batches, index=batch_idx, contiguous=True)
    batch = batch.with_format("numpy")
    arr_batch = np.concatenate(batch["ids"])
    arr[idx : idx + len(arr_batch)] = arr_batch
    idx += len(arr_batch)
arr.flush()
"""

DATATROVE = """
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.tokens import DocumentTokenizer
folder, name, tokenizer, out, logs = sys.argv[1:6]
LocalPipelineExecutor(pipeline=[
    JsonlReader(folder, glob_pattern=name),
    DocumentTokenizer(out, tokenizer_name_or_path=tokenizer, eos_token="<|endoftext|>",
                      shuffle_documents=False),
], tasks=1, workers=1, logging_dir=logs).run()
"""


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (with its children) and peak RSS (MB) of ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    took = time.perf_counter() - start
    assert process.stderr is not None
    err = process.stderr.read().decode(errors="replace")
    if status != 0:
        raise SystemExit(f"failed: {' '.join(command[:4])}...\n{err[-2000:]}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def streamcodec(out: Path, source: Path, form: str, jobs: int) -> list[str]:
    return [sys.executable, "-m", "streamcodec", "tokenize-corpus", str(source), "-o", str(out),
            "-e", "r50k_base", "--format", form, "--special-as-text", "--shard-size", "4G",
            "-q", "--restart", "--jobs", str(jobs)]  # fmt: skip


def prepare(base: Path, megabytes: float) -> tuple[Path, Path, Path, str]:
    """The corpus, r50k_base as a ``.tiktoken`` file and as a ``tokenizer.json``."""
    sys.path.insert(0, str(ROOT))
    import streamcodec as sc
    from streamcodec.formats.huggingface import write_huggingface
    from streamcodec.vocab import Vocabulary

    source = base / "corpus.jsonl"
    with open(source, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": doc}) + "\n" for doc in documents(megabytes))
    enc = sc.get_encoding("r50k_base")
    ranks = base / "r50k_base.tiktoken"
    lines = sorted(enc.mergeable_ranks.items(), key=lambda item: item[1])
    ranks.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in lines))
    tokenizer = base / "tokenizer.json"
    write_huggingface(Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str), tokenizer)
    return source, ranks, tokenizer, enc.pat_str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--datatrove-python", help="an interpreter with datatrove installed")
    options = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        source, ranks, tokenizer, pattern = prepare(base, options.mb)
        size = source.stat().st_size
        runs: dict[str, list[str] | object] = {}
        for jobs in (1, 2):
            runs[f"nanoGPT prepare.py (num_proc={jobs})"] = lambda n, jobs=jobs: [
                sys.executable, "-c", NANOGPT, str(source), str(ranks), str(base / "train.bin"),
                str(jobs), str(base / f"hf-cache-{n}"), pattern]  # fmt: skip
            runs[f"tokenize-corpus --format nanogpt --jobs {jobs}"] = lambda n, jobs=jobs: (
                streamcodec(base / "ours-nanogpt", source, "nanogpt", jobs))  # fmt: skip
        if options.datatrove_python:
            runs["datatrove DocumentTokenizer (1 task)"] = lambda n: [
                options.datatrove_python, "-c", DATATROVE, str(base), source.name, str(tokenizer),
                str(base / "datatrove"), str(base / f"dt-logs-{n}")]  # fmt: skip
            runs["tokenize-corpus --format datatrove --jobs 1"] = lambda n: streamcodec(
                base / "ours-datatrove", source, "datatrove", 1)  # fmt: skip
        best: dict[str, tuple[float, float, float]] = {}
        for n in range(options.runs):  # interleaved: the machine's load touches each alike
            for name, command in runs.items():
                result = measure(command(n), env)  # type: ignore[operator]
                if name not in best or result[0] < best[name][0]:
                    best[name] = result
        same = (base / "train.bin").read_bytes() == (
            base / "ours-nanogpt" / "shard_00000.bin").read_bytes()  # fmt: skip
        print(f"nanoGPT's train.bin == our shard_00000.bin: {same}")
        if options.datatrove_python:
            for suffix in (".ds", ".ds.index"):
                theirs = (base / "datatrove" / f"00000_unshuffled{suffix}").read_bytes()
                ours = (base / "ours-datatrove" / f"shard_00000{suffix}").read_bytes()
                print(f"datatrove's 00000_unshuffled{suffix} == our shard_00000{suffix}: "
                      f"{theirs == ours}")  # fmt: skip
    machine = f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    print(f"{size / 1e6:.1f} MB of JSON Lines, r50k_base, best of {options.runs}; {machine}")
    print("| step | wall | MB/s | CPU | peak RSS |\n|---|---:|---:|---:|---:|")
    for name, (wall, cpu, rss) in best.items():
        print(f"| {name} | {wall:.2f} s | {size / 1e6 / wall:.1f} | {cpu:.2f} s | {rss:.0f} MB |")
    pairs = [("nanoGPT prepare.py (num_proc=1)", "tokenize-corpus --format nanogpt --jobs 1"),
             ("nanoGPT prepare.py (num_proc=2)", "tokenize-corpus --format nanogpt --jobs 2"),
             ("datatrove DocumentTokenizer (1 task)",
              "tokenize-corpus --format datatrove --jobs 1")]  # fmt: skip
    for peer, ours in pairs:
        if peer in best:
            print(f"{ours}: {best[peer][0] / best[ours][0]:.2f}x the speed of {peer}")


if __name__ == "__main__":
    main()
