"""One call from a model's tokenizer file to an :class:`~streamcodec.Encoding`.

:func:`load_encoding` takes what a user has: a Hugging Face ``tokenizer.json`` (or the folder
holding it), a llama.cpp ``.gguf``, a tiktoken ``.tiktoken`` (with its pattern), GPT-2's
``encoder.json`` + ``vocab.bpe`` (or ``vocab.json`` + ``merges.txt``), or a minbpe ``.model``:

    >>> enc = load_encoding("Meta-Llama-3-8B/tokenizer.json")  # doctest: +SKIP
    >>> enc.encode("hello world")  # doctest: +SKIP
    [15339, 1917]

A GGUF is read as the ``tokenizer.json`` its model ships
(:func:`~streamcodec.formats.gguf_pre.huggingface_document`), so the two load alike. What the
file's tokenizer does beyond tiktoken's (NFC, added tokens found in ordinary text, BOS/EOS) is
the encoding's ``rules`` (:class:`~streamcodec.engine.model.ModelRules`); anything streamcodec
cannot follow exactly is refused with a line naming it.
"""

from __future__ import annotations

import os
from pathlib import Path

from streamcodec.encoding import Encoding
from streamcodec.formats import detect_format, load_vocabulary
from streamcodec.formats.gguf import read_gguf_metadata
from streamcodec.formats.gguf_pre import gguf_special_tokens, huggingface_document
from streamcodec.formats.huggingface import read_huggingface, vocabulary_from_document
from streamcodec.vocab import PATTERNS, Vocabulary, VocabularyError, resolve_pattern

__all__ = ["encoding_from_vocabulary", "load_encoding", "read_model_file"]


def load_encoding(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    pat_str: str | None = None,
    backend: str | None = None,
    allow_unreachable: bool = False,
) -> Encoding:
    """The encoding in the tokenizer file ``path`` (any format in the module docstring).

    ``pat_str`` (an encoding name such as ``"cl100k_base"``, or a regex) is the pattern of a
    ``.tiktoken`` file, which holds none; GPT-2's files take GPT-2's. A file with a pattern of
    its own keeps it unless ``pat_str`` is given. ``name`` defaults to the file's (or folder's)
    name; ``backend`` as for :class:`~streamcodec.Encoding`. ``allow_unreachable`` accepts a
    ``tokenizer.json`` with tokens its merges never build (see docs/formats.md). Raises
    :class:`~streamcodec.VocabularyError` for a file streamcodec cannot read exactly,
    ``FileNotFoundError`` for a path that is not there.
    """
    vocabulary = read_model_file(path, allow_unreachable=allow_unreachable)
    p = Path(path)
    if pat_str is None and vocabulary.pat_str is None:
        if detect_format(p) != "gpt2":
            raise VocabularyError(
                f"{p}: a .tiktoken file holds no pre-tokenizer pattern; pass pat_str= (an "
                "encoding name such as 'cl100k_base', or a regex)"
            )
        pat_str = PATTERNS["gpt2"]
    return encoding_from_vocabulary(
        vocabulary,
        name=name or (p.name if p.is_dir() else p.stem),
        pat_str=resolve_pattern(pat_str) if pat_str is not None else None,
        backend=backend,
    )


def read_model_file(path: str | os.PathLike[str], *, allow_unreachable: bool = False) -> Vocabulary:
    """The vocabulary of a tokenizer file, GGUF included (:func:`load_encoding`)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.suffix == ".gguf":
        source = os.fspath(p)
        try:
            metadata = read_gguf_metadata(p)
            document = huggingface_document(metadata, source=source)
        except ValueError as exc:
            raise VocabularyError(str(exc)) from None
        vocabulary = vocabulary_from_document(
            document, source=source, allow_unreachable=allow_unreachable
        )
        rules = vocabulary.rules._replace(**gguf_special_tokens(metadata, vocabulary))
        return vocabulary._replace(rules=rules)
    if detect_format(p) == "huggingface":
        return read_huggingface(
            p / "tokenizer.json" if p.is_dir() else p, allow_unreachable=allow_unreachable
        )
    return load_vocabulary(p)


def encoding_from_vocabulary(
    vocabulary: Vocabulary, *, name: str, pat_str: str | None = None, backend: str | None = None
) -> Encoding:
    """The encoding of ``vocabulary``, its rules included (``pat_str`` replaces its pattern)."""
    pattern = pat_str or vocabulary.pat_str
    if pattern is None:
        raise VocabularyError(f"{name}: the vocabulary has no pattern; pass pat_str=")
    return Encoding(
        name,
        pat_str=pattern,
        mergeable_ranks=vocabulary.mergeable_ranks,
        special_tokens=vocabulary.special_tokens,
        backend=backend,
        rules=vocabulary.rules,
    )
