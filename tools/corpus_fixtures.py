"""Make tests/data/corpus_formats/: shards written by Megatron-Core's and datatrove's own writers.

tests/test_corpus_formats.py compares our ``--format megatron`` and ``--format datatrove``
shards with these byte for byte. Run once, from the project's environment (tiktoken gives the
ids), naming interpreters that have the owners' packages (megatron-core needs torch; both in
venvs of their own, never in the project's):

    python tools/corpus_fixtures.py --megatron /tmp/megavenv/bin/python \\
        --datatrove /tmp/dtvenv/bin/python

The documents are :data:`TEXTS`, encoded with r50k_base (ids that fit uint16) and cl100k_base
(int32 for Megatron, uint32 for datatrove), each followed by ``<|endoftext|>`` (Megatron's
``--append-eod``, datatrove's ``eos_token``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus_formats"
TEXTS = [
    "Hello, world!",
    "",
    "Ünïcödé text: 日本語のテキスト, emoji 🎉 and   spaces\n\ttabs",
    "def f(x):\n    return x * 2\n",
    "The last document.",
]

_MEGATRON = """
import json, sys, numpy, torch
from megatron.core.datasets.indexed_dataset import DType, IndexedDatasetBuilder
job = json.load(sys.stdin)
for name, (docs, n_vocab) in job["encodings"].items():
    prefix = f"{job['folder']}/megatron_{name}"
    builder = IndexedDatasetBuilder(prefix + ".bin", dtype=DType.optimal_dtype(n_vocab))
    for ids in docs:
        builder.add_document(torch.tensor(ids), [len(ids)])
    builder.finalize(prefix + ".idx")
"""

_DATATROVE = """
import json, sys
from datatrove.pipeline.tokens.tokenizer import TokenizedFile
job = json.load(sys.stdin)
for name, (docs, n_vocab) in job["encodings"].items():
    size = 4 if n_vocab > 65536 else 2
    out = TokenizedFile(job["folder"], f"datatrove_{name}.ds", tokenizer_name_or_path=name,
                        save_final_metadata=True, token_size=size)
    for ids in docs:
        out.write(ids, None)
    out.close()
"""


def documents() -> dict[str, tuple[list[list[int]], int]]:
    """Each encoding's documents' ids (tiktoken's ``encode_ordinary`` + end of text)."""
    import tiktoken

    import streamcodec

    encodings = {}
    for name in ("r50k_base", "cl100k_base"):
        ours = streamcodec.get_encoding(name)
        enc = tiktoken.Encoding(name, pat_str=ours.pat_str, mergeable_ranks=ours.mergeable_ranks,
                                special_tokens=ours.special_tokens)  # fmt: skip
        docs = [[*enc.encode_ordinary(text), enc.eot_token] for text in TEXTS]
        encodings[name] = (docs, ours.n_vocab)
    return encodings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megatron", required=True, help="a Python with megatron-core")
    parser.add_argument("--datatrove", required=True, help="a Python with datatrove")
    args = parser.parse_args()
    FOLDER.mkdir(parents=True, exist_ok=True)
    job = json.dumps({"folder": str(FOLDER), "encodings": documents()})
    for python, script in ((args.megatron, _MEGATRON), (args.datatrove, _DATATROVE)):
        subprocess.run([python, "-c", script], input=job.encode(), check=True)
    (FOLDER / "texts.json").write_text(json.dumps(TEXTS, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
