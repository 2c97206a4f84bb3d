"""The fast paths equal the specification: backtracking, merge loop, caches, fast pre-tokenization.

Random vocabularies are trained from random corpora over a small alphabet, so merge chains run
deep; shuffling their ranks makes vocabularies full of unreachable tokens.
"""

from __future__ import annotations

import itertools
import pickle
import random
import sys
import threading
import warnings
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding
from streamcodec.engine.cache import DICT_SLOT, ENTRY_BYTES, MAX_KEY_LENGTH, IdCache
from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_parts, merge_piece
from streamcodec.pieces.piece import PieceEncoder
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.pieces.trie import TokenTrie
from streamcodec.reference import merge_steps, rank_merge
from streamcodec.text.pretokenize import Pretokenizer, fast_pattern, full_pattern
from streamcodec.vocab import PATTERNS

ALPHABET = b"ab c"
FAST_RE = sys.version_info >= (3, 11)
NAMED = sorted(set(PATTERNS.values()))


def train(corpus: bytes, merges: int) -> dict[bytes, int]:
    """Naive BPE training: merge the most frequent adjacent pair, ``merges`` times."""
    ranks = {bytes([b]): b for b in range(256)}
    parts = [corpus[i : i + 1] for i in range(len(corpus))]
    for _ in range(merges):
        pairs = Counter(itertools.pairwise(parts))
        if not pairs:
            break
        (left, right), _count = max(pairs.items(), key=lambda item: (item[1], item[0]))
        ranks.setdefault(left + right, len(ranks))
        merged: list[bytes] = []
        for part in parts:
            if merged and merged[-1] == left and part == right:
                merged[-1] = left + right
            else:
                merged.append(part)
        parts = merged
    return ranks


def random_vocabulary(seed: int, *, shuffle: bool) -> dict[bytes, int]:
    """A trained vocabulary; with ``shuffle``, its merged tokens get random ranks (and a few
    random tokens join them), which leaves many tokens unreachable."""
    rng = random.Random(seed)
    corpus = bytes(rng.choice(ALPHABET[: rng.randint(2, 4)]) for _ in range(rng.randint(20, 300)))
    ranks = train(corpus, rng.randint(1, 40))
    if not shuffle:
        return ranks
    tokens = [t for t in ranks if len(t) > 1]
    tokens += [bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))) for _ in range(5)]
    tokens = list(dict.fromkeys(tokens))
    rng.shuffle(tokens)
    return {bytes([b]): b for b in range(256)} | {t: 256 + i for i, t in enumerate(tokens)}


pieces_strategy = st.binary(min_size=1, max_size=60).map(
    lambda data: bytes(ALPHABET[b % len(ALPHABET)] for b in data)
)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans(), piece=pieces_strategy)
def test_backtracking_and_merge_loop_equal_rank_merge(
    seed: int, shuffle: bool, piece: bytes
) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    expected = rank_merge(piece, ranks, whole_piece=False)
    assert merge_piece(piece, ranks) == expected
    assert backtrack_piece(piece, RankOrder(ranks), TokenTrie(ranks)) == expected
    whole = rank_merge(piece, ranks)
    assert PieceEncoder(ranks, long_piece=1)(piece) == whole
    assert PieceEncoder(ranks)(piece) == whole


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans(), piece=pieces_strategy, data=st.data())
def test_merge_stops_at_the_first_state_with_few_enough_parts(
    seed: int, shuffle: bool, piece: bytes, data: st.DataObject
) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    parts = data.draw(st.integers(1, len(piece)))
    states = list(merge_steps(piece, ranks))
    expected = next((state for state in states if len(state) <= parts), states[-1])
    assert merge_parts(piece, ranks, parts=parts) == expected


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), shuffle=st.booleans())
def test_rank_order_facts_follow_their_definitions(seed: int, shuffle: bool) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    order, trie = RankOrder(ranks), TokenTrie(ranks)
    tokens = [t for t in ranks if len(t) > 1] + [b"a", b"b"]
    for token in tokens:
        steps = list(merge_steps(token, ranks))
        reachable = steps[-1] == [token]
        assert order.is_reachable(ranks[token]) == reachable
        # Unreachable tokens are no candidates, even where no pair would be checked.
        assert backtrack_piece(token, order, trie) == [ranks[part] for part in steps[-1]]
        split = order.split(ranks[token])
        if reachable and len(token) > 1:
            assert split == tuple(ranks[part] for part in steps[-2])
        else:
            assert split is None
    for left in tokens:
        for right in tokens:
            pair = merge_piece(left + right, ranks) == [ranks[left], ranks[right]]
            assert order.is_valid_pair(ranks[left], ranks[right]) == pair, (left, right)
    assert all(order.is_ordered(ranks[t]) for t in tokens) or shuffle
    expected = sorted(
        ranks[t] for t in ranks if rank_merge(t, ranks, whole_piece=False) != [ranks[t]]
    )
    assert order.unreachable_tokens() == expected


def test_shuffled_vocabularies_do_have_unreachable_tokens() -> None:
    assert any(RankOrder(random_vocabulary(s, shuffle=True)).unreachable_tokens() for s in range(5))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    shuffle=st.booleans(),
    text=st.text(st.sampled_from("ab c\n"), max_size=80),
    cache_bytes=st.sampled_from([0, 1, 150, 500, 100_000]),
)
def test_encoding_with_caches_equals_rank_merge_per_piece(
    backend: str, seed: int, shuffle: bool, text: str, cache_bytes: int
) -> None:
    ranks = random_vocabulary(seed, shuffle=shuffle)
    pattern = PATTERNS["cl100k_base"]
    enc = Encoding(
        "toy",
        pat_str=pattern,
        mergeable_ranks=ranks,
        special_tokens={},
        cache_bytes=cache_bytes,
        backend=backend,
    )
    expected = [
        i for piece in regex.findall(pattern, text) for i in rank_merge(piece.encode(), ranks)
    ]
    for _ in range(2):  # cold, then warm
        assert enc.encode_ordinary(text) == expected
        assert enc.encode_ordinary(text + " ab") == enc.encode_ordinary(text + " ab")
    assert enc.ordinary._cache.bytes <= cache_bytes


LONG_PIECES = [
    "a" * 5000,
    " " * 5000,
    "\n" * 3000,
    "1234567890" * 300,
    "Pneumonoultramicroscopicsilicovolcanoconiosis" * 20,
    "Donaudampfschifffahrtsgesellschaftskapitänswitwe" * 10,
    "ab" * 2000,
    "🙂" * 500,
    "x" + "y" * 3000 + "z",
    "-" * 3000,  # o200k_base has 28 runs of "-" as tokens: the search gives way to the merge
    "=" * 1000 + "*" * 1000,
]


@pytest.mark.parametrize("text", LONG_PIECES, ids=lambda t: repr(t[:12]))
def test_long_pieces_equal_tiktoken(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.encode_ordinary(" " + text + "!") == theirs.encode_ordinary(" " + text + "!")


def test_backtracking_equals_merge_loop_on_real_pieces(real_encoding: Encoding) -> None:
    ranks = real_encoding.mergeable_ranks
    encode = PieceEncoder(ranks, long_piece=2)
    text = "".join(samples().values())
    pieces = sorted({p.encode() for p in real_encoding.ordinary.pretokenizer.pieces(text)}, key=len)
    for piece in pieces[-400:] + pieces[::50]:
        expected = [ranks[piece]] if piece in ranks else merge_piece(piece, ranks)
        assert encode(piece) == expected, piece


# ---------------------------------------------------------------- pre-tokenization

TRICKY_CHARS = (
    "aZ09 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0'’sStTdDmMlLvVeErR/.,!?-_()\"ſKkßﬅ"
    "éÉǅʰ\u0301\u0663٣½²\u2028\u2029\u3000\u200b\u180e"
    "\U0001f600\U0001f44d\U0001f3fd\u200d\U0001d400\U00020000\U0001d7ce\U000e0061\ud800"
)
tricky_text = st.text(st.sampled_from(TRICKY_CHARS), max_size=40)
ascii_heavy = st.text(st.sampled_from("ab Z1'.\n\r\t  "), max_size=60)
any_text = st.one_of(tricky_text, ascii_heavy, st.text(max_size=40))


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(NAMED), text=any_text, data=st.data())
def test_fast_pretokenizer_equals_regex(pattern: str, text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    expected = regex.findall(pattern, text[:end][start:])
    expected_in_place = regex.compile(pattern).findall(text, start, end)
    assert expected == expected_in_place
    if FAST_RE:
        assert full_pattern(pattern).findall(text, start, end) == expected
        if not any(ord(c) > 0xFFFF for c in text):
            assert fast_pattern(pattern).findall(text, start, end) == expected
    pretokenizer = Pretokenizer(pattern)
    assert pretokenizer.pieces(text, start, end) == expected
    words = pretokenizer.words(text, start, end)
    assert words is not None
    assert "".join(words) == text[start:end]
    assert [p for word in words for p in regex.findall(pattern, word)] == expected
    # A piece is cut into itself, so one cache can hold words and pieces.
    assert all(regex.findall(pattern, piece) == [piece] for piece in expected)


def test_astral_letters_take_the_full_sets() -> None:
    for pattern in NAMED:
        text = "math 𝐀𝐁 🙂 𝟙𝟚𝟛𝟜 x"  # astral letters and digits, an emoji
        assert Pretokenizer(pattern).pieces(text) == regex.findall(pattern, text)
    assert Pretokenizer(r"\w+").words("a b") is None


@pytest.mark.skipif(not FAST_RE, reason="re has possessive quantifiers from Python 3.11")
def test_fast_sets_differ_from_re_whitespace() -> None:
    # re's own \s would match \x1c; the pattern must not treat it as whitespace.
    text = "a\x1c b"
    for pattern in NAMED:
        assert fast_pattern(pattern).findall(text) == regex.findall(pattern, text)


# ---------------------------------------------------------------- caches


def charge(key: str) -> int:
    """What a cache entry of ``key`` with one id is charged (engine/cache.py)."""
    return sys.getsizeof(key) + sys.getsizeof((0,)) + DICT_SLOT


def test_a_full_cache_keeps_what_it_holds() -> None:
    cache = IdCache(cache_bytes=2 * charge("ccc"))  # a and bb fit, not ccc too
    calls: list[str] = []

    def compute(keys: list[str]) -> list[tuple[str, tuple[int, ...]]]:
        calls.extend(keys)
        return [(k, (len(k),)) for k in keys]

    cache.flat(["a"], compute)
    cache.flat(["bb"], compute)
    cache.flat(["ccc"], compute)  # full: ccc serves this call only
    calls.clear()
    assert cache.flat(["a", "ccc", "bb"], compute) == [1, 3, 2]
    assert calls == ["ccc"]
    assert len(cache) == 2 and "a" in cache and "ccc" not in cache
    assert cache.info() == {
        "bytes": charge("a") + charge("bb"),
        "entries": 2,
        "bytes_each": 2 * charge("ccc"),
    }
    with pytest.raises(ValueError, match="cache_bytes"):
        IdCache(cache_bytes=-1)


def test_a_second_pass_computes_no_more_than_the_first() -> None:
    # More distinct keys than the cache holds: an LRU recomputed every key on every pass.
    cache = IdCache(cache_bytes=100 * charge("k000"))
    computed: list[int] = []

    def compute(keys: list[str]) -> list[tuple[str, tuple[int, ...]]]:
        computed[-1] += len(keys)
        return [(k, (len(k),)) for k in keys]

    texts = [[f"k{i:03}" for i in range(start, start + 30)] for start in range(0, 300, 30)]
    for _ in range(3):
        computed.append(0)
        for keys in texts:
            cache.flat(keys, compute)
    assert computed == [300, 200, 200]


def test_a_cache_that_turned_away_many_keys_admits_again() -> None:
    cache = IdCache(cache_bytes=10 * charge("old00"))
    compute = lambda keys: [(k, (len(k),)) for k in keys]  # noqa: E731
    cache.flat([f"old{i:02}" for i in range(10)], compute)
    for start in range(0, 50, 5):
        cache.flat([f"new{i:02}" for i in range(start, start + 5)], compute)
    assert len(cache) <= 10 and cache.bytes == len(cache) * charge("old00")
    assert sum(f"old{i:02}" in cache for i in range(10)) == 5  # the older half went, once
    assert all(f"new{i:02}" in cache for i in range(45, 50))  # admitted after the refresh


def test_cache_gives_up_on_keys_it_knows_nothing_of() -> None:
    cache = IdCache(cache_bytes=10 * charge("dddd"))
    compute = lambda keys: [(k, (len(k),)) for k in keys]  # noqa: E731
    assert cache.flat(["a", "bb", "ccc", "a"], compute, give_up=0.5) is None
    assert len(cache) == 0
    assert cache.flat(["a", "a", "a", "bb"], compute, give_up=0.5) == [1, 1, 1, 2]  # repeats
    assert cache.flat(["ccc", "dddd"], compute, give_up=0.5) is None
    assert cache.flat(["a", "x", "y"], compute, give_up=0.5) == [1, 1, 1]  # a is known
    full = IdCache(cache_bytes=3 * charge("a"))
    full.flat(["a", "b", "c"], compute)
    assert full.flat(["a", "x", "y"], compute, give_up=0.5) is None  # no room for x and y
    assert full.flat(["a", "a", "a", "x"], compute, give_up=0.5) == [1, 1, 1, 1]  # few missing


def test_long_keys_serve_one_call_only() -> None:
    cache = IdCache(cache_bytes=10 * charge("a"))
    long_key = "x" * (MAX_KEY_LENGTH + 1)
    ids = cache.flat([long_key, "a", long_key], lambda keys: [(k, (len(k),)) for k in keys])
    assert ids == [MAX_KEY_LENGTH + 1, 1, MAX_KEY_LENGTH + 1]
    assert len(cache) == 1


def test_cache_bytes_is_an_option_that_survives_pickling() -> None:
    base = streamcodec.get_encoding("cl100k_base")
    kwargs = dict(
        pat_str=base.pat_str,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens={},
        backend="python",
    )
    small = Encoding("small", cache_bytes=600, **kwargs)  # type: ignore[arg-type]
    text = "one two three four five six seven"
    assert small.encode_ordinary(text) == base.encode_ordinary(text)
    info = small.ordinary.cache_info()
    assert 0 < info["bytes"] <= 600 and info["bytes_each"] == 600 and 0 < info["entries"] < 7
    copy = pickle.loads(pickle.dumps(small))
    assert copy.ordinary.cache_info()["bytes_each"] == 600 and copy.backend == "python"


def test_cache_size_is_a_deprecated_alias_of_cache_bytes() -> None:
    base = streamcodec.get_encoding("cl100k_base")
    kwargs = dict(pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks, special_tokens={})
    with pytest.warns(DeprecationWarning, match=f"give cache_bytes={5 * ENTRY_BYTES} "):
        old = Encoding("old", cache_size=5, backend="python", **kwargs)  # type: ignore[arg-type]
    assert old.ordinary.cache_info()["bytes_each"] == 5 * ENTRY_BYTES
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pickled as cache_bytes: no second warning
        assert (
            pickle.loads(pickle.dumps(old)).ordinary.cache_info()["bytes_each"] == 5 * ENTRY_BYTES
        )
    with pytest.warns(DeprecationWarning):
        native = Encoding("off", cache_size=0, **kwargs)  # type: ignore[arg-type]
    assert native.ordinary.cache_info().get("bytes_each", 0) == 0  # both paths
    with pytest.raises(ValueError, match="cache_size and cache_bytes both given"):
        Encoding("both", cache_size=5, cache_bytes=1000, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cache_size=-1: expected a whole number of at least 0"):
        Encoding("bad", cache_size=-1, **kwargs)  # type: ignore[arg-type]


def test_threads_sharing_an_encoding_get_the_same_ids(backend: str) -> None:
    # Python path: a tiny cache the threads fight over. Native: the GIL is released, and the
    # long pieces make the threads compute the per-token facts of a fresh Encoding at once.
    base = streamcodec.get_encoding("cl100k_base")
    shared = Encoding(
        "shared",
        pat_str=base.pat_str,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens=base.special_tokens,
        cache_bytes=16 * ENTRY_BYTES,  # tiny: threads turn away each other's entries
        backend=backend,
    )
    rng = random.Random(1)
    words = samples()["prose"].split()[:3000] + samples()["multilingual"].split()[:3000]
    texts = [" ".join(rng.choices(words, k=200)) + " " + "ab" * 300 * k for k in range(16)]
    expected = [base.encode_ordinary(t) for t in texts]
    failures: list[int] = []

    def work(offset: int) -> None:
        for i in range(len(texts)):
            j = (i + offset) % len(texts)
            if shared.encode_ordinary(texts[j]) != expected[j]:
                failures.append(j)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert shared.encode_batch(texts, num_threads=4) == expected


def test_surrogate_pieces_never_leak_between_error_modes(real_pair) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    data = b"caf\xe9 caf\xe9 ok"
    text = data.decode("utf-8", "surrogateescape")
    fresh = Encoding(
        "fresh",
        pat_str=ours.pat_str,
        mergeable_ranks=ours.mergeable_ranks,
        special_tokens=ours.special_tokens,
        backend=ours.backend,
    )
    as_bytes = fresh.encode_bytes(data)
    assert fresh.decode_bytes(as_bytes) == data
    assert fresh.encode_ordinary(text) == theirs.encode_ordinary(text)  # U+FFFD, as tiktoken
    assert fresh.encode_bytes(data) == as_bytes


# ---------------------------------------------------------------- differential, through the caches

FRAGMENTS = [
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "\r\n",
    " the",
    "The",
    " cat",
    "'s",
    "'LL",
    " 12345",
    "3.14",
    "!!",
    " (x)",
    "\x1c",
    "\u00a0",
    "\u3000",
    "🙂",
    " 👍🏽",
    "𝐀𝐁",
    "日本語",
    "é",
    "ǅ",
    "a\u0301",
    " /",
]


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=30), data=st.data())
def test_fragments_equal_tiktoken_through_warm_caches(real_pair, parts: list[str], data) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair  # shared across examples: the caches stay warm between them
    text = "".join(parts)
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert ours.ordinary.encode(text, start=start, end=end) == theirs.encode_ordinary(
        text[start:end]
    )


@pytest.mark.parametrize(
    "text",
    [
        "Hello x world\n\n",
        "  x y z  ",
        "x\n x\n\n  x 12 x",
        "naïve x 🙂 x\u3000 x \r\n",
        # Many new chunks: wrongly ordered, the first one would join the one before it, and the
        # last one's trailing whitespace would be cut differently.
        "Alpha x beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n   ",
        "Über x ändern öffnen ürzeit ärger ölig übel\t",
    ],
)
def test_missing_chunks_are_cut_together_exactly(real_pair, text: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = real_pair
    fresh = Encoding(
        "fresh",
        pat_str=ours.pat_str,
        mergeable_ranks=ours.mergeable_ranks,
        special_tokens={},
        backend=ours.backend,
    )
    fresh.encode_ordinary(" x")  # known chunk: the next text takes the chunk path
    assert fresh.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert fresh.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_the_last_new_chunk_is_cut_last(backend: str) -> None:
    # Cut in the middle, the trailing "\n   " would be two pieces; at the end it is one token.
    ranks = {bytes([b]): b for b in range(256)} | {b"\n   ": 256}
    pattern = PATTERNS["cl100k_base"]
    enc = Encoding(
        "toy", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}, backend=backend
    )
    enc.encode_ordinary(" x")  # known chunk: the next texts take the chunk path
    for words in range(3, 30):
        text = "w x " + " ".join(f"w{i}" for i in range(words)) + " x\n   "
        expected = [i for p in regex.findall(pattern, text) for i in rank_merge(p.encode(), ranks)]
        assert expected[-1] == 256
        assert enc.encode_ordinary(text) == expected


@pytest.mark.parametrize(
    "name",
    [
        "streamcodec.engine.backend",
        "streamcodec.engine.ordinary",
        "streamcodec.engine.cache",
        "streamcodec.pieces.piece",
        "streamcodec.pieces.backtrack",
        "streamcodec.stream.cuts",
    ],
)
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
