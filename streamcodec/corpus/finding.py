"""What the user named, as the corpus's inputs: files, folders and globs, in a fixed order.

:func:`find_inputs` expands names into :class:`~streamcodec.corpus.document.Input` records:
folders walked sorted (hidden names left out), globs sorted (``**`` recursive), ``-`` for
standard input, so the same names always give the same corpus. An input's kind comes from its
name: ``.jsonl``/``.ndjson``/``.json`` are JSON Lines, ``.parquet``/``.pq`` Parquet, anything
else plain text; ``.gz``, ``.xz`` and ``.zst`` after the kind's suffix say how it is
compressed. Anything but a regular file is refused by name
(:func:`streamcodec.corpus.files.regular_file`), and the output folder is never an input.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ["b.jsonl.zst", "a.txt"]:
    ...     open(os.path.join(folder, name), "w").close()
    >>> [(os.path.basename(i.path), i.kind, i.compression) for i in find_inputs([folder])]
    [('a.txt', 'text', None), ('b.jsonl.zst', 'jsonl', 'zst')]
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from streamcodec.corpus.document import STDIN, Input, Kind
from streamcodec.corpus.files import COMPRESSIONS, regular_file

__all__ = ["find_inputs"]

_KINDS: dict[str, Kind] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
_KINDS |= {".parquet": "parquet", ".pq": "parquet"}


def find_inputs(
    names: Sequence[str | os.PathLike[str]], *, stdin_kind: Kind = "text", skip: str | None = None
) -> list[Input]:
    """The inputs ``names`` stand for, in order: files, folders (walked, sorted, hidden names
    left out), globs (sorted; ``**`` recursive) and ``-`` for standard input. ``skip`` is a
    folder left out of the walk (the output folder). Anything but a regular file (a FIFO, a
    device), named or met in a folder or a glob, is refused by name."""
    found: list[Input] = []
    skipped = 0
    for name in (os.fspath(n) for n in names):
        if name == STDIN:
            if any(inp.path == STDIN for inp in found):
                raise ValueError("standard input (-) is named twice: it can be read once")
            found.append(Input(STDIN, stdin_kind, None, -1, 0))
            continue
        if os.path.isdir(name):
            paths = _walk(name)
        elif os.path.exists(name) or not glob.has_magic(name):
            paths = [name]
        else:
            paths = sorted(p for p in glob.glob(name, recursive=True) if not os.path.isdir(p))
            if not paths:
                raise FileNotFoundError(2, "no file matches this pattern", name)
        kept = [path for path in paths if not _inside(path, skip)]
        skipped += len(paths) - len(kept)
        found += [_input(path) for path in kept]
    if not found and skipped:
        raise ValueError(
            f"no input files: the {skipped} found are inside the output folder {skip}, whose "
            "files are never inputs; name the inputs apart from -o"
        )
    if not found:
        named = ", ".join(os.fspath(n) for n in names)
        raise ValueError(
            f"no input files in {named}: name files, folders, globs or - for standard input"
        )
    return found


def _inside(path: str, folder: str | None) -> bool:
    """Whether ``path`` is in ``folder`` (the output: a glob may reach it too)."""
    if folder is None:
        return False
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, top]) == top


def _walk(folder: str) -> list[str]:
    paths = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        paths += [os.path.join(root, f) for f in files if not f.startswith(".")]
    return sorted(paths)


def _input(path: str) -> Input:
    info = regular_file(path)  # a FIFO would block, a device never end: refused by name
    stem, suffix = os.path.splitext(path)
    compression = COMPRESSIONS.get(suffix.lower())
    if compression is not None:
        suffix = os.path.splitext(stem)[1]
    kind = _KINDS.get(suffix.lower(), "text")
    if kind == "parquet" and compression is not None:
        raise ValueError(f"{path}: a compressed Parquet file; Parquet compresses inside the file")
    # absolute: a rerun, check-corpus and Dask workers may start elsewhere
    return Input(os.path.abspath(path), kind, compression, info.st_size, info.st_mtime_ns)
