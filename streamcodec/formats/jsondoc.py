"""JSON vocabulary files read strictly: errors give file:line:column, duplicate keys are caught.

Python's ``json`` keeps the last of two equal keys silently; a vocabulary with a token listed
twice must be rejected instead, so every object remembers the keys it saw more than once.

    >>> doc = parse_json(b'{"a": 1, "a": 2}', source="v.json")
    >>> check_unique(doc, source="v.json", path="")
    Traceback (most recent call last):
    ...
    streamcodec.vocab.VocabularyError: v.json: key 'a' appears twice in the top-level object
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from streamcodec.vocab import VocabularyError

__all__ = ["TOO_DEEP", "JSONObject", "check_unique", "is_id", "parse_json"]

#: What a JSON document nested deeper than Python's recursion limit is called.
TOO_DEEP = "invalid JSON: lists or objects nested too deeply (hundreds of levels)"


class JSONObject(dict[str, Any]):
    """A JSON object that remembers which keys it saw more than once."""

    duplicates: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> JSONObject:
    obj = JSONObject(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        repeated = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        obj.duplicates = tuple(repeated)
    return obj


def parse_json(data: bytes, *, source: str) -> Any:
    """Parse UTF-8 JSON; invalid JSON raises :class:`VocabularyError` naming line and column."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_object)
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{source}: invalid UTF-8 at byte offset {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise VocabularyError(
            f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    except RecursionError:  # Python's parser recurses once a level: no vocabulary nests so deep
        raise VocabularyError(f"{source}: {TOO_DEEP}") from None


def check_unique(obj: object, *, source: str, path: str) -> None:
    """Raise :class:`VocabularyError` if the object at JSON ``path`` repeats a key."""
    if isinstance(obj, JSONObject) and obj.duplicates:
        where = path or "the top-level object"
        raise VocabularyError(f"{source}: key {obj.duplicates[0]!r} appears twice in {where}")


def is_id(value: object) -> TypeGuard[int]:
    """Whether a JSON value is a token id: an integer >= 0 (``true`` is not one).

    >>> is_id(3), is_id(-1), is_id(True), is_id(2.0)
    (True, False, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
