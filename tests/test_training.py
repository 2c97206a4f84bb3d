"""The efficient trainer against the naive reference, streaming cuts, and trained vocabularies."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuzz.corpus import english_prose, multilingual, python_source
from streamcodec.formats import load_vocabulary, read_tiktoken, save_vocabulary
from streamcodec.reference import rank_merge, train_naive
from streamcodec.text.pretokenize import Pretokenizer
from streamcodec.training import count_pretokens, train
from streamcodec.vocab import PATTERNS, Vocabulary
from tests.conftest import tiktoken_twin

SPECIALS = ["<|end|>", "<|x|>"]


# Few letters force long merge chains and many ties; spaces, newlines and symbols exercise the
# patterns; "<|x|>" pieces let special tokens appear.
def texts(alphabet: str, max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from([*alphabet, *SPECIALS]), max_size=max_size).map("".join)


corpora = texts("aab b\n!é1", 200)
patterns = st.sampled_from(["gpt2", "cl100k_base", "o200k_base", r"\S+|\s+", r"."])


def _merges(ranks: dict[bytes, int]) -> list[bytes]:
    return sorted(ranks, key=ranks.__getitem__)


@settings(max_examples=300, deadline=None)
@given(corpora, patterns, st.integers(256, 330), st.integers(0, 3))
def test_equals_naive_trainer(text: str, pattern: str, vocab_size: int, min_frequency: int) -> None:
    enc = train(text, vocab_size=vocab_size, pat_str=pattern, min_frequency=min_frequency)
    naive = train_naive(
        text, vocab_size, pat_str=PATTERNS.get(pattern, pattern), min_frequency=min_frequency
    )
    assert _merges(enc.mergeable_ranks) == _merges(naive)
    # Every merge made new bytes: the ranks are 0..n-1 with no gap.
    assert sorted(enc.mergeable_ranks.values()) == list(range(len(enc.mergeable_ranks)))


@settings(max_examples=60, deadline=None)
@given(corpora, patterns)
def test_special_tokens_are_cut_out_and_take_the_last_ids(text: str, pattern: str) -> None:
    enc = train(text, vocab_size=300, pat_str=pattern, special_tokens=SPECIALS, min_frequency=1)
    naive = train_naive(
        text, 298, pat_str=PATTERNS.get(pattern, pattern), special_tokens=SPECIALS, min_frequency=1
    )
    assert _merges(enc.mergeable_ranks) == _merges(naive)
    n = len(naive)
    assert enc.special_tokens == {"<|end|>": n, "<|x|>": n + 1}
    assert not any(b"<|" in token and len(token) > 2 for token in enc.mergeable_ranks)


def test_worked_example() -> None:
    # Wikipedia's aaabdaaabac: aa, then ab (ties to the smaller pair (97, 98)), then aa+ab.
    enc = train("aaabdaaabac", vocab_size=300, pat_str=r".+")
    assert enc.decode_tokens_bytes(range(256, enc.n_vocab)) == [b"aa", b"ab", b"aaab"]
    # Then every pair occurs once: min_frequency=2 stopped there; 1 goes on.
    assert train("aaabdaaabac", vocab_size=300, pat_str=r".+", min_frequency=1).n_vocab == 263


@settings(max_examples=60, deadline=None)
@given(
    texts("aB1 \n\r\t!/'é", 200),
    st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]),
    st.integers(1, 9),
)
@example("ab<|x|>!cd", "gpt2", 7)  # the first chunk ends after "<|x|>", inside "<|x|>!"
def test_streamed_counts_equal_whole_text_pieces(text: str, pattern: str, chunk_size: int) -> None:
    pretokenizer = Pretokenizer(PATTERNS[pattern])
    streamed = count_pretokens(io.BytesIO(text.encode()), pat_str=pattern, chunk_size=chunk_size)
    assert streamed == Counter(pretokenizer.pieces(text))
    # "<|x|>!" has "<|x|>" as a prefix: a chunk ending inside it must not cut it short.
    specials = ["<|x|>", "<|x|>!"]
    parts = regex.split("|".join(map(regex.escape, sorted(specials, key=len, reverse=True))), text)
    expected = Counter(piece for part in parts for piece in pretokenizer.pieces(part))
    with_special = count_pretokens(
        io.BytesIO(text.encode()),
        pat_str=pattern,
        special_tokens=specials,
        chunk_size=chunk_size,
    )
    assert with_special == expected


def test_long_text_without_a_safe_cut() -> None:
    # Indented lines never start with a letter: the text is kept whole, and still counted right.
    text = "    x = 1\n" * 3000
    streamed = count_pretokens(io.BytesIO(text.encode()), pat_str="cl100k_base", chunk_size=16)
    assert streamed == Counter(Pretokenizer(PATTERNS["cl100k_base"]).pieces(text))


def test_sources_paths_files_and_documents(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one two\r\nthree\n")
    expected = Counter({"one": 1, " two": 1, "\r\n": 1, "three": 1, "\n": 1})
    assert count_pretokens(path, pat_str="cl100k_base") == expected
    with open(path, encoding="utf-8", newline="") as f:
        assert count_pretokens(f, pat_str="cl100k_base") == expected
    # An iterable holds documents: no piece spans two of them.
    assert count_pretokens(["a", "b"], pat_str=r".+") == Counter({"a": 1, "b": 1})
    assert count_pretokens([path, "x"], pat_str="cl100k_base") == expected + Counter({"x": 1})


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"abc" * 5 + b"\xff")
    with pytest.raises(ValueError, match=r"bad.txt: invalid UTF-8 at byte offset 15"):
        count_pretokens(path, pat_str="gpt2", chunk_size=4)
    # A character begun in one chunk and broken in the next is reported where it began.
    with pytest.raises(ValueError, match=r"<file>: invalid UTF-8 at byte offset 2 "):
        count_pretokens(io.BytesIO(b"ab\xe2\x82xcd"), pat_str="gpt2", chunk_size=3)
    path.write_bytes(b"abc\xe2\x82")  # the file ends inside a character
    with pytest.raises(
        ValueError, match=r"invalid UTF-8 at byte offset 3 \(unexpected end of data"
    ):
        count_pretokens(path, pat_str="gpt2", chunk_size=4)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="too small"):
        train("x", vocab_size=256, pat_str="gpt2", special_tokens=["<|end|>"])
    with pytest.raises(ValueError, match="empty string"):
        train("x", vocab_size=300, pat_str="gpt2", special_tokens=[""])


@pytest.fixture(scope="module")
def trained():  # type: ignore[no-untyped-def]
    text = english_prose(60_000) + python_source(60_000) + multilingual(20_000)
    return train(text, vocab_size=1200, pat_str="cl100k_base", special_tokens=["<|endoftext|>"])


def test_every_trained_token_is_reachable(trained) -> None:  # type: ignore[no-untyped-def]
    ranks = trained.mergeable_ranks
    assert len(ranks) == 1199
    for token, rank in ranks.items():
        assert rank_merge(token, ranks, whole_piece=False) == [rank]


def test_trained_encodes_like_tiktoken(trained) -> None:  # type: ignore[no-untyped-def]
    twin = tiktoken_twin(trained)
    for text in [english_prose(20_000)[-5000:], python_source(5000), multilingual(3000)]:
        assert trained.encode(text) == twin.encode(text)
    assert trained.encode("<|endoftext|>", allowed_special="all") == [1199]


@pytest.mark.parametrize("name", ["t.tiktoken", "tokenizer.json", "t.model", "gpt2/encoder.json"])
def test_round_trip_through_every_format(trained, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    vocabulary = Vocabulary(trained.mergeable_ranks, trained.special_tokens, trained.pat_str)
    save_vocabulary(vocabulary, tmp_path / name)
    loaded = load_vocabulary(tmp_path / name)
    assert loaded.mergeable_ranks == trained.mergeable_ranks
    if not name.endswith(".tiktoken"):  # .tiktoken holds the ranks only
        assert loaded.special_tokens == trained.special_tokens
    if name in ("tokenizer.json", "t.model"):  # the others hold no pattern
        assert loaded.pat_str == trained.pat_str


def test_command_line_train(tmp_path: Path) -> None:
    import subprocess
    import sys

    files = []
    for i, text in enumerate([english_prose(20_000), python_source(20_000)]):
        files.append(tmp_path / f"{i}.txt")
        files[-1].write_text(text, encoding="utf-8")
    out = tmp_path / "v.tiktoken"
    args = [sys.executable, "-m", "streamcodec", "train", *map(str, files)]
    done = subprocess.run(
        [*args, "--vocab-size", "400", "--pattern", "gpt2", "-o", str(out), "--special", "<|e|>"],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert b"trained 399 tokens (143 merges)" in done.stderr and b"<|e|> = 399" in done.stderr
    expected = train(files, vocab_size=400, pat_str="gpt2", special_tokens=["<|e|>"])
    assert read_tiktoken(out) == expected.mergeable_ranks
    gpt2 = tmp_path / "gpt2" / "encoder.json"
    gpt2.parent.mkdir()  # the command line creates no folder (tests/test_cli_reliability.py)
    done = subprocess.run([*args, "--vocab-size", "300", "-o", str(gpt2), "-q"], timeout=120)
    assert done.returncode == 0 and (gpt2.parent / "vocab.bpe").is_file()
    bad = subprocess.run([*args, "--vocab-size", "300", "-o", "v.txt"], capture_output=True)
    assert bad.returncode == 1 and b"cannot tell the vocabulary format" in bad.stderr


def test_progress_bars(capsys: pytest.CaptureFixture[str]) -> None:
    from streamcodec.cli.progress import TrainProgress

    with TrainProgress(100, quiet=False) as progress:
        train(["ab ab ab"], vocab_size=258, pat_str="gpt2", progress=progress)
    err = capsys.readouterr().err
    assert "counting" in err and "merging" in err and "2/2" in err


def test_embedded_encoding_is_offline_reachable_and_tiktoken_exact() -> None:
    import streamcodec

    enc = streamcodec.get_encoding("streamcodec_py4k")
    assert enc.n_vocab == 4096 and enc.eot_token == 4095
    ranks = enc.mergeable_ranks
    assert all(
        rank_merge(token, ranks, whole_piece=False) == [rank] for token, rank in ranks.items()
    )
    text = english_prose(5000) + python_source(5000) + multilingual(2000)
    assert enc.encode(text) == tiktoken_twin(enc).encode(text)


def test_embedded_encoding_regenerates_byte_for_byte() -> None:
    from streamcodec.formats.tiktoken_file import write_tiktoken_bytes
    from tools.train_embedded import OUTPUT, train_embedded, training_paths

    try:
        training_paths()
    except ValueError as exc:
        pytest.skip(f"not the pinned training text: {exc}")
    assert write_tiktoken_bytes(train_embedded().mergeable_ranks) == OUTPUT.read_bytes()


def test_docstring_examples() -> None:
    import doctest

    import streamcodec.reference
    import streamcodec.training

    for module in (streamcodec.training, streamcodec.reference):
        assert doctest.testmod(module).failed == 0


def test_text_shorter_than_the_longest_special_token_is_not_cut_inside_one() -> None:
    """Regression: a negative search limit once let a safe cut fall inside ``<|x|>``."""
    counts = count_pretokens("<|x|>", pat_str="gpt2", special_tokens=["<|end|>", "<|x|>"])
    assert counts == {}
