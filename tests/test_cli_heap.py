"""The command line's glibc heap settings (``streamcodec/cli/heap.py``): what ``mallopt`` is
asked, read through a stand-in C library, so no test changes this process's allocator. A
user's own ``MALLOC_*_THRESHOLD_`` in the environment is left as the user set it."""

from __future__ import annotations

import _ctypes
import platform
import sys
from typing import Any

import pytest

from streamcodec.cli import heap

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")

TRIM, MMAP = -1, -3  # glibc's malloc.h


class _Libc:
    """A glibc whose ``mallopt`` records what it is asked and says yes."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def mallopt(self, option: int, value: int) -> int:
        self.asked.append((option, value))
        return 1


@pytest.fixture
def libc(monkeypatch: pytest.MonkeyPatch) -> _Libc:
    fake = _Libc()
    monkeypatch.setattr(heap, "_glibc_mallopt", lambda: fake.mallopt)
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    return fake


def test_the_reused_threshold_sets_the_trim_threshold_too(libc: _Libc) -> None:
    assert heap.keep_heap_flat(threshold=heap.REUSED)
    assert libc.asked == [(TRIM, 2 * heap.REUSED), (MMAP, heap.REUSED)]


def test_the_default_threshold_leaves_the_trim_threshold(libc: _Libc) -> None:
    assert heap.keep_heap_flat()
    assert libc.asked == [(MMAP, 128 * 1024)]


def test_a_users_trim_threshold_is_left_alone(libc: _Libc, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")
    assert heap.keep_heap_flat(threshold=heap.REUSED)
    assert libc.asked == [(MMAP, heap.REUSED)]


def test_a_users_mmap_threshold_leaves_everything_alone(
    libc: _Libc, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert not heap.keep_heap_flat(threshold=heap.REUSED)
    assert libc.asked == []


def test_glibcs_mallopt_is_found_and_another_libcs_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found, not called (this process's allocator stays as it is); a C library without
    # gnu_get_libc_version (musl, whose mallopt does nothing) gives none.
    if platform.libc_ver()[0] == "glibc":
        assert callable(heap._glibc_mallopt())
    dlsym = _ctypes.dlsym

    def musl(handle: Any, name: str) -> int:
        if name == "gnu_get_libc_version":
            raise OSError(f"undefined symbol: {name}")
        return dlsym(handle, name)

    monkeypatch.setattr(_ctypes, "dlsym", musl)
    assert heap._glibc_mallopt() is None
