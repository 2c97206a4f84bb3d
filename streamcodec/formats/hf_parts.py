"""The parts of a Hugging Face ``tokenizer.json`` around its model: added tokens, normalizer,
post-processor, and the call options it refuses.

Each can change the ids in ways tiktoken's special tokens and plain text never do, so each is
read here with what streamcodec follows, what it refuses and why (:mod:`.huggingface` reads
the model).

    >>> reader = Reader("tokenizer.json")
    >>> added_tokens(reader, [{"content": "<|end|>", "id": 5}, {"content": "  ", "id": 6,
    ...                                                            "special": False}])
    ({'<|end|>': 5}, {'  ': 6})
    >>> check_normalizer(reader, {"type": "NFC"})  # the encoding applies it
    'NFC'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamcodec.formats.jsondoc import check_unique, is_id
from streamcodec.vocab import VocabularyError

__all__ = [
    "Reader",
    "added_tokens",
    "check_normalizer",
    "post_processor",
    "refuse_call_options",
    "shown",
]


class Reader:
    """Reads one document; ``fail`` names the file and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> VocabularyError:
        return VocabularyError(f"{self.source}: {path}: {message}")

    def get(self, obj: Mapping[str, Any], key: str, kind: type, path: str) -> Any:
        value = obj.get(key)
        if not isinstance(value, kind):
            raise self.fail(path, f"expected a JSON {_KINDS[kind]}, got {shown(value)}")
        check_unique(value, source=self.source, path=path)
        return value


_KINDS = {dict: "object", list: "array", str: "string", int: "integer"}


def shown(value: object) -> str:
    return "nothing" if value is None else repr(value)[:60]


def added_tokens(reader: Reader, added: object) -> tuple[dict[str, int], dict[str, int]]:
    """The special added tokens, and the others (found in ordinary text, as Hugging Face does)."""
    if not isinstance(added, list):
        raise reader.fail("added_tokens", f"expected a JSON array, got {shown(added)}")
    specials: dict[str, int] = {}
    ordinary: dict[str, int] = {}
    for index, entry in enumerate(added):
        path = f"added_tokens[{index}]"
        if not isinstance(entry, dict):
            raise reader.fail(path, f"expected a JSON object, got {shown(entry)}")
        content = reader.get(entry, "content", str, f"{path}.content")
        token_id = entry.get("id")
        if not is_id(token_id):
            raise reader.fail(f"{path}.id", f"expected an id (an int >= 0), got {shown(token_id)}")
        if content in specials or content in ordinary:
            raise reader.fail(path, f"added token {content!r} appears twice")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise reader.fail(
                    f"{path}.{flag}",
                    f"{content!r} takes the whitespace beside it or only whole words there "
                    "(Hugging Face's added-token flags), which tiktoken's special tokens never "
                    "do; unsupported, as the ids would differ",
                )
        (specials if entry.get("special", True) else ordinary)[content] = token_id
    return specials, ordinary


# Normalizers that change no text (DeepSeek writes an empty Sequence).
_NO_OP = ({"type": "Sequence", "normalizers": []},)


def check_normalizer(reader: Reader, normalizer: object) -> str | None:
    """The normalizer the encoding applies (``"NFC"``) or None; any other is refused.

    NFC is applied by the encoding with Python's ``unicodedata`` (Unicode 14.0 on Python 3.11,
    15.0 on 3.12+): on characters assigned later, Hugging Face's NFC may compose what Python's
    leaves as it is (docs/formats.md).
    """
    if normalizer is None or normalizer in _NO_OP:
        return None
    steps = (
        normalizer.get("normalizers")
        if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence"
        else [normalizer]
    )
    kinds = [step.get("type") if isinstance(step, dict) else None for step in steps or [None]]
    if kinds == ["NFC"]:
        return "NFC"
    raise reader.fail(
        "normalizer",
        f"{' then '.join(map(str, kinds))} changes the text before encoding; streamcodec applies "
        "only NFC (or no normalizer)",
    )


def refuse_call_options(reader: Reader, doc: Mapping[str, Any]) -> None:
    """``truncation`` and ``padding`` shape a call's output, which an encoding never does."""
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            raise reader.fail(
                key, "is set; streamcodec encodes all of the text, unpadded: set it to null"
            )


def post_processor(
    reader: Reader, processor: object, specials: Mapping[str, int]
) -> dict[str, Any]:
    """The BOS and EOS a ``TemplateProcessing`` post-processor puts around one text (Llama 3's
    ``<|begin_of_text|>`` ...): ``bos_token``, ``eos_token``, ``add_bos``, ``add_eos``."""
    found: dict[str, Any] = {}
    steps = (
        processor.get("processors")
        if isinstance(processor, dict) and processor.get("type") == "Sequence"
        else [processor]
    )
    for step in steps or []:
        kind = step.get("type") if isinstance(step, dict) else None
        if step is None or kind == "ByteLevel":
            continue  # offsets only
        if kind != "TemplateProcessing" or not isinstance(step, dict):
            raise reader.fail("post_processor", f"{kind!r} is unsupported (TemplateProcessing is)")
        found = _template(reader, step.get("single"), specials)
    return found


def _template(reader: Reader, single: object, specials: Mapping[str, int]) -> dict[str, Any]:
    items = single if isinstance(single, list) else []
    names = [
        ("A" if "Sequence" in item else item["SpecialToken"].get("id"))
        if isinstance(item, dict) and ("Sequence" in item or "SpecialToken" in item)
        else None
        for item in items
    ]
    if names.count("A") != 1 or len(names) > 3 or None in names:
        raise reader.fail("post_processor.single", f"unsupported template {shown(single)}")
    at = names.index("A")
    before, after = names[:at], names[at + 1 :]
    if len(before) > 1 or len(after) > 1 or any(n not in specials for n in before + after):
        raise reader.fail(
            "post_processor.single", f"{shown(single)}: one special token before and after, at most"
        )
    return {
        "bos_token": before[0] if before else None,
        "eos_token": after[0] if after else None,
        "add_bos": bool(before),
        "add_eos": bool(after),
    }
