"""``streamcodec count``: print the number of tokens in a file, in bounded memory.

    $ streamcodec count book.txt --jobs 2
    184532
    $ streamcodec count book.txt --limit 8192 || echo "over budget"

Word mode (``--mode word --codes FILE``) counts ``@@`` segments instead. With ``--limit N`` the
count stops as soon as it is sure to pass ``N`` (the rest of the input is not read, and one
endless pre-token, a stream of NUL bytes, only until ``N`` tokens could not hold it) and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from streamcodec.cli.inputs import (
    add_document_options,
    documents,
    encoded_documents,
    shown_name,
    source,
    text_only,
    word_blocks,
)
from streamcodec.cli.options import (
    add_input_and_encoding,
    add_text_options,
    build_encoding,
    policy,
    special_token_errors,
    whole_number,
    word_bpe,
)
from streamcodec.cli.progress import progress

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``count`` and its options."""
    count = commands.add_parser("count", help="print the number of tokens in a file")
    add_input_and_encoding(count)
    add_document_options(count)
    add_text_options(count, jobs="default 1")
    count.add_argument(
        "--limit",
        type=whole_number,
        metavar="N",
        help="exit 1 as soon as the count passes N, without reading further",
    )
    count.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the token count (``--mode word``: the segment count); 1 when over ``--limit``."""
    if args.mode == "word":
        text_only(args, "--mode word reads the input as text")
        bpe = word_bpe(args)
        with progress(args) as update:
            counts = (len(bpe.segment_text(block)) for block in word_blocks(args, update))
            total = _up_to(counts, args.limit)
    elif (docs := documents(args)) is not None:
        enc = build_encoding(args)
        options = {k: v for k, v in policy(args, enc).items() if k != "errors"}
        total = _up_to(map(len, encoded_documents(enc, docs, options)), args.limit)
    else:
        enc = build_encoding(args)
        src = source(args)
        with progress(args) as update, special_token_errors(src):
            total = enc.count_tokens(
                src, **policy(args, enc), jobs=args.jobs, limit=args.limit, progress=update
            )
    if total is None:
        name = shown_name(args.input)
        print(f"streamcodec: {name} has more than {args.limit:,} tokens", file=sys.stderr)
        return 1
    print(total)
    return 0


def _up_to(counts: Iterator[int], limit: int | None) -> int | None:
    """The sum of ``counts``, or None as soon as it passes ``limit`` (the rest is not read)."""
    total = 0
    for n in counts:
        total += n
        if limit is not None and total > limit:
            return None
    return total
