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
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
    ):
        files = dask.bag.from_sequence(paths, npartitions=len(paths))
        counts = files.map(count_tokens).compute()
        outputs = files.map(encode_to_u32).compute()
    assert counts == [len(enc.encode(Path(p).read_text(encoding="utf-8"))) for p in paths]
    for path, output in zip(paths, outputs, strict=True):
        ids = array("I", Path(output).read_bytes()).tolist()
        assert ids == enc.encode(Path(path).read_text(encoding="utf-8"))
