"""Token budgets: count up to a limit, truncate to a budget, split a stream into windows.

All three are exact against ``encode``: a count is the length of the ids, a truncated text
encodes to the first ids of the whole, and a window encoded on its own gives exactly its ids.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> enc.truncate("hello world, again", 2)
    'hello world'
    >>> [(w.text, w.ids, w.start) for w in enc.split("hello world, again", 2)]
    [('hello world', [15339, 1917], 0), (', again', [11, 1578], 11)]

**Where a window ends.** The text is fed to a stream encoder in slices; the end of the text each
``feed`` settles is a *safe cut* (``docs/streaming.md``), where the ids on both sides do not
depend on the other side. A window ends at the last safe cut within its budget if one lies in
its last quarter; otherwise at the last token boundary (never inside a character) whose window,
encoded on its own, gives exactly the ids it holds (tried from the largest down; a piece
longer than the budget is cut between its tokens). Either way each window is checked by
encoding it alone (a warm cache makes that cheap), so the property always holds; if none of
the last :data:`MAX_TRIES` boundaries passes, ``split`` raises instead of giving a window that
does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from streamcodec.encoding import Encoding
    from streamcodec.stream import Policy

__all__ = ["MAX_TRIES", "Window", "count_up_to", "split", "truncate"]

MAX_TRIES = 32  # boundaries tried for one window before split gives up


class Window(NamedTuple):
    """Consecutive text of at most ``max_tokens`` tokens, its ids, and where it starts."""

    text: str
    ids: list[int]
    start: int  # the character offset of ``text`` in the input (as encode reads it)


def count_up_to(chunks: Iterator[list[int]], limit: int) -> int | None:
    """The number of ids in ``chunks``, or None as soon as it passes ``limit`` (the rest of the
    source is then never read)."""
    total = 0
    try:
        for ids in chunks:
            total += len(ids)
            if total > limit:
                return None
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return total


def truncate(enc: Encoding, text: str, max_tokens: int, policy: Policy) -> str:
    """The longest prefix of ``text`` ending on a character boundary whose encoding is the first
    ids of ``text``'s, at most ``max_tokens`` of them (``Encoding.truncate``)."""
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be 0 or more, not {max_tokens}")
    specials = {"allowed_special": policy.allowed, "disallowed_special": policy.disallowed}
    ids, offsets = enc.encode_with_offsets(text, **specials)  # type: ignore[arg-type]
    if len(ids) <= max_tokens:
        return text
    for k in range(max_tokens, 0, -1):
        if _inside_character(enc.decode_single_token_bytes(ids[k])):
            continue
        prefix = text[: offsets[k]]
        if enc.encode(prefix, allowed_special=policy.allowed, disallowed_special=()) == ids[:k]:
            return prefix
    return ""


def split(
    enc: Encoding,
    chunks: Iterable[str],
    max_tokens: int,
    *,
    overlap: int,
    policy: Policy,
) -> Iterator[Window]:
    """Windows of the text ``chunks`` (``Encoding.split``)."""
    if max_tokens < 1 or not 0 <= overlap < max_tokens:
        raise ValueError(
            f"need max_tokens >= 1 and 0 <= overlap < max_tokens (got {max_tokens}, {overlap})"
        )
    windows = _Windows(enc, max_tokens, overlap, policy)
    stream = policy.stream_encoder(enc)
    # Characters per feed: about max_tokens / 8 tokens, so a safe cut is near every window's end.
    size = min(max(max_tokens // 2, 64), 4096)
    for chunk in chunks:
        for i in range(0, len(chunk), size):
            windows.add(stream.feed(chunk[i : i + size]))
            yield from windows.full()
    windows.add(stream.close())
    yield from windows.rest()


class _Windows:
    """Settled tokens not yet behind a window, and the safe cuts among them."""

    def __init__(self, enc: Encoding, max_tokens: int, overlap: int, policy: Policy) -> None:
        self._enc = enc
        self._max = max_tokens
        self._overlap = overlap
        self._allowed = policy.allowed
        self._ids: list[int] = []
        self._data: list[bytes] = []
        self._safe = {0}  # token indexes where a safe cut lies
        self._start = 0  # the character offset of the first token held
        self._done = 0  # the end of the last window, as a token index (0: none yet)

    def add(self, ids: list[int]) -> None:
        if ids:
            self._ids += ids
            self._data += self._enc.decode_tokens_bytes(ids)
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
        for a in self._starts():
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

    def _starts(self) -> list[int]:
        """Where the next window may start: right after the last one, or up to ``overlap``
        tokens before its end (safe cuts first, then the earliest boundaries)."""
        if not self._done or not self._overlap:
            return [self._done]
        low = max(self._done - self._overlap, 1)
        safe = sorted(k for k in self._safe if low <= k < self._done)
        bounds = [k for k in range(low, self._done) if self._boundary(k)]
        return list(dict.fromkeys([*safe, *bounds, self._done]))

    def _ends(self, a: int) -> Iterator[int]:
        """Where a window starting at token ``a`` may end, best first, at most MAX_TRIES."""
        high = min(a + self._max, len(self._ids))
        low = max(a, self._done)  # a window must reach past the last one
        near = a + self._max - self._max // 4
        safe = sorted((k for k in self._safe if k >= near and low < k <= high), reverse=True)
        bounds = (k for k in range(high, low, -1) if k not in safe and self._boundary(k))
        return itertools.islice(itertools.chain(safe, bounds), MAX_TRIES)

    def _boundary(self, k: int) -> bool:
        """Whether a cut before token ``k`` falls between characters."""
        return k == len(self._ids) or not _inside_character(self._data[k])

    def _window(self, a: int, k: int) -> Window | None:
        """The window of tokens ``a:k``, if it encodes alone to exactly them."""
        text = b"".join(self._data[a:k]).decode("utf-8")
        if self._enc.encode(text, allowed_special=self._allowed, disallowed_special=()) != (
            ids := self._ids[a:k]
        ):
            return None
        return Window(text, ids, self._start + self._chars(a))

    def _chars(self, k: int) -> int:
        """The number of characters of the tokens before ``k`` (a boundary between them)."""
        return len(b"".join(self._data[:k]).decode("utf-8"))

    def _drop(self, a: int, k: int) -> None:
        """Forget the tokens before ``a``; the window ended at ``k``."""
        self._start += self._chars(a)
        del self._ids[:a], self._data[:a]
        self._safe = {s - a for s in self._safe if s >= a}
        self._done = k - a


def _inside_character(token: bytes) -> bool:
    """Whether ``token`` starts with a UTF-8 continuation byte (inside a character)."""
    return 0x80 <= token[0] < 0xC0
