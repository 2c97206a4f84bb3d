"""Vocabulary file formats, read and written: each reader names the file and line it rejects.

- :mod:`~streamcodec.formats.tiktoken_file`: tiktoken's ``.tiktoken`` (``base64(token) rank``);
- :mod:`~streamcodec.formats.gpt2`: GPT-2's ``encoder.json`` + ``vocab.bpe``;
- :mod:`~streamcodec.formats.huggingface`: Hugging Face's ``tokenizer.json`` (byte-level BPE);
- :mod:`~streamcodec.formats.minbpe`: minbpe's ``.model``;
- :mod:`~streamcodec.formats.gguf`: llama.cpp's GGUF (the tokenizer's metadata).

:func:`load_vocabulary` and :func:`save_vocabulary` choose the format from the path:

    >>> detect_format("cl100k_base.tiktoken"), detect_format("tokenizer.json")
    ('tiktoken', 'huggingface')
    >>> detect_format("gpt2/encoder.json"), detect_format("toy.model")
    ('gpt2', 'minbpe')
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from streamcodec.lazy import imported
from streamcodec.vocab import Vocabulary

if TYPE_CHECKING:
    from streamcodec.formats.gpt2 import read_gpt2, write_gpt2
    from streamcodec.formats.huggingface import read_huggingface, write_huggingface
    from streamcodec.formats.minbpe import read_minbpe, write_minbpe
    from streamcodec.formats.tiktoken_file import read_tiktoken, write_tiktoken

__all__ = [
    "FORMATS",
    "Format",
    "Vocabulary",
    "detect_format",
    "load_vocabulary",
    "read_gpt2",
    "read_huggingface",
    "read_minbpe",
    "read_tiktoken",
    "save_vocabulary",
    "write_gpt2",
    "write_huggingface",
    "write_minbpe",
    "write_tiktoken",
]

Format = Literal["tiktoken", "gpt2", "huggingface", "minbpe"]
FORMATS: tuple[Format, ...] = ("tiktoken", "gpt2", "huggingface", "minbpe")
# Each reader and writer imported at its first use: a run that reads only a shipped
# vocabulary (``formats.tiktoken_file``) does not pay for the JSON and model formats.
_HOMES = {
    f"{verb}_{fmt}": home
    for fmt, home in (
        ("tiktoken", "tiktoken_file"),
        ("gpt2", "gpt2"),
        ("huggingface", "huggingface"),
        ("minbpe", "minbpe"),
    )
    for verb in ("read", "write")
}


def __getattr__(name: str) -> Any:
    return imported(globals(), __name__, _HOMES, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


# GPT-2's names, and the same two files as Hugging Face's slow GPT-2 tokenizers name them.
_GPT2_PAIRS = (("encoder.json", "vocab.bpe"), ("vocab.json", "merges.txt"))


def detect_format(path: str | os.PathLike[str]) -> Format:
    """The format a path names: by extension, by GPT-2's file names, or a folder's contents.

    A folder is GPT-2's (it holds ``encoder.json`` + ``vocab.bpe``, or ``vocab.json`` +
    ``merges.txt``) or Hugging Face's (it holds ``tokenizer.json``). Raises ``ValueError`` when
    the path does not say.
    """
    p = Path(path)
    if p.is_dir():
        if _gpt2_pair(p) is not None:
            return "gpt2"
        if (p / "tokenizer.json").is_file():
            return "huggingface"
        raise ValueError(f"{p}: a folder without encoder.json + vocab.bpe or tokenizer.json")
    if any(p.name in pair for pair in _GPT2_PAIRS) or p.suffix == ".bpe":
        return "gpt2"
    by_suffix: dict[str, Format] = {
        ".tiktoken": "tiktoken",
        ".json": "huggingface",
        ".model": "minbpe",
    }
    if p.suffix in by_suffix:
        return by_suffix[p.suffix]
    raise ValueError(
        f"{p}: cannot tell the vocabulary format from the name; use .tiktoken, .json "
        "(tokenizer.json), .model (minbpe), or encoder.json + vocab.bpe"
    )


def _gpt2_pair(folder: Path) -> tuple[Path, Path] | None:
    for encoder, merges in _GPT2_PAIRS:
        if (folder / encoder).is_file() and (folder / merges).is_file():
            return folder / encoder, folder / merges
    return None


def _gpt2_paths(path: Path) -> tuple[Path, Path]:
    """GPT-2's two files: in the folder ``path``, or the pair that the file ``path`` belongs to
    (GPT-2's names when writing a new folder)."""
    if path.is_dir() or not path.suffix:
        folder = path
    else:
        folder = path.parent
        for encoder, merges in _GPT2_PAIRS:
            if path.name in (encoder, merges):
                return folder / encoder, folder / merges
    encoder, merges = _GPT2_PAIRS[0]
    return _gpt2_pair(folder) or (folder / encoder, folder / merges)


def load_vocabulary(path: str | os.PathLike[str], *, format: Format | None = None) -> Vocabulary:
    """Read a vocabulary in any supported format (``format`` defaults to :func:`detect_format`).

    ``.tiktoken`` files and GPT-2's files hold no pattern: ``pat_str`` is then ``None``.
    Malformed files raise :class:`~streamcodec.vocab.VocabularyError` naming file and line.
    """
    from streamcodec.formats import read_gpt2, read_huggingface, read_minbpe, read_tiktoken

    p = Path(path)
    chosen = format or detect_format(p)
    if chosen == "tiktoken":
        return Vocabulary(read_tiktoken(p))
    if chosen == "gpt2":
        return read_gpt2(*_gpt2_paths(p))
    if chosen == "huggingface":
        return read_huggingface(p / "tokenizer.json" if p.is_dir() else p)
    return read_minbpe(p)


def save_vocabulary(
    vocabulary: Vocabulary, path: str | os.PathLike[str], *, format: Format | None = None
) -> None:
    """Write ``vocabulary`` atomically in the format ``path`` names (or ``format``).

    Anything its reader would refuse is refused before a byte is written (``VocabularyError``),
    and so is an unknown ``format``. Missing folders are created. For GPT-2's format ``path`` is
    a folder, or one of its two files: both are written there. A ``.tiktoken`` file keeps only
    the ranks; GPT-2's files keep ranks and special tokens; ``tokenizer.json`` and minbpe keep
    all.
    """
    from streamcodec.formats import write_gpt2, write_huggingface, write_minbpe, write_tiktoken

    p = Path(path)
    chosen = format or ("gpt2" if p.is_dir() else detect_format(p))
    if chosen not in FORMATS:
        raise ValueError(f"unknown vocabulary format {chosen!r}; known: {', '.join(FORMATS)}")
    if chosen != "gpt2":  # write_gpt2 makes its folder itself, once the vocabulary fits
        p.parent.mkdir(parents=True, exist_ok=True)
    if chosen == "tiktoken":
        write_tiktoken(vocabulary.mergeable_ranks, p)
    elif chosen == "gpt2":
        write_gpt2(vocabulary, *_gpt2_paths(p))
    elif chosen == "huggingface":
        write_huggingface(vocabulary, p)
    else:
        write_minbpe(vocabulary, p)
