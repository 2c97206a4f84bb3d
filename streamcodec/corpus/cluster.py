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

from streamcodec.corpus.job import Job, make_shard
from streamcodec.corpus.plan import ShardPlan

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
    futures = {
        client.submit(make_shard, job, shard, jobs, key=f"streamcodec-shard-{shard.index}-{run}"):
        shard
        for shard in shards
    }  # fmt: skip
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            entry = future.result()
            finished(entry)
            if progress is not None:
                progress(futures[future].size, entry["tokens"])
    finally:
        for future in futures:
            future.cancel()
