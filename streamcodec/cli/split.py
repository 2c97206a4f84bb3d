"""``streamcodec split``: cut a file into numbered windows of at most N tokens, each exact alone.

    $ streamcodec split book.txt --max-tokens 512 -o book.windows
    streamcodec: wrote 361 windows (184,532 tokens) to book.windows

The windows are UTF-8 files ``000001.txt``, ``000002.txt``... in the folder ``-o DIR``, which
must be new (its parent there) or empty, and is checked before any work: they are written into a
temporary folder beside it that is renamed to ``DIR`` at the end (through a symlink, to its
target: the link stays), so an interrupted run leaves no partial set. Errors name ``DIR``.
Each window encodes on its own to exactly its tokens; without ``--overlap`` the windows joined
are the input (``Encoding.split``, docs/budgets.md).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from streamcodec.atomicfile import check_folder, naming, temporary_name, temporary_prefix
from streamcodec.cli.inputs import shown_name, source
from streamcodec.cli.options import (
    add_input_and_encoding,
    add_text_options,
    build_encoding,
    policy,
    positive_int,
    special_token_message,
    whole_number,
)
from streamcodec.cli.progress import progress
from streamcodec.text.specials import DisallowedSpecialTokenError

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``split`` and its options."""
    split = commands.add_parser(
        "split", help="cut a file into numbered windows of at most N tokens, each exact alone"
    )
    add_input_and_encoding(split, word=False)  # windows of tokens: no --mode word
    add_text_options(split, jobs=None, keeps_bytes=False)  # the windows are UTF-8 text
    split.add_argument(
        "--max-tokens", type=positive_int, required=True, metavar="N", help="tokens per window"
    )
    split.add_argument(
        "--overlap",
        type=whole_number,
        default=0,
        metavar="K",
        help="start each window up to K tokens before the previous one ends (default 0)",
    )
    split.add_argument(
        "-o", "--output", required=True, metavar="DIR", help="a new or empty folder for them"
    )
    split.set_defaults(run=run, accept_invalid="--errors replace")


def run(args: argparse.Namespace) -> int:
    """Write the windows; print a summary on stderr unless ``--quiet``."""
    _refuse(args)
    target = _target(args.output)
    enc = build_encoding(args)
    src = source(args)
    folder: Path | None = None
    try:
        with naming(args.output):  # a read-only or full file system, a folder we may not write
            prefix = temporary_prefix(str(target))
            while True:
                folder = Path(temporary_name(str(target.parent), prefix))  # held before made
                with contextlib.suppress(FileExistsError):
                    folder.mkdir()  # 0o777 less the umask, as any new folder
                    break
        assert folder is not None
        count = tokens = 0
        with progress(args) as update:
            windows = enc.split(
                src, args.max_tokens, overlap=args.overlap, **policy(args, enc), progress=update
            )
            for count, window in enumerate(windows, 1):
                with naming(args.output):  # a full disk names the user's folder
                    (folder / f"{count:06d}.txt").write_bytes(window.text.encode("utf-8"))
                tokens += len(window.ids)
        with naming(args.output):
            if target.exists():
                target.rmdir()  # still empty: checked before the work, and no one wrote in it
            folder.rename(target)
    except DisallowedSpecialTokenError as exc:
        _remove(folder)
        raise ValueError(special_token_message(src, exc.token)) from None
    except BaseException:
        _remove(folder)
        raise
    if not args.quiet:
        print(
            f"streamcodec: wrote {count:,} windows ({tokens:,} tokens) of "
            f"{shown_name(args.input)} to {args.output}",
            file=sys.stderr,
        )
    return 0


def _target(output: str) -> Path:
    """The folder ``-o`` names (through symlinks), checked before any work: a new folder whose
    parent is there, or an empty folder, which the windows' folder replaces; not the current
    folder, nor one holding it (it cannot be replaced under the shell that stands in it)."""
    target = Path(os.path.realpath(output))
    if target.is_dir():
        if any(target.iterdir()):
            raise FileExistsError(errno.EEXIST, "exists and is not an empty folder", output)
        if Path.cwd() == target or target in Path.cwd().parents:
            raise ValueError(f"{output}: is the current folder; name a new folder for the windows")
    elif target.exists():
        raise FileExistsError(errno.EEXIST, "exists and is not a folder", output)
    else:
        check_folder(output)
    with naming(output):  # a folder we may not write in: said now, not after the work
        if not os.access(target.parent, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", str(target.parent))
    return target


def _refuse(args: argparse.Namespace) -> None:
    """The options split cannot honour, named."""
    if args.overlap >= args.max_tokens:
        raise ValueError("--overlap must be below --max-tokens")


def _remove(folder: Path | None) -> None:
    if folder is not None:  # else none was named yet
        shutil.rmtree(folder, ignore_errors=True)
