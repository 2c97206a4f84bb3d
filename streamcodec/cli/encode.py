"""``streamcodec encode``: a file (or ``-``) to token ids; ``--mode word``: to ``@@`` segments.

    $ streamcodec encode book.txt -o book.npy -f npy --jobs 2

``--format`` picks how the ids are stored (see ``idformats``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from streamcodec.cli.idformats import FORMATS, WRITERS, format_for
from streamcodec.cli.inputs import (
    Recorder,
    add_document_options,
    documents,
    encoded_documents,
    source,
    text_only,
    word_blocks,
)
from streamcodec.cli.options import (
    add_input_and_encoding,
    add_text_options,
    build_encoding,
    encoded_chunks,
    policy,
    special_token_message,
    word_bpe,
)
from streamcodec.cli.output import output
from streamcodec.cli.progress import Progress, progress
from streamcodec.corpus.document import Document
from streamcodec.encoding import Encoding
from streamcodec.stream.sources import line_blocks, text_chunks
from streamcodec.text.specials import DisallowedSpecialTokenError

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``encode`` and its options."""
    encode = commands.add_parser(
        "encode", help="encode a file (or - for stdin) to token ids (--mode word: to segments)"
    )
    add_input_and_encoding(encode)
    add_document_options(encode)
    add_text_options(encode, jobs="default 1; not with -f jsonl")
    encode.add_argument("-o", "--output", help="write ids here (default: stdout)")
    encode.add_argument(
        "-f",
        "--format",
        choices=FORMATS,
        help="ids: one per line; jsonl: a JSON list per input line or document (each encoded "
        "on its own); u32: little-endian uint32; u16: little-endian uint16 (ids up to 65,535); "
        "npy: a NumPy .npy array of uint32 (default: the -o suffix .jsonl, .u32, .u16 or .npy, "
        "else ids)",
    )
    encode.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Encode the input to ``--output`` (or stdout) in ``--format``."""
    if args.mode == "word":
        text_only(args, "--mode word reads the input as text")
        bpe = word_bpe(args)
        with progress(args) as update, output(args.output) as out:
            for block in word_blocks(args, update):
                out.write(bpe.apply(block).encode("utf-8", "surrogateescape"))
        return 0
    args.format = format_for(args.output, args.format)
    if args.format == "jsonl" and args.jobs > 1:
        raise ValueError("-f jsonl encodes line by line in one process: leave out --jobs")
    enc = build_encoding(args)
    docs = documents(args)
    if docs is not None and args.jobs > 1:
        raise ValueError("documents are encoded in one process: leave out --jobs")
    count = _write_documents(enc, docs, args) if docs is not None else _write_text(enc, args)
    if args.output is not None and not args.quiet:
        print(
            f"encoded {args.input} into {count:,} tokens ({enc.name}) -> {args.output}",
            file=sys.stderr,
        )
    return 0


def _write_text(enc: Encoding, args: argparse.Namespace) -> int:
    """The input as one text, streamed; the number of ids."""
    src = source(args)
    with progress(args) as update, output(args.output, seekable=args.format == "npy") as out:
        if args.format == "jsonl":
            return _write_jsonl(enc, src, args, update, out)
        with encoded_chunks(enc, src, args, update) as chunks:
            return WRITERS[args.format](chunks, out)


def _write_documents(enc: Encoding, docs: Iterator[Document], args: argparse.Namespace) -> int:
    """Each document encoded alone (``-f jsonl``: a list each); the number of ids."""
    lists = encoded_documents(enc, docs, _without_errors(policy(args, enc)))
    write = _write_lists if args.format == "jsonl" else WRITERS[args.format]
    with output(args.output, seekable=args.format == "npy") as out:
        return write(lists, out)


def _write_jsonl(
    enc: Encoding,
    src: Path | Recorder,
    args: argparse.Namespace,
    update: Progress | None,
    out: BinaryIO,
) -> int:
    """Each line encoded on its own, as a JSON list."""
    options = policy(args, enc)
    blocks = line_blocks(text_chunks(src, errors=options["errors"], progress=update))
    lines = (line for block in blocks for line in block.removesuffix("\n").split("\n"))
    return _write_lists(_encoded_lines(enc, lines, src, _without_errors(options)), out)


def _encoded_lines(
    enc: Encoding, lines: Iterator[str], src: Path | Recorder, options: dict[str, Any]
) -> Iterator[list[int]]:
    for line in lines:
        try:
            yield enc.encode(line, **options)
        except DisallowedSpecialTokenError as exc:
            raise ValueError(special_token_message(src, exc.token)) from None


def _without_errors(options: dict[str, Any]) -> dict[str, Any]:
    """``policy``'s options as ``Encoding.encode`` takes them (text is decoded already)."""
    return {key: value for key, value in options.items() if key != "errors"}


def _write_lists(lists: Iterator[list[int]], out: BinaryIO) -> int:
    """Each list of ids as a JSON list on a line of its own; the number of ids."""
    count = 0
    for ids in lists:
        out.write(json.dumps(ids, separators=(",", ":")).encode() + b"\n")
        count += len(ids)
    return count
