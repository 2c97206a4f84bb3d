"""The pure path's checks, run where tiktoken cannot be: in a subprocess with ``import regex``
blocked (tests/test_no_regex.py) and inside Pyodide under Node (tests/test_pyodide.py).

    python tests/pure_checks.py CASES.json OUT.json [--no-regex]

CASES maps an encoding name to texts. For each text it records the ids of ``encode``, of the
stream encoder fed in chunks, whether ``decode`` gives the text back, and the offsets of
``decode_with_offsets``; the caller compares them with tiktoken's. Then the windows and the
explain page of cl100k_base, and what ran: the backend, whether ``regex`` or any compiled
module was imported, the platform. Only the standard library and streamcodec are imported.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


class _NoRegex:
    """A meta-path finder that refuses ``regex``, as where it is not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "regex" or name.startswith("regex."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)


def main(cases_path: str, out_path: str) -> None:
    import streamcodec

    with open(cases_path, encoding="utf-8") as f:
        cases: dict[str, list[str]] = json.load(f)
    out: dict[str, object] = {}
    seconds = 0.0
    for name, texts in cases.items():
        enc = streamcodec.get_encoding(name)
        for i, text in enumerate(texts):
            start = time.perf_counter()
            ids = enc.encode(text, disallowed_special=())
            seconds += time.perf_counter() - start
            stream = enc.stream_encoder(disallowed_special=())
            chunks = [text[k : k + 1000] for k in range(0, len(text), 1000)]
            streamed = [t for chunk in chunks for t in stream.feed(chunk)] + stream.close()
            decoded, offsets = enc.decode_with_offsets(ids)
            out[f"{name}/{i}"] = [ids, streamed, decoded == text, offsets]
    cl100k = streamcodec.get_encoding("cl100k_base")
    first = cases["cl100k_base"][0]
    windows = list(cl100k.split(first, 200, allowed_special="all"))
    out["windows"] = "".join(w.text for w in windows) == first
    out["page"] = 'data-ids="15339"' in cl100k.explain_html("hello world")
    # The maps over threads or processes (in turn where there are none: Pyodide).
    parts = [first[k : k + 700] for k in range(0, len(first), 700)]
    one_by_one = [cl100k.encode_ordinary(part) for part in parts]
    batch = cl100k.encode_batch(parts, num_threads=4, disallowed_special=())
    decoded_batch = cl100k.decode_batch(one_by_one, num_threads=4)
    with open("count.txt", "w", encoding="utf-8") as f:
        f.write(first * 40)
    counted = cl100k.count_tokens(Path("count.txt"), jobs=2, disallowed_special=())
    whole = len(cl100k.encode(first * 40, disallowed_special=()))
    out["batch"] = batch == one_by_one and decoded_batch == parts and counted == whole
    out["backend"] = cl100k.backend
    out["regex imported"] = "regex" in sys.modules
    out["compiled"] = sorted(
        name
        for name, module in sys.modules.items()
        if name.startswith("streamcodec.")
        and not str(getattr(module, "__file__", "") or "").endswith(".py")
    )
    out["platform"] = sys.platform
    out["encode_seconds"] = seconds
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if "--no-regex" in sys.argv:
        sys.meta_path.insert(0, _NoRegex())  # type: ignore[arg-type]
    main(sys.argv[1], sys.argv[2])
