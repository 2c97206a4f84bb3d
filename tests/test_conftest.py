"""The suite's groups, named once in tests/conftest.py: SLOW (the `-m slow` run) and TIMED (under
`-n`, one pytest-xdist worker runs them in turn), and the check that no entry names a test that is
gone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import SLOW, TIMED, pytest_collection_modifyitems


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.marks: list[Any] = []

    def add_marker(self, mark: Any) -> None:
        self.marks.append(mark.mark)


def _mark(args: list[str], nodeids: list[str], keyword: str = "") -> list[_Item]:
    items = [_Item(nodeid) for nodeid in nodeids]
    config = SimpleNamespace(option=SimpleNamespace(keyword=keyword), args=args)
    pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    return items


def test_slow_tests_are_marked() -> None:
    nodeids = [f"{SLOW[0]}[x]", f"{TIMED[0]}::t", "tests/test_a.py::t"]
    slow, timed, other = _mark(nodeids, nodeids)  # by id: the files' other entries are not stale
    assert [m.name for m in slow.marks] == ["slow"]
    assert timed.marks == other.marks == []


def test_an_entry_naming_no_test_of_a_whole_file_is_refused() -> None:
    file = SLOW[0].split("::")[0]
    with pytest.raises(pytest.UsageError, match="names no test"):
        _mark([file], [f"{file}::test_renamed"])
    file = TIMED[-1].split("::")[0]
    with pytest.raises(pytest.UsageError, match=TIMED[-1]):
        _mark([file], [f"{file}::test_renamed"])


def test_one_test_of_a_file_with_slow_entries_runs() -> None:
    """Regression: `pytest tests/test_signals.py::test_later_signals_...` stopped with "SLOW names
    no test" (the file's slow entries were not collected), and under `-n` the workers ended."""
    file = SLOW[0].split("::")[0]
    (item,) = _mark([f"{file}::test_other"], [f"{file}::test_other"])
    assert item.marks == []
    _mark([file], [f"{file}::test_other"], keyword="other")  # -k leaves entries out too
