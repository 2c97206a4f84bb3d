"""Every module's examples run: a module docstring's example is the first code a newcomer reads,
so none may rot (``python -m doctest`` on a file names the module after the file, which breaks
their tracebacks' and imports' names: this imports each by its own name)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import streamcodec

MODULES = sorted(m.name for m in pkgutil.walk_packages(streamcodec.__path__, "streamcodec."))


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_the_walk_finds_the_examples() -> None:
    finder = doctest.DocTestFinder()
    with_examples = [
        name
        for name in MODULES
        if any(test.examples for test in finder.find(importlib.import_module(name)))
    ]
    assert len(MODULES) > 100 and len(with_examples) > 80
