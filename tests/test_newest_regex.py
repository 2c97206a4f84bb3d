"""The ids of the named patterns do not depend on the installed ``regex``.

The newest ``regex`` from PyPI (Unicode 17 or later, where 17,480 code points changed class
since tiktoken's Unicode 16.0) is installed into a folder of its own, and a fresh interpreter
with it first on the path encodes every code point, each in contexts where its class changes
the cut, with cl100k_base, o200k_base and GPT-2's pattern. The ids must be tiktoken's. Skipped,
saying so, when PyPI cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import streamcodec
from streamcodec.vocab import GPT2_PATTERN
from tests.conftest import _o200k_available, tiktoken_twin

ROOT = Path(__file__).resolve().parents[1]
BLOCK = 2048  # code points per text
PIP_INSTALL = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade"]

# Run with the newest regex first on the path: prints its version, then the ids of each text.
PROBE = """
import json, sys
import regex
import streamcodec
from streamcodec.vocab import GPT2_PATTERN
assert regex.__file__.startswith(sys.argv[1]), regex.__file__
print(regex.__version__)
cl100k = streamcodec.get_encoding("cl100k_base")
encodings = [cl100k, streamcodec.Encoding("gpt2-pattern", pat_str=GPT2_PATTERN,
             mergeable_ranks=cl100k.mergeable_ranks, special_tokens={})]
if sys.argv[2] == "o200k":
    encodings.append(streamcodec.get_encoding("o200k_base"))
for line in sys.stdin:
    text = json.loads(line)
    print(json.dumps([enc.encode_ordinary(text) for enc in encodings]))
"""


def _texts() -> list[str]:
    """Every code point but the surrogates, in contexts that tell its class by the cut."""
    texts = []
    for first in range(0, 0x110000, BLOCK):
        chars = [chr(c) for c in range(first, first + BLOCK) if not 0xD800 <= c <= 0xDFFF]
        texts.append("".join(f"{c}:A {c}1234\n{c}\taA{c}b A{c}'ll x{c} " for c in chars))
    return texts


@pytest.fixture(scope="module")
def newest_regex(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("newest-regex")
    result = subprocess.run(
        [*PIP_INSTALL, "--target", str(folder), "regex"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        pytest.skip(f"the newest regex could not be installed from PyPI: {result.stderr[-300:]}")
    return folder


def test_ids_equal_tiktoken_with_the_newest_regex(newest_regex: Path) -> None:
    has_o200k = _o200k_available()
    texts = _texts()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(newest_regex), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(newest_regex), "o200k" if has_o200k else "-"],
        input="".join(json.dumps(text) + "\n" for text in texts),
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    version, *lines = result.stdout.splitlines()
    newer = tuple(map(int, version.split("."))) > (2025, 9, 1)
    assert newer, f"PyPI's newest regex is {version}: nothing newer to test"
    cl100k = streamcodec.get_encoding("cl100k_base")
    twins = [tiktoken_twin(cl100k), tiktoken_twin(_gpt2_pattern(cl100k))]
    if has_o200k:
        twins.append(tiktoken_twin(streamcodec.get_encoding("o200k_base")))
    for first, text, line in zip(range(0, 0x110000, BLOCK), texts, lines, strict=True):
        theirs = [twin.encode_ordinary(text) for twin in twins]
        assert json.loads(line) == theirs, f"code points U+{first:04X} to U+{first + BLOCK - 1:04X}"


def _gpt2_pattern(cl100k: streamcodec.Encoding) -> streamcodec.Encoding:
    return streamcodec.Encoding(
        "gpt2-pattern",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=cl100k.mergeable_ranks,
        special_tokens={},
    )
