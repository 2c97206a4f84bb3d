"""minbpe's ``.model`` format: the merges as pairs of ids, in order.

The layout (as ``minbpe.Tokenizer.save`` writes it)::

    minbpe v1
    <pattern, empty for the BasicTokenizer>
    <number of special tokens>
    <special> <id>            (one line per special token)
    <id1> <id2>               (one line per merge, in order)

Byte ``b`` is id ``b``, and the merge on the i-th merge line makes id ``256 + i``: minbpe's ids
are ranks directly. An empty pattern (no pre-tokenization) reads as ``pat_str=None``.

    >>> data = write_minbpe_bytes(Vocabulary({bytes([b]): b for b in range(256)} | {b"ab": 256}))
    >>> data.decode().splitlines()[-1]
    '97 98'
    >>> parse_minbpe(data).mergeable_ranks[b"ab"]
    256
"""

from __future__ import annotations

import os

from streamcodec.atomicfile import atomic_output
from streamcodec.formats.merges import merge_pairs
from streamcodec.vocab import Vocabulary, VocabularyError, check_vocabulary

__all__ = ["parse_minbpe", "read_minbpe", "write_minbpe", "write_minbpe_bytes"]

_VERSION = "minbpe v1"


def parse_minbpe(data: bytes, *, source: str = "<bytes>") -> Vocabulary:
    """Parse ``.model`` content; errors name ``source`` and the line."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{source}: invalid UTF-8 at byte offset {exc.start}") from None
    if lines[0].rstrip("\r") != _VERSION:
        raise VocabularyError(f"{source}:1: expected {_VERSION!r}, got {lines[0][:40]!r}")
    if len(lines) < 3:
        raise VocabularyError(f"{source}:{len(lines)}: the file ends before its special tokens")
    pattern = lines[1].rstrip("\r")
    count = _ints(lines[2], 1, f"{source}:3", "the number of special tokens")[0]
    specials: dict[str, int] = {}
    special_lines: dict[str, int] = {}
    for lineno in range(4, 4 + count):
        where = f"{source}:{lineno}"
        fields = lines[lineno - 1].split() if lineno <= len(lines) else []
        if len(fields) != 2:
            raise VocabularyError(
                f"{where}: expected 'special id' (special {lineno - 3} of {count})"
            )
        text = fields[0]
        if text in specials:
            raise VocabularyError(f"{where}: special token {text!r} appears twice")
        specials[text] = _ints(fields[1], 1, where, "a special token id")[0]
        special_lines[text] = lineno
    vocab = [bytes([b]) for b in range(256)]  # id -> token bytes
    ranks = {token: i for i, token in enumerate(vocab)}
    for lineno, line in enumerate(lines[3 + count :], start=4 + count):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        left, right = _ints(line, 2, where, "a merge 'id1 id2'")
        if max(left, right) >= len(vocab):
            raise VocabularyError(
                f"{where}: merge ({left}, {right}) uses an id not defined yet "
                f"(the next id is {len(vocab)})"
            )
        token = vocab[left] + vocab[right]
        if token in ranks:
            raise VocabularyError(f"{where}: merge builds {token!r}, already id {ranks[token]}")
        ranks[token] = len(vocab)
        vocab.append(token)
    for text, i in specials.items():
        if i < len(vocab):
            raise VocabularyError(
                f"{source}:{special_lines[text]}: special token {text!r} has id {i}, "
                f"which is already the rank of {vocab[i]!r}"
            )
    check_vocabulary(ranks, specials, source=source)
    return Vocabulary(ranks, specials, pattern or None)


def _ints(text: str, count: int, where: str, what: str) -> list[int]:
    fields = text.split()
    if len(fields) != count or not all(field.isdigit() for field in fields):
        raise VocabularyError(f"{where}: expected {what}, got {text[:60]!r}")
    return [int(field) for field in fields]


def read_minbpe(path: str | os.PathLike[str]) -> Vocabulary:
    """Read a minbpe ``.model`` file."""
    with open(path, "rb") as f:
        return parse_minbpe(f.read(), source=os.fspath(path))


def write_minbpe_bytes(vocabulary: Vocabulary) -> bytes:
    """The ``.model`` content; raises :class:`VocabularyError` for what minbpe cannot hold.

    minbpe fixes byte ``b`` at id ``b`` and numbers merges 256, 257, ...; so the ranks must be
    exactly that, every merge's parts must come before it, and special tokens may not contain
    whitespace (the line is split on it).
    """
    ranks, specials = vocabulary.mergeable_ranks, vocabulary.special_tokens
    check_vocabulary(ranks, specials, source="minbpe output")
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    for expected, (token, rank) in enumerate(ordered):
        if rank != expected or (len(token) == 1 and token[0] != rank):
            raise VocabularyError(
                f"minbpe gives byte b the id b and merged tokens 256, 257, ... in order; "
                f"it cannot hold {token!r} at rank {rank}"
            )
    if "\n" in (vocabulary.pat_str or ""):
        raise VocabularyError("minbpe cannot hold a pattern with a line break in it")
    lines = [_VERSION, vocabulary.pat_str or "", str(len(specials))]
    for text, i in specials.items():
        if not text or len(text.split()) != 1 or text.strip() != text:
            raise VocabularyError(f"minbpe cannot hold special token {text!r}: it has whitespace")
        lines.append(f"{text} {i}")
    for token, (left, right) in merge_pairs(ranks, source="minbpe output").items():
        if max(ranks[left], ranks[right]) > ranks[token]:
            raise VocabularyError(
                f"minbpe needs a merge's parts before it: {token!r} (rank {ranks[token]}) is "
                f"built from {left!r} and {right!r} (ranks {ranks[left]}, {ranks[right]})"
            )
        lines.append(f"{ranks[left]} {ranks[right]}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_minbpe(vocabulary: Vocabulary, path: str | os.PathLike[str]) -> None:
    """Write ``vocabulary`` to ``path`` atomically."""
    with atomic_output(path) as f:
        f.write(write_minbpe_bytes(vocabulary))
