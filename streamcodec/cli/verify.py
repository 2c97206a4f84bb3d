"""``streamcodec verify``: check the fast encoder against the specification on your own file.

    $ streamcodec verify book.txt
    verify book.txt with cl100k_base
      pre-tokenizer: native scanner, pattern known as cl100k_base
      fast encoder vs specification (regex pieces, reference.rank_merge): equal

It exits 1 on any mismatch, so it can guard a pipeline.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamcodec.audit import Audit, audit_text
from streamcodec.cli.inputs import source
from streamcodec.cli.options import add_input_and_encoding, build_encoding, pretokenizer_note
from streamcodec.stream.sources import text_chunks

__all__ = ["add"]


def add(commands: Any) -> None:
    """Declare ``verify`` and its options."""
    verify = commands.add_parser(
        "verify", help="check the fast encoder against the specification on your own file"
    )
    add_input_and_encoding(verify)
    verify.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the audit; exit 1 on any mismatch."""
    from streamcodec.formats.merges import unreachable_tokens

    if args.mode == "word":
        raise ValueError("verify checks byte-level BPE: --mode word has nothing to check")
    enc = build_encoding(args)
    # The reference needs the whole text (verify is a check, not a streaming encoder).
    text = "".join(text_chunks(source(args)))
    audit = audit_text(enc, text)
    unreachable = unreachable_tokens(enc.mergeable_ranks)
    lines = _report(args.input, audit, len(enc.mergeable_ranks), unreachable)
    for line in [*lines[:1], f"  {pretokenizer_note(enc)}", *lines[1:]]:
        print(line)
    return 0 if audit.mismatch is None and audit.tiktoken_equal is not False else 1


def _report(path: str, audit: Audit, n_tokens: int, unreachable: list[bytes]) -> list[str]:
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
