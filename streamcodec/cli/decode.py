"""``streamcodec decode``: token ids back to the exact bytes; ``--mode word``: join segments.

    $ streamcodec decode book.npy -f npy -o book.txt

A malformed id is refused with the file and the line or record where it is.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamcodec.cli.idformats import FORMATS, READERS, format_for, read_jsonl
from streamcodec.cli.inputs import shown_name, word_blocks
from streamcodec.cli.options import add_input_and_encoding, build_encoding, refuse_ignored
from streamcodec.cli.output import output
from streamcodec.cli.progress import progress
from streamcodec.encoding import Encoding
from streamcodec.wordbpe import remove_separators

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``decode`` and its options."""
    decode = commands.add_parser(
        "decode",
        help="decode token ids to the exact bytes they stand for (--mode word: join segments)",
    )
    add_input_and_encoding(decode, pattern=False)  # ids need no pre-tokenizer
    decode.add_argument("-o", "--output", help="write the bytes here (default: stdout)")
    decode.add_argument(
        "-f",
        "--format",
        choices=FORMATS,
        help="how the ids are stored (default: the input's suffix .jsonl, .u32, .u16 or .npy, "
        "else ids)",
    )
    decode.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Decode the input to ``--output`` (or stdout); jsonl gives one line per list."""
    refuse_ignored(args)
    if args.mode == "word":
        with progress(args) as update, output(args.output) as out:
            for block in word_blocks(args, update):
                joined = remove_separators(block, separator=args.separator or "@@")
                out.write(joined.encode("utf-8", "surrogateescape"))
        return 0
    enc = build_encoding(args)
    args.format = format_for(args.input, args.format)
    jsonl = args.format == "jsonl"
    read = read_jsonl if jsonl else READERS[args.format]
    done = 0  # ids decoded so far
    with progress(args) as update, output(args.output) as out:
        for ids in read(args.input, update):
            out.write(_decode(enc, ids, shown_name(args.input), done) + (b"\n" if jsonl else b""))
            done += len(ids)
    return 0


def _decode(enc: Encoding, ids: list[int], name: str, done: int) -> bytes:
    """The bytes of ``ids``; an id the encoding does not have is named with its place."""
    try:
        return enc.decode_bytes(ids)
    except KeyError:
        for place, token in enumerate(ids, start=done + 1):
            try:
                enc.decode_single_token_bytes(token)
            except KeyError:
                where = f"{name}: id #{place:,} ({token})"
                raise ValueError(f"{where} is not a token of {enc.name}") from None
        raise
