"""Peak memory of one huge piece (a long whitespace run), streamcodec beside tiktoken.

    python benchmarks/long_piece_memory.py [--mb 1 5 10] [--encoding cl100k_base]

Each measurement runs in a fresh process: it loads the encoding, encodes a short text (so the
lazy parts are built), then encodes one text of N MB that is a single piece, and reports the
growth of its peak resident set size (``VmHWM``, Linux only) divided by the characters:
bytes per character. Three texts: spaces (one piece to the pattern), a run of one letter, and
``"\\n "`` repeated (whitespace again, cut differently). streamcodec is measured through
``encode_ordinary`` and through the stream (``iter_encode`` of the text in 1 MB chunks, as the
command line reads a file); tiktoken through ``encode_ordinary``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import sys
sys.path.insert(0, {root!r})
import streamcodec, tiktoken
def peak_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
ranks = streamcodec.get_encoding({name!r}).mergeable_ranks
pattern = streamcodec.get_encoding({name!r}).pat_str
library = tiktoken if {how!r} == "tiktoken" else streamcodec
enc = library.Encoding("x", pat_str=pattern, mergeable_ranks=ranks, special_tokens={{}})
enc.encode_ordinary("warm up  the  caches\\n")
text = ({unit!r} * ({chars} // len({unit!r}) + 1))[:{chars}]
chunks = [text[i : i + (1 << 20)] for i in range(0, len(text), 1 << 20)]
before = peak_kb()
if {how!r} == "stream":
    count = sum(1 for _ in enc.iter_encode(chunks))
else:
    count = len(enc.encode_ordinary(text))
print((peak_kb() - before) * 1024 / len(text))
"""

TEXTS = {"spaces": " ", "one letter": "a", "newline-space": "\n "}
WAYS = ["tiktoken", "ordinary", "stream"]


def measure(name: str, how: str, unit: str, chars: int) -> float:
    """Bytes per character added to the peak by encoding the text, in a fresh process."""
    code = _CHILD.format(root=str(ROOT), name=name, how=how, unit=unit, chars=chars)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def main() -> None:
    """Print the table: bytes per character, and streamcodec's ratio to tiktoken."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--mb", type=float, nargs="+", default=[1, 5, 10])
    args = parser.parse_args()
    print(f"{args.encoding}: peak memory per character of one text that is one huge piece")
    print("| text | MB | tiktoken B/char | encode_ordinary B/char | stream B/char | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, unit in TEXTS.items():
        for mb in args.mb:
            chars = int(mb * 1_000_000)
            tiktoken, ordinary, stream = (measure(args.encoding, how, unit, chars) for how in WAYS)
            ratio = max(ordinary, stream) / tiktoken if tiktoken > 0 else float("nan")
            print(
                f"| {label} | {mb:g} | {tiktoken:.1f} | {ordinary:.1f} | {stream:.1f} "
                f"| {ratio:.2f} |"
            )


if __name__ == "__main__":
    main()
