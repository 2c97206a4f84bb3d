"""Loading a vocabulary's ranks: shipped in the package against a cached ``.tiktoken`` file.

    python benchmarks/vocabulary_load.py [--encoding o200k_base] [--runs 7]

Each run is a fresh interpreter, timing only the ranks (the ``Encoding`` built from them is the
same either way): from the package (``streamcodec.vocabularies``: zlib, lengths, bytes), and
as streamcodec loaded them before they were shipped, from a cached file (read, sha256, parse
the base64 lines), and as tiktoken does (``load_tiktoken_bpe`` on a file: the same steps).
Prints the median milliseconds and the ratio cached / shipped (above 1: the package is faster).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import hashlib, sys, time
from streamcodec.registry import SPECS
spec = SPECS[sys.argv[1]]
start = time.perf_counter()
if sys.argv[2] == "shipped":
    from streamcodec.vocabularies import shipped_ranks
    ranks = shipped_ranks(spec.shipped)
elif sys.argv[2] == "cached":
    from streamcodec.formats.tiktoken_file import parse_tiktoken
    data = open(sys.argv[3], "rb").read()
    assert hashlib.sha256(data).hexdigest() == spec.sha256
    ranks = parse_tiktoken(data)
else:
    from tiktoken.load import load_tiktoken_bpe
    ranks = load_tiktoken_bpe(sys.argv[3], expected_hash=spec.sha256)
print((time.perf_counter() - start) * 1000, len(ranks))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from streamcodec.registry import SPECS, load_vocabulary_file

    with tempfile.TemporaryDirectory() as folder:
        cached = Path(folder) / SPECS[args.encoding].filename
        cached.write_bytes(load_vocabulary_file(SPECS[args.encoding]))
        times: dict[str, list[float]] = {"shipped": [], "cached": [], "tiktoken": []}
        for _ in range(args.runs):
            for way, found in times.items():
                out = subprocess.run(
                    [sys.executable, "-c", PROBE, args.encoding, way, str(cached)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={"PYTHONPATH": str(ROOT), "PATH": ""},
                ).stdout.split()
                found.append(float(out[0]))
    median = {way: statistics.median(found) for way, found in times.items()}
    print(f"{args.encoding}: ranks loaded in ms (median of {args.runs} fresh processes)")
    for way, ms in median.items():
        print(f"  {way:9} {ms:7.1f} ms   x{ms / median['shipped']:.2f} of shipped")


if __name__ == "__main__":
    main()
