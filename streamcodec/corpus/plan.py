"""The plan: which parts of which inputs make each shard, fixed before any work.

Shards are cut by input bytes on disk, from names and sizes alone: inputs are taken in order and
a shard is closed once it holds ``shard_bytes``. An uncompressed JSON Lines file is first cut
into ranges of ``shard_bytes`` (a line belongs to the range it starts in); a Parquet file into
its row groups; any other input (plain text, compressed, standard input) is read whole. The plan
depends on nothing else, so the same inputs give the same shards whatever the number of jobs or
machines, each shard can be made alone, and a rerun knows which are missing.

    >>> from streamcodec.corpus.document import Input
    >>> files = [Input("a.txt", "text", None, 300, 0), Input("b.jsonl", "jsonl", None, 900, 0)]
    >>> [[(r.input, r.start, r.end) for r in s.ranges] for s in make_plan(files, 500)]
    [[(0, 0, -1), (1, 0, 500)], [(1, 500, -1)]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from streamcodec.corpus.document import Input, Range
from streamcodec.corpus.inputs import parquet_row_groups

__all__ = ["ShardPlan", "make_plan", "source_records"]


class ShardPlan(NamedTuple):
    """Shard ``number`` (the manifest's "index"): its ranges in order, and their bytes on disk
    (for progress)."""

    number: int  # not "index": a tuple's method
    ranges: tuple[Range, ...]
    size: int


def make_plan(inputs: Sequence[Input], shard_bytes: int) -> list[ShardPlan]:
    """The shards of ``inputs``, each closed once it holds ``shard_bytes`` bytes of input."""
    if shard_bytes < 1:
        raise ValueError(f"the shard size must be at least 1 byte, not {shard_bytes}")
    plans: list[ShardPlan] = []
    ranges: list[Range] = []
    size = 0
    for part, part_size in _parts(inputs, shard_bytes):
        ranges = _joined(ranges, part)
        size += part_size
        if size >= shard_bytes:
            plans.append(ShardPlan(len(plans), tuple(ranges), size))
            ranges, size = [], 0
    if ranges or not plans:
        plans.append(ShardPlan(len(plans), tuple(ranges), size))
    return plans


def _parts(inputs: Sequence[Input], shard_bytes: int) -> list[tuple[Range, int]]:
    """Each input as parts that can be read apart, with their sizes on disk."""
    parts: list[tuple[Range, int]] = []
    for i, inp in enumerate(inputs):
        if inp.kind == "parquet":
            groups = parquet_row_groups(inp)
            parts += [(Range(i, g, g + 1), size) for g, size in enumerate(groups)]
        elif inp.splittable and inp.size > shard_bytes:
            for start in range(0, inp.size, shard_bytes):
                end = min(start + shard_bytes, inp.size)
                parts.append((Range(i, start, end), end - start))
        else:
            parts.append((Range(i, 0, -1), max(inp.size, 0)))
    return [(_to_end(part, inputs), size) for part, size in parts]


def _to_end(part: Range, inputs: Sequence[Input]) -> Range:
    """A range that reaches the end of its input says so (-1): the input may be read whole."""
    inp = inputs[part.input]
    whole = part.end == inp.size if inp.kind != "parquet" else False
    return Range(part.input, part.start, -1) if whole else part


def _joined(ranges: list[Range], part: Range) -> list[Range]:
    """``ranges`` with ``part`` added, merged into the last when they touch."""
    if ranges and ranges[-1].input == part.input and ranges[-1].end == part.start:
        return [*ranges[:-1], Range(part.input, ranges[-1].start, part.end)]
    return [*ranges, part]


def source_records(inputs: tuple[Input, ...], shard: ShardPlan) -> list[dict[str, Any]]:
    """The shard's sources as the manifest lists them: input, path, range and its unit."""
    records = []
    for part in shard.ranges:
        inp = inputs[part.input]
        unit = "row_groups" if inp.kind == "parquet" else "bytes"
        # to the end: its size, but a compressed input's decompressed length is not known
        # before it is read (its size on disk is not that): -1
        whole = part.end < 0 and inp.kind != "parquet" and inp.compression is None
        end = inp.size if whole else part.end
        records.append(
            {"input": part.input, "path": inp.path, "unit": unit, "start": part.start, "end": end}
        )
    return records
