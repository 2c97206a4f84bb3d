"""The command line: ``streamcodec encode | decode | count | train``, in bounded memory.

Only this module prints or touches the terminal. Errors from the library become one line on
stderr and exit status 1; Ctrl-C exits with 130. Output files are written atomically (a temporary
file renamed at the end), so an interrupted run leaves no file that looks complete. A progress bar
(bytes read) is shown on stderr when it is a terminal, unless ``--quiet``.

Each subcommand is one ``_add_<name>`` function that declares its options and the function that
runs it; add a command by writing another and listing it in ``COMMANDS``.

``--mode`` picks the kind of BPE: ``bytelevel`` (the encoding's pre-tokenizer pattern, as
tiktoken), ``bytes`` (no pre-tokenization: the whole text is one piece) or ``word`` (Sennrich's
word-level BPE with a subword-nmt codes file: text in, ``@@``-marked segments out).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import struct
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from streamcodec.atomicfile import atomic_output
from streamcodec.audit import Audit, Explanation, audit_text, explain_piece
from streamcodec.encoding import DisallowedSpecialTokenError, Encoding
from streamcodec.formats import load_vocabulary
from streamcodec.registry import get_encoding, list_encoding_names
from streamcodec.stream.sources import line_blocks, text_chunks
from streamcodec.vocab import BYTE_MODE_PATTERN, resolve_pattern
from streamcodec.wordbpe import WordBPE, read_codes, remove_separators

__all__ = ["main"]

Progress = Callable[[int], object]
FORMATS = ["ids", "jsonl", "u32", "npy"]
NPY_PREAMBLE = 128  # bytes before the data of a .npy we write: room for any length, aligned


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except KeyboardInterrupt:
        print("streamcodec: interrupted; no output was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (OSError, ValueError, KeyError) as exc:
        print(f"streamcodec: error: {_message(exc)}", file=sys.stderr)
        return 1


def _message(exc: BaseException) -> str:
    if isinstance(exc, DisallowedSpecialTokenError):
        return (
            f"the input contains the special token {exc.token!r}; pass --allowed-special "
            f"{exc.token!r} to encode it as that token, or --special-as-text to encode it as text"
        )
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamcodec", description="Exact, streaming byte-level BPE (tiktoken-compatible)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(commands)
    return parser


# ---------------------------------------------------------------------- shared options


def _add_input_and_encoding(command: argparse.ArgumentParser) -> None:
    command.add_argument("input", help="input file, or - for standard input")
    command.add_argument(
        "-e",
        "--encoding",
        default="cl100k_base",
        help=f"encoding name (default cl100k_base; known: {', '.join(list_encoding_names())})",
    )
    command.add_argument(
        "--vocab",
        help="a vocabulary file instead of --encoding (.tiktoken, GPT-2's files, tokenizer.json, "
        "minbpe .model)",
    )
    command.add_argument(
        "--pattern",
        help="pre-tokenizer for --vocab: an encoding name or a regex (default: the file's own "
        "pattern, else cl100k_base's)",
    )
    command.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
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


def _add_text_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--allowed-special",
        default="",
        metavar="TOKENS",
        help="comma-separated special tokens to encode as such, or 'all' (default: none; "
        "any special token in the input is an error)",
    )
    command.add_argument(
        "--special-as-text",
        action="store_true",
        help="encode special tokens that are not allowed as ordinary text instead of failing",
    )
    command.add_argument(
        "--errors",
        default="strict",
        choices=["strict", "replace", "surrogateescape"],
        help="invalid UTF-8: fail (strict, default), use U+FFFD (replace), or keep the bytes "
        "exactly (surrogateescape)",
    )
    command.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="worker processes for a file (default 1; not jsonl)",
    )


def _encoding(args: argparse.Namespace) -> Encoding:
    if args.mode == "bytes" and args.pattern is not None:
        raise ValueError("--mode bytes has no pre-tokenizer: leave out --pattern")
    pattern: str | None
    if args.vocab is None:
        enc = get_encoding(args.encoding)
        if args.mode != "bytes":
            return enc
        name, pattern = f"{enc.name} (bytes)", BYTE_MODE_PATTERN
        ranks, specials = enc.mergeable_ranks, enc.special_tokens
    else:
        vocabulary = load_vocabulary(args.vocab)
        name = Path(args.vocab).stem
        pattern = "bytes" if args.mode == "bytes" else args.pattern or vocabulary.pat_str
        ranks, specials = vocabulary.mergeable_ranks, vocabulary.special_tokens
    return Encoding(
        name,
        pat_str=resolve_pattern(pattern or "cl100k_base"),
        mergeable_ranks=ranks,
        special_tokens=specials,
    )


def _word_bpe(args: argparse.Namespace) -> WordBPE:
    if args.codes is None:
        raise ValueError("--mode word needs --codes FILE (a subword-nmt codes file)")
    return WordBPE.from_codes(read_codes(args.codes), separator=args.separator)


def _word_blocks(args: argparse.Namespace, progress: Progress | None) -> Iterator[str]:
    """The input text in blocks of whole lines (word mode works line by line)."""
    errors = getattr(args, "errors", "strict")
    return line_blocks(text_chunks(_source(args), errors=errors, progress=progress))


def _policy(args: argparse.Namespace) -> dict[str, Any]:
    allowed: Any = args.allowed_special
    if allowed != "all":
        allowed = {token for token in allowed.split(",") if token}
    return {
        "allowed_special": allowed,
        "disallowed_special": () if args.special_as_text else "all",
        "errors": args.errors,
    }


def _source(args: argparse.Namespace) -> Path | BinaryIO:
    if args.input == "-":
        return sys.stdin.buffer
    path = Path(args.input)
    if not path.is_file():  # fail before any work (and before workers start)
        raise FileNotFoundError(2, "No such file", args.input)
    return path


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Progress | None]:
    """A callback counting bytes read into a tqdm bar, if stderr is a terminal."""
    if args.quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    total = os.path.getsize(args.input) if args.input != "-" else None
    with tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, leave=False) as bar:
        yield bar.update


@contextlib.contextmanager
def _output(path: str | None, *, seekable: bool = False) -> Iterator[BinaryIO]:
    """The output file (atomic), or stdout; ``seekable`` spools stdout through a temp file."""
    if path is not None:
        with atomic_output(path) as f:
            yield f
    elif seekable:
        with tempfile.TemporaryFile() as f:
            yield f
            f.seek(0)
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.flush()
    else:
        yield sys.stdout.buffer
        sys.stdout.flush()


# ---------------------------------------------------------------------- encode


def _add_encode(commands: Any) -> None:
    encode = commands.add_parser(
        "encode", help="encode a file (or - for stdin) to token ids (--mode word: to segments)"
    )
    _add_input_and_encoding(encode)
    _add_text_options(encode)
    encode.add_argument("-o", "--output", help="write ids here (default: stdout)")
    encode.add_argument(
        "-f",
        "--format",
        default="ids",
        choices=FORMATS,
        help="ids: one per line; jsonl: a JSON list per input line (each line encoded on its "
        "own); u32: little-endian uint32; npy: a NumPy .npy array of uint32",
    )
    encode.set_defaults(run=_run_encode)


def _run_encode(args: argparse.Namespace) -> int:
    if args.mode == "word":
        bpe = _word_bpe(args)
        with _progress(args) as progress, _output(args.output) as out:
            for block in _word_blocks(args, progress):
                out.write(bpe.apply(block).encode("utf-8", "surrogateescape"))
        return 0
    enc = _encoding(args)
    source = _source(args)
    count = 0
    with _progress(args) as progress, _output(args.output, seekable=args.format == "npy") as out:
        if args.format == "jsonl":
            count = _write_jsonl(enc, source, args, progress, out)
        else:
            chunks = enc.iter_encode_chunks(
                source, **_policy(args), jobs=args.jobs, progress=progress
            )
            count = WRITERS[args.format](chunks, out)
    if args.output is not None and not args.quiet:
        print(
            f"encoded {args.input} into {count:,} tokens ({enc.name}) -> {args.output}",
            file=sys.stderr,
        )
    return 0


def _write_ids(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    count = 0
    for ids in chunks:
        if ids:
            out.write(("\n".join(map(str, ids)) + "\n").encode())
            count += len(ids)
    return count


def _write_u32(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    count = 0
    for ids in chunks:
        data = array("I", ids)
        if sys.byteorder == "big":
            data.byteswap()
        out.write(data.tobytes())
        count += len(ids)
    return count


def _write_npy(chunks: Iterable[list[int]], out: BinaryIO) -> int:
    # The length is known only at the end: reserve the header, write the data, then the header.
    out.write(_npy_header(0))
    count = _write_u32(chunks, out)
    out.seek(0)
    out.write(_npy_header(count))
    out.seek(0, os.SEEK_END)
    return count


def _npy_header(count: int) -> bytes:
    """The ``.npy`` (version 1.0) header of a uint32 vector of ``count`` items."""
    header = f"{{'descr': '<u4', 'fortran_order': False, 'shape': ({count},), }}"
    header += " " * (NPY_PREAMBLE - 10 - len(header) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")


def _write_jsonl(
    enc: Encoding,
    source: Path | BinaryIO,
    args: argparse.Namespace,
    progress: Progress | None,
    out: BinaryIO,
) -> int:
    policy = _policy(args)
    errors = policy.pop("errors")
    count = 0
    for line in _lines(text_chunks(source, errors=errors, progress=progress)):
        ids = enc.encode(line, **policy)
        out.write(json.dumps(ids, separators=(",", ":")).encode() + b"\n")
        count += len(ids)
    return count


def _lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of streamed text, without their ``\\n``.

    >>> list(_lines(["a\\nb", "c\\n", "d"]))
    ['a', 'bc', 'd']
    """
    pending: list[str] = []
    for chunk in chunks:
        *complete, rest = chunk.split("\n")
        if complete:
            yield "".join([*pending, complete[0]])
            yield from complete[1:]
            pending = []
        pending.append(rest)
    if any(pending):
        yield "".join(pending)


WRITERS: dict[str, Callable[[Iterable[list[int]], BinaryIO], int]] = {
    "ids": _write_ids,
    "u32": _write_u32,
    "npy": _write_npy,
}


# ---------------------------------------------------------------------- count


def _add_count(commands: Any) -> None:
    count = commands.add_parser("count", help="print the number of tokens in a file")
    _add_input_and_encoding(count)
    _add_text_options(count)
    count.set_defaults(run=_run_count)


def _run_count(args: argparse.Namespace) -> int:
    if args.mode == "word":
        bpe = _word_bpe(args)
        with _progress(args) as progress:
            print(sum(len(bpe.segment_text(block)) for block in _word_blocks(args, progress)))
        return 0
    enc = _encoding(args)
    source = _source(args)
    with _progress(args) as progress:
        chunks = enc.iter_encode_chunks(source, **_policy(args), jobs=args.jobs, progress=progress)
        count = sum(map(len, chunks))
    print(count)
    return 0


# ---------------------------------------------------------------------- decode


def _add_decode(commands: Any) -> None:
    decode = commands.add_parser(
        "decode",
        help="decode token ids to the exact bytes they stand for (--mode word: join segments)",
    )
    _add_input_and_encoding(decode)
    decode.add_argument("-o", "--output", help="write the bytes here (default: stdout)")
    decode.add_argument(
        "-f", "--format", default="ids", choices=FORMATS, help="how the ids are stored"
    )
    decode.set_defaults(run=_run_decode)


def _run_decode(args: argparse.Namespace) -> int:
    if args.mode == "word":
        with _progress(args) as progress, _output(args.output) as out:
            for block in _word_blocks(args, progress):
                joined = remove_separators(block, separator=args.separator)
                out.write(joined.encode("utf-8", "surrogateescape"))
        return 0
    enc = _encoding(args)
    with _progress(args) as progress, _output(args.output) as out:
        if args.format == "jsonl":
            for ids in _read_jsonl(args.input, progress):
                out.write(enc.decode_bytes(ids) + b"\n")
        else:
            for ids in READERS[args.format](args.input, progress):
                out.write(enc.decode_bytes(ids))
    return 0


@contextlib.contextmanager
def _binary_input(path: str) -> Iterator[BinaryIO]:
    if path == "-":
        yield sys.stdin.buffer
    else:
        with open(path, "rb") as f:
            yield f


def _blocks(path: str, progress: Progress | None, size: int = 1 << 20) -> Iterator[bytes]:
    with _binary_input(path) as f:
        while block := f.read(size):
            if progress is not None:
                progress(len(block))
            yield block


def _read_ids(path: str, progress: Progress | None) -> Iterator[list[int]]:
    """Whitespace-separated decimal ids; a number split across blocks waits for its end."""
    rest = b""
    for block in _blocks(path, progress):
        numbers = (rest + block).split()
        rest = numbers.pop() if numbers and not block[-1:].isspace() else b""
        yield [int(number) for number in numbers]
    if rest:
        yield [int(rest)]


def _read_u32(path: str, progress: Progress | None) -> Iterator[list[int]]:
    rest = b""
    for block in _blocks(path, progress):
        data = rest + block
        whole = len(data) - len(data) % 4
        yield _u32_ids(data[:whole])
        rest = data[whole:]
    if rest:
        raise ValueError(f"{path}: {len(rest)} bytes at the end are not a whole uint32")


def _u32_ids(data: bytes) -> list[int]:
    ids = array("I")
    ids.frombytes(data)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids.tolist()


def _read_npy(path: str, progress: Progress | None) -> Iterator[list[int]]:
    import numpy

    if path == "-":  # numpy needs a seekable file: read standard input whole
        data = numpy.load(io.BytesIO(sys.stdin.buffer.read()))
    else:
        data = numpy.load(path, mmap_mode="r")
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise ValueError(f"{path}: expected a vector of integer ids, got {data.dtype} {data.shape}")
    step = 1 << 18
    for start in range(0, len(data), step):
        part = data[start : start + step]
        if progress is not None:
            progress(part.nbytes)
        yield part.tolist()


def _read_jsonl(path: str, progress: Progress | None) -> Iterator[list[int]]:
    with _binary_input(path) as f:
        for number, line in enumerate(f, start=1):
            if progress is not None:
                progress(len(line))
            try:
                yield [int(token) for token in json.loads(line)]
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a JSON list of ids ({exc})") from None


READERS: dict[str, Callable[[str, Progress | None], Iterator[list[int]]]] = {
    "ids": _read_ids,
    "u32": _read_u32,
    "npy": _read_npy,
}


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


# ---------------------------------------------------------------------- verify and explain


def _add_verify(commands: Any) -> None:
    verify = commands.add_parser(
        "verify", help="check the fast encoder against the specification on your own file"
    )
    _add_input_and_encoding(verify)
    verify.set_defaults(run=_run_verify)


def _add_explain(commands: Any) -> None:
    explain = commands.add_parser(
        "explain", help="show the merges of each piece in rank order, beside longest-match"
    )
    explain.add_argument("text", help="the text to explain")
    explain.add_argument(
        "-e", "--encoding", default="cl100k_base", help="encoding name (default cl100k_base)"
    )
    explain.add_argument(
        "--tokens",
        help="a toy vocabulary instead: the 256 bytes, then these comma-separated tokens in "
        "rank order (e.g. to,ke,ken,token), with the gpt2 pattern",
    )
    explain.set_defaults(run=_run_explain, vocab=None, pattern=None, mode="bytelevel")


def _run_verify(args: argparse.Namespace) -> int:
    from streamcodec.formats.merges import unreachable_tokens

    enc = _encoding(args)
    # The reference needs the whole text (verify is a check, not a streaming encoder).
    text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text(encoding="utf-8")
    audit = audit_text(enc, text)
    unreachable = unreachable_tokens(enc.mergeable_ranks)
    for line in _verify_report(args.input, audit, len(enc.mergeable_ranks), unreachable):
        print(line)
    return 0 if audit.mismatch is None and audit.tiktoken_equal is not False else 1


def _verify_report(path: str, audit: Audit, n_tokens: int, unreachable: list[bytes]) -> list[str]:
    lines = [
        f"verify {path} with {audit.encoding}",
        f"  checked {audit.bytes:,} bytes: {audit.pieces:,} pieces ({audit.distinct_pieces:,} "
        f"distinct) -> {audit.tokens:,} tokens (special tokens read as ordinary text)",
    ]
    if audit.mismatch is None:
        lines.append("  fast encoder vs specification (regex pieces, reference.rank_merge): equal")
    else:
        m = audit.mismatch
        lines.append(
            f"  fast encoder vs specification: MISMATCH at piece #{m.index} (character "
            f"{m.offset}) {m.piece!r}: fast {m.fast}, reference {m.reference}"
        )
    tiktoken = {None: "not installed", True: "equal", False: "MISMATCH"}[audit.tiktoken_equal]
    lines.append(f"  fast encoder vs tiktoken built from the same vocabulary: {tiktoken}")
    lines.append(
        f"  whole-piece rule decided {audit.whole_piece_pieces:,} distinct pieces "
        "(merges alone would give other tokens)"
    )
    shown = ", ".join(map(repr, unreachable[:8]))
    lines.append(
        f"  rank order: {n_tokens:,} mergeable tokens, {len(unreachable):,} unreachable by their "
        f"own merges" + (f", e.g. {shown}" if shown else "")
    )
    return lines


def _run_explain(args: argparse.Namespace) -> int:
    enc = _toy_encoding(args.tokens) if args.tokens else _encoding(args)
    ranks = enc.mergeable_ranks
    longest = max(map(len, ranks))
    for piece in enc.ordinary.pretokenizer.pieces(args.text):
        explanation = explain_piece(piece.encode("utf-8"), ranks, longest=longest)
        for line in _explain_lines(explanation, ranks):
            print(line)
    return 0


def _toy_encoding(tokens: str) -> Encoding:
    from streamcodec.vocab import GPT2_PATTERN

    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens.split(","):
        ranks.setdefault(token.encode("utf-8"), len(ranks))
    return Encoding("toy", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})


def _show(parts: Sequence[bytes]) -> str:
    """Parts joined by ``|``, spaces shown as ``␣``, line breaks and tabs escaped."""
    shown = "|".join(p.decode("utf-8", "backslashreplace") for p in parts)
    for char, visible in [(" ", "␣"), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")]:
        shown = shown.replace(char, visible)
    return shown


def _explain_lines(e: Explanation, ranks: dict[bytes, int]) -> list[str]:
    """The merge steps of one piece, then BPE's and longest-match's results side by side."""
    decoder = {rank: token for token, rank in ranks.items()}
    steps = [_show(step.parts) for step in e.steps]
    bpe, greedy = _show([decoder[t] for t in e.bpe]), _show([decoder[t] for t in e.longest])
    width = max(map(len, [*steps, bpe, greedy])) + 2
    lines = [f"piece '{_show([e.piece])}': merges in rank order"]
    for shown, step in zip(steps, e.steps, strict=True):
        merged = step.merged
        label = "" if merged is None else f"merge {_show([decoder[merged]])} (rank {merged})"
        lines.append(f"  {shown:<{width + 17}}{label}".rstrip())
    if e.whole_piece is not None and len(e.steps[-1].parts) > 1:
        lines.append(f"  whole-piece rule: the piece is itself token {e.whole_piece}")
    verdict = "  <-- DIFFERS from BPE" if e.differs else "  (same)"
    lines.append(f"  BPE (rank order): {bpe:<{width}}{e.bpe}")
    lines.append(f"  longest-match:    {greedy:<{width}}{e.longest}{verdict}")
    return lines


COMMANDS: list[Callable[[Any], None]] = [
    _add_encode,
    _add_decode,
    _add_count,
    _add_train,
    _add_verify,
    _add_explain,
]
