"""Fetch llama.cpp's tokenizer test vectors for the byte-level BPE models into a cache folder.

llama.cpp keeps, for each model it tests, the tokenizer as a vocabulary-only GGUF
(``models/ggml-vocab-NAME.gguf``), test texts (``.gguf.inp``, separated by
``\\n__ggml_vocab_test__\\n``) and the ids Hugging Face ``tokenizers`` gives them (``.gguf.out``,
one line of ids per text). The ``llama-cpp-python`` sdist on PyPI carries them under
``vendor/llama.cpp/models/``. This script downloads that sdist with pip (no other network
access) and extracts the byte-level BPE models' three files each:

    python tools/llama_vectors.py                   # into $STREAMCODEC_LLAMA_VECTORS or
                                                    # ~/.cache/streamcodec/llama-vectors
    python tools/llama_vectors.py --sdist FILE.tar.gz   # from an sdist already downloaded

tests/test_llama_vectors.py reads that folder and skips, saying why, when it is empty. CI runs
this script before pytest (.ci/run).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: The byte-level BPE models among llama.cpp's vectors (file stems after ``ggml-vocab-``).
MODELS = (
    "gpt-2",
    "llama-bpe",
    "qwen2",
    "qwen35",
    "deepseek-llm",
    "deepseek-coder",
    "falcon",
    "mpt",
    "starcoder",
    "refact",
    "command-r",
)
SUFFIXES = (".gguf", ".gguf.inp", ".gguf.out")
SEPARATOR = "\n__ggml_vocab_test__\n"


def vectors_folder() -> Path:
    """Where the vectors are kept: ``$STREAMCODEC_LLAMA_VECTORS``, else the user's cache."""
    configured = os.environ.get("STREAMCODEC_LLAMA_VECTORS")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / (
        "streamcodec/llama-vectors"
    )


def read_vectors(folder: Path, model: str) -> list[tuple[str, list[int]]]:
    """The test texts of ``model`` with their ids, as llama.cpp's test-tokenizer-0 reads them."""
    texts = (folder / f"ggml-vocab-{model}.gguf.inp").read_text("utf-8").split(SEPARATOR)
    lines = (folder / f"ggml-vocab-{model}.gguf.out").read_text("utf-8").split("\n")
    ids = [[int(i) for i in line.split()] for line in lines]
    return list(zip(texts, ids[: len(texts)], strict=True))


def extract(sdist: Path, folder: Path) -> list[str]:
    """Extract the models' files from ``sdist`` into ``folder``; the models found."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {f"ggml-vocab-{m}{s}" for m in MODELS for s in SUFFIXES}
    found = set()
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            if member.isfile() and "/models/" in member.name and name in wanted:
                source = tar.extractfile(member)
                assert source is not None
                (folder / name).write_bytes(source.read())
                found.add(name)
    return [m for m in MODELS if all(f"ggml-vocab-{m}{s}" in found for s in SUFFIXES)]


def download(into: Path) -> Path:
    """The llama-cpp-python sdist, downloaded with pip into ``into``."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    command += ["-q", "-d", str(into), "llama-cpp-python"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    sdists = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not sdists:  # pip may fail to prepare the metadata after saving the file
        raise SystemExit(f"llama_vectors: pip download failed:\n{done.stderr.strip()}")
    return sdists[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sdist", type=Path, help="a llama-cpp-python sdist already downloaded")
    parser.add_argument("--folder", type=Path, help="where to put the files (default: cache)")
    args = parser.parse_args(argv)
    folder = args.folder or vectors_folder()
    if args.sdist is None and all(
        (folder / f"ggml-vocab-{m}{s}").is_file() for m in MODELS for s in SUFFIXES
    ):
        print(f"llama_vectors: {len(MODELS)} models already in {folder}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        models = extract(args.sdist or download(Path(tmp)), folder)
    print(f"llama_vectors: {len(models)} models in {folder}: {', '.join(models)}")
    missing = sorted(set(MODELS) - set(models))
    if missing:
        print(f"llama_vectors: not in this sdist: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
