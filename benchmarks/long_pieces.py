"""Where the backtracking encoder overtakes the merge loop: time per piece by piece length.

    python benchmarks/long_pieces.py [--encoding cl100k_base]

For each length it encodes distinct pieces of three kinds (random letters, a run of one letter,
a real word repeated) with the merge loop and with the backtracking encoder (its trie already
built, its pair memo filled only by what earlier pieces left), and prints the microseconds per
piece of each. ``bpe.LONG_PIECE`` is set from this table.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamcodec
from streamcodec.pieces.backtrack import backtrack_piece
from streamcodec.pieces.merge import merge_piece
from streamcodec.pieces.rank_order import RankOrder
from streamcodec.pieces.trie import TokenTrie

LENGTHS = [16, 32, 64, 128, 256, 512, 1024]


def pieces(kind: str, length: int, count: int, rng: random.Random) -> list[bytes]:
    """``count`` distinct pieces of one kind."""
    if kind == "random letters":
        return [bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=length)) for _ in range(count)]
    if kind == "one letter":
        return [bytes([c]) * length for c in b"abcdefghijklmnopqrstuvwxyz"[:count]]
    words = [b"tokenization", b"Donaudampfschiff", b"internationalisation", b"xyzzy"]
    return [(words[i % 4] * length)[i % 7 : i % 7 + length] for i in range(count)]


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    args = parser.parse_args()
    ranks = streamcodec.get_encoding(args.encoding).mergeable_ranks
    order, trie = RankOrder(ranks), TokenTrie(ranks)
    rng = random.Random(0)
    print("| kind | bytes | merge loop µs | backtracking µs |")
    print("|---|---:|---:|---:|")
    for kind in ["random letters", "one letter", "repeated word"]:
        for length in LENGTHS:
            batch = pieces(kind, length, 20, rng)
            timings = []
            for encode in (
                lambda p: merge_piece(p, ranks),
                lambda p: backtrack_piece(p, order, trie),
            ):
                start = time.process_time()
                results = [encode(piece) for piece in batch]
                timings.append((time.process_time() - start) / len(batch) * 1e6)
                assert results == [merge_piece(piece, ranks) for piece in batch]
            print(f"| {kind} | {length} | {timings[0]:.0f} | {timings[1]:.0f} |")


if __name__ == "__main__":
    main()
