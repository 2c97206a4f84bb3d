"""A visual explain: one self-contained HTML page showing how a text is tokenized.

The page shows the text with every token boxed in a colour, whitespace made visible (``·`` for a
space, ``↵`` for a line break, ``→`` for a tab), the id and bytes of each token on hover, and
tokens that split one character (an emoji in two tokens) boxed together as one group. Below it,
the merges of a chosen piece in rank order (:func:`streamcodec.reference.merge_steps`) stand
beside greedy longest-match (:func:`streamcodec.reference.longest_match`), with the steps where
the two part highlighted; clicking a token chooses its piece.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> page = explain_html(enc, "hello world")
    >>> page.count('class="tok'), 'data-ids="15339"' in page
    (2, True)

The page needs no network and loads nothing: CSS and script are inline, and its
Content-Security-Policy allows only that script and style (by hash), so even markup that slipped
into the page could not run or fetch. The text is untrusted: it only ever appears escaped, in
element text and quoted attributes, never inside the script.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html
import unicodedata
from collections.abc import Collection, Iterator, Sequence
from collections.abc import Set as AbstractSet
from itertools import accumulate
from typing import Literal, Protocol

from streamcodec.explain.trace import Explanation, explain_piece
from streamcodec.reference import longest_match

__all__ = ["MAX_TRACE_BYTES", "Explainable", "explain_html"]

MAX_TRACE_BYTES = 96  # longer pieces show their result, not every merge (the trace is quadratic)
_COLOURS = 6
_VISIBLE = {" ": "·", "\t": "→", "\r": "␍", "\n": "↵"}


class Pretokenizes(Protocol):
    """The pre-tokenizer of an encoding (:class:`streamcodec.text.Pretokenizer` is one)."""

    def pieces(self, text: str, start: int = 0, end: int | None = None) -> list[str]: ...


class Ordinary(Protocol):
    """An encoding's ordinary-text encoder, for its pre-tokenizer (the one that encoded)."""

    @property
    def pretokenizer(self) -> Pretokenizes: ...


class Explainable(Protocol):
    """What the page needs of an encoding (:class:`streamcodec.Encoding` is one)."""

    name: str

    @property
    def ordinary(self) -> Ordinary: ...

    @property
    def mergeable_ranks(self) -> dict[bytes, int]: ...

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = ...,
        disallowed_special: Literal["all"] | Collection[str] = ...,
    ) -> list[int]: ...

    def is_special_token(self, token: int) -> bool: ...

    def decode_single_token_bytes(self, token: int) -> bytes: ...

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]: ...


@dataclasses.dataclass(frozen=True)
class _Group:
    """Consecutive tokens that together cover whole characters (usually one token)."""

    ids: list[int]
    data: list[bytes]
    start: int  # the character offset of the group in the text
    trace: int | None  # the index of its piece's trace; None for a special token


@dataclasses.dataclass(frozen=True)
class _Trace:
    piece: bytes
    bpe: list[int]  # the tokens the encoder gave the piece
    longest: list[int]  # greedy longest-match
    explanation: Explanation | None  # None when the piece is longer than MAX_TRACE_BYTES


def explain_html(
    enc: Explainable,
    text: str,
    *,
    piece: int | None = None,
    allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
    disallowed_special: Literal["all"] | Collection[str] = "all",
) -> str:
    """The page explaining ``enc.encode(text, ...)``, as a string (UTF-8 when written).

    ``piece`` is the index (0-based, in text order) of the piece whose trace is shown first;
    by default the first piece where longest-match differs from BPE, else the longest piece.
    Special tokens follow :meth:`~streamcodec.Encoding.encode`'s policy.
    """
    ids = enc.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    data = enc.decode_tokens_bytes(ids)
    owners, pieces = _piece_of_each_token(enc, ids, data)
    trace_of: dict[bytes, int] = {}  # one trace per distinct piece
    traces: list[_Trace] = []
    longest = max(map(len, enc.mergeable_ranks), default=1)
    for piece_bytes, piece_ids in pieces:
        if piece_bytes not in trace_of:
            trace_of[piece_bytes] = len(traces)
            traces.append(_trace(enc, piece_bytes, piece_ids, longest))
    order = [trace_of[p] for p, _ in pieces]  # the trace of each piece of the text
    chosen = _chosen(piece, order, traces)
    groups = list(_groups(ids, data, [None if o is None else order[o] for o in owners]))
    chars = len(b"".join(data).decode("utf-8"))
    summary = (
        f'<p id="count"><strong id="n-tokens">{len(ids)}</strong> tokens · {chars} characters · '
        f"{sum(map(len, data))} bytes · {len(pieces)} pieces · encoding "
        f"<code>{_esc(enc.name)}</code></p>"
    )
    text_html = "".join(_group_html(g, i, chosen, enc) for i, g in enumerate(groups))
    sections = "".join(_trace_html(k, t, enc, k == chosen) for k, t in enumerate(traces))
    body = (
        f"<h1>streamcodec explain</h1>{summary}"
        '<p class="hint">Hover a token for its ids and bytes; click it to trace its piece.</p>'
        f'<div id="text">{text_html}</div><p id="info">&#8203;</p>{sections}'
    )
    return _page(f"streamcodec explain: {len(ids)} tokens", body)


def _piece_of_each_token(
    enc: Explainable, ids: list[int], data: list[bytes]
) -> tuple[list[int | None], list[tuple[bytes, list[int]]]]:
    """For each token the index of its piece (None for a special token); each piece's bytes
    and ids.

    The ordinary text between special tokens is pre-tokenized again with the pattern; the
    encoder never lets a token cross a piece, so each piece is exactly some whole tokens.
    """
    owners: list[int | None] = []
    pieces: list[tuple[bytes, list[int]]] = []
    run: list[int] = []  # indexes of the ordinary tokens since the last special token
    for i in [*range(len(ids)), len(ids)]:
        if i < len(ids) and not enc.is_special_token(ids[i]):
            run.append(i)
            continue
        tokens = iter(run)
        text = b"".join(data[j] for j in run).decode("utf-8")
        for piece_text in enc.ordinary.pretokenizer.pieces(text):
            piece, piece_ids, size = piece_text.encode("utf-8"), [], 0
            while size < len(piece):
                j = next(tokens)
                piece_ids.append(ids[j])
                owners.append(len(pieces))
                size += len(data[j])
            pieces.append((piece, piece_ids))
        run = []
        if i < len(ids):
            owners.append(None)
    return owners, pieces


def _trace(enc: Explainable, piece: bytes, ids: list[int], longest: int) -> _Trace:
    ranks = enc.mergeable_ranks
    if len(piece) > MAX_TRACE_BYTES:
        return _Trace(piece, ids, longest_match(piece, ranks, longest=longest), None)
    explanation = explain_piece(piece, ranks, longest=longest)
    return _Trace(piece, ids, explanation.longest, explanation)


def _chosen(piece: int | None, order: list[int], traces: list[_Trace]) -> int | None:
    """The trace shown first (see :func:`explain_html`'s ``piece``)."""
    if piece is not None:
        if not 0 <= piece < len(order):
            raise ValueError(f"piece {piece} does not exist: the text has {len(order)} pieces")
        return order[piece]
    if not traces:
        return None
    differing = [k for k, t in enumerate(traces) if t.bpe != t.longest]
    return differing[0] if differing else max(order, key=lambda k: len(traces[k].piece))


def _groups(ids: list[int], data: list[bytes], traces: list[int | None]) -> Iterator[_Group]:
    """Group the tokens: a token that starts with a UTF-8 continuation byte joins the previous."""
    start = 0
    i = 0
    while i < len(ids):
        j = i + 1
        while j < len(ids) and 0x80 <= data[j][0] < 0xC0:
            j += 1
        yield _Group(ids[i:j], data[i:j], start, traces[i])
        start += len(b"".join(data[i:j]).decode("utf-8"))
        i = j


def _group_html(group: _Group, index: int, chosen: int | None, enc: Explainable) -> str:
    classes = ["tok", f"c{index % _COLOURS}"]
    if len(group.ids) > 1:
        classes.append("split")
    if group.trace is None:
        classes.append("special")
    elif group.trace == chosen:
        classes.append("chosen")
    title = "\n".join(
        f"id {token}{' (special)' if enc.is_special_token(token) else ''} · bytes {b.hex(' ')}"
        f" · {_readable(b)}"
        for token, b in zip(group.ids, group.data, strict=True)
    )
    trace = "" if group.trace is None else f' data-trace="{group.trace}"'
    return (
        f'<span class="{" ".join(classes)}" data-ids="{" ".join(map(str, group.ids))}" '
        f'data-bytes="{b"".join(group.data).hex()}" data-start="{group.start}" '
        f'data-n="{len(group.ids)}"{trace} title="{_esc(title)}">'
        f"{_visible(b''.join(group.data).decode('utf-8'))}</span>"
    )


def _trace_html(k: int, trace: _Trace, enc: Explainable, shown: bool) -> str:
    e = trace.explanation
    decoder = enc.decode_single_token_bytes
    longest = trace.longest
    bpe_cuts = _cuts([decoder(t) for t in trace.bpe])
    longest_cuts = _cuts([decoder(t) for t in longest])
    rows = [] if e is None else list(_bpe_rows(e, longest_cuts))
    if e is None:
        rows.append(
            f'<tr><td colspan="3">a piece of {len(trace.piece)} bytes: too long to show every '
            f"merge here (at most {MAX_TRACE_BYTES})</td></tr>"
        )
    elif e.whole_piece is not None and len(e.steps[-1].parts) > 1:
        rows.append(
            f'<tr class="whole"><td></td><td colspan="2">whole-piece rule: the piece is itself '
            f"token {e.whole_piece}, which is the answer</td></tr>"
        )
    greedy_rows, offset = [], 0
    for token in longest:
        end = offset + len(decoder(token))
        parts = "parts" if (offset, end) not in bpe_cuts else ""
        greedy_rows.append(
            f'<tr class="step {parts}"><td>take</td><td>{_parts([decoder(token)])}</td>'
            f"<td>id {token}</td></tr>"
        )
        offset = end
    same = trace.bpe == longest
    verdict = "the same" if same else "<strong>different</strong>"
    return (
        f'<section class="trace" id="trace-{k}" data-trace="{k}" data-bytes="{trace.piece.hex()}"'
        f"{'' if shown else ' hidden'}>"
        f"<h2>Piece {_parts([trace.piece])} ({len(trace.piece)} bytes)</h2>"
        '<div class="cols"><table class="bpe"><caption>BPE: merges in rank order</caption>'
        f'{"".join(rows)}</table><table class="longest"><caption>greedy longest-match '
        f"(not BPE)</caption>{''.join(greedy_rows)}</table></div>"
        f'<p class="result" data-same="{str(same).lower()}">BPE <code>{trace.bpe}</code>, '
        f"longest-match <code>{longest}</code>: {verdict}</p></section>"
    )


def _bpe_rows(e: Explanation, longest_cuts: set[tuple[int, int]]) -> Iterator[str]:
    """One row per step; a merge that joins bytes longest-match keeps apart is highlighted."""
    boundaries = {end for _, end in longest_cuts}
    before: list[bytes] = []
    for n, step in enumerate(e.steps):
        label, parts = "", ""
        if step.merged is not None:
            i = next(i for i, (p, q) in enumerate(zip(step.parts, before, strict=False)) if p != q)
            start = sum(map(len, step.parts[:i]))
            end = start + len(step.parts[i])
            if any(start < b < end for b in boundaries):
                parts = "parts"
            label = f"merge {_parts([step.parts[i]])} (rank {step.merged})"
        yield (
            f'<tr class="step {parts}"><td>{n}</td><td>{_parts(step.parts)}</td>'
            f"<td>{label}</td></tr>"
        )
        before = step.parts


def _cuts(parts: list[bytes]) -> set[tuple[int, int]]:
    """The (start, end) byte spans of consecutive parts."""
    ends = list(accumulate(map(len, parts)))
    return set(zip([0, *ends[:-1]], ends, strict=True))


def _parts(parts: list[bytes]) -> str:
    """Parts as boxed spans; bytes that are not a whole character show as ``\\xNN``."""
    return "".join(f"<b>{_visible(p.decode('utf-8', 'backslashreplace'))}</b>" for p in parts)


def _readable(data: bytes) -> str:
    return repr(data.decode("utf-8", "backslashreplace"))


def _visible(text: str) -> str:
    """Escaped text, whitespace and invisible characters shown as marks."""
    out = []
    for char in text:
        if char in _VISIBLE:
            out.append(f"<i>{_VISIBLE[char]}</i>")
            out.append("<br>" if char == "\n" else "")
        elif char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"<i>U+{ord(char):04X}</i>")
        else:
            out.append(_esc(char))
    return "".join(out)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;margin:1.5em;color:#222}
#text{font:16px/2.2 ui-monospace,monospace;white-space:normal;word-break:break-all;
  border:1px solid #ccc;padding:.6em;border-radius:6px}
.tok{border:1px solid #999;border-radius:3px;margin:0 1px;padding:1px 0;cursor:pointer}
.tok:hover{outline:2px solid #333}
.tok.chosen{border:2px solid #000}
.c0{background:#fde2e2}.c1{background:#e2f0fd}.c2{background:#e6f9e1}.c3{background:#fff4cc}
.c4{background:#efe2fd}.c5{background:#dff6f4}
.split{border-style:dashed;border-color:#c00}
.split::after{content:"×" attr(data-n);font-size:60%;color:#c00;vertical-align:super}
.special{background:#333;color:#fff}
i{font-style:normal;color:#999}
#info{font:13px ui-monospace,monospace;min-height:1.5em;white-space:pre-wrap;color:#444}
.cols{display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start}
table{border-collapse:collapse;font:14px ui-monospace,monospace}
caption{font:bold 14px system-ui,sans-serif;text-align:left;padding-bottom:.3em;white-space:nowrap}
td{padding:2px 8px;border-bottom:1px solid #eee}
.trace b{font-weight:normal;border:1px solid #aaa;background:#f7f7f7;margin-right:2px;
  padding:0 2px}
tr.parts{background:#ffd9d9}tr.parts td:first-child::before{content:"≠ ";color:#c00}
tr.whole{background:#e8f0ff}
[hidden]{display:none}
"""

_SCRIPT = """
(function () {
  var info = document.getElementById('info');
  function show(k) {
    document.querySelectorAll('section.trace').forEach(function (s) {
      s.hidden = s.dataset.trace !== k;
    });
    document.querySelectorAll('.tok').forEach(function (t) {
      t.classList.toggle('chosen', t.dataset.trace === k);
    });
  }
  var text = document.getElementById('text');
  text.addEventListener('click', function (e) {
    var t = e.target.closest('.tok[data-trace]');
    if (t) { show(t.dataset.trace); history.replaceState(null, '', '#trace-' + t.dataset.trace); }
  });
  text.addEventListener('mouseover', function (e) {
    var t = e.target.closest('.tok');
    if (t) info.textContent = 'character ' + t.dataset.start + ': ' + t.title;
  });
  var m = /^#trace-(\\d+)$/.exec(location.hash);
  if (m && document.getElementById('trace-' + m[1])) show(m[1]);
})();
"""


def _page(title: str, body: str) -> str:
    policy = f"default-src 'none'; style-src '{_sha256(_STYLE)}'; script-src '{_sha256(_SCRIPT)}'"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{_esc(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}<script>{_SCRIPT}</script></body></html>\n"
    )


def _sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode()
