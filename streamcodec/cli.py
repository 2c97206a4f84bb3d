"""The command line: ``streamcodec encode | decode | count | train``.

Only this module prints or touches the terminal. Errors from the library become one line on
stderr and exit status 1; the output file is written atomically.

``--mode`` picks the kind of BPE: ``bytelevel`` (the encoding's own pre-tokenizer pattern, as
tiktoken), ``bytes`` (the same merges with no pre-tokenization: the whole text is one piece) or
``word`` (Sennrich's word-level BPE with a subword-nmt codes file: text in, ``@@``-marked
segments out).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from streamcodec.atomicfile import atomic_output
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding, list_encoding_names
from streamcodec.vocab import BYTE_MODE_PATTERN
from streamcodec.wordbpe import WordBPE, read_codes, remove_separators

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except KeyboardInterrupt:
        print("streamcodec: interrupted; no output was written", file=sys.stderr)
        return 130
    except (OSError, ValueError, KeyError) as exc:
        print(f"streamcodec: error: {_message(exc)}", file=sys.stderr)
        return 1


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamcodec", description="Exact, streaming byte-level BPE (tiktoken-compatible)."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    encode = commands.add_parser(
        "encode", help="encode a file (or - for stdin) to token ids (--mode word: to segments)"
    )
    _add_input_and_encoding(encode)
    encode.add_argument("-o", "--output", help="write ids here (default: stdout)")
    encode.set_defaults(run=_run_encode)

    count = commands.add_parser("count", help="print the number of tokens in a file")
    _add_input_and_encoding(count)
    count.set_defaults(run=_run_count)

    decode = commands.add_parser(
        "decode", help="decode whitespace-separated ids to text (--mode word: join segments)"
    )
    _add_input_and_encoding(decode)
    decode.add_argument("-o", "--output", help="write text here (default: stdout)")
    decode.set_defaults(run=_run_decode)
    _add_train(commands)
    return parser


def _add_input_and_encoding(command: argparse.ArgumentParser) -> None:
    command.add_argument("input", help="input file, or - for standard input")
    command.add_argument(
        "-e",
        "--encoding",
        default="cl100k_base",
        help=f"encoding name (default cl100k_base; known: {', '.join(list_encoding_names())}) "
        "or a vocabulary file",
    )
    _add_mode(command, bytelevel="the encoding's pre-tokenizer", word="with --codes")
    command.add_argument("--codes", help="--mode word: a subword-nmt codes file")
    command.add_argument(
        "--separator", default="@@", help="--mode word: the continuation mark (default @@)"
    )


def _add_mode(command: argparse.ArgumentParser, *, bytelevel: str, word: str) -> None:
    command.add_argument(
        "--mode",
        choices=["bytelevel", "bytes", "word"],
        default="bytelevel",
        help=f"bytelevel: {bytelevel} (default); bytes: no pre-tokenization; "
        f"word: Sennrich word-level BPE, {word}",
    )


def _read_text(path: str) -> str:
    # Bytes, then UTF-8: text mode would turn CR LF into LF and change the tokens.
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = "standard input" if path == "-" else path
        raise ValueError(f"{where}: invalid UTF-8 at byte offset {exc.start}") from None


def _write(path: str | None, data: bytes) -> None:
    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with atomic_output(path) as f:
        f.write(data)


def _encoding(args: argparse.Namespace) -> Encoding:
    enc = _named_or_file_encoding(args.encoding, args.mode)
    if args.mode == "bytes":
        return Encoding(
            f"{enc.name} (bytes)",
            pat_str=BYTE_MODE_PATTERN,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
        )
    return enc


def _named_or_file_encoding(name: str, mode: str) -> Encoding:
    """A registered encoding, or else a vocabulary file (a format ``streamcodec train`` writes)."""
    if name in list_encoding_names() or not os.path.exists(name):
        return get_encoding(name)
    from streamcodec.formats import load_vocabulary

    vocabulary = load_vocabulary(name)
    pattern = BYTE_MODE_PATTERN if mode == "bytes" else vocabulary.pat_str
    if pattern is None:
        raise ValueError(
            f"{name}: the file stores no pre-tokenizer pattern; use --mode bytes, or a "
            "tokenizer.json or minbpe .model file"
        )
    return Encoding(
        name,
        pat_str=pattern,
        mergeable_ranks=vocabulary.mergeable_ranks,
        special_tokens=vocabulary.special_tokens,
    )


def _word_bpe(args: argparse.Namespace) -> WordBPE:
    if args.codes is None:
        raise ValueError("--mode word needs --codes FILE (a subword-nmt codes file)")
    return WordBPE.from_codes(read_codes(args.codes), separator=args.separator)


def _run_encode(args: argparse.Namespace) -> int:
    text = _read_text(args.input)
    if args.mode == "word":
        _write(args.output, _word_bpe(args).apply(text).encode("utf-8"))
        return 0
    enc = _encoding(args)
    ids = enc.encode(text)
    _write(args.output, "".join(f"{token}\n" for token in ids).encode())
    where = args.output or "stdout"
    print(
        f"encoded {len(text.encode('utf-8', 'surrogatepass')):,} bytes of {args.input} into "
        f"{len(ids):,} tokens ({enc.name}) -> {where}",
        file=sys.stderr,
    )
    return 0


def _run_count(args: argparse.Namespace) -> int:
    text = _read_text(args.input)
    if args.mode == "word":
        print(len(_word_bpe(args).segment_text(text)))
    else:
        print(len(_encoding(args).encode(text)))
    return 0


def _run_decode(args: argparse.Namespace) -> int:
    text = _read_text(args.input)
    if args.mode == "word":
        _write(args.output, remove_separators(text, separator=args.separator).encode("utf-8"))
        return 0
    ids = [int(token) for token in text.split()]
    _write(args.output, _encoding(args).decode_bytes(ids))
    return 0


def _add_train(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    train = commands.add_parser(
        "train", help="learn a BPE vocabulary (--mode word: subword-nmt codes) from text files"
    )
    train.add_argument("files", nargs="+", help="UTF-8 text files; each is one document")
    _add_mode(train, bytelevel="split with --pattern", word="writes a subword-nmt codes file")
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
    train.set_defaults(run=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    from pathlib import Path

    from streamcodec.formats import detect_format, save_vocabulary
    from streamcodec.training import train
    from streamcodec.vocab import Vocabulary

    if args.mode == "word":
        return _run_train_word(args)
    if args.merges is not None or args.total_symbols:
        raise ValueError("--merges and --total-symbols are for --mode word; use --vocab-size")
    if args.vocab_size is None:
        raise ValueError(f"--mode {args.mode} needs --vocab-size")
    if args.mode == "bytes" and args.pattern is not None:
        raise ValueError("--mode bytes has no pre-tokenizer: leave out --pattern")
    pattern = BYTE_MODE_PATTERN if args.mode == "bytes" else args.pattern or "cl100k_base"
    output = Path(args.output)
    kind = "gpt2" if output.is_dir() else detect_format(output)  # before the work, not after
    paths = [Path(name) for name in args.files]
    total_bytes = sum(path.stat().st_size for path in paths)
    with _TrainProgress(total_bytes, quiet=args.quiet or not sys.stderr.isatty()) as progress:
        enc = train(
            paths,
            vocab_size=args.vocab_size,
            pat_str=pattern,
            special_tokens=args.special,
            min_frequency=args.min_frequency,
            progress=progress,
        )
    vocabulary = Vocabulary(enc.mergeable_ranks, enc.special_tokens, enc.pat_str)
    save_vocabulary(vocabulary, output, format=kind)
    print(
        f"trained {len(enc.mergeable_ranks):,} tokens ({len(enc.mergeable_ranks) - 256:,} merges) "
        f"from {total_bytes:,} bytes -> {output} ({kind})",
        file=sys.stderr,
    )
    if enc.special_tokens and kind == "tiktoken":
        ids = ", ".join(f"{text} = {i}" for text, i in enc.special_tokens.items())
        print(f"special tokens (not stored in .tiktoken): {ids}", file=sys.stderr)
    return 0


def _run_train_word(args: argparse.Namespace) -> int:
    from pathlib import Path

    from streamcodec.wordbpe import train_word_bpe, write_codes

    if args.merges is None:
        raise ValueError("--mode word needs --merges N (the number of merges to learn)")
    if args.vocab_size is not None or args.pattern is not None or args.special:
        raise ValueError("--mode word takes --merges, not --vocab-size, --pattern or --special")
    bpe = train_word_bpe(
        [Path(name) for name in args.files],
        num_merges=args.merges,
        min_frequency=args.min_frequency,
        total_symbols=args.total_symbols,
    )
    write_codes(args.output, bpe.merges)
    print(f"learned {len(bpe.merges):,} merges -> {args.output}", file=sys.stderr)
    return 0


class _TrainProgress:
    """tqdm bars on stderr for the trainer's two stages: reading (bytes), then merging."""

    def __init__(self, total_bytes: int, *, quiet: bool) -> None:
        self._total_bytes = total_bytes
        self._quiet = quiet
        self._bar: Any = None
        self._stage = ""

    def __enter__(self) -> _TrainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if self._quiet:
            return
        if stage != self._stage:
            from tqdm import tqdm

            if self._bar is not None:
                self._bar.close()
            self._stage = stage
            if stage == "count":
                self._bar = tqdm(
                    total=self._total_bytes, unit="B", unit_scale=True, desc="counting"
                )
            else:
                self._bar = tqdm(total=total, unit=" merges", desc="merging")
        self._bar.update(done - self._bar.n)
