"""``streamcodec split``: cut a file into numbered windows of at most N tokens, each exact alone.

    $ streamcodec split book.txt --max-tokens 512 -o book.windows
    streamcodec: wrote 361 windows (184,532 tokens) to book.windows

The windows are UTF-8 files ``000001.txt``, ``000002.txt``... in the folder ``-o DIR``, which
must be new or empty: they are written into a temporary folder beside it that is renamed to
``DIR`` at the end, so an interrupted run leaves no partial set. Each window encodes on its own
to exactly its tokens; without ``--overlap`` the windows joined are the input
(``Encoding.split``, docs/budgets.md).
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

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
    add_input_and_encoding(split)
    add_text_options(split, jobs=None)
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
    split.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the windows; print a summary on stderr unless ``--quiet``."""
    _refuse(args)
    target = Path(args.output)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(errno.EEXIST, "exists and is not an empty folder", args.output)
    enc = build_encoding(args)
    src = source(args)
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.absolute().parent))
    try:
        os.chmod(folder, 0o777 & ~_umask())  # mkdtemp's folder is owner-only
        count = tokens = 0
        with progress(args) as update:
            windows = enc.split(
                src, args.max_tokens, overlap=args.overlap, **policy(args, enc), progress=update
            )
            for count, window in enumerate(windows, 1):
                (folder / f"{count:06d}.txt").write_bytes(window.text.encode("utf-8"))
                tokens += len(window.ids)
        if target.exists():
            target.rmdir()
        folder.rename(target)
    except DisallowedSpecialTokenError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ValueError(special_token_message(src, exc.token)) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not args.quiet:
        print(
            f"streamcodec: wrote {count:,} windows ({tokens:,} tokens) of "
            f"{shown_name(args.input)} to {args.output}",
            file=sys.stderr,
        )
    return 0


def _refuse(args: argparse.Namespace) -> None:
    """The options split cannot honour, named."""
    if args.mode == "word":
        raise ValueError("split cuts tokens: --mode word is not supported")
    if args.errors == "surrogateescape":
        raise ValueError("split writes text: use --errors strict or --errors replace")
    if args.overlap >= args.max_tokens:
        raise ValueError("--overlap must be below --max-tokens")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
