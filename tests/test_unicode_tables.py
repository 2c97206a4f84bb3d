"""The pre-tokenizer's Unicode tables agree with tiktoken's.

Which characters are letters, numbers or spaces changes between Unicode versions, and with it the
pieces and so the ids. The ``regex`` module must classify every character the way tiktoken's
Rust regex does (Unicode 16.0 in both, with the pinned versions). Characters assigned after
Python's own ``unicodedata`` version are where versions disagree, so all of them are probed, in
contexts where each class changes the cut and therefore the ids.
"""

from __future__ import annotations

import unicodedata

import regex

from streamcodec import Encoding
from tests.conftest import tiktoken_twin

ASSIGNED = regex.compile(r"\P{Cn}")


def _recently_assigned() -> list[str]:
    """Code points unassigned in Python's unicodedata but assigned for ``regex``, plus a sample
    of older ones (every 97th code point)."""
    chars = []
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        new = unicodedata.category(char) == "Cn" and ASSIGNED.match(char)
        if new or code % 97 == 0:
            chars.append(char)
    return chars


def test_character_classes_agree_with_tiktoken(real_encoding: Encoding) -> None:
    theirs = tiktoken_twin(real_encoding)
    chars = _recently_assigned()
    assert len(chars) > 10_000
    # c:A separates symbols from the rest, c1234 numbers, aAc and Ac'll cases and marks.
    probes = [f"{c}:A {c}1234\n{c}\taA{c}b A{c}'ll" for c in chars]
    expected = theirs.encode_ordinary_batch(probes, num_threads=2)
    differing = [
        f"U+{ord(c):04X}"
        for c, probe, ids in zip(chars, probes, expected, strict=True)
        if real_encoding.encode_ordinary(probe) != ids
    ]
    assert not differing, f"{len(differing)} classified unlike tiktoken: {differing[:10]}"
