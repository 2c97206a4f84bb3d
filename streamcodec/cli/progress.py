"""Progress bars on stderr, shown only when it is a terminal and ``--quiet`` is not given.

``progress(args)`` yields a callback that counts bytes read; ``TrainProgress`` shows the
trainer's two stages (reading, then merging)::

    with progress(args) as update:
        for block in blocks(args.input, update): ...
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Progress", "TrainProgress", "corpus_progress", "progress"]

Progress = Callable[[int], object]


@contextlib.contextmanager
def progress(args: argparse.Namespace) -> Iterator[Progress | None]:
    """A callback counting bytes read into a tqdm bar, if stderr is a terminal."""
    if args.quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    regular = args.input != "-" and stat.S_ISREG(os.stat(args.input).st_mode)
    total = os.path.getsize(args.input) if regular else None  # a FIFO has no size
    with tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, leave=False) as bar:
        yield bar.update


@contextlib.contextmanager
def corpus_progress(
    names: list[str], *, quiet: bool
) -> Iterator[Callable[[int, int], object] | None]:
    """A callback ``(bytes, tokens)`` into a tqdm bar of input bytes with tokens and tokens/s,
    if stderr is a terminal (the total: the sizes of the files named, folders walked)."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    import time

    from tqdm import tqdm

    total = sum(_tree_size(name) for name in names)
    started, tokens = time.perf_counter(), 0
    with tqdm(total=total or None, unit="B", unit_scale=True, file=sys.stderr, leave=False) as bar:

        def update(done: int, new_tokens: int) -> None:
            nonlocal tokens
            tokens += new_tokens
            rate = tokens / max(time.perf_counter() - started, 1e-9)
            bar.set_postfix_str(f"{tokens:,} tokens, {rate:,.0f} tokens/s", refresh=False)
            bar.update(done)

        yield update


def _tree_size(name: str) -> int:
    if os.path.isdir(name):
        return sum(
            os.path.getsize(os.path.join(root, f))
            for root, _, files in os.walk(name)
            for f in files
        )
    return os.path.getsize(name) if os.path.isfile(name) else 0


class TrainProgress:
    """tqdm bars on stderr for the trainer's two stages: reading (bytes), then merging."""

    def __init__(self, total_bytes: int | None, *, quiet: bool) -> None:
        self._total_bytes = total_bytes
        self._quiet = quiet
        self._bar: Any = None
        self._stage = ""
        self.bytes_read = 0  # the "count" stage's last report: what was read, FIFOs included

    def __enter__(self) -> TrainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage == "count":
            self.bytes_read = done
        if self._quiet:
            return
        if stage != self._stage:
            from tqdm import tqdm

            if self._bar is not None:
                self._bar.close()
            self._stage = stage
            if stage == "count":
                self._bar = tqdm(
                    total=self._total_bytes, unit="B", unit_scale=True, desc="counting"
                )
            else:
                self._bar = tqdm(total=total, unit=" merges", desc="merging")
        self._bar.update(done - self._bar.n)
