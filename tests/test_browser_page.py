"""The in-browser tokenizer (tools/browser/, issue 32) in headless Chromium, offline.

The page's folder is built (tools/browser/build.py: Pyodide's runtime, the pure wheel built from
this tree, micropip's, pygtrie's and tqdm's) and served on 127.0.0.1; Chromium resolves no
other host. The link carries the text, so the page tokenizes it once Python has started; the
ids it shows must be tiktoken's, and the explain page in its frame must box them and trace a
piece as Python's does; every file the page asked for is one of the folder's, and no script
was refused by a Content-Security-Policy. Then, over Chromium's DevTools pipe, as a person
uses it: text typed, an encoding chosen, Tokenize pressed, a token of the result clicked.
Skipped, saying why, without Chromium, Node's Pyodide files or the setup's wheels.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import streamcodec
from tests.chromium_pipe import Chromium
from tests.conftest import tiktoken_twin
from tests.test_explain_html import (
    _chromium,
    _run_chromium,
    check_tokens,
    check_trace,
    parse,
    traces,
)
from tests.test_pyodide import node_and_pyodide, pyodide_wheels  # noqa: F401 (fixture)
from tools.browser import page as page_py
from tools.browser.build import build

# No CR: a textarea's value has every line break as LF (CRLF is in tests/test_pyodide.py's text).
TEXT = "Ünïcödé façade, 中文 and 👍🏽: it's <|endoftext|> 12345\n\n  def f(x): return x  \n"


class _Handler(http.server.SimpleHTTPRequestHandler):
    asked: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.asked.append((self.path, int(code)))


@pytest.fixture(scope="module")
def site(
    pyodide_wheels: Path,  # noqa: F811 (the fixture)
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """The page's folder served on 127.0.0.1: its address, and each request with its status."""
    node_and_pyodide()
    folder = tmp_path_factory.mktemp("site")
    build(folder, wheel_folder=pyodide_wheels)
    asked: list[tuple[str, int]] = []
    handler = type("Handler", (_Handler,), {"asked": asked})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html", asked
    finally:
        server.shutdown()
        server.server_close()


def test_the_page_tokenizes_in_chromium_offline(site: Any, tmp_path: Path) -> None:
    address, asked = site
    folder = Path(os.environ.get("STREAMCODEC_ARTIFACTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "browser.png"
    query = urllib.parse.urlencode({"encoding": "o200k_base", "policy": "special", "text": TEXT})
    log = tmp_path / "chromium.log"
    dom_text = _run_chromium(
        tmp_path,
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--enable-logging",
        f"--log-file={log}",
        "--virtual-time-budget=120000",
        "--window-size=1100,1000",
        f"--screenshot={shot}",
        "--dump-dom",
        f"{address}#{query}",
    )
    dom = parse(dom_text)
    (body,) = dom.find_all("body")
    (status,) = [n for n in dom.find_all("p") if n.attrs.get("id") == "status"]
    assert body.attrs.get("data-state") == "done", status.text
    enc = streamcodec.get_encoding("o200k_base")
    expected = tiktoken_twin(enc).encode(TEXT, allowed_special="all")
    (ids,) = [n for n in dom.find_all("pre") if n.attrs.get("id") == "ids"]
    assert json.loads(ids.text) == expected
    tokens = [data.decode("utf-8", "replace") for data in enc.decode_tokens_bytes(expected)]
    assert json.loads(ids.attrs["data-tokens"]) == tokens
    # The frame's page: the tokens boxed, a piece's trace, as Python draws them.
    (frame,) = dom.find_all("iframe")
    inner = parse(frame.attrs["srcdoc"])
    check_tokens(inner, enc, TEXT, allowed_special="all")
    shown = [s for s in traces(inner) if "hidden" not in s.attrs]
    assert len(shown) == 1
    check_trace(shown[0], bytes.fromhex(shown[0].attrs["data-bytes"]), enc.mergeable_ranks)
    # Only the folder's files, each found (the page asks for no favicon either).
    assert asked and all(code == 200 for _, code in asked), asked
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Content Security Policy" not in log.read_text(errors="replace")


# Wait until the page's state is ``%s`` (after a submit, any state set before it is stale).
_STATE = """new Promise((done, fail) => { const start = Date.now(); (function poll() {
  const state = document.body && document.body.dataset.state;
  if (state === '%s') return done(state);
  if (state === 'error' || Date.now() - start > 100000)
    return fail(new Error(state + ': ' + document.getElementById('status').textContent));
  setTimeout(poll, 100); })(); })"""
_TYPE_AND_SUBMIT = """(() => { document.getElementById('text').value = %s;
  document.getElementById('encoding').value = 'gpt2';
  document.body.dataset.state = 'typing'; document.getElementById('go').click(); return 1; })()"""
# In the frame: the trace shown, then a click on a token of another piece, and what then shows.
_CLICK_A_TOKEN = """new Promise((done) => { (function poll() {
  if (!document.querySelector('.tok[data-trace]')) return setTimeout(poll, 100);
  const shown = () => [...document.querySelectorAll('section.trace')]
    .filter((s) => !s.hidden).map((s) => s.dataset.trace);
  const before = shown();
  const token = [...document.querySelectorAll('.tok[data-trace]')]
    .find((t) => t.dataset.trace !== before[0]);
  token.click();
  done({before, after: shown(), clicked: token.dataset.trace,
        chosen: token.classList.contains('chosen')}); })(); })"""


def test_the_page_answers_typing_choosing_and_clicking(site: Any, tmp_path: Path) -> None:
    """As a person uses it: text typed, gpt2 chosen, Tokenize pressed; then a token of the
    result clicked shows its piece's merges."""
    address, _ = site
    text = "Pasted text: don't  split 12345 words, Ünïcödé 👍🏽\n"
    blocked = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    with Chromium(_chromium(), tmp_path / "profile", address, blocked) as page:
        page.evaluate(_STATE % "ready")
        page.evaluate(_TYPE_AND_SUBMIT % json.dumps(text))
        page.evaluate(_STATE % "done")
        ids = json.loads(page.evaluate("document.getElementById('ids').textContent"))
        assert ids == tiktoken_twin(streamcodec.get_encoding("gpt2")).encode(text)
        clicked = page.evaluate(_CLICK_A_TOKEN, frame=True)
    assert clicked["before"] != [clicked["clicked"]]
    assert clicked["after"] == [clicked["clicked"]] and clicked["chosen"]


def test_the_page_refuses_a_special_token_by_default() -> None:
    """page.py, the Python the page runs (here on CPython): encode's policy, one-line errors."""
    refused = json.loads(page_py.tokenize("a <|endoftext|>", "cl100k_base", "refuse"))
    assert refused == {
        "error": "Encountered text corresponding to disallowed special token '<|endoftext|>'."
    }
    as_text = json.loads(page_py.tokenize("a <|endoftext|>", "cl100k_base", "text"))
    enc = streamcodec.get_encoding("cl100k_base")
    assert as_text["ids"] == enc.encode("a <|endoftext|>", disallowed_special=())
    assert "cl100k_base" in json.loads(page_py.encoding_names())
