"""Atomic output: the target appears whole or not at all, with the usual permissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streamcodec.atomicfile import atomic_output


def test_failure_leaves_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write(b"half")
        raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.bin"]


def test_new_file_gets_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with atomic_output(tmp_path / "new.bin") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.bin").stat().st_mode & 0o777 == 0o644
