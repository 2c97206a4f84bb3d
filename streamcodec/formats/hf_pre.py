"""A ``tokenizer.json``'s ``pre_tokenizer``: one pattern where one states it, else its steps.

Most byte-level models cut the text with one regex (a ``Split``, then ``ByteLevel`` without its
own), or with ``ByteLevel``'s (GPT-2's pattern): that pattern is the encoding's, and the native
scanner may know it (:mod:`streamcodec.text.known_patterns`). A few chain steps no one pattern
states (DeepSeek LLM and Coder, Falcon): those become a Sequence of steps
(:mod:`streamcodec.text.sequence`) that runs exactly on both backends. ``Split`` patterns are in
Oniguruma's dialect (:mod:`~streamcodec.formats.oniguruma`), and the text between their matches
is kept as pieces, as Hugging Face keeps it (:func:`~streamcodec.formats.split_gaps.with_gaps`).

    >>> reader = Reader("tokenizer.json")
    >>> byte_level = {"type": "ByteLevel", "use_regex": True}
    >>> pre_tokenizer_pattern(reader, byte_level, "pre_tokenizer") == GPT2_PATTERN
    True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from streamcodec.formats.hf_parts import Reader, shown
from streamcodec.formats.hf_sequences import sequence_pattern
from streamcodec.formats.oniguruma import from_oniguruma, to_oniguruma
from streamcodec.formats.split_gaps import with_gaps
from streamcodec.text.known_patterns import DIGITS_GPT2_PATTERN
from streamcodec.text.sequence import Step, steps_pattern
from streamcodec.vocab import BYTE_MODE_PATTERN, GPT2_PATTERN, PATTERNS

__all__ = ["pre_tokenizer_pattern"]


@functools.cache
def _named_oniguruma() -> dict[str, str]:
    """Named patterns as the writer stores them, so that reading gives back the very same
    string (built on first use: importing the package should not translate patterns)."""
    return {to_oniguruma(pattern): pattern for pattern in PATTERNS.values()}


def pre_tokenizer_pattern(reader: Reader, pre: object, path: str) -> str:
    """The pre-tokenizer as one pattern where one states it (the native scanner may know it),
    else as its steps (:mod:`streamcodec.text.sequence`)."""
    if pre is None:
        raise reader.fail(path, "no ByteLevel step, so this is not a byte-level BPE tokenizer")
    if not isinstance(pre, dict):
        raise reader.fail(path, f"expected a JSON object, got {shown(pre)}")
    listed = pre.get("pretokenizers") if pre.get("type") == "Sequence" else [pre]
    if not isinstance(listed, list):
        raise reader.fail(f"{path}.pretokenizers", "expected a JSON array")
    inner = f"{path}.pretokenizers" if pre.get("type") == "Sequence" else None
    steps = [
        _step(reader, step, f"{inner}[{index}]" if inner else path)
        for index, step in enumerate(listed)
    ]
    if not any(kind == "bytelevel" for kind, _ in steps):
        raise reader.fail(path, "no ByteLevel step, so this is not a byte-level BPE tokenizer")
    return _one_pattern(steps) or steps_pattern(steps)


def _one_pattern(steps: list[Step]) -> str | None:
    """The one pattern whose matches are the pieces of ``steps``, where there is one."""
    if steps == [("bytelevel", True)]:
        return GPT2_PATTERN
    if steps == [("digits", True), ("bytelevel", True)]:
        return DIGITS_GPT2_PATTERN  # StarCoder 2, SmolLM: each digit alone first
    if steps[-1] != ("bytelevel", False):
        return None
    before = steps[:-1]
    if not before:
        return BYTE_MODE_PATTERN  # the text is one piece
    if all(kind == "split" for kind, _ in before):
        splits = [str(pattern) for _, pattern in before]
        return with_gaps(splits[0]) if len(splits) == 1 else sequence_pattern(splits)
    return None


def _step(reader: Reader, step: object, where: str) -> Step:
    if not isinstance(step, dict):
        raise reader.fail(where, f"expected a JSON object, got {shown(step)}")
    kind = step.get("type")
    if kind == "ByteLevel":
        if step.get("add_prefix_space"):
            raise reader.fail(
                f"{where}.add_prefix_space", "a leading space added to the text is unsupported"
            )
        return ("bytelevel", bool(step.get("use_regex", True)))
    if kind == "Split":
        return ("split", _split_pattern(reader, step, where))
    if kind == "Digits":
        return ("digits", bool(step.get("individual_digits", False)))
    if kind == "Punctuation" and step.get("behavior", "Isolated") in ("Isolated", "Contiguous"):
        return ("punctuation", step.get("behavior") == "Contiguous")
    if kind == "Punctuation":
        raise reader.fail(f"{where}.behavior", f"{step.get('behavior')!r} is unsupported")
    raise reader.fail(f"{where}.type", f"pre-tokenizer {kind!r} is unsupported")


def _split_pattern(reader: Reader, step: Mapping[str, Any], where: str) -> str:
    if step.get("behavior") != "Isolated" or step.get("invert"):
        raise reader.fail(where, "only Split with behavior Isolated and invert false is supported")
    pattern = step.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        import regex  # off the import path: the named encodings load without it (Pyodide)

        return str(regex.escape(pattern["String"]))
    if not (isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str)):
        raise reader.fail(f"{where}.pattern", f'expected {{"Regex": ...}}, got {shown(pattern)}')
    text: str = pattern["Regex"]
    # The file may write CR and LF as characters: as escapes, the pattern is the same.
    text = text.replace("\r", r"\r").replace("\n", r"\n")
    return _named_oniguruma().get(text) or from_oniguruma(text)
