"""The batch pass's UTF-8 documents (bytes, pyarrow, flat): each read as ``bytes.decode("utf-8",
errors)`` reads it, whatever lies where.

The native pass decodes a document that is not all ASCII straight into the narrowest kind its
greatest byte allows, ASCII 16 bytes at a time (engine/_fused_decode.h): every sequence, valid or
not, is put before, across and after each block boundary, in documents that need each kind
(Latin-1, BMP, astral), that must be decoded again wider (Latin-1 with an invalid byte) or
narrowed after (only invalid bytes from F0 on), under each ``errors`` mode. The reference:
tiktoken's ``encode_ordinary`` of ``bytes.decode``; ``encode_bytes`` for "surrogateescape".
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcodec import Encoding
from streamcodec.text.unicode import InvalidUTF8Error
from tests.test_batch import _valid, split

# One sequence each: Latin-1, past Latin-1, BMP, astral; then invalid: a lone continuation, a
# bad start byte, truncated 3- and 4-byte sequences, an encoded surrogate, an overlong form, a
# byte past F4, and F0 followed by a byte it does not admit.
SEQUENCES = [b"\xc3\xa9", b"\xc4\x80", "你".encode(), "🦙".encode(), b"\x80", b"\xff", b"\xe4\xbd",
             b"\xf0\x9f\xa6", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf5", b"\xf0\x80"]  # fmt: skip
# Runs of ASCII long enough to cross one and two 16-byte blocks, at every offset within them.
ASCII = "The quick brown fox jumps over the lazy dog; 0123456789."
ERRORS = ("replace", "surrogateescape")


def _want(enc: Any, data: bytes, errors: str) -> list[int]:
    if errors == "surrogateescape":
        return list(enc.encode_bytes(data))
    return list(enc.encode_ordinary(data.decode("utf-8", errors)))


def _check(enc: Encoding, ref: Any, docs: list[bytes]) -> None:
    """Every mode on the whole batch (one thread and three), and strict on each document."""
    for errors in ERRORS:
        want = [_want(ref if errors == "replace" else enc, data, errors) for data in docs]
        for threads in (1, 3):
            got = enc.encode_ordinary_batch_to_numpy(docs, num_threads=threads, errors=errors)
            assert split(*got) == want, errors
        counts = enc.count_tokens_batch(docs, num_threads=1, errors=errors)
        assert counts.tolist() == list(map(len, want))
    valid = [data for data in docs if _valid(data)]
    want = [ref.encode_ordinary(data.decode()) for data in valid]
    assert split(*enc.encode_ordinary_batch_to_numpy(valid, num_threads=1)) == want
    for data in docs:
        if _valid(data):
            continue
        try:
            data.decode()
        except UnicodeDecodeError as exc:
            where = f"texts[0]: invalid UTF-8 at byte offset {exc.start} ({exc.reason})"
        with pytest.raises(InvalidUTF8Error) as raised:
            enc.count_tokens_batch([data], num_threads=1)
        assert str(raised.value).startswith(where)


def test_each_sequence_at_each_block_offset(real_pair: Any) -> None:
    enc, ref = real_pair
    docs = []
    for sequence in SEQUENCES:
        for before in range(0, 36):
            for after in (0, 1, 15, 16, 17, 40):
                docs.append(ASCII[:before].encode() + sequence + ASCII[:after].encode())
    _check(enc, ref, docs)


def test_kinds_decoded_wider_and_narrowed(real_pair: Any) -> None:
    enc, ref = real_pair
    latin = "déjà vu, café ".encode() * 3
    docs = [
        latin,  # Latin-1 alone: the narrowest kind
        latin + b"\xff" + latin,  # Latin-1 and an invalid byte: U+FFFD or U+DCFF, wider
        b"\x80" + latin,  # the invalid byte first
        latin + b"\xc3",  # Latin-1 cut short at the end
        b"plain " * 5 + b"\xf0\x80" + latin,  # F0 only invalid: kind 4 narrowed to 2 (or 1)
        b"\xf5\xf6\xf7\xff",  # only bytes past F4
        b"\xf0\x9f\xa6\x99" + latin,  # astral and Latin-1
        "Ā你".encode() + b"\xed\xa0\x80" + latin,  # BMP, a surrogate's bytes, Latin-1
        b"\xc2\x80\xc3\xbf",  # U+0080 and U+00FF: Latin-1's ends
    ]
    _check(enc, ref, docs)


PARTS = st.one_of(
    st.sampled_from(SEQUENCES),
    st.integers(0, 40).map(lambda n: ASCII[:n].encode()),
    st.text(max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=6),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(st.lists(PARTS, max_size=12).map(b"".join), min_size=1, max_size=6))
def test_random_documents_read_as_bytes_decode_reads_them(
    real_pair: Any, batch: list[bytes]
) -> None:
    enc, ref = real_pair
    _check(enc, ref, batch)
