"""The in-browser tokenizer: a static folder that runs streamcodec in the page, by Pyodide.

    bash tools/pyodide_setup.sh             # npm's pyodide and the pure wheels, into .pyodide/
    python tools/browser/build.py OUT       # the page, into OUT
    python -m http.server -d OUT            # any static server: http://127.0.0.1:8000/

OUT holds ``index.html`` and ``page.js`` (this folder's), ``page.py`` (the Python the page runs:
the tokens, ids and merge trace of :meth:`streamcodec.Encoding.explain_html`), ``pyodide/`` (the
runtime from npm's ``pyodide``: WebAssembly, its standard library), ``wheels/`` (streamcodec's
pure wheel built from this tree, micropip's, pygtrie's and tqdm's) and ``wheels.json`` (their
names). The page fetches nothing from anywhere else: it works offline, behind any firewall.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SETUP = ROOT / ".pyodide"  # tools/pyodide_setup.sh's
PYODIDE = SETUP / "node_modules" / "pyodide"
# What Pyodide loads to start (its packages index included, though the page asks it for none).
RUNTIME = ("pyodide.js", "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")
RUNTIME_DATA = ("python_stdlib.zip", "pyodide-lock.json")
PAGE = ("index.html", "page.js", "page.py")


def pure_wheel(dest: Path) -> Path:
    """streamcodec's pure wheel (``STREAMCODEC_PURE=1 pip wheel .``, ``py3-none-any``), built
    from this tree into ``dest`` with no compiler and no network."""
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    env = {**os.environ, "STREAMCODEC_PURE": "1"}
    done = subprocess.run(
        [*command, "-w", str(dest), str(ROOT)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"the pure wheel was not built:\n{done.stdout}{done.stderr}")
    return next(dest.glob("streamcodec-*-py3-none-any.whl"))


def wheels(dest: Path) -> list[str]:
    """The wheels the page and the Node runner install, into ``dest``: streamcodec's pure
    wheel and tools/pyodide_setup.sh's (micropip, pygtrie, tqdm). Their names, micropip first."""
    dest.mkdir(parents=True, exist_ok=True)
    setup = sorted((SETUP / "wheels").glob("*.whl"))
    if not any(w.name.startswith("micropip-") for w in setup):
        where = SETUP / "wheels"
        raise FileNotFoundError(f"no micropip wheel in {where}: run tools/pyodide_setup.sh")
    for wheel in setup:
        shutil.copy2(wheel, dest / wheel.name)
    names = [w.name for w in setup] + [pure_wheel(dest).name]
    return sorted(names, key=_micropip_first)


def build(out: Path, *, wheel_folder: Path | None = None) -> None:
    """The page's folder (see the module's docstring); the wheels of ``wheel_folder`` (as
    :func:`wheels` makes them) where given, else built."""
    if not (PYODIDE / "pyodide.mjs").is_file():
        raise FileNotFoundError(f"no Pyodide in {PYODIDE}: run tools/pyodide_setup.sh")
    (out / "pyodide").mkdir(parents=True, exist_ok=True)
    for name in RUNTIME + RUNTIME_DATA:
        shutil.copy2(PYODIDE / name, out / "pyodide" / name)
    for name in PAGE:
        shutil.copy2(HERE / name, out / name)
    if wheel_folder is None:
        names = wheels(out / "wheels")
    else:
        shutil.copytree(wheel_folder, out / "wheels")
        names = sorted((w.name for w in wheel_folder.glob("*.whl")), key=_micropip_first)
    (out / "wheels.json").write_text(json.dumps(names), encoding="utf-8")


def _micropip_first(name: str) -> tuple[bool, str]:
    return not name.startswith("micropip-"), name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", type=Path, help="the folder to write the page into")
    args = parser.parse_args(argv)
    try:
        build(args.out)
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"browser page: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}/index.html: serve the folder (python -m http.server -d {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
