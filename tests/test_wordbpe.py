"""Word-level BPE against its reference implementation, subword-nmt 0.3.8, on real text."""

from __future__ import annotations

import collections
import contextlib
import doctest
import io
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.corpus import samples
from streamcodec import wordbpe
from streamcodec.wordbpe import (
    WordBPE,
    count_words,
    format_codes,
    learn_merges,
    learn_merges_naive,
    parse_codes,
    read_codes,
    remove_separators,
    train_word_bpe,
    write_codes,
)

subword_nmt = pytest.importorskip("subword_nmt")
from subword_nmt import apply_bpe, learn_bpe  # noqa: E402

ARTICLE_COUNTS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
# subword-nmt 0.3.8 on the article's corpus, ten merges (checked against it below).
SUBWORD_NMT_MERGES = [
    ("s", "t</w>"),
    ("e", "st</w>"),
    ("l", "o"),
    ("w", "est</w>"),
    ("n", "e"),
    ("ne", "west</w>"),
    ("lo", "w</w>"),
    ("w", "i"),
    ("wi", "d"),
    ("wid", "est</w>"),
]
# The article's (and the 2016 paper's) listing: '</w>' is a symbol, the first pair seen wins ties.
ARTICLE_MERGES = [
    ("e", "s"),
    ("es", "t"),
    ("est", "</w>"),
    ("l", "o"),
    ("lo", "w"),
    ("n", "e"),
    ("ne", "w"),
    ("new", "est</w>"),
    ("low", "</w>"),
    ("w", "i"),
]


def reference_learn(text: str, merges: int, *, min_frequency: int = 2) -> str:
    """subword-nmt's learn-bpe, through its Python API, as a codes-file text."""
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):  # it reports progress and early stops there
        learn_bpe.learn_bpe(io.StringIO(text), out, merges, min_frequency)
    return out.getvalue()


def reference_apply(codes: str, text: str) -> str:
    """subword-nmt's apply-bpe over ``text``, lines cut as its command line (codecs) cuts them."""
    bpe = apply_bpe.BPE(io.StringIO(codes))
    return "".join(bpe.process_line(line) for line in text.splitlines(keepends=True))


def paper_learn(vocab: dict[str, int], num_merges: int) -> list[tuple[str, ...]]:
    """The article's listing of the paper's algorithm, verbatim in substance."""

    def get_stats(vocab: dict[str, int]) -> dict[tuple[str, ...], int]:
        pairs: dict[tuple[str, ...], int] = collections.defaultdict(int)
        for word, freq in vocab.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] += freq
        return pairs

    merges = []
    for _ in range(num_merges):
        pairs = get_stats(vocab)
        best = max(pairs, key=lambda pair: pairs[pair])
        bigram = re.compile(r"(?<!\S)" + re.escape(" ".join(best)) + r"(?!\S)")
        vocab = {bigram.sub("".join(best), word): freq for word, freq in vocab.items()}
        merges.append(best)
    return merges


def test_doctests() -> None:
    assert doctest.testmod(wordbpe).failed == 0


def test_article_example() -> None:
    corpus = "".join(f"{word}\n" * count for word, count in ARTICLE_COUNTS.items())
    assert count_words(corpus) == ARTICLE_COUNTS
    spaced = {" ".join(word) + " </w>": count for word, count in ARTICLE_COUNTS.items()}
    assert paper_learn(spaced, 10) == ARTICLE_MERGES
    # subword-nmt (version 0.2) glues '</w>' to the last character and breaks ties by the larger
    # pair, so its first merge is ('s', 't</w>'), where the article's (first seen) is ('e', 's').
    assert reference_learn(corpus, 10) == format_codes(SUBWORD_NMT_MERGES)
    assert learn_merges(ARTICLE_COUNTS, 10) == SUBWORD_NMT_MERGES
    assert learn_merges_naive(ARTICLE_COUNTS, 10) == SUBWORD_NMT_MERGES
    bpe = WordBPE(SUBWORD_NMT_MERGES)
    assert bpe.apply("lowest newest wider\n") == "lo@@ west newest wid@@ e@@ r\n"
    assert reference_apply(format_codes(SUBWORD_NMT_MERGES), "lowest newest wider\n") == (
        "lo@@ west newest wid@@ e@@ r\n"
    )


@pytest.mark.parametrize("name", ["prose", "code", "multilingual"])
@pytest.mark.parametrize("merges", [50, 600])
def test_learn_and_apply_match_subword_nmt_on_real_text(name: str, merges: int) -> None:
    text = samples()[name][:40_000]
    codes = reference_learn(text, merges)
    learned = learn_merges(count_words(text), merges)
    assert format_codes(learned) == codes
    held_out = samples()[name][40_000:50_000]
    bpe = WordBPE.from_codes(parse_codes(codes))
    assert bpe.apply(held_out) == reference_apply(codes, held_out)


def test_min_frequency_stops_like_subword_nmt() -> None:
    text = samples()["prose"][:6_000]
    for min_frequency in (1, 5, 40):
        codes = reference_learn(text, 5000, min_frequency=min_frequency)
        ours = learn_merges(count_words(text), 5000, min_frequency=min_frequency)
        assert format_codes(ours) == codes
    with pytest.raises(ValueError, match="min_frequency"):
        learn_merges({"ab": 3}, 1, min_frequency=0)
    with pytest.raises(ValueError, match="contains a space"):
        learn_merges({"a b": 3}, 1)


def test_total_symbols() -> None:
    text = samples()["prose"][:5000]
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(io.StringIO(text), out, 300, total_symbols=True)
    ours = learn_merges(count_words(text), 300, total_symbols=True)
    assert format_codes(ours) == out.getvalue()
    assert 0 < len(ours) < 300


def test_command_lines_agree(tmp_path: Path) -> None:
    """subword-nmt's own command line (codecs line reading) against write_codes/read_codes."""
    text = samples()["multilingual"][:20_000] + "a\x0cb c\x85d\u2028e\r\nf\rg  h\n"
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text.encode("utf-8"))
    theirs = tmp_path / "theirs.bpe"
    cli = [sys.executable, "-c", "from subword_nmt.subword_nmt import main; main()"]
    learned = subprocess.run(
        [*cli, "learn-bpe", "-s", "300", "-i", str(corpus), "-o", str(theirs)],
        capture_output=True,
        timeout=120,
    )
    assert learned.returncode == 0, learned.stderr
    ours = tmp_path / "ours.bpe"
    write_codes(ours, learn_merges(count_words(text), 300))
    assert ours.read_bytes() == theirs.read_bytes()
    applied = subprocess.run(
        [*cli, "apply-bpe", "-c", str(theirs), "-i", str(corpus)], capture_output=True, timeout=120
    )
    assert applied.returncode == 0, applied.stderr
    assert WordBPE.from_codes(read_codes(ours)).apply(text) == applied.stdout.decode("utf-8")


def test_codes_file_details(tmp_path: Path) -> None:
    merges = [("l", "o"), ("lo", "w</w>"), ("l", "o")]  # a duplicate keeps its first rank
    assert parse_codes(format_codes(merges)).merges == merges
    assert parse_codes("#version: 0.2.0\na b\n").version == (0, 2)
    assert parse_codes("a b\r\n").version == (0, 1)  # no header: the original format
    old = WordBPE.from_codes(parse_codes("l o\nlo w\nlow </w>\n"))
    assert old.segment_word("low") == ("low",)
    assert old.segment_word("lows") == ("low", "s")
    assert reference_apply("l o\nlo w\nlow </w>\n", "low lows\n") == "low low@@ s\n"
    assert WordBPE(merges, separator="~~").apply("lower") == "lo~~ w~~ e~~ r"
    assert parse_codes(format_codes(merges), max_merges=1).merges == merges[:1]
    with pytest.raises(ValueError, match=r"codes, line 3: expected two symbols"):
        parse_codes("#version: 0.2\na b\nabc\n")
    with pytest.raises(ValueError, match=r"version 0\.3 is not supported"):
        parse_codes("#version: 0.3\n")
    bad = tmp_path / "bad.bpe"
    bad.write_bytes(b"#version: 0.2\na \xff\n")
    with pytest.raises(ValueError, match=r"bad.bpe: invalid UTF-8 at byte offset 16"):
        read_codes(bad)


def test_subword_nmt_divergence_on_tabs_inside_words() -> None:
    """subword-nmt replaces pairs with the regex ``(?<!\\S)A B(?!\\S)`` over the space-joined
    symbols. A tab inside a symbol satisfies the lookbehind, so the regex merges inside it and
    its counts drift from its words; streamcodec merges whole symbols."""
    counts = {"b\tbbb\t": 2, "\t\tb\tba": 2}
    corpus = "".join(f"{word}\n" * count for word, count in counts.items())
    ours = learn_merges(counts, 30)
    assert ours == learn_merges_naive(counts, 30)
    assert ours[:3] == [("\t", "b"), ("b", "b"), ("bb", "\t</w>")]
    assert parse_codes(reference_learn(corpus, 30)).merges[2] == ("b", "\tb")


# ---------------------------------------------------------------- fuzzing

WORDS = st.text(alphabet="abcde", min_size=1, max_size=10)
# Apply has no regex: any character that is not a space or a line break may be in a word.
ANY_WORD = st.text(
    alphabet=st.characters(blacklist_characters=" \r\n", blacklist_categories=("Cs", "Zl", "Zp")),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    counts=st.dictionaries(WORDS, st.integers(1, 9), min_size=1, max_size=25),
    merges=st.integers(1, 60),
    min_frequency=st.integers(1, 3),
)
def test_learn_equals_naive(counts: dict[str, int], merges: int, min_frequency: int) -> None:
    assert learn_merges(counts, merges, min_frequency=min_frequency) == learn_merges_naive(
        counts, merges, min_frequency=min_frequency
    )


@settings(max_examples=60, deadline=None)
@given(words=st.lists(WORDS, min_size=2, max_size=200), merges=st.integers(1, 120))
def test_learn_equals_subword_nmt(words: list[str], merges: int) -> None:
    corpus = " ".join(words) + "\n"
    if all(len(word) < 2 for word in words):
        return  # subword-nmt fails (max() of an empty sequence) when no word has a pair
    assert format_codes(learn_merges(count_words(corpus), merges)) == reference_learn(
        corpus, merges
    )


@settings(max_examples=60, deadline=None)
@given(
    training=st.lists(WORDS, min_size=2, max_size=100),
    words=st.lists(st.one_of(WORDS, ANY_WORD, st.just("")), max_size=20),
)
def test_apply_equals_subword_nmt(training: list[str], words: list[str]) -> None:
    if all(len(word) < 2 for word in training):
        return
    codes = reference_learn(" ".join(training) + "\n", 80, min_frequency=1)
    line = " ".join(words) + "\n"
    assert WordBPE.from_codes(parse_codes(codes)).apply(line) == reference_apply(codes, line)


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(alphabet="ab \t\n\r\x0c\x85", max_size=80),
    cuts=st.lists(st.integers(0, 80), max_size=6),
)
def test_count_words_over_chunks(text: str, cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(text)]
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert count_words(chunks) == count_words(text)


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.text(alphabet="abcé\t", min_size=1, max_size=8), min_size=1, max_size=12))
def test_remove_separators_restores_the_words(words: list[str]) -> None:
    bpe = WordBPE(learn_merges(count_words(" ".join(words * 2)), 20))
    line = " ".join(words)
    segmented = bpe.apply(f"{line}\r\n{line}")
    assert remove_separators(segmented) == f"{line}\r\n{line}"


def run_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamcodec", *args], input=stdin, capture_output=True, timeout=120
    )


def test_command_line_word_mode(tmp_path: Path) -> None:
    text = samples()["prose"][:8000] + "\r\nlast line  \n"
    codes = tmp_path / "codes.bpe"
    codes.write_text(reference_learn(text, 300), encoding="utf-8")
    source = tmp_path / "in.txt"
    source.write_bytes(text.encode())
    done = run_cli("encode", str(source), "--mode", "word", "--codes", str(codes))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == reference_apply(codes.read_text(encoding="utf-8"), text)
    counted = run_cli("count", "-", "--mode", "word", "--codes", str(codes), stdin=done.stdout)
    segments = WordBPE.from_codes(read_codes(codes)).segment_text(done.stdout.decode())
    assert int(counted.stdout) == len(segments)
    joined = run_cli("decode", "-", "--mode", "word", stdin=done.stdout)
    assert joined.stdout.decode() == remove_separators(done.stdout.decode())
    missing = run_cli("encode", str(source), "--mode", "word")
    assert missing.returncode == 1 and b"--mode word needs --codes" in missing.stderr


def test_command_line_trains_word_codes_like_learn_bpe(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(samples()["code"][:10_000], encoding="utf-8")
    codes = tmp_path / "codes.bpe"
    done = run_cli("train", str(corpus), "--mode", "word", "--merges", "400", "-o", str(codes))
    assert done.returncode == 0, done.stderr
    assert codes.read_text(encoding="utf-8") == reference_learn(samples()["code"][:10_000], 400)
    bpe = train_word_bpe([corpus, "more text"], num_merges=400)
    assert bpe.merges == learn_merges(count_words(corpus.read_text() + "\nmore text"), 400)
    wrong = run_cli(
        *("train", str(corpus), "--mode", "word", "--merges", "9", "--vocab-size", "9"),
        *("-o", str(codes)),
    )
    assert wrong.returncode == 1 and b"--mode word takes --merges" in wrong.stderr


def test_word_training_reports_progress(tmp_path: Path) -> None:
    """Regression (issue 22 §2): word-mode train showed no progress (44 s on 5 MB)."""
    from streamcodec.wordbpe import train_word_bpe

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newest widest\n" * 50, encoding="utf-8")
    seen: list[tuple[str, int, int | None]] = []
    bpe = train_word_bpe([corpus], num_merges=5, progress=lambda *report: seen.append(report))
    assert seen[0][0] == "count" and ("count", corpus.stat().st_size, None) in seen
    assert [r for r in seen if r[0] == "merge"] == [("merge", n, 5) for n in range(1, 6)]
    assert len(bpe.merges) == 5
