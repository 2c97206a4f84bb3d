"""The shards of a corpus made on a Dask cluster: one task per shard, recorded as they finish.

Each task is :func:`streamcodec.corpus.job.make_shard` of one shard, so the shards are the bytes
a local run writes. The workers read the inputs and write the shards themselves: both must be
at the same paths on every machine (a shared filesystem). A worker that dies takes its tasks
with it; the scheduler gives them to another, which writes those shards again from the start
(a shard file is replaced whole or not at all). Only this process writes the manifest.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from streamcodec.corpus.document import Range
from streamcodec.corpus.job import Job, make_shard
from streamcodec.corpus.plan import ShardPlan, source_records

__all__ = ["run_on_cluster"]


def run_on_cluster(
    client: Any,
    job: Job,
    shards: Sequence[ShardPlan],
    finished: Callable[[dict[str, Any]], None],
    *,
    jobs: int,
    progress: Callable[[int, int], object] | None,
) -> None:
    """Make ``shards`` on ``client``'s cluster; ``finished(entry)`` for each, as it finishes."""
    from distributed import as_completed

    run = uuid.uuid4().hex[:8]
    futures = {}
    for shard in shards:
        task = _alone(job, shard)
        key = f"streamcodec-shard-{shard.number}-{run}"
        futures[client.submit(make_shard, *task, jobs, key=key)] = shard
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            entry = future.result()
            entry["sources"] = source_records(job.inputs, futures[future])
            finished(entry)
            if progress is not None:
                progress(futures[future].size, entry["tokens"])
    finally:
        for future in futures:
            future.cancel()


def _alone(job: Job, shard: ShardPlan) -> tuple[Job, ShardPlan]:
    """The job and shard with only the shard's inputs: a task does not carry the whole list
    (the sources of its entry are renamed back by the caller)."""
    used = sorted({part.input for part in shard.ranges})
    renamed = {old: new for new, old in enumerate(used)}
    ranges = tuple(Range(renamed[p.input], p.start, p.end) for p in shard.ranges)
    inputs = tuple(job.inputs[i] for i in used)
    return job._replace(inputs=inputs), shard._replace(ranges=ranges)
