"""``streamcodec check-corpus``: a corpus's shards read again against its manifest.

    $ streamcodec check-corpus tokens/manifest.json --text 100

Exit status 0 with a summary, or 1 with what does not match.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamcodec.cli.options import add_encoding, add_model_pattern, encoding_or_model, whole_number

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``check-corpus`` and its options."""
    command = commands.add_parser(
        "check-corpus", help="check a corpus's shards against its manifest (and its text)"
    )
    command.add_argument("manifest", metavar="MANIFEST", help="OUT_DIR/manifest.json, or OUT_DIR")
    command.add_argument(
        "--text",
        type=whole_number,
        nargs="?",
        const=100,
        default=0,
        metavar="N",
        help="also decode N documents drawn at random (default 100) and compare them with "
        "the inputs",
    )
    command.add_argument("--seed", type=whole_number, default=0, help="the draw (default 0)")
    add_encoding(command)  # for --text: the corpus's own, unless a model's file is named
    add_model_pattern(command)
    command.add_argument(
        "--inputs",
        action="store_true",
        help="also read every input again and compare it with what the run read (a SHA-256 "
        "of each shard's sources): finds an input changed at the same size and time",
    )
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the summary; a mismatch is an error (exit 1)."""
    from streamcodec.corpus import check_corpus

    encoding = None
    if args.encoding is not None:
        encoding = encoding_or_model(args.encoding, args.pattern)
    print(
        check_corpus(
            args.manifest, text=args.text, seed=args.seed, encoding=encoding, inputs=args.inputs
        )
    )
    return 0
