"""Hugging Face ``tokenizer.json`` with a byte-level BPE model: vocab, merges, specials, pattern.

The parts streamcodec reads and writes:

- ``model.vocab``: token (in GPT-2's byte alphabet, see :mod:`~streamcodec.formats.gpt2`) -> id;
- ``model.merges``: ``"left right"`` strings or ``["left", "right"]`` pairs, in priority order;
- ``model.ignore_merges``: Hugging Face's name for tiktoken's whole-piece rule;
- ``added_tokens``: become special tokens;
- ``pre_tokenizer``: a ``Split`` regex (in Oniguruma's dialect, see
  :mod:`~streamcodec.formats.oniguruma`) followed by ``ByteLevel``; or ``ByteLevel`` alone, whose
  built-in regex is GPT-2's, alone or after ``Digits(individual_digits=True)`` (StarCoder 2,
  SmolLM: :data:`~streamcodec.text.known_patterns.DIGITS_GPT2_PATTERN`). Text between
  ``Split``'s matches is kept as pieces, as Hugging Face keeps it (:func:`with_gaps`); a Sequence
  of several Splits is read when :mod:`~streamcodec.formats.hf_sequences` knows it (DeepSeek V3).

A tiktoken rank is both the id and the merge priority, so a file is accepted only when its ids
follow its merge order. Tokens that Hugging Face would output where streamcodec would not (or
back) are refused unless the caller accepts the difference (``allow_unreachable=True``): with
``ignore_merges`` false, Hugging Face never outputs a token its merges do not build, while
streamcodec always applies the whole-piece rule; and a token no merge builds, though it is two
tokens joined, is one streamcodec merges into and Hugging Face does not. docs/formats.md has
the details.

The writer lists every split of every token into two tokens as a merge, ordered by the token's
rank, and sets ``ignore_merges``: Hugging Face then merges any adjacent pair whose concatenation
is a token, at that token's priority, as tiktoken does.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b" a": 256}
    >>> doc = huggingface_json(Vocabulary(ranks, {"<|end|>": 257}, r"\\s?\\w+"))
    >>> doc["model"]["merges"], doc["added_tokens"][0]["content"]
    (['Ġ a'], '<|end|>')
    >>> parse_huggingface(json.dumps(doc).encode()).mergeable_ranks == ranks
    True
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Mapping
from typing import Any

from streamcodec.atomicfile import atomic_output
from streamcodec.formats.gpt2 import token_to_unicode, unicode_to_token, unicode_to_tokens
from streamcodec.formats.hf_parts import (
    Reader,
    added_tokens,
    check_normalizer,
    post_processor,
    refuse_call_options,
    shown,
)
from streamcodec.formats.hf_pre import pre_tokenizer_pattern
from streamcodec.formats.jsondoc import is_id, parse_json
from streamcodec.formats.merges import splits, unreachable_tokens
from streamcodec.formats.oniguruma import to_oniguruma
from streamcodec.vocab import (
    ModelRules,
    Vocabulary,
    VocabularyError,
    check_vocabulary,
)

__all__ = [
    "added_token",
    "bpe_model",
    "huggingface_json",
    "parse_huggingface",
    "read_huggingface",
    "vocabulary_from_document",
    "write_huggingface",
]


def parse_huggingface(
    data: bytes,
    *,
    source: str = "<bytes>",
    allow_unreachable: bool = False,
) -> Vocabulary:
    """Parse ``tokenizer.json`` content; errors name ``source`` and the JSON path."""
    return vocabulary_from_document(
        parse_json(data, source=source), source=source, allow_unreachable=allow_unreachable
    )


def vocabulary_from_document(
    doc: object, *, source: str, allow_unreachable: bool = False
) -> Vocabulary:
    """:func:`parse_huggingface` of the parsed JSON document ``doc``."""
    reader = Reader(source)
    if not isinstance(doc, dict):
        raise reader.fail("(top level)", "expected a JSON object")
    model = reader.get(doc, "model", dict, "model")
    _check_model_options(reader, model)
    refuse_call_options(reader, doc)
    normalizer = check_normalizer(reader, doc.get("normalizer"))
    pattern = pre_tokenizer_pattern(reader, doc.get("pre_tokenizer"), "pre_tokenizer")
    specials, added = added_tokens(reader, doc.get("added_tokens") or [])
    vocab = reader.get(model, "vocab", dict, "model.vocab")
    ranks = _ranks(reader, vocab, specials | added)
    built = _check_merge_order(reader, model.get("merges") or [], vocab)
    check_vocabulary(ranks, specials | added, source=f"{source}: model.vocab", all_bytes=False)
    if not allow_unreachable:
        _refuse_differences(reader, ranks, built, ignore_merges=model.get("ignore_merges", False))
    ends = post_processor(reader, doc.get("post_processor"), specials)
    rules = ModelRules(added_tokens=added, normalizer=normalizer, **ends)
    return Vocabulary(ranks, specials, pattern, rules=rules)


def _check_model_options(reader: Reader, model: Mapping[str, Any]) -> None:
    if model.get("type", "BPE") != "BPE":
        raise reader.fail("model.type", f"{model.get('type')!r} is not a BPE model")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise reader.fail(f"model.{key}", "byte-level BPE as tiktoken does it has none")
    if model.get("dropout"):
        raise reader.fail("model.dropout", "dropout makes encoding random; unsupported")


def _ranks(
    reader: Reader, vocab: Mapping[str, Any], specials: Mapping[str, int]
) -> dict[bytes, int]:
    """Token bytes -> id from ``model.vocab``, leaving out the entries of added tokens."""
    special_ids = {i: text for text, i in specials.items()}
    ids = list(vocab.values())
    # The common case, well-formed, in bulk; anything odd is diagnosed entry by entry.
    if all(type(i) is int and i >= 0 for i in ids) and len(set(ids)) == len(ids):
        plain = [key for key, i in vocab.items() if i not in special_ids]
        with contextlib.suppress(ValueError):  # a key outside the byte alphabet: one by one
            tokens = unicode_to_tokens(plain)
            for key, i in vocab.items():
                if i in special_ids:
                    _check_special_entry(reader, f"model.vocab[{key!r}]", key, i, special_ids[i])
            return dict(zip(tokens, (vocab[key] for key in plain), strict=True))
    return _diagnose_ranks(reader, vocab, special_ids)


def _diagnose_ranks(
    reader: Reader, vocab: Mapping[str, Any], special_ids: Mapping[int, str]
) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    holder: dict[int, str] = {}
    for key, token_id in vocab.items():
        path = f"model.vocab[{key!r}]"
        if not is_id(token_id):
            raise reader.fail(path, f"expected an id (an int >= 0), got {shown(token_id)}")
        if token_id in holder:
            raise reader.fail(path, f"id {token_id} is already model.vocab[{holder[token_id]!r}]")
        holder[token_id] = key
        if token_id in special_ids:
            _check_special_entry(reader, path, key, token_id, special_ids[token_id])
            continue
        try:
            ranks[unicode_to_token(key)] = token_id
        except ValueError:
            continue  # outside the byte alphabet: no text's bytes are written so (as in HF)
    return ranks


def _check_special_entry(reader: Reader, path: str, key: str, vocab_id: int, special: str) -> None:
    """An added token may also be in ``model.vocab``, as its text or in the byte alphabet."""
    if key == special:
        return
    try:
        if unicode_to_token(key) == special.encode("utf-8"):
            return
    except ValueError:
        pass
    raise reader.fail(
        path, f"id {vocab_id} is special token {special!r} (added_tokens), not this token"
    )


def _check_merge_order(reader: Reader, merges: object, vocab: Mapping[str, int]) -> set[str]:
    """Check that ids follow merge order; return the tokens the merges build."""
    if not isinstance(merges, list):
        raise reader.fail("model.merges", f"expected a JSON array, got {shown(merges)}")
    # The common case, well-formed, in bulk; anything odd is diagnosed merge by merge.
    with contextlib.suppress(ValueError, KeyError, TypeError):
        pairs = [merge.split(" ") if isinstance(merge, str) else merge for merge in merges]
        built = [left + right for left, right in pairs]
        ids = [vocab[token] for token in built]
        parts = {part for pair in pairs for part in pair}
        if parts <= vocab.keys() and all(a <= b for a, b in itertools.pairwise(ids)):
            return set(built)
    return _diagnose_merges(reader, merges, vocab)


def _diagnose_merges(reader: Reader, merges: list[Any], vocab: Mapping[str, int]) -> set[str]:
    built: set[str] = set()
    previous = (-1, "")  # (id, path) of the last merge's token
    for index, merge in enumerate(merges):
        path = f"model.merges[{index}]"
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not (
            isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts)
        ):
            raise reader.fail(
                path, f'expected "left right" or ["left", "right"], got {shown(merge)}'
            )
        for part in parts:
            if part not in vocab:
                raise reader.fail(path, f"{part!r} is not in model.vocab")
        token = parts[0] + parts[1]
        token_id = vocab.get(token)
        if token_id is None:
            raise reader.fail(path, f"it builds {token!r}, which is not in model.vocab")
        if token_id < previous[0]:
            raise reader.fail(
                path,
                f"it builds {token!r} (id {token_id}) after {previous[1]} built id {previous[0]}; "
                "a tiktoken rank is both the id and the merge priority, so ids must follow "
                "merge order",
            )
        previous = (token_id, path)
        built.add(token)
    return built


def _refuse_differences(
    reader: Reader, ranks: Mapping[bytes, int], built: set[str], *, ignore_merges: bool
) -> None:
    """Refuse tokens that Hugging Face would output where streamcodec would not, or back."""
    never_built = [t for t in ranks if len(t) > 1 and token_to_unicode(t) not in built]
    if ignore_merges:
        joined = [t for t in never_built if splits(t, ranks)]
        if joined:
            raise reader.fail(
                "model.merges",
                f"no merge builds {_some_tokens(joined)}, though each is two tokens joined: "
                "Hugging Face outputs such a token only as a whole piece, while streamcodec, "
                "like tiktoken, also merges the two tokens into it. "
                "Pass allow_unreachable=True to accept that",
            )
        return
    unreachable = list(dict.fromkeys(never_built + unreachable_tokens(ranks)))
    if unreachable:
        raise reader.fail(
            "model.ignore_merges",
            f"is false, but merging their own bytes does not produce {_some_tokens(unreachable)}: "
            "Hugging Face never outputs such a token, while streamcodec, like tiktoken, does "
            "for a piece equal to it. Pass allow_unreachable=True to accept that",
        )


def _some_tokens(tokens: list[bytes]) -> str:
    shown = ", ".join(f"model.vocab[{token_to_unicode(t)!r}]" for t in tokens[:3])
    return f"{len(tokens)} token(s) ({shown}{', ...' if len(tokens) > 3 else ''})"


def read_huggingface(
    path: str | os.PathLike[str], *, allow_unreachable: bool = False
) -> Vocabulary:
    """Read a byte-level BPE ``tokenizer.json`` (see the module docstring for what is refused)."""
    with open(path, "rb") as f:
        return parse_huggingface(
            f.read(), source=os.fspath(path), allow_unreachable=allow_unreachable
        )


def huggingface_json(vocabulary: Vocabulary) -> dict[str, Any]:
    """The ``tokenizer.json`` document for ``vocabulary``, encoding as streamcodec does."""
    ranks, specials = vocabulary.mergeable_ranks, vocabulary.special_tokens
    check_vocabulary(ranks, specials, source="tokenizer.json output")
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    written = {token: token_to_unicode(token) for token, _ in ordered}
    clash = next((text for text in specials if text in written.values()), None)
    if clash is not None:
        raise VocabularyError(
            f"special token {clash!r} is written like a mergeable token; tokenizer.json "
            "cannot hold both in model.vocab"
        )
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    pre_tokenizer: dict[str, Any] = byte_level | {"use_regex": False}
    if vocabulary.pat_str is not None:
        split = {
            "type": "Split",
            "pattern": {"Regex": to_oniguruma(vocabulary.pat_str)},
            "behavior": "Isolated",
            "invert": False,
        }
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, pre_tokenizer]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            added_token(token_id, text, special=True)
            for text, token_id in sorted(specials.items(), key=lambda item: item[1])
        ],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": byte_level | {"use_regex": True},
        "model": bpe_model(
            # Specials are in the vocab too: Hugging Face renumbers added tokens it cannot find
            # there, which would lose ids after a gap (cl100k_base has none at 100256).
            {written[token]: rank for token, rank in ordered} | specials,
            [f"{written[left]} {written[right]}" for left, right in _all_splits(ordered, ranks)],
            ignore_merges=True,
        ),
    }


def added_token(token_id: int, content: str, *, special: bool) -> dict[str, Any]:
    """An ``added_tokens`` entry as Hugging Face writes it (a special one is not normalized)."""
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": not special,
        "special": special,
    }


def bpe_model(vocab: dict[str, int], merges: list[str], *, ignore_merges: bool) -> dict[str, Any]:
    """A byte-level ``BPE`` model section as Hugging Face writes it."""
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": ignore_merges,
        "vocab": vocab,
        "merges": merges,
    }


def _all_splits(
    ordered: list[tuple[bytes, int]], ranks: Mapping[bytes, int]
) -> list[tuple[bytes, bytes]]:
    """Every (left, right) of two tokens joining into a token: by that token's rank, then the
    parts' ranks (the order Hugging Face's own tiktoken converter uses)."""
    merges: list[tuple[bytes, bytes]] = []
    for token, _ in ordered:
        merges.extend(sorted(splits(token, ranks), key=lambda p: (ranks[p[0]], ranks[p[1]])))
    return merges


def write_huggingface(vocabulary: Vocabulary, path: str | os.PathLike[str]) -> None:
    """Write ``vocabulary`` as a ``tokenizer.json`` that Hugging Face ``tokenizers`` loads."""
    document = huggingface_json(vocabulary)
    with atomic_output(path) as f:
        f.write(json.dumps(document, ensure_ascii=False).encode("utf-8"))
