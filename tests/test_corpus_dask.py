"""The corpus made on a real Dask cluster (processes): the local run's bytes, a killed worker
survived. Skipped without ``distributed``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from streamcodec.corpus import check_corpus, tokenize

distributed = pytest.importorskip("distributed")
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def test_a_local_cluster_writes_the_local_bytes_and_survives_a_killed_worker(
    tmp_path: Path,
) -> None:
    inputs = sorted(STDLIB.glob("[a-f]*.py"))
    options = {"shard_bytes": 16_000, "special_as_text": True}
    local = tokenize(inputs, tmp_path / "local", **options)  # type: ignore[arg-type]
    assert len(local["plan"]) >= 20
    killed: list[int] = []
    lost: list[str] = []  # the tasks the killed worker was running
    left: list[int] = []
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            host="127.0.0.1", dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        pids = client.run(os.getpid)  # worker address: process id

        def kill_a_busy_worker_at_the_first_shard(done: int, tokens: int) -> None:
            busy = {worker: keys for worker, keys in client.processing().items() if keys}
            if tokens and busy and not killed:  # a shard is finished; others are under way
                worker = sorted(busy)[0]
                os.kill(pids[worker], signal.SIGKILL)
                killed.append(pids[worker])
                lost.extend(busy[worker])
                manifest = json.loads((tmp_path / "remote" / "manifest.json").read_text())
                left.append(len(manifest["plan"]) - len(manifest["shards"]))

        remote = tokenize(
            inputs, tmp_path / "remote", client=client,
            progress=kill_a_busy_worker_at_the_first_shard, **options,  # type: ignore[arg-type]
        )  # fmt: skip
        assert killed and killed[0] not in client.run(os.getpid).values()
        # each task the dead worker held was run again: twice "processing" in its story
        for key in lost:
            runs = [step for step in cluster.scheduler.story(key) if step[2] == "processing"]
            assert len(runs) >= 2, (key, cluster.scheduler.story(key))
        # the command line, given the scheduler's address as on a multi-machine cluster
        command = [sys.executable, "-m", "streamcodec", "tokenize-corpus", *map(str, inputs),
                   "-o", str(tmp_path / "cli"), "--shard-size", "16000", "--special-as-text",
                   "--dask", cluster.scheduler_address]  # fmt: skip
        done = subprocess.run(command, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert remote["complete"] and left[0] > 10  # the kill came with most of the work to do
    names = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "remote").iterdir())
    for name in names:
        if name != "manifest.json":
            expected = (tmp_path / "local" / name).read_bytes()
            assert (tmp_path / "remote" / name).read_bytes() == expected
            assert (tmp_path / "cli" / name).read_bytes() == expected
    assert local["shards"] == remote["shards"]
    check_corpus(tmp_path / "remote" / "manifest.json", text=20)
