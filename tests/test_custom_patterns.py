"""Custom pre-tokenizer patterns (those ``regex`` cuts) that would drop text or hang (issue 31):
refused with one line, on both backends, from the library and the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import streamcodec
from streamcodec import Encoding
from tests.children import reaped

ROOT = Path(__file__).resolve().parents[1]
RANKS = streamcodec.get_encoding("gpt2").mergeable_ranks


def _encoding(pattern: str, backend: str) -> Encoding:
    return Encoding("custom", pat_str=pattern, mergeable_ranks=RANKS, special_tokens={},
                    backend=backend)  # fmt: skip


@pytest.mark.parametrize("pattern", [r"\b", "x|", "a*", r"(\w+\s?)*$", r"(?=a)|\S+|\s+"])
def test_a_pattern_matching_the_empty_string_is_refused(pattern: str, backend: str) -> None:
    """``\\b``, ``x|``, ``a*`` dropped text without a word (tiktoken panics on them)."""
    with pytest.raises(ValueError, match=r"matches the empty string .*text is dropped"):
        _encoding(pattern, backend)


def test_an_empty_match_the_check_misses_is_refused_on_the_text(backend: str) -> None:
    """A lookbehind only the text meets: the encoding is made, the text that meets it fails,
    naming the character; other text encodes as ``regex`` cuts it."""
    enc = _encoding(r"(?<=xyz)|\S+|\s+", backend)
    assert enc.encode("hello world") == [RANKS[b"hello"], RANKS[b" "], RANKS[b"world"]]
    with pytest.raises(ValueError, match=r"matches the empty string \(at character 9 of "):
        enc.encode("hello xyz world")
    with pytest.raises(ValueError, match="matches the empty string"):
        list(enc.iter_encode_chunks(iter(["hello x", "yz world"])))


@pytest.mark.parametrize("pattern", [r"(a|aa)+$", r"(a|aa)+$|.", r"(x|xx)+$"])
def test_a_pattern_that_backtracks_without_bound_is_refused(pattern: str, backend: str) -> None:
    """``(a|aa)+$`` on 40 ``a`` and a ``b`` ran for minutes on both backends."""
    with pytest.raises(ValueError, match="backtracks without bound: matching it on "):
        _encoding(pattern, backend)


def test_the_command_line_refuses_them_in_one_line(tmp_path: Path) -> None:
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    vocab, src = tmp_path / "gpt2.tiktoken", tmp_path / "in.txt"
    save_vocabulary(Vocabulary(RANKS), vocab)
    src.write_text("a" * 40 + "b")
    for pattern, said in [("x|", "matches the empty string"), ("(a|aa)+$", "backtracks")]:
        command = [sys.executable, "-m", "streamcodec", "encode", str(src), "--vocab", str(vocab),
                   "--pattern", pattern]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 1
        assert done.stderr.startswith("streamcodec: error: the pre-tokenizer pattern ")
        assert said in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a process")
def test_ctrl_c_stops_a_match_the_probe_lets_through(tmp_path: Path) -> None:
    """``(?:xy|x|y)+$`` passes the probe (no run of one character explodes) and backtracks
    without end on ``xyxy...z``: Ctrl-C still ends the run, with 130 and the usual line."""
    from streamcodec.formats import save_vocabulary
    from streamcodec.vocab import Vocabulary

    vocab, src = tmp_path / "gpt2.tiktoken", tmp_path / "in.txt"
    save_vocabulary(Vocabulary(RANKS), vocab)
    src.write_text("xy" * 40 + "z")
    command = [sys.executable, "-m", "streamcodec", "encode", str(src), "--vocab", str(vocab),
               "--pattern", "(?:xy|x|y)+$"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    popen = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    with reaped(popen) as process:  # a match SIGINT did not stop is not left running for hours
        time.sleep(3)  # past the start and the probe, into the match
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err.decode().startswith("streamcodec: interrupted")


@pytest.mark.parametrize(
    "pattern", [r"(ab)+|.", r"([a-z])+|\s+|.", r"(\w+)(\s?)|.", r"(?P<w>\w+)|\s+|.", r"(\w)\1|."]
)
def test_a_pattern_with_groups_cuts_whole_matches_as_tiktoken(pattern: str, backend: str) -> None:
    """``findall`` gives a pattern's groups: ``(ab)+|.`` failed on tuples, on both backends (and
    one group alone would have cut its last repetition). tiktoken takes whole matches."""
    tiktoken = pytest.importorskip("tiktoken")
    text = "ababx hello world  aabb\n\n it's 12345"
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=RANKS, special_tokens={})
    assert _encoding(pattern, backend).encode(text) == theirs.encode(text)


def test_the_specifications_take_whole_matches_too() -> None:
    """The trainer's specification and ``verify``'s comparison read a pattern with groups as
    ``findall`` does: its groups, not its matches."""
    from streamcodec.audit import audit_text
    from streamcodec.reference import train_naive

    text = "ab ab ab abc abc"
    grouped = train_naive(text, 260, pat_str=r"(\S)+|( )")
    assert grouped == train_naive(text, 260, pat_str=r"(?:\S)+|(?: )")
    audit = audit_text(_encoding(r"(\w)+|\s+|.", "python"), text * 100)
    assert audit.mismatch is None and audit.tiktoken_equal and audit.pieces == 801


def test_a_pattern_regex_cuts_short_but_re_would_not_is_left_to_regex() -> None:
    """``(a+)+$``: ``regex`` cuts its backtracking short, so the check passes it, but the pinned
    ``re`` path (text/pinned.py) then ran it for hours on 40 ``a`` and a ``b``. It is probed in
    ``re`` too and left to ``regex`` (a child process: a regression would hang, not fail)."""
    code = (
        "import streamcodec, tiktoken\n"
        "ranks = streamcodec.get_encoding('gpt2').mergeable_ranks\n"
        "text = 'a' * 40 + 'b'\n"
        "for backend in ('native', 'python'):\n"
        "    enc = streamcodec.Encoding('x', pat_str='(a+)+$', mergeable_ranks=ranks,\n"
        "                               special_tokens={}, backend=backend)\n"
        "    theirs = tiktoken.Encoding('t', pat_str='(a+)+$', mergeable_ranks=ranks,\n"
        "                               special_tokens={})\n"
        "    assert enc.encode(text) == theirs.encode(text) == [], enc.encode(text)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
