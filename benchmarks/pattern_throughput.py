"""Encoding speed with each known pattern: streamcodec against tiktoken with the same ranks.

    python benchmarks/pattern_throughput.py [--runs 3] [--repeat 4]

For each pattern of :mod:`streamcodec.text.known_patterns` (and tiktoken's own three) and each
sample of ``fuzz/corpus.py`` (prose, code, multilingual; each ``--repeat`` times over), it prints
the CPU time of ``encode_ordinary`` (one thread, a fresh ``Encoding`` per pattern, median of
``--runs``) of:

- streamcodec, the pattern cut by the native scanner;
- streamcodec before it knew the pattern: the same pattern with a never-matching alternative
  appended (``|(?!)``), which no scanner knows, so ``regex`` cuts it;
- tiktoken 0.14 built with the same ranks and pattern;

and tiktoken's time over each streamcodec time. The models' own vocabularies are not available
offline: the patterns with o200k's case classes run with o200k_base's ranks (found through
``STREAMCODEC_DATA_DIR``, else ../shared/data), the others with cl100k_base's (a pattern's speed
depends on its pieces much more than on the ranks). Every row's ids are checked equal to
tiktoken's first.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiktoken
from scan_throughput import cpu_seconds

import streamcodec
from fuzz.corpus import samples
from streamcodec.text.known_patterns import KNOWN_PATTERNS, native_name, shape_of
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN


def patterns() -> dict[str, str]:
    """Name -> pattern: tiktoken's three, then each distinct known pattern."""
    table = {"gpt2": GPT2_PATTERN, "cl100k_base": CL100K_PATTERN, "o200k_base": O200K_PATTERN}
    for known in KNOWN_PATTERNS:
        if known.pattern not in table.values():
            table[known.name] = known.pattern
    return table


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=4, help="each sample this many times")
    args = parser.parse_args()
    texts = {corpus: text * args.repeat for corpus, text in samples().items()}
    print(f"CPU seconds, median of {args.runs} runs; x = tiktoken's time / streamcodec's")
    print(
        "| pattern (scanner) | ranks | corpus | MB | native | regex path | tiktoken | native x "
        "| regex path x |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name, pattern in patterns().items():
        shape = shape_of(pattern)
        ranks_name = (
            "o200k_base" if shape is not None and shape.letters == "cases" else "cl100k_base"
        )
        try:
            ranks = streamcodec.get_encoding(ranks_name).mergeable_ranks
        except FileNotFoundError:
            print(f"({name}: {ranks_name} not found, skipped)")
            continue
        ours = streamcodec.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        unknown = streamcodec.Encoding(
            name, pat_str=pattern + "|(?!)", mergeable_ranks=ranks, special_tokens={}
        )
        assert unknown.native_pattern is None
        twin = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        for corpus, text in texts.items():
            assert ours.encode_ordinary(text) == twin.encode_ordinary(text), (name, corpus)
            native, before, theirs = (
                cpu_seconds(functools.partial(encoder.encode_ordinary, text), args.runs)
                for encoder in (ours, unknown, twin)
            )
            megabytes = len(text.encode("utf-8")) / 1e6
            print(
                f"| {name} ({native_name(pattern)}) | {ranks_name} | {corpus} | {megabytes:.1f} "
                f"| {native:.3f} | {before:.3f} | {theirs:.3f} | {theirs / native:.2f}x "
                f"| {theirs / before:.2f}x |"
            )


if __name__ == "__main__":
    main()
