"""``split -o DIR`` checks DIR before the work and names it, never its temporary folder (issue 23,
section 5); ``encode -o`` through a dangling symlink names the missing folder."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import streamcodec
from streamcodec.cli import main
from tests.stops import run_stopped

SPLIT = ["split", "in.txt", "--max-tokens", "2"]


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("hello world, again and again\n")
    return tmp_path


@pytest.fixture()
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """The target is refused before any window is made."""

    def split(*args: object, **kwargs: object) -> Iterator[Any]:
        raise AssertionError("the work started")

    monkeypatch.setattr(streamcodec.Encoding, "split", split)


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.removeprefix("streamcodec: error: ").strip()


def test_a_symlink_to_an_empty_folder_gets_the_windows(folder: Path) -> None:
    (folder / "real").mkdir()
    (folder / "d5").symlink_to("real")
    assert main([*SPLIT, "-o", "d5", "-q"]) == 0
    assert (folder / "d5").is_symlink()
    assert (folder / "real" / "000001.txt").read_text() == "hello world"
    assert _left(folder) == ["d5", "in.txt", "real"]


def test_a_dangling_symlink_gets_its_target(folder: Path) -> None:
    (folder / "link").symlink_to("made")
    assert main([*SPLIT, "-o", "link", "-q"]) == 0
    assert (folder / "link").is_symlink() and (folder / "made" / "000001.txt").exists()


@pytest.mark.usefixtures("no_work")
def test_the_current_folder_is_refused_before_the_work(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = folder / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    assert main(["split", "../in.txt", "--max-tokens", "2", "-o", "."]) == 1
    assert _error(capsys) == ".: is the current folder; name a new folder for the windows"
    assert _left(empty) == []


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("nope/deeper", "nope/deeper: the folder nope does not exist"),
        ("in.txt/w", "in.txt/w: in.txt is not a folder"),
        ("in.txt", "in.txt: exists and is not a folder"),
        ("dangling", "dangling: the folder {folder}/nope does not exist"),
        ("/proc/self/w", "/proc/self/w: Permission denied"),  # not even root writes there
    ],
)
def test_a_bad_target_is_named_before_the_work(
    folder: Path, output: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "dangling").symlink_to("nope/w")
    assert main([*SPLIT, "-o", output]) == 1
    assert _error(capsys) == message.format(folder=folder)
    assert _left(folder) == ["dangling", "in.txt"]


def test_a_read_only_file_system_names_the_target(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def mkdir(self: Path, mode: int = 0o777) -> None:  # what a read-only or immutable folder does
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", mkdir)
    assert main([*SPLIT, "-o", "w"]) == 1
    assert _error(capsys) == "w: Read-only file system"


def test_a_full_disk_names_the_target_and_leaves_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def write_bytes(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write says it: no name

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    assert main([*SPLIT, "-o", "w"]) == 1
    assert _error(capsys) == "w: No space left on device"
    assert _left(folder) == ["in.txt"]


def test_split_advises_only_the_flag_it_takes(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "bad.txt").write_bytes(b"ok \xff")
    assert main(["split", "bad.txt", "--max-tokens", "2", "-o", "w"]) == 1
    assert _error(capsys).endswith("(invalid start byte 0xff); pass --errors replace to accept it")
    assert main(["count", "bad.txt"]) == 1
    assert _error(capsys).endswith("--errors replace or --errors surrogateescape to accept it")
    assert _left(folder) == ["bad.txt", "in.txt"]


def test_encode_through_a_dangling_symlink_names_the_missing_folder(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "out.ids").symlink_to("nowhere/out.ids")
    assert main(["encode", "in.txt", "-o", "out.ids"]) == 1
    assert _error(capsys) == f"out.ids: the folder {folder}/nowhere does not exist"


def test_a_stop_signal_at_any_line_leaves_all_the_windows_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C raises KeyboardInterrupt at whichever line runs: at each line (and call) of the
    command's own code in turn, the target folder holds every window or is not there, and no
    temporary folder is left (one made by ``tempfile.mkdtemp`` was, when the signal came just
    before mkdtemp returned its name)."""
    watched = ("split.py", "atomicfile.py", "pathlib.py", "tempfile.py")

    def split(folder: Path, stop_at: int) -> int:
        folder.mkdir()
        (folder / "in.txt").write_text("hello world, again and again\n")
        monkeypatch.chdir(folder)
        return run_stopped(lambda: main([*SPLIT, "-o", "w", "-q"]), watched, stop_at)

    lines = split(tmp_path / "all", 0)
    whole = sorted(p.name for p in (tmp_path / "all" / "w").iterdir())
    assert lines > 100 and len(whole) > 3
    for n in range(1, lines + 1, 3):
        folder = tmp_path / str(n)
        split(folder, n)
        left = _left(folder)
        assert left in (["in.txt"], ["in.txt", "w"]), f"stopped at line {n}: {left}"
        if left == ["in.txt", "w"]:
            assert _left(folder / "w") == whole, f"stopped at line {n}"
