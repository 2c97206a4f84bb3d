"""GPT-2's vocabulary files: ``encoder.json`` (token -> id) and ``vocab.bpe`` (the merges).

GPT-2 writes token bytes as text through a byte-to-unicode map: the 188 printable bytes stand for
themselves, the other 68 (space, control characters, ...) become U+0100 and up, so a space is
``Ġ``. ``vocab.bpe`` has a ``#version`` header and then one merge per line, ``left right``.
As tiktoken reads the pair, merges in order become ranks after the 256 single bytes: the first
merge is rank 256, the next 257, and so on; ``encoder.json`` must give every token that same id.
Its other entries (GPT-2 has one, ``<|endoftext|>``) are special tokens.

    >>> token_to_unicode(b" the")
    'Ġthe'
    >>> unicode_to_token("Ġthe")
    b' the'
"""

from __future__ import annotations

import json
import os

from streamcodec.atomicfile import atomic_output
from streamcodec.formats.jsondoc import check_unique, is_id, parse_json
from streamcodec.formats.merges import merge_pairs
from streamcodec.text.byte_alphabet import (
    BYTE_TO_UNICODE,
    token_to_unicode,
    unicode_to_token,
    unicode_to_tokens,
)
from streamcodec.vocab import Vocabulary, VocabularyError, check_vocabulary

__all__ = [
    "BYTE_TO_UNICODE",
    "parse_gpt2",
    "read_gpt2",
    "token_to_unicode",
    "unicode_to_token",
    "unicode_to_tokens",
    "write_gpt2",
]

_VERSION = "#version: 0.2"


def read_gpt2(
    encoder_json: str | os.PathLike[str], vocab_bpe: str | os.PathLike[str]
) -> Vocabulary:
    """Read GPT-2's two files; ids must agree with the merge order (errors say where not)."""
    with open(encoder_json, "rb") as f:
        encoder_data = f.read()
    with open(vocab_bpe, "rb") as f:
        merges_data = f.read()
    return parse_gpt2(
        encoder_data,
        merges_data,
        encoder_source=os.fspath(encoder_json),
        merges_source=os.fspath(vocab_bpe),
    )


def parse_gpt2(
    encoder_json: bytes, vocab_bpe: bytes, *, encoder_source: str, merges_source: str
) -> Vocabulary:
    """:func:`read_gpt2` of the files' contents; errors name the ``*_source`` given."""
    enc_src, bpe_src = encoder_source, merges_source
    encoder = _parse_encoder(encoder_json, enc_src)
    merges = _parse_merges(vocab_bpe, bpe_src)
    ranks: dict[bytes, int] = {}
    for b in range(256):
        if bytes([b]) not in encoder:
            raise VocabularyError(
                f"{enc_src}: single byte 0x{b:02x} (written {BYTE_TO_UNICODE[b]!r}) is missing; "
                "byte-level BPE needs all 256"
            )
        ranks[bytes([b])] = encoder[bytes([b])]
    built_on: dict[bytes, int] = {}  # token -> line of vocab.bpe that builds it
    for rank, (lineno, token) in enumerate(merges, start=256):
        where = f"{bpe_src}:{lineno}"
        if token in ranks:
            first = f"line {built_on[token]}" if token in built_on else "a single byte"
            raise VocabularyError(f"{where}: this merge builds {token!r}, already built by {first}")
        if token not in encoder:
            shown = token_to_unicode(token)
            raise VocabularyError(f"{where}: this merge builds {shown!r}, absent from {enc_src}")
        if encoder[token] != rank:
            raise VocabularyError(
                f"{enc_src}: {token_to_unicode(token)!r} has id {encoder[token]}, but the merge "
                f"on {where} makes it rank {rank} (merges in order become ranks 256, 257, ...)"
            )
        ranks[token] = rank
        built_on[token] = lineno
    specials = {
        _special_text(token, enc_src): i for token, i in encoder.items() if token not in ranks
    }
    check_vocabulary(ranks, specials, source=enc_src)
    return Vocabulary(ranks, specials)


def _parse_encoder(data: bytes, source: str) -> dict[bytes, int]:
    doc = parse_json(data, source=source)
    if not isinstance(doc, dict):
        raise VocabularyError(f"{source}: expected a JSON object of token -> id")
    check_unique(doc, source=source, path="")
    encoder: dict[bytes, int] = {}
    holder: dict[int, str] = {}
    for key, value in doc.items():
        if not is_id(value):
            raise VocabularyError(f"{source}: [{key!r}] is {value!r}, not an id (an int >= 0)")
        if value in holder:
            raise VocabularyError(
                f"{source}: id {value} is given to both {holder[value]!r} and {key!r}"
            )
        holder[value] = key
        try:
            encoder[unicode_to_token(key)] = value
        except ValueError as exc:
            raise VocabularyError(f"{source}: [{key!r}]: {exc}") from None
    return encoder


def _parse_merges(data: bytes, source: str) -> list[tuple[int, bytes]]:
    """(line number, merged token) for each merge line of ``vocab.bpe``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{source}: invalid UTF-8 at byte offset {exc.start}") from None
    merges = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if (lineno == 1 and line.startswith("#version")) or not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise VocabularyError(
                f"{source}:{lineno}: expected two tokens separated by a space, got {line[:60]!r}"
            )
        try:
            merges.append((lineno, unicode_to_token(fields[0] + fields[1])))
        except ValueError as exc:
            raise VocabularyError(f"{source}:{lineno}: {exc}") from None
    return merges


def _special_text(token: bytes, source: str) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        raise VocabularyError(
            f"{source}: {token_to_unicode(token)!r} is neither a single byte nor built by a "
            "merge, and as a special token it is not valid UTF-8"
        ) from None


def write_gpt2(
    vocabulary: Vocabulary,
    encoder_json: str | os.PathLike[str],
    vocab_bpe: str | os.PathLike[str],
) -> None:
    """Write ``encoder.json`` and ``vocab.bpe``; each merge is the pair its token is built from.

    The format numbers the single bytes 0-255 and merged tokens 256, 257, ... in merge order, so
    the ranks must be exactly that; anything else raises :class:`VocabularyError`. The pattern
    is not stored (GPT-2's code has its own). Missing folders are created.
    """
    ranks, specials = vocabulary.mergeable_ranks, vocabulary.special_tokens
    check_vocabulary(ranks, specials, source="GPT-2 output")
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    for expected, (token, rank) in enumerate(ordered):
        if rank != expected or (len(token) == 1) != (rank < 256):
            raise VocabularyError(
                f"GPT-2's format numbers single bytes 0-255 and merged tokens 256, 257, ... in "
                f"merge order; it cannot hold {token!r} at rank {rank}"
            )
    encoder = {token_to_unicode(token): rank for token, rank in ordered}
    for text, i in specials.items():
        key = token_to_unicode(text.encode("utf-8"))
        if key in encoder:
            raise VocabularyError(
                f"special token {text!r} has the same text as a mergeable token; "
                "GPT-2's encoder.json cannot hold both"
            )
        encoder[key] = i
    pairs = merge_pairs(ranks, source="GPT-2 output")
    lines = (
        f"{token_to_unicode(left)} {token_to_unicode(right)}\n" for left, right in pairs.values()
    )
    for path in (encoder_json, vocab_bpe):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_output(encoder_json) as f:
        f.write(json.dumps(encoder, ensure_ascii=False).encode("utf-8"))
    with atomic_output(vocab_bpe) as f:
        f.write((_VERSION + "\n" + "".join(lines)).encode("utf-8"))
