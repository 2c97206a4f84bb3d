"""Where a text's warm cost lies, by class of piece, for streamcodec and gigatoken-cachefix.

    python benchmarks/piece_classes.py                      # multilingual, cl100k_base, count
    python benchmarks/piece_classes.py --encoding o200k_base --output numpy --calls 30

The text's pieces (the encoding's pattern, through ``regex``) are sorted into classes: ASCII words
and punctuation, whitespace, pieces below U+0100 with a Latin-1 letter, CJK (Han, kana, Hangul),
other words past U+00FF (Greek, Cyrillic, Arabic...), words that mix the two, and the rest
(symbols, emoji, punctuation past U+00FF). Each class's pieces become a text of their own, in
their order, joined by newlines (a piece of its own under the named patterns, so the pieces stay
apart; whitespace pieces are joined by ``x`` instead: a newline would join their runs). Three
more texts: all the classes' texts one after the other ("grouped": the same pieces, fewer
changes of script), the text's own pieces joined the same way ("separated"), and the text as it
is. Each text ends with an emoji, so that every one is a 4-byte str as the multilingual sample
is. Each contender's warm call (the least and the median of ``--calls`` after a first, CPU time)
is timed in a fresh process per text, the contenders alternated, as ``benchmarks/cells.py``
times a cell.

What it told (docs/performance.md, "The multilingual cells (issue 27, 2026-11-28)"): on the
multilingual sample streamcodec leads or ties gigatoken-cachefix in every class alone but
Latin-1, mixed words and CJK (8.8 K of 143 K pieces), yet trails on the grouped text and more on
the separated one and the text as it is: the classes together and their order cost it what they
do not cost gigatoken-cachefix.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.contenders import folder, fresh, peer_outputs, prepare, twin
from fuzz.corpus import english_prose, multilingual, stdlib_source

TEXTS = {"prose": english_prose, "code": stdlib_source, "multilingual": multilingual}
KEEP_WIDE = "\U0001f642"  # appended to every text: a 4-byte str
CJK = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))


def piece_class(piece: str) -> str:
    """The class of one piece (see the module's docstring)."""
    if piece.isascii():
        return "ascii" if piece.strip() else "space"
    if max(piece) < "\u0100":
        return "latin1"
    wide = [c for c in piece if c >= "\u0100"]
    if sum(unicodedata.category(c)[0] in "LM" for c in wide) < 0.8 * len(wide):
        return "wide symbols"
    if any(low <= ord(wide[0]) <= high for low, high in CJK):
        return "cjk"
    narrow_letters = sum(c.isalpha() and c < "\u0100" for c in piece)
    return "mixed words" if narrow_letters else "wide words"


def class_texts(text: str, encoding: str) -> dict[str, tuple[str, int]]:
    """Each class's text and its pieces' number, then "grouped", "separated" and "as is"."""
    pieces = regex.findall(twin(encoding)._pat_str, text)
    classes: dict[str, list[str]] = defaultdict(list)
    for piece in pieces:
        classes[piece_class(piece)].append(piece)
    made = {
        name: (("x" if name == "space" else "\n").join(group), len(group))
        for name, group in sorted(classes.items())
    }
    made["grouped"] = ("\n".join(joined for joined, _ in made.values()), len(pieces))
    made["separated"] = ("\n".join(pieces), len(pieces))
    made["as is"] = (text, len(pieces))
    return {name: (joined + KEEP_WIDE, count) for name, (joined, count) in made.items()}


def child(who: str, encoding: str, output: str, path: str, calls: int) -> None:
    """Time one contender's warm calls on one text in this (fresh) process."""
    text = Path(path).read_bytes().decode("utf-8")  # newlines as they are
    if who == "streamcodec":
        made = fresh(encoding)
        encode = {"count": made.ordinary.count, "numpy": made.encode_to_numpy}[output]
    else:
        encode = peer_outputs(encoding)["gigatoken"][output]()
    encode(text)
    times = []
    for _ in range(calls):
        start = time.process_time()
        encode(text)
        times.append(time.process_time() - start)
    print(json.dumps({"least": min(times), "median": statistics.median(times)}))


def timed(args: argparse.Namespace, who: str, path: Path) -> dict[str, float]:
    """One contender's least and median warm time (seconds) on the text at `path`, in a child."""
    command = [sys.executable, __file__, "--child", who, "--file", str(path)]
    command += ["--encoding", args.encoding, "--output", args.output, "--calls", str(args.calls)]
    environment = {**os.environ, "STREAMCODEC_BENCH_DIR": str(folder())}  # the peers' files
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--text", choices=sorted(TEXTS), default="multilingual")
    parser.add_argument("--output", choices=("count", "numpy"), default="count")
    parser.add_argument("--calls", type=int, default=20, help="warm calls timed in each process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.encoding, args.output, args.file, args.calls)
        return
    prepare(args.encoding)
    who = ["streamcodec"] + (["gigatoken"] if "gigatoken" in peer_outputs(args.encoding) else [])
    print(f"{args.text}, {args.encoding}, {args.output}: warm ms, least / median of {args.calls}")
    print("| pieces | count | " + " | ".join(who) + " |")
    print("|---|---:|" + "---:|" * len(who))
    made = class_texts(TEXTS[args.text](4_000_000), args.encoding)
    with tempfile.TemporaryDirectory() as texts:
        for k, (name, (text, count)) in enumerate(made.items()):
            path = Path(texts) / f"{k}.txt"
            path.write_bytes(text.encode("utf-8"))
            order = who if k % 2 == 0 else who[::-1]
            figures = {contender: timed(args, contender, path) for contender in order}
            cells = [
                f"{figures[c]['least'] * 1e3:.3f} / {figures[c]['median'] * 1e3:.3f}" for c in who
            ]
            print(f"| {name} | {count:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
