"""``streamcodec explain``: the merges of each piece in rank order, beside longest-match.

    $ streamcodec explain --text " tokenization" --tokens to,ke,ken,token
    $ streamcodec explain notes.txt --html explain.html
    $ echo "any text" | streamcodec explain -

Like every command, it reads a file, or standard input for ``-``; ``--text`` explains a literal.
An argument that names no file is refused with the ``--text`` to use (before, the argument was
always the text). Each merge step is shown with its rank, so a surprising split can be traced.
``--html`` writes the same as one self-contained page instead (:mod:`streamcodec.explain.html`),
atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from streamcodec.atomicfile import atomic_output
from streamcodec.cli.inputs import shown_name, source
from streamcodec.cli.options import add_encoding, build_encoding, pretokenizer_note
from streamcodec.encoding import Encoding
from streamcodec.explain.html import MAX_TRACE_BYTES
from streamcodec.explain.trace import Explanation, explain_piece
from streamcodec.stream.sources import text_chunks
from streamcodec.vocab import GPT2_PATTERN

__all__ = ["add"]

MAX_PAGE_TEXT = 1 << 20  # bytes of text an --html page shows at most
MAX_TEXT = 64 << 20  # characters explain reads (it holds them whole)


def add(commands: Any) -> None:
    """Declare ``explain`` and its options."""
    explain = commands.add_parser(
        "explain", help="show the merges of each piece in rank order, beside longest-match"
    )
    explain.add_argument(
        "input", nargs="?", help="the file to explain, or - for standard input (or give --text)"
    )
    explain.add_argument("--text", help="the text to explain, instead of a file")
    add_encoding(explain)
    explain.add_argument(
        "--tokens",
        help="a toy vocabulary instead: the 256 bytes, then these comma-separated tokens in "
        "rank order (e.g. to,ke,ken,token), with the gpt2 pattern",
    )
    explain.add_argument(
        "--html",
        metavar="OUT.html",
        help="write a self-contained page instead: the tokens coloured, ids and bytes on hover, "
        "the merges of a piece beside longest-match (click a token to choose its piece)",
    )
    explain.add_argument(
        "--piece",
        type=int,
        metavar="N",
        help="--html: the piece traced first, by index (default: the first where longest-match "
        "differs)",
    )
    explain.set_defaults(
        run=run,
        vocab=None,
        pattern=None,
        mode="bytelevel",
        codes=None,
        separator=None,
        allow_unreachable=False,
    )


def run(args: argparse.Namespace) -> int:
    """Print each piece's merge steps and the two results."""
    if args.tokens and args.encoding is not None:
        raise ValueError("--tokens is a vocabulary of its own: leave out --encoding")
    args.text = _text(args)
    enc = _toy_encoding(args.tokens) if args.tokens else build_encoding(args)
    if args.html:
        return _write_page(enc, args)
    if args.piece is not None:
        raise ValueError("--piece chooses the piece of an --html page: add --html OUT.html")
    print(pretokenizer_note(enc), file=sys.stderr)
    ranks = enc.mergeable_ranks
    decoder = {rank: token for token, rank in ranks.items()}  # once: it was once a piece
    longest = max(map(len, ranks))
    pieces = enc.ordinary.pretokenizer.pieces(args.text)
    with _counting(len(pieces)) as update:
        for piece in pieces:
            data = piece.encode("utf-8")
            if len(data) > MAX_TRACE_BYTES:  # every merge of it: quadratic lines
                print(_untraced(data, enc._encode_single_piece(data), decoder))
            else:
                explanation = explain_piece(data, ranks, longest=longest)
                print("\n".join(_lines(explanation, decoder)))
            update()
    return 0


@contextlib.contextmanager
def _counting(total: int) -> Iterator[Callable[[], object]]:
    """A bar of pieces explained on stderr, when it is a terminal and stdout is not (there,
    the lines themselves show the progress)."""
    if not sys.stderr.isatty() or sys.stdout.isatty() or total < 1000:
        yield lambda: None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit=" pieces", file=sys.stderr, leave=False) as bar:
        yield bar.update


def _untraced(piece: bytes, ids: list[int], decoder: dict[int, bytes]) -> str:
    """A piece too long to show every merge: its result alone."""
    shown = _show([piece[:40]]) + ("..." if len(piece) > 40 else "")
    return (
        f"piece '{shown}' ({len(piece):,} bytes): too long to show every merge (at most "
        f"{MAX_TRACE_BYTES} bytes)\n  BPE (rank order): {len(ids):,} tokens "
        f"{_show([decoder[t] for t in ids[:20]])}{'...' if len(ids) > 20 else ''}"
    )


def _text(args: argparse.Namespace) -> str:
    """``--text``, or the whole of the input file (``-``: standard input)."""
    if (args.text is None) == (args.input is None):
        raise ValueError("explain needs a file, - for standard input, or --text TEXT (one)")
    if args.text is not None:
        return str(args.text)
    if args.input != "-" and not os.path.exists(args.input):
        raise ValueError(
            f"{args.input}: no such file; to explain the text itself, pass --text {args.input!r}"
        )
    parts, size = [], 0
    for chunk in text_chunks(source(args)):  # whole, but not without end (/dev/zero)
        parts.append(chunk)
        size += len(chunk)
        if size > MAX_TEXT:
            raise ValueError(
                f"explain reads its input whole: {shown_name(args.input)} holds more than "
                f"{MAX_TEXT >> 20} MiB of text; explain a part "
                "(head -c 1000000 FILE | streamcodec explain -)"
            )
    return "".join(parts)


def _write_page(enc: Encoding, args: argparse.Namespace) -> int:
    """``--html``: the page, written atomically; special-token text is ordinary text here.
    Past ``MAX_PAGE_TEXT`` the page (some 45 bytes of HTML a byte of text) is refused."""
    size = len(args.text.encode("utf-8", "surrogateescape"))
    if size > MAX_PAGE_TEXT:
        raise ValueError(
            f"explain --html: {args.input or '--text'} holds {size:,} bytes of text; a page of "
            f"more than {MAX_PAGE_TEXT:,} (some 45 MB of HTML) is more than a browser shows: "
            f"explain a part (head -c 100000 FILE | streamcodec explain - --html OUT.html)"
        )
    page = enc.explain_html(args.text, piece=args.piece, disallowed_special=())
    with atomic_output(args.html) as f:
        f.write(page.encode("utf-8"))
    tokens = len(enc.encode_ordinary(args.text))
    print(f"wrote {args.html}: {tokens} tokens; open it in a browser", file=sys.stderr)
    return 0


def _toy_encoding(tokens: str) -> Encoding:
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


def _lines(e: Explanation, decoder: dict[int, bytes]) -> list[str]:
    """The merge steps of one piece, then BPE's and longest-match's results side by side."""
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
