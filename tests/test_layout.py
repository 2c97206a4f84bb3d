"""The layout of the package: imports point down the data path, no cycle, small modules.

docs/architecture.md draws the layers; this test holds the code to them. Every import of a
streamcodec module counts, at the top of a module or inside a function alike.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "streamcodec"

# What each low layer may import (its own package aside). Everything else may import any of
# these, and anything but the command line.
ALLOWED = {
    "vocab": set(),
    "lazy": set(),  # a package's names imported at first use
    "reference": set(),
    "atomicfile": set(),
    "npyfile": set(),
    "interrupts": set(),
    "dropin": set(),  # tiktoken's module names, and how Encoding prints under the swap
    "arguments": set(),  # the public API's counts checked, one error naming each
    "text": {"vocab"},
    "pieces": {"vocab"},
    "engine": {"text", "pieces", "vocab", "arguments"},
    "stream": {"engine", "text", "pieces", "vocab", "interrupts", "arguments"},
    # tiktoken's lesser methods, a base class of Encoding beside stream's StreamMethods
    "compat": {"engine", "text", "pieces", "vocab", "arguments"},
    "explain": {"reference"},  # the page and the traces: the specification only
    # Encoding's batch methods, a base class of Encoding like compat's
    "batch": {"engine", "text", "pieces", "vocab", "arguments"},
    "encoding": {
        "engine",
        "stream",
        "compat",
        "batch",
        "text",
        "pieces",
        "vocab",
        "explain",
        "dropin",
        "arguments",
    },
    # the corpus tool: the facade, named encodings, the stream's workers, the one writer
    "corpus": {
        "encoding",
        "batch",
        "registry",
        "stream",
        "text",
        "atomicfile",
        "npyfile",
        "arguments",
        "lazy",  # its public names imported at first use
    },
}
TOP = {"cli", "__main__", "__init__"}  # nothing imports these but each other
MAX_LINES = 420  # "a few hundred lines at most"


def _modules() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(PACKAGE).with_suffix("").parts): path
        for path in PACKAGE.rglob("*.py")
    }


def _imports(name: str, path: Path) -> set[str]:
    """The streamcodec modules ``name`` imports (dotted names below ``streamcodec``)."""
    found = set()
    package = name.rsplit(".", 1)[0] if "." in name else ""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package
                base = name if is_package else package
                parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                module = ".".join(["streamcodec", *filter(None, parts), *[node.module or ""]])
                found.add(module.rstrip("."))
            elif node.module:
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
    modules = _modules()
    return {
        target.removeprefix("streamcodec.")
        for target in found
        if target.startswith("streamcodec.")
        and target.removeprefix("streamcodec.").removesuffix(".__init__") in _names(modules)
    }


def _names(modules: dict[str, Path]) -> set[str]:
    return {name.removesuffix(".__init__") for name in modules}


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in _modules().items():
        graph[name.removesuffix(".__init__")] |= _imports(name, path)
    return graph


def _top(name: str) -> str:
    return name.split(".")[0]


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, targets in _graph().items():
        for target in targets:
            here, there = _top(module), _top(target)
            if here == there:
                continue
            if there in TOP and here not in TOP:
                wrong.append(f"{module} imports {target} (the command line is the top)")
            elif here in ALLOWED and there not in ALLOWED[here]:
                wrong.append(f"{module} imports {target}: {here} may import {ALLOWED[here]}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycle_between_modules() -> None:
    graph = _graph()
    # A package imports its own submodules to re-export them: that is not a cycle of layers.
    edges = {
        module: {t for t in targets if not module.startswith(t + ".") and t != module}
        for module, targets in graph.items()
    }
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        if module in path:
            cycle = [*path[path.index(module) :], module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for target in sorted(edges.get(module, ())):
            if not target.startswith(module + "."):
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(edges):
        visit(module)


def _c_includes() -> dict[str, set[str]]:
    """Each C file's layer -> the layers its ``#include "../..."`` lines reach (a header at the
    package's root, such as ``_utf8.h``, is the base: anyone may include it)."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in [*PACKAGE.rglob("*.c"), *PACKAGE.rglob("*.h")]:
        here = path.relative_to(PACKAGE).parts[0] if path.parent != PACKAGE else ""
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith('#include "../'):
                target = line.split('"')[1].removeprefix("../")
                found[f"{here}/{path.name}"].add(target.split("/")[0] if "/" in target else "")
    return found


def test_c_includes_point_down_the_layers() -> None:
    includes = _c_includes()
    assert includes["engine/_fused.c"] >= {"pieces", "text", ""}  # the checks see them
    wrong = [
        f"{name} includes ../{there}"
        for name, layers in includes.items()
        for there in layers
        if there and there not in ALLOWED.get(name.split("/")[0], set())
    ]
    assert not wrong, "\n".join(sorted(wrong))


def test_modules_stay_small() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_checks_see_imports() -> None:
    """The graph is not empty by accident: known edges are there."""
    graph = _graph()
    assert "engine.ordinary" in graph["stream.encoder"]
    assert "text.specials" in graph["encoding"]
    assert "pieces.piece" in graph["pieces"]
