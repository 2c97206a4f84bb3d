"""Run a client library's test suite on tiktoken, then with ``tiktoken`` mapped to streamcodec.

    python tools/dropin_check.py cache CACHE_DIR
    TIKTOKEN_CACHE_DIR=CACHE_DIR python tools/dropin_check.py run PYTHON TESTS [pytest args...]

``cache`` fills a tiktoken cache folder offline with the files tiktoken downloads, rebuilt from
the vocabularies shipped in streamcodec (GPT-2's ``encoder.json`` and ``vocab.bpe`` included),
each checked against the sha256 tiktoken expects. With it, tiktoken itself loads every encoding
without a network, so both runs see the same files.

``run`` runs pytest twice with the interpreter ``PYTHON`` (a virtualenv that has the client, its
test dependencies and tiktoken): as is, then with a plugin that does
``sys.modules["tiktoken"] = streamcodec`` before the client is imported, and prints both
summaries. Measured in docs/api.md ("import streamcodec as tiktoken").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamcodec.registry import SPECS  # noqa: E402
from streamcodec.vocabularies import checked_originals  # noqa: E402

SWAP = 'import sys, streamcodec\nsys.modules["tiktoken"] = streamcodec\n'


def fill_cache(cache: Path) -> None:
    """Write what tiktoken downloads for each named encoding, rebuilt from the package."""
    cache.mkdir(parents=True, exist_ok=True)
    for spec in SPECS.values():
        for url, content in checked_originals(spec).items() if spec.shipped else ():
            (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(content)
            print(f"{url} -> {cache}")


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
    cache.add_argument("cache_dir", type=Path)
    runner = commands.add_parser("run", help="run a test suite both ways")
    runner.add_argument("python")
    runner.add_argument("tests", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "cache":
        fill_cache(args.cache_dir)
    else:
        run(args.python, args.tests)


if __name__ == "__main__":
    main()
