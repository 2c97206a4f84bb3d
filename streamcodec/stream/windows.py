"""Windows: a source cut into consecutive texts of at most ``max_tokens`` tokens, each exact.

What ``Encoding.split`` yields: ``Window(text, ids, start)``. Each window's text encodes on its
own to exactly its ids, and (without overlap) the windows join to the text and its ids.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> [(w.text, w.ids, w.start) for w in enc.split("hello world, again", 2)]
    [('hello world', [15339, 1917], 0), (', again', [11, 1578], 11)]

**Where a window ends.** At a *safe cut* (:mod:`streamcodec.stream.cuts`), where the ids on
both sides do not depend on the other side, when one lies in the last quarter of its budget:
for the named patterns the rules find them in the text (searched backwards from the budget's
end); for others the text is fed to the stream encoder in slices and the end of what each
``feed`` settles is the safe cut. Otherwise the window ends at the last token boundary (never
inside a character) whose window, encoded on its own, gives exactly the ids it holds (tried from
the largest down; a piece longer than the budget is cut between its tokens). Either way each
window is checked by encoding it alone with a fresh stream encoder (a warm cache makes that
cheap), so the property always holds; if none of the last :data:`MAX_TRIES` boundaries passes,
``split`` raises instead of giving a window that does not.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Protocol

from streamcodec.arguments import whole_number
from streamcodec.stream.cuts import PROVEN_PATTERNS, LastMatch, last_safe_cut, safe_cuts
from streamcodec.stream.encoder import Encodes, Policy
from streamcodec.text.offsets import OffsetCounter, starts_inside_character

__all__ = ["MAX_TRIES", "Window", "Windowable", "split"]

MAX_TRIES = 32  # boundaries tried for one window before split gives up


class Windowable(Encodes, Protocol):
    """What windows need of an encoding (:class:`streamcodec.Encoding` is one)."""

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""


class Window(NamedTuple):
    """Consecutive text of at most ``max_tokens`` tokens, its ids, and where it starts."""

    text: str
    ids: list[int]
    start: int  # the character offset of ``text`` in the input (as encode reads it)


def split(
    enc: Windowable,
    chunks: Iterable[str],
    max_tokens: int,
    *,
    overlap: int,
    policy: Policy,
) -> Iterator[Window]:
    """Windows of the text ``chunks`` (``Encoding.split``), read under ``policy``."""
    whole_number("max_tokens", max_tokens, least=1)
    if whole_number("overlap", overlap) >= max_tokens:
        raise ValueError(f"overlap={overlap}: expected below max_tokens={max_tokens}")
    windows = _Windows(enc, max_tokens, overlap, policy)
    stream = policy.stream_encoder(enc)
    # The named patterns' safe cuts are found in the text by their rules: feed large slices.
    # Other patterns: the end of each feed is the safe cut, so feed about max_tokens / 8 tokens.
    size = 16384 if windows.rules else min(max(max_tokens // 2, 64), 4096)
    for chunk in chunks:
        for i in range(0, len(chunk), size):
            windows.add(stream.feed(chunk[i : i + size]))
            yield from windows.full()
    windows.add(stream.close())
    yield from windows.rest()


class _Windows:
    """Settled tokens not yet behind a window, their text, and the safe cuts among them."""

    def __init__(self, enc: Windowable, max_tokens: int, overlap: int, policy: Policy) -> None:
        self._enc = enc
        self._max = max_tokens
        self._overlap = overlap
        # Windows are checked as encode would read them alone: allowed specials, none refused.
        self._policy = Policy(policy.allowed, frozenset(), policy.errors)
        # (first, last) safe-cut searches; none under an open model's rules (engine/model.py)
        ruled = getattr(enc.ordinary, "cut_allowed", None) is not None
        self.rules = None if ruled else _rules(enc.ordinary.pretokenizer.named or "")
        self._ids: list[int] = []
        self._data: list[bytes] = []
        self._starts: list[int] = []  # each token's character offset in the input
        self._offsets = OffsetCounter("char")
        self._text = ""  # the text of the tokens held
        self._start = 0  # its character offset in the input
        self._safe = {0}  # token indexes where a feed ended (a safe cut)
        self._done = 0  # the end of the last window, as a token index (0: none yet)

    def add(self, ids: list[int]) -> None:
        if ids:
            data = self._enc.decode_tokens_bytes(ids)
            self._ids += ids
            self._data += data
            self._starts += self._offsets.offsets(data)
            self._text += b"".join(data).decode("utf-8")  # settled text ends between characters
            self._safe.add(len(self._ids))

    def full(self) -> Iterator[Window]:
        """The windows that later text cannot change: those with a full budget after them."""
        while len(self._ids) > self._done + self._max:
            yield self._next()

    def rest(self) -> Iterator[Window]:
        while len(self._ids) > self._done:
            yield self._next()

    def _next(self) -> Window:
        tried = False
        for a in self._window_starts():
            for k in self._ends(a):
                tried = True
                window = self._window(a, k)
                if window is not None:
                    self._drop(a, k)
                    return window
        if not tried:
            raise ValueError(
                f"the character at offset {self._start + self._chars(self._done)} is made of "
                f"more than max_tokens={self._max} tokens: windows cannot hold it"
            )
        raise ValueError(
            f"cannot split the input after character {self._start}: no token boundary in "
            f"{MAX_TRIES} tried gives a window that encodes alone to its ids; try a larger "
            "max_tokens"
        )

    def _window_starts(self) -> list[int]:
        """Where the next window may start: right after the last one, or up to ``overlap``
        tokens before its end (the first safe cut there, then the earliest boundaries)."""
        if not self._done or not self._overlap:
            return [self._done]
        low = max(self._done - self._overlap, 1)
        safe = sorted(k for k in self._safe if low <= k < self._done)
        rule = self._rule_cut(low, self._done - 1, last=False)
        bounds = [k for k in range(low, self._done) if self._boundary(k)]
        return list(dict.fromkeys([*rule, *safe, *bounds, self._done]))

    def _ends(self, a: int) -> Iterator[int]:
        """Where a window starting at token ``a`` may end, best first, at most MAX_TRIES."""
        high = min(a + self._max, len(self._ids))
        low = max(a, self._done)  # a window must reach past the last one
        near = max(a + self._max - self._max // 4, low + 1)
        safe = sorted((k for k in self._safe if near <= k <= high), reverse=True)
        rule = self._rule_cut(near, high, last=True) if near <= high else []
        best = sorted({*safe, *rule}, reverse=True)
        bounds = (k for k in range(high, low, -1) if k not in best and self._boundary(k))
        return itertools.islice(itertools.chain(best, bounds), MAX_TRIES)

    def _rule_cut(self, low: int, high: int, *, last: bool) -> list[int]:
        """The last (or first) token boundary in ``low..high`` where a safe-cut rule holds."""
        if self.rules is None:
            return []
        first, last_cut = self.rules
        begin, end = self._chars(low), self._chars(high)
        for _ in range(4):  # a rule may hold inside a special token's text: try a few
            stop = min(end + 1, len(self._text))
            if last:
                cut = last_cut.find(self._text, begin, stop)
            else:
                cut = match.start() if (match := first.search(self._text, begin, stop)) else None
            if cut is None:
                return []
            k = bisect.bisect_left(self._starts, self._start + cut)
            at_token = k < len(self._starts) and self._starts[k] == self._start + cut
            if at_token and low <= k <= high and self._boundary(k):
                return [k]
            begin, end = (begin, cut - 1) if last else (cut + 1, end)
        return []

    def _boundary(self, k: int) -> bool:
        """Whether a cut before token ``k`` falls between characters."""
        return k == len(self._ids) or not starts_inside_character(self._data[k])

    def _window(self, a: int, k: int) -> Window | None:
        """The window of tokens ``a:k``, if it encodes alone to exactly them."""
        text = self._text[self._chars(a) : self._chars(k)]
        alone = self._policy.stream_encoder(self._enc)
        if alone.feed(text) + alone.close() != (ids := self._ids[a:k]):
            return None
        return Window(text, ids, self._start + self._chars(a))

    def _chars(self, k: int) -> int:
        """The characters of the tokens before ``k`` (a boundary between them)."""
        return len(self._text) if k == len(self._ids) else self._starts[k] - self._start

    def _drop(self, a: int, k: int) -> None:
        """Forget the tokens before ``a``; the window ended at ``k``."""
        begin = self._chars(a)
        self._text = self._text[begin:]
        self._start += begin
        del self._ids[:a], self._data[:a], self._starts[:a]
        self._safe = {s - a for s in self._safe if s >= a}
        self._done = k - a


def _rules(pattern: str) -> tuple[re.Pattern[str], LastMatch] | None:
    """The safe-cut rule of a named pattern, searched forwards and backwards (compiled when a
    split first needs it: at import it took 130 ms of every start-up)."""
    if pattern not in PROVEN_PATTERNS:
        return None
    return safe_cuts()[pattern], last_safe_cut(pattern)
