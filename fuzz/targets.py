"""The differential targets of streamcodec's Python paths; importing this fills the registry.

A check runs a case through a fast path and through the thing it must equal (the specification
in :mod:`streamcodec.reference`, or tiktoken built from the same vocabulary), raises
:class:`Mismatch` when they differ, and returns a :class:`Tally` of what it compared. The same
registry drives the test suite (tests/test_fuzz.py), the campaign (``python -m fuzz.campaign``)
and the coverage-guided harness (``python -m fuzz.atheris_harness``).

A *diverging* target is the opposite: greedy longest-match against rank-merge, which must differ
somewhere (BPE is not longest-match); it counts the divergences instead of failing on them.

Adding a target when a new fast path lands is one decorated function:

    @target("my_fast_path", case(max_pieces=20))
    def _check_my_fast_path(case: Case) -> Tally:
        for piece in case.pieces:
            expect_equal(case, "piece", piece, my_fast(piece), rank_merge(piece, case.vocab.ranks))
        return Tally(len(case.pieces))
"""

from __future__ import annotations

import functools
import importlib.util
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import regex

# The other target modules register theirs on import; they import only fuzz.registry.
import fuzz.native_targets
import fuzz.scan_targets  # noqa: F401
from fuzz.registry import (
    TARGETS,
    Mismatch,
    Tally,
    Target,
    expect_equal,
    hypothesis_test,
    outcome,
    prefixes,
    reference_encode,
    target,
    windows,
)
from fuzz.strategies import Case, Vocab, case, real_vocab
from streamcodec.pieces.bytemode import ByteMode
from streamcodec.pieces.merge import merge_piece
from streamcodec.reference import longest_match, merge_steps, rank_merge, train_naive
from streamcodec.wordbpe import learn_merges, learn_merges_naive

__all__ = [
    "TARGETS",
    "Mismatch",
    "Tally",
    "Target",
    "corpus_divergence",
    "expect_equal",
    "hypothesis_test",
    "outcome",
    "prefixes",
    "reference_encode",
    "target",
    "windows",
]


T = TypeVar("T")

# ---------------------------------------------------------------------------- the targets


@target("merge_piece", case(max_texts=0, max_pieces=24))
def _check_merge_piece(case: Case) -> Tally:
    """bpe.merge_piece == reference.rank_merge(whole_piece=False), on pieces of random vocabs."""
    ranks = case.vocab.ranks
    checked = prefixes(case.pieces)
    for piece in checked:
        expected = rank_merge(piece, ranks, whole_piece=False)
        expect_equal(case, "piece", piece, merge_piece(piece, ranks), expected)
    return Tally(len(checked))


@target("encode_reference", case())
def _check_encode_reference(case: Case) -> Tally:
    """Encoding.encode_ordinary == the pattern's matches rank-merged (whole_piece=True)."""
    enc = case.vocab.encoding
    checked = prefixes(case.texts)
    for text in checked:
        expected = reference_encode(text, case.vocab)
        expect_equal(case, "text", text, enc.encode_ordinary(text), expected)
    return Tally(len(checked))


@target("real_reference", case(real=True, max_texts=4))
def _check_real_reference(case: Case) -> Tally:
    """The genuine encodings' encode_ordinary == rank-merge of the pattern's matches."""
    return _check_encode_reference(case)


@target("tiktoken", case(surrogates=True))
def _check_tiktoken(case: Case) -> Tally:
    """Encoding == tiktoken built from the same vocabulary: ordinary, specials, errors."""
    ours, theirs = case.vocab.encoding, case.vocab.tiktoken
    checked = prefixes(case.texts)
    for text in checked:
        expect_equal(case, "text", text, ours.encode_ordinary(text), theirs.encode_ordinary(text))
    for text in case.texts:
        # By default a special token in the text is an error, in both.
        expect_equal(case, "text", text, outcome(ours.encode, text), outcome(theirs.encode, text))
        everything = outcome(ours.encode, text, allowed_special="all")
        expect_equal(
            case, "text", text, everything, outcome(theirs.encode, text, allowed_special="all")
        )
    return Tally(len(checked) + len(case.texts))


@target("real_tiktoken", case(real=True, surrogates=True, max_repeat=400))
def _check_real_tiktoken(case: Case) -> Tally:
    """The genuine encodings == tiktoken, with long repetitions and surrogates."""
    return _check_tiktoken(case)


@target("round_trip", case(max_pieces=8))
def _check_round_trip(case: Case) -> Tally:
    """decode(encode(text)) == text, decode_with_offsets == tiktoken's, bytes round trip."""
    ours, theirs = case.vocab.encoding, case.vocab.tiktoken
    checked = prefixes(case.texts)
    for text in checked:
        ids = ours.encode(text, allowed_special="all")
        expect_equal(case, "text", text, ours.decode(ids), text)
        offsets = outcome(ours.decode_with_offsets, ids)
        expect_equal(case, "ids", ids, offsets, outcome(theirs.decode_with_offsets, ids))
    for data in case.pieces:
        expect_equal(case, "bytes", data, ours.decode_bytes(ours.encode_bytes(data)), data)
    return Tally(len(checked) + len(case.pieces))


@target("longest_match", case(max_texts=0, max_pieces=24), diverges=True)
def _check_longest_match(case: Case) -> Tally:
    """Greedy longest-match vs rank_merge: counts the pieces where they differ."""
    ranks, longest = case.vocab.ranks, case.vocab.longest_token
    checked = prefixes(case.pieces)
    differ = sum(longest_match(p, ranks, longest=longest) != rank_merge(p, ranks) for p in checked)
    return Tally(len(checked), differ)


@functools.cache
def corpus_divergence(name: str = "cl100k_base") -> tuple[int, int, tuple[str, ...]]:
    """On the distinct pre-tokens of real text (fuzz/corpus.py), how often longest-match
    differs from rank-merge under the genuine encoding ``name``: (pieces, differing, examples).
    """
    from fuzz.corpus import samples

    vocab = real_vocab(name)
    ranks, longest = vocab.ranks, vocab.longest_token
    distinct = sorted(
        {p for text in samples().values() for p in regex.findall(vocab.pattern, text)}
    )
    differing = [
        piece
        for piece in distinct
        if longest_match(data := piece.encode("utf-8"), ranks, longest=longest)
        != rank_merge(data, ranks)
    ]
    # Words make the clearest examples: show them first.
    differing.sort(key=lambda piece: regex.fullmatch(r" ?\p{L}+", piece) is None)
    return len(distinct), len(differing), tuple(differing[:20])


@target("reachability", case(max_texts=0))
def _check_reachability(case: Case) -> Tally:
    """formats.merges.unreachable_tokens == the tokens rank_merge(whole_piece=False) misses."""
    from streamcodec.formats.merges import unreachable_tokens

    ranks = case.vocab.ranks
    expected = [
        token
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
        if len(token) > 1 and rank_merge(token, ranks, whole_piece=False) != [rank]
    ]
    expect_equal(case, "vocabulary", case.vocab, unreachable_tokens(ranks), expected)
    return Tally(len(ranks) - 256)


@target("formats", case(max_texts=0))
def _check_formats(case: Case) -> Tally:
    """Every vocabulary format writes and reads back the same vocabulary, or refuses it."""
    import json
    import tempfile
    from pathlib import Path

    from streamcodec import formats
    from streamcodec.formats.huggingface import huggingface_json, parse_huggingface
    from streamcodec.formats.minbpe import parse_minbpe, write_minbpe_bytes
    from streamcodec.formats.split_gaps import with_gaps
    from streamcodec.formats.tiktoken_file import parse_tiktoken, write_tiktoken_bytes
    from streamcodec.vocab import Vocabulary, VocabularyError

    enc = case.vocab.encoding
    vocabulary = Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)
    expect_equal(
        case,
        "tiktoken",
        case.vocab,
        parse_tiktoken(write_tiktoken_bytes(vocabulary.mergeable_ranks)),
        vocabulary.mergeable_ranks,
    )
    checked = 1
    with tempfile.TemporaryDirectory() as folder:
        round_trips: dict[str, Callable[[], Vocabulary]] = {
            "minbpe": lambda: parse_minbpe(write_minbpe_bytes(vocabulary)),
            "huggingface": lambda: parse_huggingface(
                json.dumps(huggingface_json(vocabulary)).encode()
            ),
            "gpt2": lambda: (
                formats.save_vocabulary(vocabulary, Path(folder, "gpt2"), format="gpt2"),
                formats.load_vocabulary(Path(folder, "gpt2")),
            )[1],
        }
        for name, round_trip in round_trips.items():
            try:
                back = round_trip()
            except VocabularyError:
                continue  # this format cannot hold this vocabulary, and says so
            kept = (back.mergeable_ranks, back.special_tokens, back.pat_str or enc.pat_str)
            # Hugging Face keeps the text between a custom pattern's matches: its reader says so.
            pattern = with_gaps(enc.pat_str) if name == "huggingface" else enc.pat_str
            expect_equal(
                case, name, case.vocab, kept, (enc.mergeable_ranks, enc.special_tokens, pattern)
            )
            checked += 1
    return Tally(checked)


def _check_huggingface(case: Case) -> Tally:
    """Hugging Face tokenizers, loaded from the tokenizer.json we write, == Encoding."""
    import json

    import tokenizers

    from streamcodec.formats.huggingface import huggingface_json
    from streamcodec.vocab import Vocabulary, VocabularyError

    enc = case.vocab.encoding
    try:
        document = huggingface_json(
            Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)
        )
    except VocabularyError:
        return Tally()  # the writer refuses what Hugging Face would encode differently
    hf = tokenizers.Tokenizer.from_str(json.dumps(document))
    checked = prefixes(case.texts)
    for text in checked:
        expected = enc.encode(text, allowed_special="all")
        expect_equal(case, "text", text, hf.encode(text, add_special_tokens=False).ids, expected)
    return Tally(len(checked))


@functools.lru_cache(maxsize=16)
def _backtracking(vocab: Vocab) -> tuple[Any, Any]:
    """A PieceEncoder that backtracks on every piece (long_piece=1), and its token trie."""
    from streamcodec.pieces.piece import PieceEncoder
    from streamcodec.pieces.trie import TokenTrie

    return PieceEncoder(vocab.ranks, long_piece=1), TokenTrie(vocab.ranks)


@target("backtrack", case(max_texts=0, max_pieces=24))
def _check_backtrack(case: Case) -> Tally:
    """bpe.backtrack_piece == rank_merge(whole_piece=False); PieceEncoder == rank_merge."""
    from streamcodec.pieces.backtrack import backtrack_piece

    ranks = case.vocab.ranks
    encoder, trie = _backtracking(case.vocab)
    checked = prefixes(case.pieces)
    for piece in checked:
        expected = rank_merge(piece, ranks, whole_piece=False)
        expect_equal(case, "piece", piece, backtrack_piece(piece, encoder.order, trie), expected)
        expect_equal(case, "piece", piece, encoder(piece), rank_merge(piece, ranks))
    return Tally(2 * len(checked))


@target("real_backtrack", case(real=True, max_texts=0, max_pieces=12))
def _check_real_backtrack(case: Case) -> Tally:
    """The same on the genuine encodings."""
    return _check_backtrack(case)


@target("rank_order", case(max_texts=0, max_pieces=8))
def _check_rank_order(case: Case) -> Tally:
    """verify.RankOrder: reachable tokens, splits and valid pairs == what rank_merge does."""
    from streamcodec.pieces.rank_order import RankOrder

    ranks = case.vocab.ranks
    order = RankOrder(ranks)
    tokens = [ranks[t] for t in case.vocab.tokens if t in ranks]
    for token in tokens:
        data = order.token_bytes(token)
        *_, before, last = [None, *merge_steps(data, ranks)]
        reachable = last == [data]
        expect_equal(case, "token", data, order.is_reachable(token), reachable)
        split = tuple(ranks[p] for p in before) if reachable and before else None
        expect_equal(case, "token", data, order.split(token), split)
    # Pairs of the vocabulary's tokens and bytes of its pieces.
    pool = tokens + [ranks[p[:1]] for p in case.pieces]
    pairs = list(zip(pool, reversed(pool), strict=True))
    for left, right in pairs:
        data = order.token_bytes(left) + order.token_bytes(right)
        valid = rank_merge(data, ranks, whole_piece=False) == [left, right]
        expect_equal(case, "pair", (left, right), order.is_valid_pair(left, right), valid)
    return Tally(2 * len(tokens) + len(pairs))


@target("cache", case(cuts=True))
def _check_cache(case: Case) -> Tally:
    """Encoding with a tiny cache (Python path), texts encoded twice in turn == reference."""
    import streamcodec
    from streamcodec.engine.cache import ENTRY_BYTES

    enc = case.vocab.encoding
    size = case.cuts[0] % 5 if case.cuts else 1
    cached = streamcodec.Encoding(
        "cache",
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
        cache_bytes=size * ENTRY_BYTES,
        backend="python",  # the cache is the Python path's (the compiled core needs none)
    )
    checked = [*case.texts, *reversed(case.texts)]
    for text in checked:
        expected = reference_encode(text, case.vocab)
        expect_equal(case, "text", text, cached.encode_ordinary(text), expected)
    return Tally(len(checked))


@target("pretokenize", case(surrogates=True, cuts=True))
def _check_pretokenize(case: Case) -> Tally:
    """Pretokenizer.pieces (the re fast path) == regex on text[start:end]; words cut between
    pieces."""
    from streamcodec.text.pretokenize import Pretokenizer

    pre = Pretokenizer(case.vocab.pattern)
    compiled = regex.compile(case.vocab.pattern)
    checked = 0
    for text in case.texts:
        for start, end in windows(text, case.cuts):
            expected = compiled.findall(text[start:end])
            expect_equal(case, "text", text[start:end], pre.pieces(text, start, end), expected)
            words = pre.words(text, start, end)
            if words is not None:
                joined = ("".join(words), [p for w in words for p in compiled.findall(w)])
                expect_equal(case, "text", text[start:end], joined, (text[start:end], expected))
            checked += 1
    return Tally(checked)


def chunked(text: Sequence[T], sizes: Sequence[int]) -> list[Sequence[T]]:
    """``text`` (or ids) cut into chunks of the given sizes, in turn (0 makes an empty chunk).

    >>> chunked("abcdef", [1, 0, 2])
    ['a', '', 'bc', 'd', '', 'ef']
    """
    chunks: list[Sequence[T]] = []
    start = 0
    if not any(sizes):
        sizes = [len(text) or 1]
    while start < len(text):
        size = sizes[len(chunks) % len(sizes)]
        chunks.append(text[start : start + size])
        start += size
    return chunks


@target("stream", case(surrogates=True, cuts=True))
def _check_stream(case: Case) -> Tally:
    """StreamEncoder fed random chunks == encode of the whole text (errors too); StreamDecoder
    fed ids in random groups == decode; iter_encode of UTF-8 byte chunks == encode."""
    enc = case.vocab.encoding
    checked = 0
    for text in case.texts:
        chunks = chunked(text, case.cuts)
        for policy in ({}, {"allowed_special": "all"}):
            expected = outcome(enc.encode, text, **policy)
            expect_equal(
                case, "chunks", chunks, outcome(_stream_encode, enc, chunks, policy), expected
            )
            checked += 1
        ids = enc.encode(text, allowed_special="all")
        decoder = enc.stream_decoder()
        decoded = (
            "".join(decoder.feed(group) for group in chunked(ids, case.cuts)) + decoder.close()
        )
        expect_equal(case, "ids", ids, decoded, enc.decode(ids))
        if not any("\ud800" <= c <= "\udfff" for c in text):
            data = text.encode("utf-8")
            pieces = [data[i : i + 7] for i in range(0, len(data), 7)]  # cuts inside characters
            got = list(enc.iter_encode(pieces, allowed_special="all"))
            expect_equal(case, "bytes", pieces, got, ids)
            checked += 1
        checked += 1
    return Tally(checked)


@target("real_stream", case(real=True, surrogates=True, cuts=True, max_repeat=400))
def _check_real_stream(case: Case) -> Tally:
    """The same on the genuine encodings, whose patterns have proven safe cuts."""
    return _check_stream(case)


def _stream_encode(enc: Any, chunks: list[str], policy: dict[str, Any]) -> list[int]:
    stream = enc.stream_encoder(**policy)
    return [token for chunk in chunks for token in stream.feed(chunk)] + stream.close()


@target("train", case(max_texts=6))
def _check_train(case: Case) -> Tally:
    """streamcodec.train (priority queue, incremental counts) == reference.train_naive."""
    from streamcodec.training import train

    text = "".join(case.texts)
    specials = list(case.vocab.specials)
    for min_frequency in (1, 2):
        vocab_size = 256 + len(specials) + 40
        expected = train_naive(
            text,
            vocab_size - len(specials),
            pat_str=case.vocab.pattern,
            special_tokens=specials,
            min_frequency=min_frequency,
        )
        enc = train(
            text,
            vocab_size=vocab_size,
            pat_str=case.vocab.pattern,
            special_tokens=specials,
            min_frequency=min_frequency,
        )
        expect_equal(case, "corpus", text, enc.mergeable_ranks, expected)
    return Tally(2)


# Only where Hugging Face tokenizers is installed (the test extra has it).
if importlib.util.find_spec("tokenizers") is not None:
    target("huggingface", case())(_check_huggingface)


@target("byte_mode", case(max_texts=4))
def _check_byte_mode(case: Case) -> Tally:
    """Byte mode (no pre-tokenization) == rank_merge of the whole text, rule on and off."""
    encoder = ByteMode(case.vocab.ranks)
    checked = prefixes([text.encode("utf-8") for text in case.texts])
    for data in checked:
        for whole_piece in (True, False):
            expected = rank_merge(data, case.vocab.ranks, whole_piece=whole_piece)
            got = encoder.encode(data, whole_piece=whole_piece)
            expect_equal(case, "bytes", data, got, expected)
    return Tally(2 * len(checked))


@target("word_bpe", case(max_texts=6))
def _check_word_bpe(case: Case) -> Tally:
    """wordbpe.learn_merges (incremental) == learn_merges_naive on the texts' word counts."""
    counts = Counter(word for text in case.texts for word in text.split())
    for min_frequency in (1, 2):
        expected = learn_merges_naive(counts, 40, min_frequency=min_frequency)
        got = learn_merges(counts, 40, min_frequency=min_frequency)
        expect_equal(case, "word counts", dict(counts), got, expected)
    return Tally(2)
