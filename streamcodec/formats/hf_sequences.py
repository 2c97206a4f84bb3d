r"""Hugging Face pre-tokenizer Sequences that split the text more than once, as one pattern.

A ``tokenizer.json`` may chain several ``Split`` steps (behavior ``Isolated``): each cuts every
piece of the one before into its matches and the runs between them, and a later pattern sees
each piece as a text of its own (its ``(?!\S)`` holds at the piece's end). DeepSeek V3 and R1
cut digits in threes, then runs of CJK characters, then the rest with a pattern of their own.
:func:`sequence_pattern` gives the one pattern whose matches are those pieces, for the
Sequences it knows (the native scanner cuts DeepSeek V3's: ``_scan_deepseek.h``).

    >>> import regex
    >>> regex.findall(DEEPSEEK_V3_PATTERN, "x=12345 中文 ok")
    ['x', '=', '123', '45', ' ', '中文', ' ok']
"""

from __future__ import annotations

from streamcodec.text.known_patterns import CJK, DEEPSEEK_V3_PATTERN

__all__ = ["DEEPSEEK_V3_PATTERN", "DEEPSEEK_V3_SPLITS", "sequence_pattern"]

#: The Split patterns of DeepSeek V3's tokenizer.json (also R1's), in order, as ``regex`` reads
#: them (the file writes CR and LF as characters inside the last one).
DEEPSEEK_V3_SPLITS = (
    r"\p{N}{1,3}",
    f"[{CJK}]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)


def sequence_pattern(splits: list[str]) -> str | None:
    """The one pattern of the Sequence of Isolated ``splits`` (``regex`` dialect), or ``None``
    for a Sequence this module does not know."""
    return DEEPSEEK_V3_PATTERN if tuple(splits) == DEEPSEEK_V3_SPLITS else None
