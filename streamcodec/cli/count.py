"""``streamcodec count``: print the number of tokens in a file, in bounded memory.

    $ streamcodec count book.txt --jobs 2
    184532

Word mode (``--mode word --codes FILE``) counts ``@@`` segments instead.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamcodec.cli.inputs import source, word_blocks
from streamcodec.cli.options import (
    add_input_and_encoding,
    add_text_options,
    build_encoding,
    encoded_chunks,
    word_bpe,
)
from streamcodec.cli.progress import progress

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``count`` and its options."""
    count = commands.add_parser("count", help="print the number of tokens in a file")
    add_input_and_encoding(count)
    add_text_options(count)
    count.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the token count (``--mode word``: the segment count)."""
    if args.mode == "word":
        bpe = word_bpe(args)
        with progress(args) as update:
            print(sum(len(bpe.segment_text(block)) for block in word_blocks(args, update)))
        return 0
    enc = build_encoding(args)
    src = source(args)
    with progress(args) as update, encoded_chunks(enc, src, args, update) as chunks:
        total = sum(map(len, chunks))
    print(total)
    return 0
