"""Streaming equals whole-text encoding for every chunking, on adversarial and real text.

The property: for any text and any way of cutting it into chunks, the ids of every ``feed`` plus
``close`` equal ``encode(text)``. Tested for every named pattern (o200k's ranks when available,
the GPT-2 pattern with cl100k's ranks), and for patterns streamcodec has no proof for.
"""

from __future__ import annotations

import functools
import io
import itertools
import pathlib
import pickle
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcodec
from fuzz.corpus import samples
from streamcodec import Encoding
from streamcodec.stream import SAFE_CUTS, InvalidUTF8Error
from streamcodec.vocab import GPT2_PATTERN

# Characters around which the patterns look ahead, glue or split.
ALPHABET = [
    "a", "Z", "s", "l", "t", "e", "é", "ß", "字", "\u0301", "\u093e", "'", "’", "1", "9", "٣",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", ".", "!", "/", "-",
    "😀", "𝟎", "𝐀", "<|endoftext|>", "<|", "|>", "<|endofprompt|>", "'ll", "'S", "'re",
]  # fmt: skip
TRICKY = (
    "Hello world!  It's 2024, we'll   see.\r\n\r\n\tDON'T  stop\n \n  x'll 'S 12345678 "
    "a\u0301b \u00a0nbsp\u3000ideo 字字。\n字 😀😀 𝐀𝟎1 end   "
)
OTHER_PATTERNS = {
    # llama3's pattern (cl100k without possessives, contractions first)
    "llama3": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "words": r"\w+|[^\w\s]+|\s+(?!\S)|\s+",
    "space-runs": r"\S+|\s+",
    "trailing-space": r"\S+\s*",
    "lookbehind": r"(?<=[a-z])'\w+|\w+|\s+$|\s+|[^\w\s]",
}  # fmt: skip

SURROGATES = ["a", "1", " ", "\ud83d", "\ude00", "\udc80", "\ud835", "\udc00", "\udfce"]
T = TypeVar("T", str, bytes)
adversarial_text = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)


def cl100k() -> Encoding:
    return streamcodec.get_encoding("cl100k_base")


@functools.cache
def with_pattern(name: str, pattern: str) -> Encoding:
    base = cl100k()
    return Encoding(
        name,
        pat_str=pattern,
        mergeable_ranks=base.mergeable_ranks,
        special_tokens=base.special_tokens,
    )


def named_encodings() -> list[Encoding]:
    return [cl100k(), with_pattern("gpt2-pattern", GPT2_PATTERN)]


def chunked(text: T, cuts: list[int]) -> list[T]:
    """``text`` cut at the positions ``cuts`` (taken modulo its length + 1)."""
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def streamed(enc: Encoding, chunks: list[str], **policy: object) -> list[int]:
    stream = enc.stream_encoder(**policy)  # type: ignore[arg-type]
    ids: list[int] = []
    for chunk in chunks:
        ids += stream.feed(chunk)
    return ids + stream.close()


def assert_streams_like_encode(enc: Encoding, text: str, cuts: list[int], **policy: object) -> None:
    expected = enc.encode(text, **policy)  # type: ignore[arg-type]
    assert streamed(enc, chunked(text, cuts), **policy) == expected, chunked(text, cuts)


settings.register_profile("stream", max_examples=150, deadline=None)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=12)


# ---------------------------------------------------------------------- the safe-cut rules


def assert_safe_cuts_final(enc: Encoding, head: str, tail: str) -> None:
    """The rule itself: pieces of head + tail before a safe cut in head are head[:cut]'s."""
    pieces = enc.ordinary.pretokenizer.pieces
    whole = pieces(head + tail)
    for match in SAFE_CUTS[enc.pat_str].finditer(head, 1):
        cut = match.start()
        before = pieces(head[:cut])
        assert whole[: len(before)] == before and "".join(before) == head[:cut], (head, cut)


@fast
@given(head=adversarial_text, tail=adversarial_text)
def test_safe_cuts_are_final_for_any_continuation(head: str, tail: str) -> None:
    for enc in named_encodings():
        assert_safe_cuts_final(enc, head, tail)


@fast
@given(head=adversarial_text, tail=adversarial_text)
def test_safe_cuts_are_final_for_any_continuation_o200k(
    real_encoding: Encoding, head: str, tail: str
) -> None:
    assert_safe_cuts_final(real_encoding, head, tail)
    assert_safe_cuts_final(real_encoding, TRICKY + head, tail + TRICKY)


# ---------------------------------------------------------------------- streaming == encode


@fast
@given(text=adversarial_text, cuts=cuts)
def test_any_chunking_equals_encode(text: str, cuts: list[int]) -> None:
    for enc in named_encodings():
        assert_streams_like_encode(enc, text, cuts, disallowed_special=())


@settings(max_examples=60, deadline=None)
@given(text=adversarial_text, cuts=cuts)
def test_any_chunking_equals_encode_o200k(
    real_encoding: Encoding, text: str, cuts: list[int]
) -> None:
    assert_streams_like_encode(real_encoding, text, cuts, disallowed_special=())
    assert_streams_like_encode(real_encoding, text, cuts, allowed_special="all")


@fast
@given(text=adversarial_text, cuts=cuts)
def test_allowed_special_tokens_split_across_feeds(text: str, cuts: list[int]) -> None:
    for enc in named_encodings():
        assert_streams_like_encode(enc, text, cuts, allowed_special="all")
        assert_streams_like_encode(
            enc, text, cuts, allowed_special={"<|endofprompt|>"}, disallowed_special=()
        )


@pytest.mark.parametrize("name", sorted(OTHER_PATTERNS))
@settings(max_examples=80, deadline=None)
@given(text=adversarial_text, cuts=cuts)
def test_patterns_without_proof(name: str, text: str, cuts: list[int]) -> None:
    enc = with_pattern(name, OTHER_PATTERNS[name])
    assert_streams_like_encode(enc, text * 3, cuts, disallowed_special=())
    assert_streams_like_encode(enc, text, cuts, allowed_special="all")


@pytest.mark.parametrize("enc", named_encodings(), ids=lambda e: e.name)
def test_every_cut_position_and_one_char_per_chunk(enc: Encoding) -> None:
    text = TRICKY + "<|endoftext|>" + TRICKY
    for policy in ({"disallowed_special": ()}, {"allowed_special": "all"}):
        expected = enc.encode(text, **policy)  # type: ignore[arg-type]
        for cut in range(len(text) + 1):
            assert streamed(enc, [text[:cut], text[cut:]], **policy) == expected, cut
        assert streamed(enc, list(text), **policy) == expected


def test_every_cut_position_o200k(real_encoding: Encoding) -> None:
    text = TRICKY + "<|endoftext|>" + TRICKY
    expected = real_encoding.encode(text, allowed_special="all")
    for cut in range(len(text) + 1):
        assert streamed(real_encoding, [text[:cut], text[cut:]], allowed_special="all") == expected
    assert streamed(real_encoding, list(text), allowed_special="all") == expected


@pytest.mark.parametrize("name", ["prose", "code", "multilingual"])
@settings(max_examples=8, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=40_000), max_size=60))
def test_real_text_chunked_randomly(name: str, cuts: list[int]) -> None:
    text = samples()[name][:40_000]
    for enc in named_encodings():
        assert_streams_like_encode(enc, text, cuts, disallowed_special=())


def test_real_text_chunked_randomly_o200k(real_encoding: Encoding) -> None:
    text = samples()["multilingual"][:30_000] + samples()["code"][:30_000]
    cuts = list(range(0, len(text), 997)) + list(range(5, len(text), 1499))
    assert_streams_like_encode(real_encoding, text, cuts, disallowed_special=())


def test_word_lists_in_scripts_with_final_marks_are_cut() -> None:
    """Words ending in a combining mark, one per line, LF or CRLF: held text stays one line."""
    for enc in named_encodings():
        for text in ["नमस्ते\n" * 500, "नमस्ते\r\n" * 500, "ދިވެހި\n" * 500]:
            stream = enc.stream_encoder()
            held = []
            ids: list[int] = []
            for start in range(0, len(text), 7):
                ids += stream.feed(text[start : start + 7])
                held.append(stream.pending)
            assert ids + stream.close() == enc.encode(text)
            crlf_kept_whole = enc.pat_str == GPT2_PATTERN and "\r" in text
            assert crlf_kept_whole or max(held) < 30, (enc.name, text[:8], max(held))


def test_held_text_stays_small_on_real_text() -> None:
    text = "".join(samples().values())
    stream = cl100k().stream_encoder(allowed_special="all")
    held = []
    for start in range(0, len(text), 4096):
        stream.feed(text[start : start + 4096])
        held.append(stream.pending)
    assert max(held) < 200 and stream.close()


@pytest.mark.parametrize("text", ["a" * 6_000, " " * 6_000, " " * 6_000 + "x", "\n" * 6_000])
def test_one_huge_piece_fed_in_small_chunks(text: str) -> None:
    enc = cl100k()
    assert streamed(enc, chunked(text, list(range(0, len(text), 500)))) == enc.encode(text)


@fast
@given(text=st.lists(st.sampled_from(SURROGATES), max_size=20).map("".join), cuts=cuts)
def test_surrogates_as_encode(text: str, cuts: list[int]) -> None:
    """Lone surrogates become U+FFFD, pairs their character (here emoji, 𝐀 and the digit 𝟎)."""
    assert_streams_like_encode(cl100k(), text, cuts)


# ---------------------------------------------------------------------- special-token policy


def test_disallowed_special_token_split_across_feeds_raises() -> None:
    stream = cl100k().stream_encoder()
    assert stream.feed("hello <|endof") == [15339]
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        stream.feed("text|> more")


def test_disallowed_special_token_in_one_char_feeds_raises() -> None:
    stream = cl100k().stream_encoder(allowed_special={"<|endofprompt|>"})
    with pytest.raises(ValueError, match="disallowed"):
        for char in "a <|endofprompt|> b <|endoftext|>":
            stream.feed(char)
        stream.close()


# ---------------------------------------------------------------------- sources and errors


def test_iter_encode_sources(tmp_path: pathlib.Path) -> None:
    enc = cl100k()
    text = TRICKY * 5
    expected = enc.encode(text)
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    data = text.encode()
    sources = [
        text,
        path,
        data,
        io.BytesIO(data),
        io.StringIO(text),
        [text[:7], text[7:50], text[50:]],
        [data[i : i + 3] for i in range(0, len(data), 3)],  # characters split across chunks
    ]
    for source in sources:
        assert list(enc.iter_encode(source)) == expected, type(source)
    assert [i for ids in enc.iter_encode_chunks(data) for i in ids] == expected
    assert enc.count_tokens(path) == len(expected)
    assert enc.encode_file(str(path)) == expected


def test_invalid_utf8_strict_names_the_byte_offset() -> None:
    enc = cl100k()
    data = b"good text " * 1000 + b"\xff rest"
    chunks = [data[i : i + 333] for i in range(0, len(data), 333)]
    with pytest.raises(InvalidUTF8Error, match="byte offset 10000") as info:
        list(enc.iter_encode(chunks))
    assert info.value.offset == 10_000
    with pytest.raises(InvalidUTF8Error, match="byte offset 3"):
        list(enc.iter_encode([b"ab", b"c\xe2\x82", b"x"]))
    with pytest.raises(InvalidUTF8Error, match="byte offset 1"):
        list(enc.iter_encode(b"a\xe2\x82"))  # truncated at the end


@fast
@given(data=st.binary(max_size=60), cuts=cuts)
def test_replace_and_lossless_modes(data: bytes, cuts: list[int]) -> None:
    enc = cl100k()
    chunks = chunked(data, cuts)
    policy = {"disallowed_special": ()}
    replaced = list(enc.iter_encode(chunks, errors="replace", **policy))  # type: ignore[arg-type]
    assert replaced == enc.encode(data.decode("utf-8", "replace"), **policy)  # type: ignore[arg-type]
    lossless = list(enc.iter_encode(chunks, errors="surrogateescape", **policy))  # type: ignore[arg-type]
    assert lossless == enc.encode_bytes(data)
    assert enc.decode_bytes(lossless) == data


def test_jobs_give_the_same_ids(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamcodec.stream import parallel

    monkeypatch.setattr(parallel, "PART_BYTES", 3_000)
    enc = cl100k()
    text = (samples()["multilingual"][:20_000] + "<|endoftext|>" + TRICKY) * 3
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    policy = {"allowed_special": "all"}
    expected = enc.encode(text, **policy)  # type: ignore[arg-type]
    assert enc.encode_file(path, jobs=2, **policy) == expected  # type: ignore[arg-type]
    assert enc.count_tokens(path, jobs=2, **policy) == len(expected)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="disallowed"):
        enc.count_tokens(path, jobs=2)
    path.write_bytes(b"ok " * 20_000 + b"\xc0" + text.encode())
    with pytest.raises(InvalidUTF8Error, match="byte offset 60000"):
        enc.encode_file(path, jobs=2, **policy)  # type: ignore[arg-type]


def test_jobs_with_a_pattern_without_proof_run_in_one_process(tmp_path: pathlib.Path) -> None:
    enc = with_pattern("words", OTHER_PATTERNS["words"])
    path = tmp_path / "t.txt"
    path.write_text(TRICKY * 50, encoding="utf-8")
    assert enc.encode_file(path, jobs=2) == enc.encode(TRICKY * 50)
    with pytest.raises(ValueError, match="needs a file path"):
        enc.count_tokens(TRICKY, jobs=2)


def test_progress_counts_every_byte(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text(TRICKY * 50_000, encoding="utf-8")  # several blocks
    seen: list[int] = []
    for jobs in (1, 2):
        seen.clear()
        ids = cl100k().iter_encode_chunks(path, jobs=jobs, progress=seen.append)
        assert sum(map(len, ids)) > 0
        assert sum(seen) == path.stat().st_size and len(seen) > 1


def test_split_points_avoid_special_tokens(tmp_path: pathlib.Path) -> None:
    from streamcodec.stream.parallel import split_points

    enc = with_pattern("spaced", GPT2_PATTERN)
    enc._special_tokens = {"a b": 100_276}  # a special token with a space inside
    path = tmp_path / "t.txt"
    path.write_bytes(b"xa b." * 2000)  # safe cuts: before " " (inside "a b") and before "."
    points = list(split_points(path, enc, part_bytes=100))
    assert len(points) > 10 and all(p % 5 == 4 for p in points[1:-1])


# ---------------------------------------------------------------------- decoding


@fast
@given(text=st.text(max_size=40), sizes=st.lists(st.integers(0, 4), max_size=20))
def test_stream_decoder_equals_decode(text: str, sizes: list[int]) -> None:
    enc = cl100k()
    ids = enc.encode(text, disallowed_special=())
    ids += [100, 1, 128, 5, 9468]  # some stray bytes and a partial character
    for errors in ("replace", "surrogateescape"):
        stream = enc.stream_decoder(errors=errors)
        out, start = [], 0
        for size in [*sizes, len(ids)]:
            out.append(stream.feed(ids[start : start + size]))
            start += size
        out.append(stream.close())
        assert "".join(out) == enc.decode(ids, errors=errors)


def test_stream_decoder_waits_for_the_last_byte_and_strict_raises() -> None:
    enc = cl100k()
    ids = enc.encode_bytes("😀".encode())
    assert len(ids) > 1
    stream = enc.stream_decoder(errors="strict")
    assert [stream.feed([i]) for i in ids] == [""] * (len(ids) - 1) + ["😀"]
    stream.feed(ids[:1])
    with pytest.raises(UnicodeDecodeError):
        stream.close()


def test_registered_encodings_pickle_by_name_and_others_whole() -> None:
    """Workers get the encoding pickled: a registered one as the call that returns it."""
    enc = cl100k()
    data = pickle.dumps(enc)
    assert len(data) < 200
    assert pickle.loads(data) is enc
    twin = Encoding(
        "cl100k_base",
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )
    copy = pickle.loads(pickle.dumps(twin))
    assert copy is not enc and copy.encode("hello world") == enc.encode("hello world")


def test_a_python_backend_encoding_searches_its_cuts_in_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (issue 22 §6): ``Encoding(backend="python")`` still got the C safe-cut
    search, because stream/cuts.py asked for the native scanner directly."""
    from streamcodec.text import native

    cl100k = streamcodec.get_encoding("cl100k_base")
    enc = streamcodec.Encoding(
        "pure",
        pat_str=cl100k.pat_str,
        mergeable_ranks=cl100k.mergeable_ranks,
        special_tokens=cl100k.special_tokens,
        backend="python",
    )

    def refuse(*args: object) -> None:
        raise AssertionError("the native safe-cut search was used")

    monkeypatch.setattr(native.NativeScanner, "last_cut", refuse, raising=False)
    stream = enc.stream_encoder()
    text = "Hello world, and again. " * 50
    ids = [i for part in (text[:500], text[500:]) for i in stream.feed(part)] + stream.close()
    assert ids == cl100k.encode(text)
