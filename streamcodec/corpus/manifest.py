"""``OUT_DIR/manifest.json``: what the corpus was made from, and each shard finished so far.

The manifest is rewritten whole (atomically) after every shard, so it never lists a shard that
is not on disk whole. It holds the *job* (encoding name and hash, the reading options, the inputs
with their sizes and times, the plan of every shard's sources) and, for each finished shard, its
files, token and document counts, SHA-256s and the streamcodec version. A rerun compares the job
it would do with the manifest's: the same job resumes (finished shards are kept), another one
is refused with what changed.

    >>> job = {"encoding": {"name": "cl100k_base"}, "inputs": [], "plan": [], "options": {}}
    >>> changed(job, {**job, "encoding": {"name": "o200k_base"}})
    'the encoding (cl100k_base, now o200k_base)'
"""

from __future__ import annotations

import array
import hashlib
import json
import os
import struct
from typing import Any

from streamcodec.atomicfile import atomic_output
from streamcodec.encoding import Encoding

__all__ = ["FORMAT", "MANIFEST", "changed", "encoding_record", "load_manifest", "save_manifest"]

MANIFEST = "manifest.json"
FORMAT = "streamcodec-corpus/2"  # 2: any shard format, each file listed with its size
JOB_KEYS = ("encoding", "options", "inputs", "plan")


def encoding_record(enc: Encoding) -> dict[str, Any]:
    """The encoding's name, size and a SHA-256 of everything that decides its ids (the ranks,
    the pattern, the special tokens)."""
    digest = hashlib.sha256(enc.pat_str.encode("utf-8", "surrogatepass") + b"\0")
    ranked = sorted(enc.mergeable_ranks.items(), key=lambda item: item[1])
    tokens = [token for token, _ in ranked]
    digest.update(array.array("Q", [rank for _, rank in ranked]).tobytes())  # in C: fast
    digest.update(array.array("Q", map(len, tokens)).tobytes() + b"".join(tokens))
    for text, rank in sorted(enc.special_tokens.items()):
        digest.update(struct.pack("<Q", rank) + text.encode("utf-8", "surrogatepass") + b"\0")
    return {"name": enc.name, "sha256": digest.hexdigest(), "n_vocab": enc.n_vocab}


def load_manifest(out_dir: str) -> dict[str, Any] | None:
    """The manifest in ``out_dir``, or None when there is none."""
    path = os.path.join(out_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            manifest: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a manifest ({exc}); pass --restart to start over") from None
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: not a manifest of {FORMAT}; pass --restart to start over")
    return manifest


def save_manifest(out_dir: str, manifest: dict[str, Any]) -> None:
    """Write the manifest whole, replacing the last one atomically."""
    with atomic_output(os.path.join(out_dir, MANIFEST)) as f:
        f.write(json.dumps(manifest, indent=1).encode("utf-8") + b"\n")


def changed(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What differs between two jobs, in words, or None when they are the same job."""
    if old["encoding"] != new["encoding"]:
        return f"the encoding ({old['encoding']['name']}, now {new['encoding']['name']})"
    if old["options"] != new["options"]:
        keys = sorted(k for k in {*old["options"], *new["options"]}
                      if old["options"].get(k) != new["options"].get(k))  # fmt: skip
        return "the options (" + ", ".join(keys) + ")"
    if old["inputs"] != new["inputs"]:
        before = {i["path"]: i for i in old["inputs"]}
        for inp in new["inputs"]:
            if inp["path"] not in before:
                return f"the inputs ({inp['path']} is new)"
            if inp != before[inp["path"]]:
                return f"the inputs ({inp['path']} changed: size or time)"
        return "the inputs (some are gone or in another order)"
    if old["plan"] != new["plan"]:
        return "the plan of shards"
    return None
