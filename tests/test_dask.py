"""streamcodec inside Dask: a bag of files counted and encoded on a local cluster of processes.

This is the example of docs/streaming.md ("Beyond one machine"); it is skipped without dask.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

import streamcodec
from fuzz.corpus import samples

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")


def local_cluster() -> distributed.LocalCluster:
    """Two worker processes on this machine, one thread each, no dashboard."""
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )


def count_tokens(path: str) -> int:
    """One task: count one file, streaming, in the worker process."""
    return streamcodec.get_encoding("cl100k_base").count_tokens(Path(path))


def encode_to_u32(path: str) -> str:
    """One task: encode one file to ``<path>.u32`` (little-endian uint32), atomically."""
    from streamcodec.atomicfile import atomic_output

    enc = streamcodec.get_encoding("cl100k_base")
    with atomic_output(path + ".u32") as out:
        for ids in enc.iter_encode_chunks(Path(path)):
            out.write(array("I", ids).tobytes())
    return path + ".u32"


def test_bag_of_files_on_a_local_cluster(tmp_path: Path) -> None:
    import dask.bag

    text = samples()["prose"][:20_000]
    paths = []
    for i in range(4):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(text[i * 1000 :], encoding="utf-8")
        paths.append(str(path))
    enc = streamcodec.get_encoding("cl100k_base")
    with (
        local_cluster() as cluster,
        distributed.Client(cluster),
    ):
        files = dask.bag.from_sequence(paths, npartitions=len(paths))
        counts = files.map(count_tokens).compute()
        outputs = files.map(encode_to_u32).compute()
    assert counts == [len(enc.encode(Path(p).read_text(encoding="utf-8"))) for p in paths]
    for path, output in zip(paths, outputs, strict=True):
        ids = array("I", Path(output).read_bytes()).tolist()
        assert ids == enc.encode(Path(path).read_text(encoding="utf-8"))


def encode_once_killed(path: str) -> str:
    """encode_to_u32, whose first attempt stops after its first chunk, to be killed there."""
    import os
    import time

    from streamcodec.atomicfile import atomic_output

    attempted = Path(path + ".attempted")
    enc = streamcodec.get_encoding("cl100k_base")
    with atomic_output(path + ".u32") as out:
        for ids in enc.iter_encode_chunks(Path(path)):
            out.write(array("I", ids).tobytes())
            if not attempted.exists():
                attempted.write_text(str(os.getpid()))
                time.sleep(120)
    return path + ".u32"


def test_a_worker_killed_mid_encode_leaves_no_temporary(tmp_path: Path) -> None:
    """Issue 23, section 5: the task Dask runs again after the kill removes the dead worker's
    temporary file (``.doc.txt.u32.PID@HOST.*.tmp``)."""
    import os
    import signal
    import time

    path = tmp_path / "doc.txt"
    text = samples()["prose"][:20_000]
    path.write_text(text, encoding="utf-8")
    with (
        local_cluster() as cluster,
        distributed.Client(cluster) as client,
    ):
        future = client.submit(encode_once_killed, str(path), pure=False)
        attempted = tmp_path / "doc.txt.attempted"
        deadline = time.monotonic() + 60
        while not (attempted.exists() and attempted.read_text()):
            assert time.monotonic() < deadline, "the task never started"
            time.sleep(0.05)
        os.kill(int(attempted.read_text()), signal.SIGKILL)
        output = future.result(timeout=120)
    ids = array("I", Path(output).read_bytes()).tolist()
    assert ids == streamcodec.get_encoding("cl100k_base").encode(text)
    assert sorted(os.listdir(tmp_path)) == ["doc.txt", "doc.txt.attempted", "doc.txt.u32"]
