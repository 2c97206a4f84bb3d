"""``streamcodec train``: learn a BPE vocabulary (``--mode word``: subword-nmt codes) from files.

    $ streamcodec train corpus/*.txt --vocab-size 4096 -o mine.tiktoken

The output's name picks the format; ``--mode word`` writes a codes file.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path
from typing import Any

from streamcodec.atomicfile import check_folder
from streamcodec.cli.inputs import is_regular_file
from streamcodec.cli.options import add_mode
from streamcodec.cli.progress import TrainProgress
from streamcodec.vocab import BYTE_MODE_PATTERN

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``train`` and its options."""
    train = commands.add_parser(
        "train", help="learn a BPE vocabulary (--mode word: subword-nmt codes) from text files"
    )
    train.add_argument("files", nargs="+", help="UTF-8 text files; each is one document")
    add_mode(train, bytelevel="split with --pattern", word="writes a subword-nmt codes file")
    train.add_argument("--vocab-size", type=int, help="ids, special tokens included (not word)")
    train.add_argument(
        "--pattern", help="pre-tokenizer: a pattern name or a regex (default cl100k_base)"
    )
    train.add_argument("--merges", type=int, help="--mode word: the number of merges to learn")
    train.add_argument(
        "--total-symbols",
        action="store_true",
        help="--mode word: count the characters towards --merges (subword-nmt's --total-symbols)",
    )
    train.add_argument("--special", action="append", default=[], help="a special token (repeat)")
    train.add_argument(
        "--min-frequency", type=int, default=2, help="stop when no pair occurs this often"
    )
    train.add_argument(
        "-o",
        "--output",
        required=True,
        help="vocabulary file, format by name: .tiktoken, tokenizer.json, .model (minbpe), "
        "or encoder.json or an existing folder (GPT-2's two files); --mode word: a codes file",
    )
    train.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Train, save the vocabulary, and say what was written."""
    from streamcodec.formats import detect_format, save_vocabulary
    from streamcodec.training import train
    from streamcodec.vocab import Vocabulary

    if args.mode == "word":
        return _run_word(args)
    if args.merges is not None or args.total_symbols:
        raise ValueError("--merges and --total-symbols are for --mode word; use --vocab-size")
    if args.vocab_size is None:
        raise ValueError(f"--mode {args.mode} needs --vocab-size")
    if args.mode == "bytes" and args.pattern is not None:
        raise ValueError("--mode bytes has no pre-tokenizer: leave out --pattern")
    pattern = BYTE_MODE_PATTERN if args.mode == "bytes" else args.pattern or "cl100k_base"
    output = Path(args.output)
    kind = "gpt2" if output.is_dir() else detect_format(output)  # before the work, not after
    check_folder(args.output)
    paths = _inputs(args.files)
    with TrainProgress(_total_bytes(paths), quiet=args.quiet or not sys.stderr.isatty()) as update:
        enc = train(
            paths,
            vocab_size=args.vocab_size,
            pat_str=pattern,
            special_tokens=args.special,
            min_frequency=args.min_frequency,
            progress=update,
        )
    vocabulary = Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)
    save_vocabulary(vocabulary, output, format=kind)
    print(
        f"trained {len(enc.mergeable_ranks):,} tokens ({len(enc.mergeable_ranks) - 256:,} merges) "
        f"from {update.bytes_read:,} bytes -> {output} ({kind})",
        file=sys.stderr,
    )
    if enc.special_tokens and kind == "tiktoken":
        ids = ", ".join(f"{text} = {i}" for text, i in enc.special_tokens.items())
        print(f"special tokens (not stored in .tiktoken): {ids}", file=sys.stderr)
    return 0


def _run_word(args: argparse.Namespace) -> int:
    from streamcodec.wordbpe import train_word_bpe, write_codes

    if args.merges is None:
        raise ValueError("--mode word needs --merges N (the number of merges to learn)")
    if args.vocab_size is not None or args.pattern is not None or args.special:
        raise ValueError("--mode word takes --merges, not --vocab-size, --pattern or --special")
    check_folder(args.output)
    paths = _inputs(args.files)
    with TrainProgress(_total_bytes(paths), quiet=args.quiet or not sys.stderr.isatty()) as update:
        bpe = train_word_bpe(
            paths,
            num_merges=args.merges,
            min_frequency=args.min_frequency,
            total_symbols=args.total_symbols,
            progress=update,
        )
    write_codes(args.output, bpe.merges)
    print(f"learned {len(bpe.merges):,} merges -> {args.output}", file=sys.stderr)
    return 0


def _total_bytes(paths: list[Path]) -> int | None:
    """The size of the input for the progress bar (None when a FIFO's is unknown)."""
    return sum(path.stat().st_size for path in paths if is_regular_file(str(path))) or None


def _inputs(names: list[str]) -> list[Path]:
    """The files to learn from; a folder or a missing file fails before any work."""
    for name in names:
        if os.path.isdir(name):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", name)
        os.stat(name)  # FileNotFoundError names it
    return [Path(name) for name in names]
