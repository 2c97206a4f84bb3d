"""The ids of the named patterns do not depend on the installed ``regex``.

The newest ``regex`` from PyPI (Unicode 17 or later, where about 17,000 code points changed
class since tiktoken's Unicode 16.0) is installed into a folder of its own. A fresh interpreter
with it first on the path finds every code point it classifies unlike streamcodec's tables, and
encodes each of those, every code point of the Basic Multilingual Plane and every 97th astral
one, in contexts where its class changes the cut, with cl100k_base, o200k_base and GPT-2's
pattern: the ids must be tiktoken's. (That the tables are Unicode 16.0 at every code point is
tests/test_unicode_classes.py's job.) Skipped, saying so, when PyPI cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import streamcodec
from streamcodec.vocab import GPT2_PATTERN
from tests.conftest import tiktoken_twin

ROOT = Path(__file__).resolve().parents[1]
PIP_INSTALL = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade"]

# Run with the newest regex first on the path. Prints, as JSON: regex's version, the code
# points it classifies unlike the shipped tables, the code points probed and their ids.
PROBE = """
import hashlib, json, sys
import regex
import streamcodec
from streamcodec.vocab import GPT2_PATTERN
from tests.test_newest_regex import changed_code_points, probe
assert regex.__file__.startswith(sys.argv[1]), regex.__file__
changed = changed_code_points()
cl100k = streamcodec.get_encoding("cl100k_base")
encodings = [cl100k, streamcodec.Encoding("gpt2-pattern", pat_str=GPT2_PATTERN,
             mergeable_ranks=cl100k.mergeable_ranks, special_tokens={})]
encodings.append(streamcodec.get_encoding("o200k_base"))
sample = changed | set(range(0x10000)) | set(range(0x10000, 0x110000, 97))
sample = sorted(c for c in sample if not 0xD800 <= c <= 0xDFFF)
ids = [enc.encode_ordinary(probe(sample)) for enc in encodings]
print(json.dumps([regex.__version__, sorted(changed), sample, ids]))
"""


def changed_code_points() -> set[int]:
    """The code points the installed ``regex`` classifies unlike the shipped tables."""
    import regex

    from streamcodec.text.unicode_classes import CLASSES, class_ranges

    everything = "".join(map(chr, range(0x110000)))
    changed: set[int] = set()
    for spelling in CLASSES:
        theirs = {m.start() for m in regex.finditer(spelling, everything)}
        ours = {c for first, last in class_ranges(spelling) for c in range(first, last + 1)}
        changed |= theirs ^ ours
    return changed


def probe(code_points: list[int]) -> str:
    """Each code point in contexts where its class changes the cut."""
    return "".join(f"{c}:A {c}1234\n{c}\taA{c}b A{c}'ll x{c} " for c in map(chr, code_points))


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


def _probe(script: str, newest_regex: Path) -> Any:
    """The JSON that ``script`` prints, run with the newest regex first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(newest_regex), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", script, str(newest_regex)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_ids_equal_tiktoken_with_the_newest_regex(newest_regex: Path) -> None:
    version, changed, sample, ids = _probe(PROBE, newest_regex)
    assert len(changed) > 1000, f"regex {version} classifies like Unicode 16.0: nothing to test"
    assert set(changed) <= set(sample)
    cl100k = streamcodec.get_encoding("cl100k_base")
    gpt2_pattern = streamcodec.Encoding(
        "gpt2-pattern",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=cl100k.mergeable_ranks,
        special_tokens={},
    )
    twins = [tiktoken_twin(cl100k), tiktoken_twin(gpt2_pattern)]
    twins.append(tiktoken_twin(streamcodec.get_encoding("o200k_base")))
    text = probe(sample)
    assert ids == [twin.encode_ordinary(text) for twin in twins]


# The open models' patterns (the grammar's, Qwen 3.5's, DeepSeek LLM's and Falcon's steps) on
# both paths, with the newest regex first on the path: prints the patterns whose pieces differ.
PROBE_MODELS = """
import json, sys
import regex
import streamcodec
from tests.test_newest_regex import changed_code_points, model_patterns, probe
assert regex.__file__.startswith(sys.argv[1]), regex.__file__
changed = changed_code_points()
sample = sorted(c for c in changed | set(range(0, 0x110000, 97)) if not 0xD800 <= c <= 0xDFFF)
text = probe(sample)
ranks = streamcodec.get_encoding("cl100k_base").mergeable_ranks
differ = []
for pattern in model_patterns():
    # The cut is what the installed regex can change (the merges are regex-free): compare each
    # path's pieces, not its ids (the pure path's merges of 4 M characters took minutes).
    pieces = [
        streamcodec.Encoding("p", pat_str=pattern, mergeable_ranks=ranks, special_tokens={},
                             backend=backend).ordinary.pretokenizer.pieces(text)
        for backend in ("native", "python")
    ]
    differ += [pattern] if pieces[0] != pieces[1] else []
print(json.dumps([regex.__version__, len(changed), streamcodec.backend(), differ]))
"""


def model_patterns() -> list[str]:
    """The open models' patterns: the grammar's, Qwen 3.5's, and two Sequences of steps."""
    from streamcodec.formats.gguf_pre import PRE
    from streamcodec.formats.hf_parts import Reader
    from streamcodec.formats.hf_pre import pre_tokenizer_pattern
    from streamcodec.text.known_patterns import KNOWN_PATTERNS, QWEN35_PATTERN

    sequences = [
        pre_tokenizer_pattern(Reader("x"), PRE[name].pre_tokenizer, "pre_tokenizer")
        for name in ("deepseek-llm", "deepseek-coder", "falcon")
    ]
    return [*dict.fromkeys(k.pattern for k in KNOWN_PATTERNS), QWEN35_PATTERN, *sequences]


def test_open_models_cut_alike_on_both_paths_with_the_newest_regex(newest_regex: Path) -> None:
    """Issue 29: with regex 2026.11.19 (Unicode 17), Llama 3 on '\\u0561\\u0558' gave other ids
    on the pure path than natively and in Hugging Face: the two paths' pieces must be equal."""
    version, changed, backend, differ = _probe(PROBE_MODELS, newest_regex)
    if backend != "native":
        pytest.skip("the compiled core is not built: no native path to compare with")
    assert changed > 1000, f"regex {version} classifies like Unicode 16.0: nothing to test"
    assert differ == [], f"regex {version}: the paths differ on {differ}"
