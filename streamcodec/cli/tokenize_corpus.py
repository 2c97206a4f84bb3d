"""``streamcodec tokenize-corpus``: files, folders and globs to token shards and a manifest.

    $ streamcodec tokenize-corpus data/*.jsonl.zst --field text -o tokens/ --jobs 2
    $ streamcodec tokenize-corpus books/ -o tokens/ --dask tcp://scheduler:8786
    $ streamcodec tokenize-corpus web.jsonl -e r50k_base --format nanogpt -o tokens/
    $ streamcodec tokenize-corpus web.jsonl -e Meta-Llama-3-8B/tokenizer.json -o tokens/

Run the same command again after an interruption: only the missing shards are made
(``--restart`` starts over). The format and the manifest: docs/corpus.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from streamcodec.cli.heap import REUSED, keep_heap_flat
from streamcodec.cli.options import (
    DEFAULT_ENCODING,
    add_encoding,
    add_model_pattern,
    encoding_or_model,
    positive_int,
)
from streamcodec.cli.progress import corpus_progress

__all__ = ["add", "byte_size", "unescape"]

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text: str) -> int:
    """An argparse type: bytes, with an optional K, M or G (powers of 1024).

    >>> byte_size("64M")
    67108864
    """
    number, unit = text[:-1], text[-1:].upper()
    if unit not in _UNITS:
        number, unit = text, ""
    if not number.isascii() or not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 500000, 64M or 1G")
    return int(number) * _UNITS[unit]


def unescape(text: str) -> str:
    r"""``\n``, ``\r``, ``\t``, ``\0`` and ``\\`` read as the characters they stand for.

    >>> unescape(r"\n\n---\n")
    '\n\n---\n'
    """
    return re.sub(r"\\([nrt0\\])", lambda m: _ESCAPES[m[1]], text)


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\"}


def add(commands: Any) -> None:
    """Declare ``tokenize-corpus`` and its options."""
    command = commands.add_parser(
        "tokenize-corpus",
        help="tokenize files, folders or globs (text, JSON Lines, Parquet; .gz, .xz, .zst) "
        "into shards a trainer reads (NumPy, nanoGPT, llm.c, Megatron, datatrove, Parquet) and "
        "a manifest, resumably",
    )
    command.add_argument("inputs", nargs="+", metavar="INPUT", help="files, folders, globs, -")
    command.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the folder")
    add_encoding(command)
    add_model_pattern(command)
    command.add_argument("--field", help="JSON Lines: the field holding the text (default text)")
    command.add_argument("--column", help="Parquet: the text column (default text)")
    command.add_argument(
        "--separator",
        metavar="TEXT",
        help="plain text: split each file into documents at TEXT (backslash escapes such as "
        "\\n are read; default: a file is one document)",
    )
    command.add_argument(
        "--format",
        default="streamcodec",
        help="the shards' layout: streamcodec (.npy), nanogpt (.bin), llmc (.bin with llm.c's "
        "header), megatron (.bin + .idx), datatrove (.ds + .ds.index), parquet (input_ids); "
        "default streamcodec",
    )
    for flag, where in (("--bos", "before"), ("--eos", "after")):
        command.add_argument(
            flag,
            metavar="TOKEN",
            help=f"the special token {where} each document, or none (default: the encoding's; "
            "tiktoken's put <|endoftext|> after each)",
        )
    command.add_argument("--separator-token", metavar="TOKEN", help="the old name of --eos")
    command.add_argument(
        "--keep",
        type=lambda text: [name for name in text.split(",") if name],
        default=[],
        metavar="FIELD,...",
        help="JSON Lines fields or Parquet columns carried with each document (an id, a URL): "
        "into --format parquet's rows, else a .fields.jsonl file beside each shard",
    )
    command.add_argument(
        "--special-as-text",
        action="store_true",
        help="encode special tokens found in documents as text (default: refuse them)",
    )
    command.add_argument(
        "--errors",
        default="strict",
        choices=["strict", "replace"],
        help="invalid UTF-8: fail (default) or read it as U+FFFD",
    )
    command.add_argument(
        "--shard-size",
        type=byte_size,
        default="64M",
        metavar="BYTES",
        help="close a shard once it holds this much input (default 64M)",
    )
    command.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        help="cores used (default: every core this process may use): 1 reads, encodes and "
        "writes on one thread; more encode on this many threads, the reading, hashing and "
        "writing beside them",
    )
    command.add_argument(
        "--dask", metavar="ADDRESS", help="make the shards on the Dask cluster of this scheduler"
    )
    command.add_argument(
        "--restart", action="store_true", help="start over, even if OUT_DIR has another job"
    )
    command.add_argument(
        "--verify",
        action="store_true",
        help="on a rerun, check the finished shards' SHA-256s too (their sizes are always "
        "checked) and make again any that changed; read their inputs again and refuse one "
        "whose content changed at the same size and time",
    )
    command.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    command.set_defaults(
        run=run,
        interrupted_note="the finished shards are kept: the same command makes the others",
    )


def run(args: argparse.Namespace) -> int:
    """Tokenize the inputs into ``--output``; a summary on stderr."""
    from streamcodec.corpus import tokenize
    from streamcodec.engine.batch import default_threads

    keep_heap_flat(threshold=REUSED)  # its tasks' buffers reused from the heap, not re-mapped

    encoding = encoding_or_model(args.encoding or DEFAULT_ENCODING, args.pattern)
    separator = None
    if args.separator is not None:
        separator = unescape(args.separator)
    if args.separator_token is not None:
        if args.eos is not None:
            raise ValueError("--separator-token is the old name of --eos: pass --eos alone")
        args.eos = args.separator_token
    bos, eos = (_boundary(value) for value in (args.bos, args.eos))
    client = None
    if args.dask is not None:
        from distributed import Client

        client = Client(args.dask)  # type: ignore[no-untyped-call]
    started = time.perf_counter()
    with corpus_progress(args.inputs, quiet=args.quiet) as update:
        manifest = tokenize(
            args.inputs,
            args.output,
            encoding=encoding,
            jobs=args.jobs or default_threads(),
            client=client,
            shard_bytes=args.shard_size,
            field=args.field,
            column=args.column,
            separator=separator,
            format=args.format,
            bos=bos,
            eos=eos,
            keep=args.keep,
            special_as_text=args.special_as_text,
            errors=args.errors,
            stdin_kind="jsonl" if args.field is not None else "text",
            restart=args.restart,
            verify=args.verify,
            progress=update,
        )
    if not args.quiet:
        shards = manifest["shards"]
        tokens = sum(entry["tokens"] for entry in shards)
        documents = sum(entry["documents"] for entry in shards)
        layout = manifest["layout"]
        print(
            f"streamcodec: {args.output}: {len(shards)} shards, {documents:,} documents, "
            f"{tokens:,} tokens ({layout['format']}, {layout['dtype']}) in "
            f"{time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    return 0


def _boundary(value: str | None) -> str | None:
    """A ``--bos``/``--eos`` value: a token, ``none``, or the encoding's default (absent)."""
    from streamcodec.corpus.tokenize import ENCODING_DEFAULT

    if value is None:
        return ENCODING_DEFAULT
    return None if value.lower() == "none" else value
