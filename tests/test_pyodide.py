"""streamcodec inside Pyodide under Node (issue 32): what a browser page or a notebook runs.

The pure wheel is built from this tree (``STREAMCODEC_PURE=1 pip wheel .``) and installed by
micropip from a local file, beside micropip's, pygtrie's and tqdm's pure wheels; Pyodide comes
from npm's ``pyodide`` (tools/pyodide_setup.sh puts both into the git-ignored .pyodide/, as
.ci/run does). Nothing is fetched: no ``regex``, no compiled code, no package index. Inside,
tests/pure_checks.py encodes real text with every shipped encoding, whole and streamed, and
decodes it with offsets; here the results are compared with tiktoken's. Skipped, saying why,
where Node or the Pyodide files are missing.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.test_no_regex import CHECKS, SHIPPED, check_against_tiktoken, texts
from tools.browser.build import wheels
from tools.browser.node import missing, run_in_pyodide


def node_and_pyodide() -> None:
    """Skip, saying how to get them, without Node or npm's ``pyodide`` package."""
    if reason := missing():
        pytest.skip(f"{reason}: the Pyodide tests do not run")


@pytest.fixture(scope="session")
def pyodide_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with streamcodec's pure wheel (built from this tree) and the setup's wheels."""
    node_and_pyodide()
    folder = tmp_path_factory.mktemp("wheels")
    wheels(folder)
    return folder


@pytest.fixture(scope="module")
def in_pyodide(
    pyodide_wheels: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The cases and what tests/pure_checks.py found for them inside Pyodide."""
    io = tmp_path_factory.mktemp("pyodide")
    cases = {name: [text[:4000] for text in texts()] for name in SHIPPED}
    (io / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    run_in_pyodide(pyodide_wheels, io, CHECKS, "cases.json", "out.json")
    return cases, json.loads((io / "out.json").read_text(encoding="utf-8"))


def test_the_wheel_is_pure(pyodide_wheels: Path) -> None:
    """Tagged for any Python and platform, and holding no compiled code nor its sources; its
    vocabularies and Unicode tables inside; ``regex`` required everywhere but emscripten."""
    (wheel,) = pyodide_wheels.glob("streamcodec-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [
            line
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist: regex") and "extra ==" not in line
        ]
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c", ".h"))]
    assert "streamcodec/vocabularies/o200k_base.zlib" in names
    assert "streamcodec/data/unicode_classes.txt" in names
    assert all(
        "python_version < " in line or 'sys_platform != "emscripten"' in line for line in requires
    )


def test_it_runs_in_pyodide_pure_and_without_regex(in_pyodide: Any) -> None:
    _, out = in_pyodide
    assert out["platform"] == "emscripten"
    assert out["compiled"] == [] and out["backend"] == "python"
    assert out["regex imported"] is False


def test_every_shipped_encoding_equals_tiktoken_in_pyodide(in_pyodide: Any) -> None:
    """Ids, streamed ids, decoding and offsets; windows and the explain page too."""
    cases, out = in_pyodide
    check_against_tiktoken(cases, out)
