"""The Python of the in-browser tokenizer (tools/browser/index.html), run inside Pyodide.

The page calls :func:`tokenize` with the text, the encoding's name and the special-token
policy, and shows what it returns: the ids, each token's text, the time ``encode`` took, and
the page of :meth:`streamcodec.Encoding.explain_html` (tokens boxed, the merge trace of a
piece), or the one-line error (a special token in text that does not allow it).
"""

from __future__ import annotations

import json
import time

import streamcodec

# How the page's "special tokens" choice maps to encode's arguments.
POLICIES: dict[str, dict[str, object]] = {
    "refuse": {},  # encode's default: a special token in the text is an error
    "special": {"allowed_special": "all"},
    "text": {"disallowed_special": ()},
}


def encoding_names() -> str:
    """The named encodings shipped in the package, as JSON."""
    return json.dumps(streamcodec.list_encoding_names())


def tokenize(text: str, name: str, policy: str) -> str:
    """What the page shows for ``text`` (JSON): ids, tokens, milliseconds and the explain
    page, or ``{"error": ...}``."""
    enc = streamcodec.get_encoding(name)
    options = POLICIES[policy]
    try:
        start = time.perf_counter()
        ids = enc.encode(text, **options)  # type: ignore[arg-type]
        ms = (time.perf_counter() - start) * 1000
    except ValueError as exc:
        return json.dumps({"error": str(exc).splitlines()[0]})
    tokens = [data.decode("utf-8", "replace") for data in enc.decode_tokens_bytes(ids)]
    page = enc.explain_html(text, **options)  # type: ignore[arg-type]
    return json.dumps({"ids": ids, "tokens": tokens, "ms": ms, "page": page})
