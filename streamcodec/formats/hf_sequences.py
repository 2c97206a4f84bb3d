r"""Hugging Face pre-tokenizer Sequences that split the text more than once, as one pattern.

A ``tokenizer.json`` may chain several ``Split`` steps (behavior ``Isolated``): each cuts every
piece of the one before into its matches and the runs between them, and a later pattern sees
each piece as a text of its own (its ``(?!\S)`` holds at the piece's end). DeepSeek V3 and R1
cut digits in threes, then runs of CJK characters, then the rest with a pattern of their own.
:func:`sequence_pattern` gives the one pattern whose matches are those pieces, for the
Sequences it knows; the pattern runs on ``regex`` (no native scanner knows it).

    >>> import regex
    >>> regex.findall(DEEPSEEK_V3_PATTERN, "x=12345 中文 ok")
    ['x', '=', '123', '45', ' ', '中文', ' ok']
"""

from __future__ import annotations

__all__ = ["DEEPSEEK_V3_PATTERN", "DEEPSEEK_V3_SPLITS", "sequence_pattern"]

_CJK = "一-龥぀-ゟ゠-ヿ"
#: The Split patterns of DeepSeek V3's tokenizer.json (also R1's), in order, as ``regex`` reads
#: them (the file writes CR and LF as characters inside the last one).
DEEPSEEK_V3_SPLITS = (
    r"\p{N}{1,3}",
    f"[{_CJK}]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)
# A character that ends the third step's texts: a digit or a CJK character.
_BARRIER = rf"[\p{{N}}{_CJK}]"
# The third pattern inside those texts: no class crosses a barrier, whose place is an end.
_THIRD = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
    rf"|(?:(?!{_BARRIER})[^\r\n\p{{L}}\p{{P}}\p{{S}}])?(?:(?!{_BARRIER})[\p{{L}}\p{{M}}])+"
    rf"| ?(?:(?!{_BARRIER})[\p{{P}}\p{{S}}])+[\r\n]*"
    rf"|\s*[\r\n]+|\s+(?![^\s\p{{N}}{_CJK}])|\s+"
)
# The third pattern inside a run of CJK characters (the second step's matches are cut by the
# third step too): letters and marks, or punctuation and symbols; no space, digit or ASCII.
_IN_CJK = (
    rf"(?:(?=[{_CJK}])[^\r\n\p{{L}}\p{{P}}\p{{S}}])?(?:(?=[{_CJK}])[\p{{L}}\p{{M}}])+"
    rf"|(?:(?=[{_CJK}])[\p{{P}}\p{{S}}])+"
)
#: DeepSeek V3's Sequence as one pattern: digits in threes; inside CJK runs, the third pattern's
#: pieces and the runs where it does not match; elsewhere the same, none crossing a digit or a
#: CJK character (Hugging Face keeps each run where a pattern does not match as a piece).
DEEPSEEK_V3_PATTERN = (
    rf"\p{{N}}{{1,3}}|{_IN_CJK}|(?:(?!{_IN_CJK})[{_CJK}])+"
    rf"|{_THIRD}|(?:(?!(?:{_THIRD})|{_BARRIER})[\s\S])+"
)


def sequence_pattern(splits: list[str]) -> str | None:
    """The one pattern of the Sequence of Isolated ``splits`` (``regex`` dialect), or ``None``
    for a Sequence this module does not know."""
    return DEEPSEEK_V3_PATTERN if tuple(splits) == DEEPSEEK_V3_SPLITS else None
