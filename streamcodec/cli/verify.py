"""``streamcodec verify``: check the fast encoder against the specification on your own file.

    $ streamcodec verify book.txt
    verify book.txt with cl100k_base
      pre-tokenizer: native scanner, pattern known as cl100k_base
      fast encoder vs specification (regex pieces, reference.rank_merge): equal

It reads the file in bounded memory, with a progress bar, cut at safe cuts into windows of
about 1 MB: the fast encoder runs on all of them; the specification and tiktoken are compared
on every window of the first 16 MB, then on one window in 8 (``--all``: every window). It exits
1 on any mismatch, so it can guard a pipeline.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamcodec.audit import Audit, audit_source
from streamcodec.cli.inputs import source
from streamcodec.cli.options import add_input_and_encoding, build_encoding, pretokenizer_note
from streamcodec.cli.progress import progress

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``verify`` and its options."""
    verify = commands.add_parser(
        "verify", help="check the fast encoder against the specification on your own file"
    )
    add_input_and_encoding(verify, word=False)
    verify.add_argument(
        "--all",
        action="store_true",
        help="compare every window with the specification and tiktoken (default: every window "
        "of the first 16 MB, then one in 8)",
    )
    verify.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the audit; exit 1 on any mismatch."""
    from streamcodec.formats.merges import unreachable_tokens

    enc = build_encoding(args)
    with progress(args) as update:
        audit = audit_source(enc, source(args), every=1 if args.all else 8, progress=update)
    unreachable = unreachable_tokens(enc.mergeable_ranks)
    lines = _report(args.input, audit, len(enc.mergeable_ranks), unreachable)
    for line in [*lines[:1], f"  {pretokenizer_note(enc)}", *lines[1:]]:
        print(line)
    return 0 if audit.mismatch is None and audit.tiktoken_equal is not False else 1


def _report(path: str, audit: Audit, n_tokens: int, unreachable: list[bytes]) -> list[str]:
    lines = [
        f"verify {path} with {audit.encoding}",
        f"  checked {audit.bytes:,} bytes in {audit.windows:,} windows cut at safe cuts -> "
        f"{audit.tokens:,} tokens (special tokens read as ordinary text)",
        f"  compared {audit.compared_bytes:,} bytes ("
        + ("all" if audit.compared_windows == audit.windows else "a sample: --all for all")
        + f"): {audit.pieces:,} pieces ({audit.distinct_pieces:,} distinct)",
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
