"""Regenerate ``streamcodec/data/streamcodec_py4k.tiktoken`` byte for byte.

The embedded encoding ``streamcodec_py4k`` (4,096 ids: 4,095 mergeable tokens and
``<|endoftext|>``, the cl100k_base pattern) is trained by :func:`streamcodec.training.train` on text
every machine with CPython 3.11.7 has: the standard-library files below (PSF license), each one
document, in this order. Their sha256 are pinned, so a machine whose files differ (another
Python release) fails clearly instead of writing a different vocabulary.

    python tools/train_embedded.py            # rewrite the file, print its sha256
    python tools/train_embedded.py --check    # only compare with the shipped file
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import sysconfig
from pathlib import Path

from streamcodec.atomicfile import atomic_output
from streamcodec.encoding import Encoding
from streamcodec.formats.tiktoken_file import write_tiktoken_bytes
from streamcodec.training import train

NAME = "streamcodec_py4k"
VOCAB_SIZE = 4096
PATTERN = "cl100k_base"
SPECIAL_TOKENS = ["<|endoftext|>"]
PYTHON = "3.11.7"
OUTPUT = Path(__file__).resolve().parents[1] / "streamcodec" / "data" / f"{NAME}.tiktoken"

# Standard-library files of CPython 3.11.7 (path inside the stdlib folder -> sha256): the
# reference manual's topics (English prose), then modules rich in docstrings and code.
TRAINING_FILES = {
    "pydoc_data/topics.py": "abaa56a64551d8eead1b19cbae3c6db443f99f0cab81df07bed3cb75c0db9346",
    "argparse.py": "dc1eba8adfdf615986421f981337458ba1072d3e718a0f76e3224940fd74118b",
    "ast.py": "c513073798bdbf3cdef09327d0d2d381a53213a13a4ba3f02729695327539406",
    "collections/__init__.py": "303701de55e434c0fbcc478ae8a79a28537d9ebe83b3150508438ffd6e3e14c7",
    "contextlib.py": "d732c045bc7450997f97b2f79cfdb1546b68d2655e89ab3170f3b19b3930d83c",
    "dataclasses.py": "4b7e1c99ebea53b546317d218a0261895a1769f83a6b95dc0136f13578066a7f",
    "difflib.py": "0c6afc23568d55b3e9ac914f9c5361e3033e778aa5b58d3cc82835fc5c638679",
    "enum.py": "84fc683aa71da233cf0f6a1bd59ffedc2bc7adb3a40f9339052141176071b6d6",
    "fractions.py": "b11e850e354808b882d13a70a911c29accd1dbdd41757566704e3b7206c74edb",
    "functools.py": "6d80018a3fa9fed44c5b78f881987ee3ab3fb1238b077b4e6dcb4b76da7db73b",
    "heapq.py": "6d43277e5c76fc0f073cd388fcff852d14d068f6bb6d4886c340f8b75a1229a9",
    "inspect.py": "d55ac82f84e5c93953e9f5852ec255957e6c12f47d5cc0ea456447319da0f5af",
    "json/__init__.py": "d5d41e2c29049515d295d81a6d40b4890fbec8d8482cfb401630f8ef2f77e4d5",
    "json/decoder.py": "9f02654649816145bc76f8c210a5fe3ba1de142d4d97a1c93105732e747c285b",
    "json/encoder.py": "7c358788fbb2a6a07f66f1f8446c52396f35fc201108f666d5be002d86f31af2",
    "pathlib.py": "3b21ac188fd9ac20bacc8ccd976fabd5d8ccf5000f8e157d3dfff005b228fb3d",
    "random.py": "b931a2d452db89ab9e1f79d59b66ce194dbd6748049cfe44699726da52b9c956",
    "statistics.py": "889a066f1b8063e73387ceb84018efc507a89b365b56c6afb9cc15b2ed25c2d9",
    "string.py": "24aeae1f0526250f442022022bf98df9a823b1cb330543ee79e70e44907462e9",
    "subprocess.py": "2ff641d58f8696496e8718538cd96cd7afcd503ae271fb23da22422b3aee9fc7",
    "textwrap.py": "62867e40cdea6669b361f72af4d7daf0359f207c92cbeddfc7c7506397c1f31c",
    "threading.py": "2c4c1db159e1178896eca324082ae98d627c8d7017d0c7135b832f4fb3117210",
    "typing.py": "115d96e966bf35cf97126f98dd1fa854a00dd832733fc01ede58cfd4fa490660",
}


def training_paths(stdlib: Path | None = None) -> list[Path]:
    """The training files, checked: raise ``ValueError`` naming the first that differs."""
    folder = stdlib or Path(sysconfig.get_paths()["stdlib"])
    paths = []
    for name, sha256 in TRAINING_FILES.items():
        path = folder / name
        if not path.is_file():
            raise ValueError(
                f"{path}: missing; the embedded encoding is trained on Python {PYTHON}"
            )
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != sha256:
            raise ValueError(
                f"{path}: sha256 is {actual}, not {sha256}: this is not Python {PYTHON}'s file, "
                "so the result would differ from the shipped vocabulary"
            )
        paths.append(path)
    return paths


def train_embedded(stdlib: Path | None = None) -> Encoding:
    """Train ``streamcodec_py4k`` from the checked training files."""
    return train(
        training_paths(stdlib),
        vocab_size=VOCAB_SIZE,
        pat_str=PATTERN,
        special_tokens=SPECIAL_TOKENS,
        name=NAME,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    data = write_tiktoken_bytes(train_embedded().mergeable_ranks)
    sha256 = hashlib.sha256(data).hexdigest()
    if args.check:
        same = OUTPUT.read_bytes() == data
        print(f"{OUTPUT}: {'identical' if same else 'DIFFERENT'} (regenerated sha256 {sha256})")
        return 0 if same else 1
    OUTPUT.parent.mkdir(exist_ok=True)
    with atomic_output(OUTPUT) as f:
        f.write(data)
    print(f"wrote {OUTPUT} ({len(data):,} bytes), sha256 {sha256}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
