// Run a Python script inside Pyodide under Node, offline: the package streamcodec as a browser
// or a notebook gets it, from its pure wheel installed by micropip from a local file.
//
//   node tools/browser/run_in_node.mjs PYODIDE_DIR WHEELS_DIR IO_DIR SCRIPT.py [ARGS...]
//
// PYODIDE_DIR: the npm package `pyodide` (tools/pyodide_setup.sh puts it in .pyodide/). Every
// *.whl in WHEELS_DIR is installed (micropip's own first, then the others by micropip, so no
// index is asked for anything). IO_DIR is mounted as the working folder, where SCRIPT.py (run
// with sys.argv = [SCRIPT, ARGS...]) reads and writes its files. A Python exception prints its
// traceback and exits 1.
import { readdirSync, readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, wheelsDir, ioDir, script, ...args] = process.argv.slice(2);
if (!script) {
    console.error("usage: run_in_node.mjs PYODIDE_DIR WHEELS_DIR IO_DIR SCRIPT.py [ARGS...]");
    process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(resolve(pyodideDir, "pyodide.mjs")).href);
const started = performance.now();
const py = await loadPyodide({ indexURL: resolve(pyodideDir) + "/", stdout: console.log });
const loaded = performance.now();

py.FS.mkdirTree("/wheels");
const wheels = readdirSync(wheelsDir).filter((name) => name.endsWith(".whl")).sort();
for (const name of wheels) py.FS.writeFile(`/wheels/${name}`, readFileSync(resolve(wheelsDir, name)));
const micropip = wheels.find((name) => name.startsWith("micropip-"));
if (!micropip) {
    console.error(`no micropip wheel in ${wheelsDir} (run tools/pyodide_setup.sh)`);
    process.exit(2);
}
await py.loadPackage(resolve(wheelsDir, micropip), { messageCallback: () => {} });
const rest = wheels.filter((name) => name !== micropip).map((name) => `emfs:/wheels/${name}`);
py.globals.set("_wheels", py.toPy(rest));
await py.runPythonAsync("import micropip\nawait micropip.install(list(_wheels))");
const installed = performance.now();

py.FS.mkdirTree("/io");
py.mountNodeFS("/io", resolve(ioDir));
py.globals.set("_argv", py.toPy([basename(script), ...args]));
py.globals.set("_times", py.toPy({ load_ms: loaded - started, install_ms: installed - loaded }));
py.runPython("import os, sys\nos.chdir('/io')\nsys.argv = list(_argv)");
try {
    await py.runPythonAsync(readFileSync(script, "utf8"), { filename: basename(script) });
} catch (error) {
    console.error(String(error.message ?? error));
    process.exit(1);
}
