"""Vocabularies: mergeable ranks, special tokens, pre-tokenizer patterns, and their validation.

A byte-level BPE vocabulary has three parts:

- ``mergeable_ranks``: token bytes -> rank. The rank is the token id and the merge priority.
- ``special_tokens``: text such as ``"<|endoftext|>"`` -> id. Special tokens never take part in
  merges and are only produced when the caller allows them.
- a pre-tokenizer pattern that cuts text into pieces before any merging.

    >>> check_vocabulary({bytes([b]): b for b in range(256)}, {"<|end|>": 256})
    >>> PATTERNS["cl100k_base"] == CL100K_PATTERN
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = [
    "BYTE_MODE_PATTERN",
    "CL100K_PATTERN",
    "GPT2_PATTERN",
    "MAX_RANK",
    "O200K_PATTERN",
    "PATTERNS",
    "ModelRules",
    "Vocabulary",
    "VocabularyError",
    "check_vocabulary",
    "resolve_pattern",
]

# The same strings as tiktoken's (tiktoken_ext/openai_public.py), so ids agree exactly.
GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# No pre-tokenization (minbpe's BasicTokenizer): the whole text, newlines included, is one piece,
# so merges may cross spaces and lines. Its name is "bytes" (see resolve_pattern), but it is
# deliberately not in PATTERNS: the trainer's and the stream's line-based safe cuts assume the
# named patterns there; byte mode has its own (streamcodec.pieces.bytemode).
BYTE_MODE_PATTERN = r"(?s).+"

PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k_base": GPT2_PATTERN,
    "p50k_base": GPT2_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
}


class VocabularyError(ValueError):
    """A vocabulary is malformed. The message names the source (file and line, or JSON path)."""


class _RulesFields(NamedTuple):
    """:class:`ModelRules`' fields, in order (its constructor gives their defaults)."""

    added_tokens: dict[str, int]
    normalizer: str | None
    bos_token: str | None
    eos_token: str | None
    add_bos: bool
    add_eos: bool


class ModelRules(_RulesFields):
    """An open model's rules beyond tiktoken's, an :class:`~streamcodec.Encoding`'s ``rules``:
    its ordinary-text ``added_tokens`` and ``normalizer`` (:mod:`streamcodec.engine.model`),
    its BOS and EOS special tokens (text, or None) and whether its post-processor puts each
    around a text (a ``tokenizer.json``'s ``TemplateProcessing``, a GGUF's
    ``add_bos_token``): what Hugging Face's ``add_special_tokens=True`` adds (:meth:`wrap`),
    and what the corpus tool's ``--bos``/``--eos`` may take.

    A named tuple (a dataclass costs a command's start), whose ``added_tokens`` is a dict of
    its own when none is given: a default of one shared dict carried what a caller added to one
    into every later one."""

    __slots__ = ()

    def __new__(
        cls,
        added_tokens: dict[str, int] | None = None,
        normalizer: str | None = None,
        bos_token: str | None = None,
        eos_token: str | None = None,
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> ModelRules:
        added = {} if added_tokens is None else added_tokens
        return super().__new__(cls, added, normalizer, bos_token, eos_token, add_bos, add_eos)

    def check(self, special_tokens: Mapping[str, int], name: str) -> None:
        """``ValueError`` unless each token named is a special token, and each added one named."""
        for flag, token in (("bos_token", self.bos_token), ("eos_token", self.eos_token)):
            if token is not None and token not in special_tokens:
                raise ValueError(f"encoding {name!r}: {flag} {token!r} is no special token")
        if (self.add_bos and self.bos_token is None) or (self.add_eos and self.eos_token is None):
            raise ValueError(f"encoding {name!r}: add_bos/add_eos need bos_token/eos_token")
        clash = next((text for text in self.added_tokens if text in special_tokens), None)
        if clash is not None:
            raise ValueError(f"encoding {name!r}: {clash!r} is both special and an added token")

    def wrap(self, ids: list[int], special_tokens: Mapping[str, int]) -> list[int]:
        """``ids`` with BOS before and EOS after, where they are added."""
        bos = [special_tokens[self.bos_token]] if self.add_bos and self.bos_token else []
        eos = [special_tokens[self.eos_token]] if self.add_eos and self.eos_token else []
        return bos + ids + eos


class _VocabularyFields(NamedTuple):
    """:class:`Vocabulary`'s fields, in order (its constructor gives their defaults)."""

    mergeable_ranks: dict[bytes, int]
    special_tokens: dict[str, int]
    pat_str: str | None
    #: An open model's tokenizer beyond tiktoken's (``tokenizer.json``, GGUF).
    rules: ModelRules


class Vocabulary(_VocabularyFields):
    """What a vocabulary file holds: ranks, special tokens, and the pattern if the file has one.

    ``pat_str`` is ``None`` when the format does not store a pattern (``.tiktoken``, GPT-2's
    files): the caller chooses one, e.g. ``PATTERNS["gpt2"]``. A named tuple, whose
    ``special_tokens`` and ``rules`` are its own when none are given (as :class:`ModelRules`).

        >>> Vocabulary({bytes([b]): b for b in range(256)}).special_tokens
        {}
    """

    __slots__ = ()

    def __new__(
        cls,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int] | None = None,
        pat_str: str | None = None,
        rules: ModelRules | None = None,
    ) -> Vocabulary:
        specials = {} if special_tokens is None else special_tokens
        own = ModelRules() if rules is None else rules
        return super().__new__(cls, mergeable_ranks, specials, pat_str, own)


def resolve_pattern(name_or_pattern: str) -> str:
    """Return the pattern registered under ``name_or_pattern``, or the string itself.

    >>> resolve_pattern("gpt2") == GPT2_PATTERN
    True
    >>> resolve_pattern(r"\\S+")
    '\\\\S+'

    ``"bytes"`` is :data:`BYTE_MODE_PATTERN`: no pre-tokenization.
    """
    if name_or_pattern == "bytes":
        return BYTE_MODE_PATTERN
    return PATTERNS.get(name_or_pattern, name_or_pattern)


# Ranks are token ids, which tiktoken (and every id format here: u32, npy) holds in 32 bits.
MAX_RANK = 2**32 - 1


def check_vocabulary(
    mergeable_ranks: Mapping[bytes, int],
    special_tokens: Mapping[str, int] | None = None,
    *,
    source: str = "vocabulary",
    all_bytes: bool = True,
) -> None:
    """Raise :class:`VocabularyError` unless the vocabulary is usable for byte-level BPE.

    Checks: every single byte is a token (unless ``all_bytes`` is false: an open model's
    vocabulary may lack bytes, and text that needs one is refused when encoded), ranks are
    distinct non-negative integers, and no special token shares an id with a mergeable token.
    Duplicate token bytes cannot occur in a mapping; the file readers in
    :mod:`streamcodec.formats` catch them with the line they are on.
    """
    seen: dict[int, bytes] = {}
    for token, rank in mergeable_ranks.items():
        if not isinstance(rank, int) or not 0 <= rank <= MAX_RANK:
            raise VocabularyError(
                f"{source}: token {token!r} has rank {rank!r}, not an int from 0 to 2**32 - 1"
            )
        if rank in seen:
            raise VocabularyError(
                f"{source}: rank {rank} is given to both {seen[rank]!r} and {token!r}"
            )
        seen[rank] = token
    missing = [b for b in range(256) if bytes([b]) not in mergeable_ranks]
    if missing and all_bytes:
        shown = ", ".join(f"0x{b:02x}" for b in missing[:8])
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        raise VocabularyError(
            f"{source}: single bytes {shown}{more} are not tokens; byte-level BPE needs all 256"
        )
    for text, token_id in (special_tokens or {}).items():
        if token_id in seen:
            raise VocabularyError(
                f"{source}: special token {text!r} has id {token_id}, "
                f"which is already the rank of {seen[token_id]!r}"
            )
