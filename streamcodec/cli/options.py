"""Options several commands share, and what they build: the encoding, word BPE, the policy.

``encode``, ``decode``, ``count`` and ``verify`` read one input with one encoding::

    $ streamcodec count book.txt -e o200k_base --errors replace
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from streamcodec.cli.inputs import Recorder, find_bytes
from streamcodec.cli.progress import Progress
from streamcodec.encoding import Encoding
from streamcodec.registry import SPECS, get_encoding
from streamcodec.text.specials import DisallowedSpecialTokenError
from streamcodec.vocab import BYTE_MODE_PATTERN, Vocabulary, VocabularyError, resolve_pattern

if TYPE_CHECKING:
    from pathlib import Path

    from streamcodec.wordbpe import WordBPE

__all__ = [
    "DEFAULT_ENCODING",
    "add_encoding",
    "add_input_and_encoding",
    "add_mode",
    "add_text_options",
    "build_encoding",
    "encoded_chunks",
    "expect_file",
    "policy",
    "positive_int",
    "refuse_ignored",
    "special_token_errors",
    "special_token_message",
    "whole_number",
    "word_bpe",
]

DEFAULT_ENCODING = "cl100k_base"


def pretokenizer_note(enc: Encoding) -> str:
    """How ``enc`` cuts text into pieces: the native scanner and the known pattern it matched
    (docs/patterns.md), or ``regex``, and why."""
    if enc.native_pattern is not None:
        return f"pre-tokenizer: native scanner, pattern known as {enc.native_pattern}"
    if enc.backend != "native":
        return "pre-tokenizer: regex (the pure-Python backend)"
    return "pre-tokenizer: regex (not a known pattern, see docs/patterns.md)"


def add_input_and_encoding(
    command: argparse.ArgumentParser, *, word: bool = True, pattern: bool = True
) -> None:
    """The input, the encoding (by name or from a file) and ``--mode`` (``word``: offer
    ``--mode word`` and its options; ``pattern``: offer ``--pattern``)."""
    command.add_argument(
        "input", help="input file (a FIFO, <(cmd), /dev/stdin too), or - for standard input"
    )
    add_encoding(command)
    command.add_argument(
        "--vocab",
        help="a vocabulary file instead of --encoding (.tiktoken, GPT-2's files, tokenizer.json, "
        "minbpe .model)",
    )
    command.add_argument(
        "--allow-unreachable",
        action="store_true",
        help="--vocab tokenizer.json: accept tokens its merges never build (streamcodec, like "
        "tiktoken, then outputs them where Hugging Face does not)",
    )
    if pattern:
        command.add_argument(
            "--pattern",
            help="pre-tokenizer for --vocab: an encoding name or a regex (default: the file's "
            "own, as tokenizer.json has; a file without one needs --pattern or --mode bytes)",
        )
    # (decoding ids needs no pre-tokenizer: any file will do)
    command.set_defaults(pattern=None, pattern_needed=pattern)
    command.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    if not word:
        add_mode(command, bytelevel="the encoding's pre-tokenizer", word=None)
        command.set_defaults(codes=None, separator=None)
        return
    add_mode(command, bytelevel="the encoding's pre-tokenizer", word="with --codes")
    command.add_argument("--codes", help="--mode word: a subword-nmt codes file")
    command.add_argument("--separator", help="--mode word: the continuation mark (default @@)")


def add_encoding(command: argparse.ArgumentParser) -> None:
    """``-e/--encoding``: its help names the encodings every install has (all offline); plugin
    names are left out, so the help, and the page built from it, is the same everywhere and
    imports no plugin."""
    command.add_argument(
        "-e",
        "--encoding",
        help=f"encoding name (default {DEFAULT_ENCODING}; built in: {', '.join(SPECS)}; "
        "or an installed tiktoken plugin's), or a model's tokenizer file: tokenizer.json (or "
        "its folder), .gguf, GPT-2's encoder.json, minbpe .model",
    )


def add_model_pattern(command: argparse.ArgumentParser) -> None:
    """``--pattern`` for a corpus command whose ``-e`` names a ``.tiktoken`` file."""
    command.add_argument(
        "--pattern",
        metavar="NAME_OR_REGEX",
        help="with -e FILE.tiktoken: its pre-tokenizer pattern (an encoding's name such as "
        "cl100k_base, or a regex); -e also takes a model's tokenizer.json (or its folder), "
        ".gguf or GPT-2 files",
    )


def encoding_or_model(name: str, pattern: str | None) -> Encoding:
    """``-e`` of the corpus commands, as every command reads it (a registered encoding, or a
    model's own file: its special tokens, its post-processor's BOS/EOS), and a ``.tiktoken``
    file with its ``--pattern``."""
    if os.path.splitext(name)[1] != ".tiktoken":
        if pattern is not None:
            raise ValueError("--pattern is for -e FILE.tiktoken, which holds no pattern")
        return _named_or_file(name)
    if pattern is None:
        raise ValueError(
            f"{name}: a .tiktoken file holds no pre-tokenizer pattern; pass --pattern (an "
            "encoding's name such as cl100k_base, or a regex)"
        )
    from streamcodec.formats.open_model import load_encoding

    return load_encoding(name, pat_str=pattern)


def refuse_ignored(args: argparse.Namespace) -> None:
    """Refuse an option the command line would otherwise ignore (each is named)."""
    if args.mode == "word":
        unused = [
            flag
            for flag, given in [
                ("--encoding", args.encoding is not None),
                ("--vocab", args.vocab is not None),
                ("--pattern", args.pattern is not None),
                ("--allowed-special", bool(getattr(args, "allowed_special", ""))),
                ("--special-as-text", getattr(args, "special_as_text", False)),
                ("--jobs", getattr(args, "jobs", 1) > 1),
                ("--format", getattr(args, "format", None) not in (None, "ids")),
            ]
            if given
        ]
        if unused:
            raise ValueError(f"--mode word does not use {', '.join(unused)}; leave it out")
    else:
        for flag, value in [("--codes", args.codes), ("--separator", args.separator)]:
            if value is not None:
                raise ValueError(f"{flag} is for --mode word; leave it out or add --mode word")
    if args.vocab is not None and args.encoding is not None:
        raise ValueError("--encoding and --vocab both name a vocabulary; give one of them")
    if args.pattern is not None and args.vocab is None:
        raise ValueError(
            "--pattern is for --vocab files; an encoding named with --encoding has its own"
        )
    if args.allow_unreachable and args.vocab is None:
        raise ValueError("--allow-unreachable is for --vocab tokenizer.json")


def add_mode(command: argparse.ArgumentParser, *, bytelevel: str, word: str | None) -> None:
    """``--mode bytelevel | bytes | word``, with each command's own words for two of them
    (``word=None``: a command without ``--mode word``)."""
    said = f"bytelevel: {bytelevel} (default); bytes: no pre-tokenization"
    command.add_argument(
        "--mode",
        choices=["bytelevel", "bytes"] if word is None else ["bytelevel", "bytes", "word"],
        default="bytelevel",
        help=said if word is None else f"{said}; word: Sennrich word-level BPE, {word}",
    )


def add_text_options(
    command: argparse.ArgumentParser, *, jobs: str | None, keeps_bytes: bool = True
) -> None:
    """How text is encoded: special tokens, invalid UTF-8 (``keeps_bytes``: offer
    ``surrogateescape``; a command that writes text cannot), and (``jobs``: the words that end
    its help) ``--jobs``; a command that reads in one process has none."""
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
    said = "invalid UTF-8: fail (strict, default), use U+FFFD (replace)"
    command.add_argument(
        "--errors",
        default="strict",
        choices=["strict", "replace", "surrogateescape"][: 3 if keeps_bytes else 2],
        help=f"{said}, or keep the bytes exactly (surrogateescape)" if keeps_bytes else said,
    )
    # What an invalid UTF-8 error advises (split, which writes text, narrows it).
    command.set_defaults(accept_invalid="--errors replace or --errors surrogateescape")
    if jobs is None:
        command.set_defaults(jobs=1)
        return
    command.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=1,
        help="workers for a regular file: threads on the native path, processes on the pure "
        f"path ({jobs})",
    )


@contextlib.contextmanager
def encoded_chunks(
    enc: Encoding, src: Path | Recorder, args: argparse.Namespace, update: Progress | None
) -> Iterator[Iterator[list[int]]]:
    """The ids of the input chunk by chunk, under the text options; the workers of ``--jobs``
    end with the block, and a disallowed special token is reported with its byte offset."""
    chunks = enc.iter_encode_chunks(src, **policy(args, enc), jobs=args.jobs, progress=update)
    try:
        with special_token_errors(src):
            yield chunks
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


@contextlib.contextmanager
def special_token_errors(src: Path | Recorder) -> Iterator[None]:
    """A disallowed special token in the input, reported with its byte offset and the flags."""
    try:
        yield
    except DisallowedSpecialTokenError as exc:
        raise ValueError(special_token_message(src, exc.token)) from None


def special_token_message(src: Path | Recorder, token: str) -> str:
    """The CLI's words for a disallowed special token: where it is, and the flags."""
    needle = token.encode("utf-8")
    offset = src.find(needle) if isinstance(src, Recorder) else find_bytes(src, needle)
    where = "" if offset is None else f" at byte offset {offset}"
    return (
        f"{src.name if isinstance(src, Recorder) else src}{where}: the input contains the special "
        f"token {token!r}; pass --allowed-special {token!r} to encode it as that token, or "
        "--special-as-text to encode it as text"
    )


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1.

    >>> positive_int("2")
    2
    """
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def whole_number(text: str) -> int:
    """An argparse type: a whole number (0 or more).

    >>> whole_number("0")
    0
    """
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def build_encoding(args: argparse.Namespace) -> Encoding:
    """The encoding ``--encoding`` or ``--vocab``/``--pattern`` name, in ``--mode``."""
    refuse_ignored(args)
    if args.mode == "bytes" and args.pattern is not None:
        raise ValueError("--mode bytes has no pre-tokenizer: leave out --pattern")
    pattern: str | None
    rules = None
    if args.vocab is None:
        enc = _named_or_file(args.encoding or DEFAULT_ENCODING)
        if args.mode != "bytes":
            return enc
        name, pattern = f"{enc.name} (bytes)", BYTE_MODE_PATTERN
        ranks, specials, rules = enc.mergeable_ranks, enc.special_tokens, enc.rules
    else:
        vocabulary = _vocabulary(args)
        name = os.path.splitext(os.path.basename(os.path.normpath(args.vocab)))[0]  # "dir/": dir
        pattern = "bytes" if args.mode == "bytes" else args.pattern or vocabulary.pat_str
        if pattern is None and args.pattern_needed:  # guessing one gave other ids in silence
            raise ValueError(
                f"--vocab {args.vocab}: the file does not say its pre-tokenizer pattern; pass "
                "--pattern (a name such as gpt2, cl100k_base, o200k_base, or a regex), or "
                "--mode bytes for none"
            )
        ranks, specials = vocabulary.mergeable_ranks, vocabulary.special_tokens
        rules = vocabulary.rules  # an open model's NFC, added tokens, BOS/EOS
    return Encoding(
        name,
        pat_str=resolve_pattern(pattern or "cl100k_base"),
        mergeable_ranks=ranks,
        special_tokens=specials,
        rules=rules,
    )


_MODEL_FILES = (".json", ".gguf", ".model", ".bpe")


def _named_or_file(name: str) -> Encoding:
    """``-e``: a registered encoding, or a model's tokenizer file (``load_encoding``)."""
    suffix = os.path.splitext(name)[1]  # os.path, not pathlib: 5% of a command's start
    if suffix == ".tiktoken":
        raise ValueError(
            f"-e {name}: a .tiktoken file holds no pattern; use --vocab {name} --pattern NAME"
        )
    if suffix in _MODEL_FILES or os.path.isdir(name) or os.sep in name:
        from streamcodec.formats.open_model import load_encoding

        return load_encoding(name)
    return get_encoding(name)


def _vocabulary(args: argparse.Namespace) -> Vocabulary:
    """The ``--vocab`` file; a refusal names the flag that accepts it, not the keyword."""
    from streamcodec.formats import detect_format
    from streamcodec.formats.open_model import read_model_file

    expect_file("--vocab", args.vocab, folder=True)  # GPT-2's two files, in their folder
    try:
        if args.allow_unreachable:
            if not str(args.vocab).endswith(".gguf") and detect_format(args.vocab) != "huggingface":
                raise ValueError("--allow-unreachable is for --vocab tokenizer.json")
            return read_model_file(args.vocab, allow_unreachable=True)
        return read_model_file(args.vocab)
    except VocabularyError as exc:
        text = str(exc).replace("Pass allow_unreachable=True", "Pass --allow-unreachable")
        raise VocabularyError(text) from None


def word_bpe(args: argparse.Namespace) -> WordBPE:
    """``--mode word``'s segmenter, from ``--codes``."""
    refuse_ignored(args)
    if args.codes is None:
        raise ValueError("--mode word needs --codes FILE (a subword-nmt codes file)")
    from streamcodec.wordbpe import WordBPE, read_codes

    expect_file("--codes", args.codes)
    return WordBPE.from_codes(read_codes(args.codes), separator=args.separator or "@@")


def policy(args: argparse.Namespace, enc: Encoding) -> dict[str, Any]:
    """The keyword arguments of ``Encoding.iter_encode_chunks`` the text options stand for."""
    allowed: Any = args.allowed_special
    if allowed.strip() != "all":
        allowed = {token.strip() for token in allowed.split(",") if token.strip()}
        unknown = sorted(allowed - enc.special_tokens_set)
        if unknown:
            known = ", ".join(sorted(enc.special_tokens_set)) or "none"
            raise ValueError(
                f"--allowed-special: {unknown[0]!r} is not a special token of {enc.name} "
                f"(it has: {known})"
            )
    return {
        "allowed_special": allowed,
        "disallowed_special": () if args.special_as_text else "all",
        "errors": args.errors,
    }


def expect_file(flag: str, path: str, *, folder: bool = False) -> None:
    """Refuse what ``flag`` cannot read as its file: a device (``--codes /dev/zero`` was read
    until memory ran out), a socket, a folder (unless ``folder``). A FIFO is read as a file
    (``--codes <(zcat codes.gz)``); a missing path is left to the reader, which names it."""
    try:
        kind = _NOT_FILES.get(stat.S_IFMT(os.stat(path).st_mode))
    except OSError:
        return
    if kind is not None and not (folder and kind == "a folder"):
        raise ValueError(f"{flag} {path}: {kind}, not a file")


_NOT_FILES = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}
