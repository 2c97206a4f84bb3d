// The in-browser tokenizer: start Pyodide from ./pyodide/, install the wheels of ./wheels/ with
// micropip (streamcodec's pure wheel, pygtrie, tqdm: all from this folder), run page.py, then
// tokenize on each submit. A link may carry the input: #encoding=o200k_base&policy=text&text=...
// (the page then tokenizes it at once). body[data-state] says where it is: loading, ready,
// done or error.
"use strict";

const $ = (id) => document.getElementById(id);
const here = (path) => new URL(path, location.href).href;

function show(state, message) {
    document.body.dataset.state = state;
    $("status").textContent = message;
    $("status").className = state === "error" ? "error" : "";
}

async function start() {
    show("loading", "Loading Python (Pyodide)…");
    const started = performance.now();
    const pyodide = await loadPyodide({ indexURL: here("pyodide/") });
    const wheels = await (await fetch(here("wheels.json"))).json();
    await pyodide.loadPackage(here(`wheels/${wheels[0]}`), { messageCallback: () => {} });
    show("loading", "Installing streamcodec (micropip, from this folder)…");
    const micropip = pyodide.pyimport("micropip");
    await micropip.install(wheels.slice(1).map((name) => here(`wheels/${name}`)));
    pyodide.runPython(await (await fetch(here("page.py"))).text());
    const names = JSON.parse(pyodide.globals.get("encoding_names")());
    $("encoding").replaceChildren(...names.map((name) => new Option(name, name)));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    return { tokenize: pyodide.globals.get("tokenize"), seconds };
}

function render(result, name) {
    if (result.error) {
        show("error", result.error);
        $("summary").textContent = "";
        $("ids").textContent = "";
        $("result").removeAttribute("srcdoc");
        return;
    }
    const count = result.ids.length;
    // The browser's clock may be coarse (or virtual, in a headless test): below 0.1 ms, say so.
    const ms = result.ms < 0.1 ? "under 0.1" : result.ms.toFixed(1);
    $("summary").textContent =
        `${count} token${count === 1 ? "" : "s"} · ${name} · encoded in ${ms} ms here`;
    $("ids").textContent = JSON.stringify(result.ids);
    $("ids").dataset.tokens = JSON.stringify(result.tokens);
    $("result").srcdoc = result.page;
    show("done", "Ready: hover a token for its ids and bytes, click it for its merges.");
}

async function main() {
    let engine;
    try {
        engine = await start();
    } catch (error) {
        show("error", `Python could not start: ${error}`);
        return;
    }
    const run = () => {
        const name = $("encoding").value;
        render(JSON.parse(engine.tokenize($("text").value, name, $("policy").value)), name);
    };
    $("form").addEventListener("submit", (event) => {
        event.preventDefault();
        run();
    });
    $("text").addEventListener("keydown", (event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) run();
    });
    $("go").disabled = false;
    show("ready", `Ready (Python started in ${engine.seconds} s). Ctrl+Enter tokenizes.`);
    const asked = new URLSearchParams(location.hash.slice(1));
    for (const field of ["encoding", "policy", "text"]) {
        if (asked.has(field)) $(field).value = asked.get(field);
    }
    if (asked.has("text")) run();
}

main();
