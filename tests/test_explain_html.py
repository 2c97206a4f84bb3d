"""The visual explain: the page's structure from Python, then the same page in headless Chromium.

The browser tests start Debian's ``chromium`` (skipped with a message when it is absent), dump
the DOM after the page's script ran and check it: the token boxes, the count, the trace chosen
by the URL, and that hostile text stays text. A screenshot is kept in ``$STREAMCODEC_ARTIFACTS``
(default: pytest's temporary directory).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcodec
from streamcodec import Encoding
from streamcodec.cli import main
from streamcodec.explain.html import MAX_TRACE_BYTES, explain_html
from streamcodec.reference import merge_steps
from streamcodec.vocab import GPT2_PATTERN

HOSTILE = '</script><img src=x onerror="alert(1)"><script>alert(2)</script>'
# Lone surrogates, a character split over tokens, pieces where longest-match differs.
PIECES = ["\ud83d", "\ude00", "🦙", " encodings", "\r\n", "<|endoftext|>", "  ", "x" * 100]
TEXT = f"hello world 🦙 encodings\n\tend {HOSTILE} <|endoftext|>"


# ---------------------------------------------------------------------- a small DOM


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: str = ""  # the text of this node and its descendants

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (cls is None or cls in child.classes):
                found.append(child)
            found += child.find_all(tag, cls)
        return found


class _TreeBuilder(HTMLParser):
    VOID = frozenset({"meta", "br", "img", "link", "input", "hr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        for node in self.stack:
            node.text += data


def parse(page: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(page)
    builder.close()
    return builder.root


# ---------------------------------------------------------------------- checks shared by both


def check_tokens(dom: Node, enc: Encoding, text: str, **policy: object) -> None:
    """The boxes hold the tokens in order, each group starts where its text does."""
    ids = enc.encode(text, **policy)  # type: ignore[arg-type]
    boxes = dom.find_all("span", "tok")
    assert [int(i) for b in boxes for i in b.attrs["data-ids"].split()] == ids
    data = b"".join(bytes.fromhex(b.attrs["data-bytes"]) for b in boxes)
    assert data == enc.decode_bytes(ids)
    decoded = data.decode("utf-8")
    for box in boxes:
        start, chunk = int(box.attrs["data-start"]), bytes.fromhex(box.attrs["data-bytes"])
        assert decoded[start:].encode("utf-8").startswith(chunk)
        # A box of several tokens is exactly the tokens that split a character.
        assert (len(box.attrs["data-ids"].split()) > 1) == ("split" in box.classes)
    (count,) = [n for n in dom.find_all() if n.attrs.get("id") == "n-tokens"]
    assert int(count.text) == len(ids)


def traces(dom: Node) -> list[Node]:
    return dom.find_all("section", "trace")


def check_trace(section: Node, piece: bytes, ranks: dict[bytes, int]) -> None:
    """The BPE column has one row per merge step; ``≠`` rows are where longest-match parts."""
    bpe, longest = section.find_all("table")
    steps = list(merge_steps(piece, ranks)) if len(piece) <= MAX_TRACE_BYTES else []
    assert len(bpe.find_all("tr", "step")) == len(steps)
    differs = section.find_all("p", "result")[0].attrs["data-same"] == "false"
    assert differs == bool(longest.find_all("tr", "parts"))


# ---------------------------------------------------------------------- from Python


def test_page_structure_and_trace() -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    dom = parse(enc.explain_html(TEXT, allowed_special="all"))
    check_tokens(dom, enc, TEXT, allowed_special="all")
    assert dom.find_all("span", "special")[0].attrs["data-ids"] == str(enc.eot_token)
    shown = [s for s in traces(dom) if "hidden" not in s.attrs]
    assert len(shown) == 1
    # " encodings": BPE gives " enc" + "odings", longest-match " encoding" + "s".
    assert "BPE [3289, 59435], longest-match [11418, 82]" in shown[0].text
    check_trace(shown[0], b" encodings", enc.mergeable_ranks)
    assert len(shown[0].find_all("tr", "parts")) == 4  # merges "ings" and "odings", both takes
    assert all(check_trace(s, _piece(s), enc.mergeable_ranks) is None for s in traces(dom))


def _piece(section: Node) -> bytes:
    return bytes.fromhex(section.attrs["data-bytes"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.characters(exclude_categories=()) | st.sampled_from(PIECES)).map("".join))
def test_any_text_is_boxed_exactly(text: str) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    dom = parse(enc.explain_html(text, disallowed_special=()))
    check_tokens(dom, enc, text, disallowed_special=())
    for section in traces(dom):
        check_trace(section, _piece(section), enc.mergeable_ranks)


def test_hostile_text_stays_text() -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    page = enc.explain_html(HOSTILE, disallowed_special=())
    assert "<img" not in page and page.count("<script>") == 1
    dom = parse(page)
    assert not dom.find_all("img")
    assert dom.find_all("div")[0].text.replace("·", " ") == HOSTILE


def test_whole_piece_rule_and_chosen_piece() -> None:
    # "abc" is a token the merges never build: the whole-piece rule gives it.
    ranks = {bytes([b]): b for b in range(256)} | {b"xy": 256, b"abc": 257}
    enc = Encoding("toy", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    dom = parse(explain_html(enc, "xy+abc", piece=0))
    (shown,) = [s for s in traces(dom) if "hidden" not in s.attrs]
    assert _piece(shown) == b"xy"
    dom = parse(explain_html(enc, "xy+abc"))  # by default the longest piece: nothing differs
    (shown,) = [s for s in traces(dom) if "hidden" not in s.attrs]
    assert _piece(shown) == b"abc"
    assert "whole-piece rule: the piece is itself token 257" in shown.text
    with pytest.raises(ValueError, match="piece 3 does not exist: the text has 3 pieces"):
        explain_html(enc, "xy+abc", piece=3)


def test_long_piece_and_empty_text() -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    long = "x" * (MAX_TRACE_BYTES + 1)
    dom = parse(enc.explain_html(long))
    check_tokens(dom, enc, long)
    assert "too long to show every merge" in traces(dom)[0].text
    dom = parse(enc.explain_html(""))
    assert not dom.find_all("span", "tok") and not traces(dom)


def test_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "page.html"
    assert main(["explain", "--text", " encodings", "--html", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    enc = streamcodec.get_encoding("cl100k_base")
    check_tokens(parse(out.read_text(encoding="utf-8")), enc, " encodings")
    assert main(["explain", "--text", "hi", "--piece", "0"]) == 1
    assert "--html" in capsys.readouterr().err


# ---------------------------------------------------------------------- in Chromium


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("chromium is not installed (apt-get install chromium): the page is not checked")


def _run_chromium(tmp_path: Path, *args: str) -> str:
    profile = tmp_path / "profile"
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    enc = streamcodec.get_encoding("cl100k_base")
    path = tmp_path_factory.mktemp("explain") / "explain.html"
    path.write_text(enc.explain_html(TEXT, allowed_special="all"), encoding="utf-8")
    return path


def test_chromium_dom(page: Path, tmp_path: Path) -> None:
    enc = streamcodec.get_encoding("cl100k_base")
    python_dom = parse(page.read_text(encoding="utf-8"))
    # Ask for a trace that is not the default one: the page's script must show it.
    wanted = next(s for s in traces(python_dom) if "hidden" in s.attrs).attrs["data-trace"]
    dom = parse(_run_chromium(tmp_path, "--dump-dom", f"{page.as_uri()}#trace-{wanted}"))
    check_tokens(dom, enc, TEXT, allowed_special="all")
    shown = [s for s in traces(dom) if "hidden" not in s.attrs]
    assert [s.attrs["data-trace"] for s in shown] == [wanted]
    check_trace(shown[0], _piece(shown[0]), enc.mergeable_ranks)
    chosen = [b for b in dom.find_all("span", "tok") if "chosen" in b.classes]
    assert chosen and all(b.attrs["data-trace"] == wanted for b in chosen)
    assert not dom.find_all("img") and HOSTILE in dom.find_all("div")[0].text.replace("·", " ")


def test_chromium_screenshot(page: Path, tmp_path: Path) -> None:
    folder = Path(os.environ.get("STREAMCODEC_ARTIFACTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "explain.png"
    _run_chromium(tmp_path, "--window-size=1100,800", f"--screenshot={shot}", page.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
