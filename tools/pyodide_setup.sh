#!/usr/bin/env bash
# Pyodide for the browser tests (tests/test_pyodide.py) and the page (tools/browser/build.py),
# into .pyodide/ (git-ignored): the npm package `pyodide` (Python 3.14 in WebAssembly, with its
# standard library inside), and the pure wheels streamcodec installs there with: micropip
# itself, pygtrie and tqdm. Everything the tests load comes from here: they run offline.
set -euo pipefail
cd "$(dirname "$0")/.."
PYODIDE_VERSION=314.0.7
dest=.pyodide
python=${PYTHON:-python3}
mkdir -p "$dest/wheels"
if [ ! -f "$dest/node_modules/pyodide/package.json" ] \
    || ! grep -q "\"version\": \"$PYODIDE_VERSION\"" "$dest/node_modules/pyodide/package.json"; then
    npm install --prefix "$dest" --no-save --no-audit --no-fund --silent "pyodide@$PYODIDE_VERSION"
fi
# Pure wheels for Pyodide's Python (3.14): micropip 0.11 needs 3.13+, so name the version.
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.14 \
    --implementation py --platform any -d "$dest/wheels" \
    "micropip==0.11.1" "pygtrie==2.6.2" "tqdm==4.67.3"
