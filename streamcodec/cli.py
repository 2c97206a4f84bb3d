"""The command line: ``streamcodec encode | decode | count``.

Only this module prints or touches the terminal. Errors from the library become one line on
stderr and exit status 1; the output file is written atomically.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from streamcodec.atomicfile import atomic_output
from streamcodec.audit import Audit, Explanation, audit_text, explain_piece
from streamcodec.encoding import Encoding
from streamcodec.registry import get_encoding, list_encoding_names

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

    encode = commands.add_parser("encode", help="encode a file (or - for stdin) to token ids")
    _add_input_and_encoding(encode)
    encode.add_argument("-o", "--output", help="write ids here (default: stdout)")
    encode.set_defaults(run=_run_encode)

    count = commands.add_parser("count", help="print the number of tokens in a file")
    _add_input_and_encoding(count)
    count.set_defaults(run=_run_count)

    decode = commands.add_parser("decode", help="decode whitespace-separated ids to text")
    _add_input_and_encoding(decode)
    decode.add_argument("-o", "--output", help="write text here (default: stdout)")
    decode.set_defaults(run=_run_decode)
    _add_verify(commands)
    _add_explain(commands)
    return parser


def _add_input_and_encoding(command: argparse.ArgumentParser) -> None:
    command.add_argument("input", help="input file, or - for standard input")
    command.add_argument(
        "-e",
        "--encoding",
        default="cl100k_base",
        help=f"encoding name (default cl100k_base; known: {', '.join(list_encoding_names())})",
    )


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str | None, data: bytes) -> None:
    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with atomic_output(path) as f:
        f.write(data)


def _encoding(args: argparse.Namespace) -> Encoding:
    return get_encoding(args.encoding)


def _run_encode(args: argparse.Namespace) -> int:
    enc = _encoding(args)
    text = _read_text(args.input)
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
    print(len(_encoding(args).encode(_read_text(args.input))))
    return 0


def _run_decode(args: argparse.Namespace) -> int:
    ids = [int(token) for token in _read_text(args.input).split()]
    _write(args.output, _encoding(args).decode_bytes(ids))
    return 0


# ---------------------------------------------------------------------- verify and explain


def _add_verify(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = commands.add_parser(
        "verify", help="check the fast encoder against the specification on your own file"
    )
    _add_input_and_encoding(verify)
    verify.set_defaults(run=_run_verify)


def _add_explain(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    explain.set_defaults(run=_run_explain)


def _run_verify(args: argparse.Namespace) -> int:
    from streamcodec.formats.merges import unreachable_tokens

    enc = _encoding(args)
    audit = audit_text(enc, _read_text(args.input))
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
    for piece in enc._pretokenizer.pieces(args.text):
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
