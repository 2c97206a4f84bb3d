"""The parts of a Hugging Face ``tokenizer.json`` around its model: added tokens, normalizer.

Both can change the ids in ways tiktoken's special tokens and plain text never do, so each is
read here with what streamcodec refuses and why (:mod:`.huggingface` reads the model).

    >>> reader = Reader("tokenizer.json")
    >>> added_tokens(reader, [{"content": "<|end|>", "id": 5}])
    {'<|end|>': 5}
    >>> check_normalizer(reader, {"type": "NFC"}, allow_nfc=True)  # accepted: see its docstring
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamcodec.formats.jsondoc import check_unique, is_id
from streamcodec.vocab import VocabularyError

__all__ = ["Reader", "added_tokens", "check_normalizer", "shown"]


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


def added_tokens(reader: Reader, added: object) -> dict[str, int]:
    if not isinstance(added, list):
        raise reader.fail("added_tokens", f"expected a JSON array, got {shown(added)}")
    specials: dict[str, int] = {}
    for index, entry in enumerate(added):
        path = f"added_tokens[{index}]"
        if not isinstance(entry, dict):
            raise reader.fail(path, f"expected a JSON object, got {shown(entry)}")
        content = reader.get(entry, "content", str, f"{path}.content")
        token_id = entry.get("id")
        if not is_id(token_id):
            raise reader.fail(f"{path}.id", f"expected an id (an int >= 0), got {shown(token_id)}")
        if content in specials:
            raise reader.fail(path, f"special token {content!r} appears twice")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise reader.fail(
                    f"{path}.{flag}",
                    f"{content!r} takes the whitespace beside it or only whole words there "
                    "(Hugging Face's added-token flags), which tiktoken's special tokens never "
                    "do; unsupported, as the ids would differ",
                )
        specials[content] = token_id
    return specials


def check_normalizer(reader: Reader, normalizer: object, *, allow_nfc: bool) -> None:
    """Refuse a normalizer, but NFC when the caller opts in.

    streamcodec encodes the text it is given: with ``allow_nfc`` the ids equal Hugging Face's
    only for text in NFC already, e.g. after ``unicodedata.normalize("NFC", text)``. Even then
    the two NFCs may differ on characters assigned after Python's Unicode version
    (``unicodedata.unidata_version``: 14.0 on Python 3.11), which tokenizers may know: the
    difference the opt-in accepts.
    """
    if normalizer is None:
        return
    nfc = isinstance(normalizer, dict) and normalizer.get("type") == "NFC"
    if nfc and allow_nfc:
        return
    hint = (
        "; streamcodec leaves NFC to you: pass allow_nfc=True and normalize the text first "
        "(unicodedata.normalize('NFC', text))"
        if nfc
        else ""
    )
    raise reader.fail(
        "normalizer", f"a normalizer changes the text before encoding; unsupported{hint}"
    )
