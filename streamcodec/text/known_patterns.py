r"""The pre-tokenizer patterns of real vocabularies, and which of them the native scanner cuts.

Open models write the same few patterns in many ways: Llama 3 writes cl100k_base's pattern as
tiktoken first did (no possessive quantifiers, ``\s*[\r\n]+``), Hugging Face writes GPT-2's
contractions as seven alternatives, Qwen cuts digits one by one. :func:`shape_of` parses a
pattern of that small grammar into a :class:`Shape`, the same for every spelling of one meaning,
and :func:`native_number` gives the native scanner's number for the shapes it cuts
(``_scan_pattern.h``). Two patterns that Hugging Face Sequences spell as several steps have
one-pattern forms here: :data:`DIGITS_GPT2_PATTERN` (StarCoder 2, SmolLM: a shape of the
grammar) and :data:`DEEPSEEK_V3_PATTERN` (its own scanner, known by that exact string, as
``streamcodec.formats`` writes it). Any other pattern keeps the ``regex`` path.

    >>> llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    >>> llama3 += r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    >>> native_name(llama3)
    'llama3'
    >>> native_name(llama3.replace(r"\p{L}+", r"\p{L}++"))  # possessive: the same pieces
    'llama3'
    >>> native_name(r"\w+|\s+") is None
    True

Each rewrite that makes two spellings one shape is argued in docs/patterns.md and checked
against ``regex`` by tests/test_known_patterns.py and the ``patterns`` fuzz target.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple, TypeVar

from streamcodec.vocab import PATTERNS

__all__ = [
    "CJK",
    "DEEPSEEK_V3_PATTERN",
    "DIGITS_GPT2_PATTERN",
    "HF_BYTE_LEVEL_PATTERN",
    "KNOWN",
    "KNOWN_PATTERNS",
    "NATIVE_SHAPES",
    "QWEN35_PATTERN",
    "STEPS_PREFIX",
    "KnownPattern",
    "Shape",
    "named_pattern",
    "native_name",
    "native_number",
    "shape_of",
]


class Shape(NamedTuple):
    """A pattern's meaning, alternative by alternative (the fields of ``_scan_pattern.h``)."""

    contraction: str  # "none", "cased" '(?:[sdmt]|ll|ve|re), "folded" (?i:...), "suffix" (o200k)
    letters: str  # "space" ( ?\p{L}+), "prefix" ([^\r\n\p{L}\p{N}]?\p{L}+), "cases" (o200k)
    digits: int  # 0: " ?\p{N}+"; k: \p{N}{1,k}
    trail: str  # after " ?[^\s\p{L}\p{N}]+": "", "\r\n" ([\r\n]*) or "\r\n/" ([\r\n/]*)
    newline: bool  # \s*[\r\n]+ (or \s*[\r\n]) before \s+(?!\S)
    dollar: bool  # \s++$ before that newline alternative
    barrier: bool = False  # \p{N} first, (?![^\s\p{N}]) for (?!\S): Hugging Face's Digits first


#: The shapes the native scanner cuts: name and number (``_scan_pattern.h``'s PATTERN_*).
NATIVE_SHAPES: dict[Shape, tuple[str, int]] = {
    Shape("cased", "space", 0, "", False, False): ("gpt2", 0),
    Shape("folded", "prefix", 3, "\r\n", True, True): ("cl100k_base", 1),
    Shape("suffix", "cases", 3, "\r\n/", True, False): ("o200k_base", 2),
    Shape("folded", "prefix", 3, "\r\n", True, False): ("llama3", 4),
    Shape("folded", "prefix", 1, "\r\n", True, False): ("qwen2", 5),
    Shape("none", "cases", 1, "\r\n/", True, False): ("tekken", 6),
    Shape("cased", "space", 1, "", False, False, barrier=True): ("digits_gpt2", 7),
}


class KnownPattern(NamedTuple):
    """A pattern as a vocabulary's own files or loader write it, and where it was read."""

    name: str
    models: str
    pattern: str
    source: str  # repository and path


_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_O200K_UPPER, _O200K_LOWER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
# o200k's two letter alternatives, with a contraction suffix or none.
_O200K_LETTERS = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}*{_O200K_LOWER}+SUFFIX"
    rf"|[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}+{_O200K_LOWER}*SUFFIX"
)
#: How a ``pat_str`` of Hugging Face steps begins (:mod:`streamcodec.text.sequence`; a regex
#: comment: no pattern written by hand starts so). Here, so that knowing a pattern is no steps
#: does not import their reader.
STEPS_PREFIX = "(?#steps)"

#: GPT-2's pattern as Hugging Face's ``ByteLevel(use_regex=True)`` writes it.
HF_BYTE_LEVEL_PATTERN = (
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
)
#: Hugging Face's ``Digits(individual_digits=True)`` then ``ByteLevel(use_regex=True)`` as one
#: pattern: each digit alone, and GPT-2's pattern on the text between digits, where a digit is
#: the end of the text: `` ?\p{N}+`` never matches there, and ``(?!\S)`` holds before a digit.
DIGITS_GPT2_PATTERN = (
    r"\p{N}|'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+"
)

#: DeepSeek V3's CJK ranges (U+4E00..U+9FA5, U+3040..U+30FF).
CJK = "一-龥぀-ゟ゠-ヿ"
# A character that ends the third step's texts: a digit or a CJK character.
_BARRIER = rf"[\p{{N}}{CJK}]"
# The third pattern inside those texts: no class crosses a barrier, whose place is an end.
_THIRD = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
    rf"|(?:(?!{_BARRIER})[^\r\n\p{{L}}\p{{P}}\p{{S}}])?(?:(?!{_BARRIER})[\p{{L}}\p{{M}}])+"
    rf"| ?(?:(?!{_BARRIER})[\p{{P}}\p{{S}}])+[\r\n]*"
    rf"|\s*[\r\n]+|\s+(?![^\s\p{{N}}{CJK}])|\s+"
)
# The third pattern inside a run of CJK characters (the second step's matches are cut by the
# third step too): letters and marks, or punctuation and symbols; no space, digit or ASCII.
_IN_CJK = (
    rf"(?:(?=[{CJK}])[^\r\n\p{{L}}\p{{P}}\p{{S}}])?(?:(?=[{CJK}])[\p{{L}}\p{{M}}])+"
    rf"|(?:(?=[{CJK}])[\p{{P}}\p{{S}}])+"
)
#: DeepSeek V3's Sequence as one pattern: digits in threes; inside CJK runs, the third pattern's
#: pieces and the runs where it does not match; elsewhere the same, none crossing a digit or a
#: CJK character (Hugging Face keeps each run where a pattern does not match as a piece).
DEEPSEEK_V3_PATTERN = (
    rf"\p{{N}}{{1,3}}|{_IN_CJK}|(?:(?!{_IN_CJK})[{CJK}])+"
    rf"|{_THIRD}|(?:(?!(?:{_THIRD})|{_BARRIER})[\s\S])+"
)
#: (streamcodec.formats.hf_sequences reads it from the tokenizer.json's three Splits; the native
#: scanner knows it by this exact string, _scan_deepseek.h.)

#: Qwen 3.5's pattern: Qwen 2's with marks joined to letters (``[\p{L}\p{M}]+``), not a shape of
#: the grammar (``regex`` cuts it; ggml-org/llama.cpp src/llama-vocab.cpp, QWEN35).
QWEN35_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: The patterns found in public sources (the sources are quoted, not copied: each string is the
#: pattern itself). ``streamcodec.vocab`` holds tiktoken's own three.
KNOWN_PATTERNS: tuple[KnownPattern, ...] = (
    KnownPattern(
        "llama3",
        "Llama 3, 3.1, 3.2, 3.3 (tokenizer.model and tokenizer.json)",
        _LLAMA3,
        "meta-llama/llama3 llama/tokenizer.py (pat_str); the Split of Meta-Llama-3's "
        "tokenizer.json, quoted in ggml-org/llama.cpp src/llama-vocab.cpp (LLAMA3)",
    ),
    KnownPattern(
        "cl100k_base, earlier spelling",
        "cl100k_base before tiktoken's possessive rewrite; Phi-4, OLMo 2 (cl100k-derived)",
        _LLAMA3,
        "pytorch/executorch pytorch_tokenizers/constants.py (CL100K_PAT_STR); "
        "ggml-org/llama.cpp src/llama-vocab.cpp (DBRX, 'same as llama3')",
    ),
    KnownPattern(
        "qwen2",
        "Qwen 2, 2.5, 3 (and Qwen 1's qwen.tiktoken)",
        _LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}"),
        "huggingface/transformers src/transformers/models/qwen2/tokenization_qwen2.py "
        "(PRETOKENIZE_REGEX); ggml-org/llama.cpp src/llama-vocab.cpp (QWEN2)",
    ),
    KnownPattern(
        "tekken",
        "Mistral Tekken (Nemo, Pixtral, Mistral Small 3, ...)",
        _O200K_LETTERS.replace("SUFFIX", "")
        + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        "mistralai/mistral-common tekken.json 'pattern' (loaded by "
        "src/mistral_common/tokens/tokenizers/tekken.py); ggml-org/llama.cpp "
        "src/llama-vocab.cpp (TEKKEN, 'original regex from tokenizer.json')",
    ),
    KnownPattern(
        "gpt2 (Hugging Face ByteLevel, whisper)",
        "GPT-2 as tokenizers' ByteLevel(use_regex=True) and openai/whisper write it",
        HF_BYTE_LEVEL_PATTERN,
        "huggingface/tokenizers tokenizers/src/pre_tokenizers/byte_level.rs; openai/whisper "
        "whisper/tokenizer.py (pat_str)",
    ),
    KnownPattern(
        "digits_gpt2",
        "StarCoder 2, SmolLM (tokenizer.json: Digits(individual_digits), then ByteLevel)",
        DIGITS_GPT2_PATTERN,
        "the pre_tokenizer Sequence of bigcode/starcoder2's and HuggingFaceTB/SmolLM's "
        "tokenizer.json, as ggml-org/llama.cpp src/llama-vocab.cpp spells it (STARCODER, SMOLLM: "
        "'\\p{N}' then GPT-2's)",
    ),
    KnownPattern(
        "deepseek_v3",
        "DeepSeek V3, R1 (tokenizer.json: three Splits in a Sequence, read as one pattern)",
        DEEPSEEK_V3_PATTERN,
        "the Splits of deepseek-ai/DeepSeek-V3's tokenizer.json as ggml-org/llama.cpp "
        "src/llama-vocab.cpp spells them (DEEPSEEK3_LLM); joined by "
        "streamcodec.formats.hf_sequences",
    ),
    KnownPattern(
        "o200k_harmony",
        "gpt-oss (o200k_harmony: o200k_base's pattern, more special tokens)",
        _O200K_LETTERS.replace("SUFFIX", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?")
        + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        "openai/tiktoken tiktoken_ext/openai_public.py (o200k_harmony reuses o200k_base's pat_str)",
    ),
    KnownPattern(
        "cl100k_base without possessives",
        "cl100k_base's present pattern with greedy quantifiers (engines without possessives)",
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        r"|\s+$|\s*[\r\n]|\s+(?!\S)|\s",
        "openai/tiktoken tiktoken_ext/openai_public.py (cl100k_base), quantifiers made greedy",
    ),
)

#: Each known pattern by its name (the first of a name where two share it).
KNOWN: dict[str, str] = {}
for _known in KNOWN_PATTERNS:
    KNOWN.setdefault(_known.name, _known.pattern)

_T = TypeVar("_T")


# The alternatives of the grammar, written plainly and normalized as patterns are (_normal).
_CONTRACTIONS = frozenset(("'s", "'t", "'re", "'ve", "'m", "'ll", "'d"))
_FOLDED = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_CONTRACTION_SPELLINGS = {
    r"'(?:[sdmt]|ll|ve|re)": "cased",
    r"'(?i:[sdmt]|ll|ve|re)": "folded",
    _FOLDED: "folded",
}
_LETTERS = {r" ?\p{L}+": "space", r"[^\r\n\p{L}\p{N}]?\p{L}+": "prefix"}
_DIGITS = {r" ?\p{N}+": 0, r"\p{N}{1,3}": 3, r"\p{N}": 1, r"\p{N}{1}": 1, r"\p{N}{1,1}": 1}
_PUNCTUATION = r" ?[^\s\p{L}\p{N}]+"
_BARRIER_LOOKAHEAD = r"\s+(?![^\p{N}\s])"  # normalized
_TRAILS = {"": "", r"[\r\n]*": "\r\n", r"[\r\n/]*": "\r\n/"}
_NEWLINES = (r"\s*[\r\n]", r"\s*[\r\n]+")

# One token of the grammar: an escape (\p{..} or one character), a class, a group opening, or a
# quantifier with what follows it (possessive "+", lazy "?").
_TOKEN = re.compile(
    r"\\p\{\w+\}|\\.|\[\^?\]?(?:\\.|[^\]])*\]|\((?:\?[:!=]|\?i:)?|\)|(?:[*+?]|\{\d+(?:,\d*)?\})[+?]?|.",
    re.DOTALL,
)
# (quantified item, next item) pairs of the grammar with no character in common, normalized.
_DISJOINT = frozenset(
    {
        (r"[^\n\p{L}\p{N}\r]", r"\p{L}"),
        (r"[^\p{L}\p{N}\s]", r"[\n\r]"),
        (r"[^\p{L}\p{N}\s]", r"[/\n\r]"),
    }
)
_CLASS_ITEM = re.compile(r"\\p\{\w+\}|\\.|.", re.DOTALL)


def _normal(alternative: str) -> str | None:
    """``alternative`` with each class's items sorted and its possessive quantifiers made greedy
    where that cannot change a match: at the end, before ``$``, or before an item of a class
    disjoint from the quantified one (:data:`_DISJOINT`). ``None`` for any other possessive
    quantifier and for a lazy one (not in the grammar)."""
    out: list[str] = []
    possessive: list[int] = []  # positions in out of the quantifiers that were possessive
    for token in _TOKEN.findall(alternative):
        if token[0] in "*+?{" and len(token) > 1 and token[-1] in "+?" and token[-2] != "{":
            if token[-1] == "?":
                return None  # lazy
            token = token[:-1]
            possessive.append(len(out))
        elif token.startswith("[") and len(token) > 2:
            negated = token.startswith("[^")
            items = sorted(_CLASS_ITEM.findall(token[2 if negated else 1 : -1]))
            token = "[" + ("^" if negated else "") + "".join(items) + "]"
        out.append(token)
    for k in possessive:
        after = out[k + 1] if k + 1 < len(out) else "$"
        if after != "$" and (out[k - 1], after) not in _DISJOINT:
            return None  # giving back could matter: a different pattern
    return "".join(out)


def _split(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern``."""
    alternatives: list[str] = []
    current: list[str] = []
    depth = 0
    for token in _TOKEN.findall(pattern):
        depth += token.startswith("(") - (token == ")")
        if token == "|" and depth == 0:
            alternatives.append("".join(current))
            current = []
        else:
            current.append(token)
    alternatives.append("".join(current))
    return alternatives


@functools.cache
def _tables() -> tuple[dict[str, str], dict[str, str], dict[str, int], dict[str, str], str]:
    """The grammar's spellings, normalized (built on first use): contractions, letters,
    digits, trails, and the punctuation run."""

    def normal(table: dict[str, _T]) -> dict[str, _T]:
        return {_normal(key) or key: value for key, value in table.items()}

    punctuation = _normal(_PUNCTUATION) or _PUNCTUATION
    return (
        normal(_CONTRACTION_SPELLINGS),
        normal(_LETTERS),
        normal(_DIGITS),
        normal(_TRAILS),
        punctuation,
    )


def shape_of(pattern: str) -> Shape | None:
    """The :class:`Shape` of ``pattern``, or ``None`` when it is not of the grammar."""
    normalized = [_normal(alt) for alt in _split(pattern)]
    rest = [alt for alt in normalized if alt is not None]
    if len(rest) < len(normalized):
        return None
    contractions, letter_runs, digit_runs, trails, punctuation = _tables()
    barrier = rest[0] == r"\p{N}" and _BARRIER_LOOKAHEAD in rest  # a digit alone, then the rest
    rest = rest[barrier:]
    if not rest:
        return None
    contraction = contractions.get(rest[0])
    if contraction is not None:
        rest = rest[1:]
    elif set(rest[:7]) == _CONTRACTIONS:  # seven alternatives: no two match at one place
        contraction, rest = "cased", rest[7:]
    if len(rest) < 2:
        return None
    letters = letter_runs.get(rest[0])
    if letters is not None:
        rest = rest[1:]
    else:
        for suffix, kind in (("", "none"), (_FOLDED + "?", "suffix")):
            cases = [_normal(a) for a in _split(_O200K_LETTERS.replace("SUFFIX", suffix))]
            if rest[:2] == cases and contraction is None:
                letters, contraction, rest = "cases", kind, rest[2:]
                break
        else:
            return None
    digits = 1 if barrier else digit_runs.get(rest[0]) if rest else None
    rest = rest[not barrier :]
    if digits is None or not rest or not rest[0].startswith(punctuation):
        return None
    trail = trails.get(rest[0][len(punctuation) :])
    if trail is None:
        return None
    return _whitespace(contraction or "none", letters, digits, trail, rest[1:], barrier)


def _whitespace(
    contraction: str, letters: str, digits: int, trail: str, rest: list[str], barrier: bool
) -> Shape | None:
    r"""The shape, once the whitespace alternatives ``rest`` are known to be of the grammar:
    [\s+$] [\s*[\r\n] or \s*[\r\n]+] \s+(?!\S) (\s or \s+)."""
    dollar = bool(rest) and rest[0] == r"\s+$"
    rest = rest[dollar:]
    newline = bool(rest) and rest[0] in {_normal(spelling) for spelling in _NEWLINES}
    rest = rest[newline:]
    lookahead = _BARRIER_LOOKAHEAD if barrier else r"\s+(?!\S)"
    if rest not in ([lookahead, r"\s"], [lookahead, r"\s+"]):
        return None
    # Without a newline alternative, \s+$ takes what \s+(?!\S) takes at the end anyway.
    return Shape(contraction, letters, digits, trail, newline, dollar and newline, barrier)


def native_number(pattern: str) -> int | None:
    """The native scanner's number for ``pattern`` (``_scan_pattern.h``), or ``None``."""
    named = _native(pattern)
    return None if named is None else named[1]


def named_pattern(pattern: str) -> str | None:
    """The named pattern (``streamcodec.vocab.PATTERNS``: tiktoken's own string) whose shape
    ``pattern`` has, however it is spelled (Hugging Face's ``ByteLevel`` regex is GPT-2's), or
    ``None``: the one notion of a known pattern, for the pure path's templates, its words and
    the stream's proven cuts as for the native scanner.

    >>> named_pattern(HF_BYTE_LEVEL_PATTERN) == PATTERNS["gpt2"]
    True
    """
    name = native_name(pattern)
    return PATTERNS[name] if name in ("gpt2", "cl100k_base", "o200k_base") else None


def native_name(pattern: str) -> str | None:
    """The name of the native scanner that cuts ``pattern`` (``"llama3"``...), or ``None``."""
    named = _native(pattern)
    return None if named is None else named[0]


@functools.lru_cache(maxsize=64)
def _native(pattern: str) -> tuple[str, int] | None:
    if pattern == DEEPSEEK_V3_PATTERN:
        return "deepseek_v3", 8
    shape = shape_of(pattern)
    return None if shape is None else NATIVE_SHAPES.get(shape)
