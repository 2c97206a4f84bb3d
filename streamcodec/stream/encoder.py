"""Streaming: encode text that arrives in chunks, in bounded memory, with the ids of the whole.

A :class:`StreamEncoder` is fed text in chunks of any size and returns, from each ``feed``, the
ids that no later text can change; ``close`` returns the rest. Concatenated, the ids equal
``encode`` of the whole text. It holds back only the text after the last *safe cut*
(:mod:`streamcodec.stream.cuts`; the rules and their proof: docs/streaming.md).

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> stream = enc.stream_encoder()
    >>> stream.feed("Hello wor"), stream.feed("ld, again"), stream.close()
    ([9906], [1917, 11], [1578])
    >>> enc.encode("Hello world, again")
    [9906, 1917, 11, 1578]

The data path: chunks -> special tokens split off (:class:`~streamcodec.text.specials.
SpecialSplitter`; the last ``longest special - 1`` characters wait for the next feed) ->
ordinary text up to its last safe cut (:class:`SettledText`) -> ids
(:class:`~streamcodec.engine.ordinary.OrdinaryEncoder`). The first two steps are
:class:`SettledStream`, through which the trainer reads its corpus too.

Memory: the text after the last safe cut. Real text has one every few characters; one huge
pre-token (100 MB of one letter) has none and is held whole until it ends (docs/streaming.md,
"Memory").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple, Protocol, TypeVar

from streamcodec.engine.ordinary import OrdinaryEncoder
from streamcodec.stream.cuts import Cuts, cuts_for
from streamcodec.stream.sources import Source, text_chunks
from streamcodec.text.specials import SpecialSplitter
from streamcodec.text.unicode import encode_replacing_surrogates

__all__ = [
    "Encodes",
    "Policy",
    "Segment",
    "SettledStream",
    "SettledText",
    "StreamEncoder",
    "count_source",
    "count_text_chunks",
    "encode_source",
    "encode_text_chunks",
]

R = TypeVar("R")


class Encodes(Protocol):
    """What the stream needs of an encoding (:class:`streamcodec.Encoding` is one)."""

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text -> id."""

    @property
    def ordinary(self) -> OrdinaryEncoder:
        """The engine for ordinary text."""


class Policy(NamedTuple):
    """How to read a source: special tokens to encode as such, those that are errors, and what
    invalid UTF-8 does (``"strict"``, ``"replace"`` or ``"surrogateescape"``)."""

    allowed: frozenset[str]
    disallowed: frozenset[str]
    errors: str = "strict"

    def stream_encoder(self, encoding: Encodes) -> StreamEncoder:
        """A :class:`StreamEncoder` for text decoded under this policy."""
        return StreamEncoder(
            encoding, allowed=self.allowed, disallowed=self.disallowed, errors=self.errors
        )


class Segment(NamedTuple):
    """Settled ordinary text: the pieces of ``text[start:end]``; ``text[:start]`` is context
    for lookbehinds, and ``final`` says the ordinary text ends at ``end``."""

    text: str
    start: int
    end: int
    final: bool


class SettledText:
    """Ordinary text in, in chunks; out, the text before the last safe cut (a :class:`Segment`).

    Held chunks are joined only when a cut is found, and each search looks only at new text,
    so the work stays linear however long a stretch without a cut.
    """

    def __init__(self, cuts: Cuts) -> None:
        self._cuts = cuts
        self._parts: list[str] = []  # held text, joined only when it is settled
        self.size = 0

    def feed(self, text: str) -> Segment | None:
        """The text settled by ``text``, if any."""
        if not text:
            return None
        cut = self._cuts.find(self._parts, self.size, text)
        self._parts.append(text)
        self.size += len(text)
        if cut is None:
            return None
        held = "".join(self._parts)
        self._parts, self.size = [held[cut:]], len(held) - cut
        return self._segment(held, cut, final=False)

    def close(self, special: str = "") -> Segment:
        """All the held text: the ordinary text ends here (before the special token
        ``special``, which the next cut may look behind at)."""
        held = "".join(self._parts)
        self._parts, self.size = [], 0
        segment = self._segment(held, len(held), final=True)
        self._cuts.settled(special, len(special))
        return segment

    def _segment(self, text: str, end: int, *, final: bool) -> Segment:
        # ``text`` is not sliced: a huge held piece is not copied again.
        context = self._cuts.context
        self._cuts.settled(text, end)
        whole = context + text if context else text
        return Segment(whole, len(context), len(context) + end, final)


class SettledStream:
    """Text in chunks; out, in order, settled ordinary text (:class:`Segment`) and the ids of
    the allowed special tokens between them."""

    def __init__(
        self,
        special_tokens: dict[str, int],
        cuts: Cuts,
        *,
        allowed: frozenset[str],
        disallowed: frozenset[str],
    ) -> None:
        self._specials = SpecialSplitter(special_tokens, allowed=allowed, disallowed=disallowed)
        self._settled = SettledText(cuts)
        self._special_text = {i: text for text, i in special_tokens.items()}

    def feed(self, text: str) -> list[Segment | int]:
        """What ``text`` settles (with the text held from before)."""
        return self._settle(self._specials.feed(text))

    def close(self) -> list[Segment | int]:
        """Everything still held: the stream ends here."""
        return [*self._settle(self._specials.close()), self._settled.close()]

    @property
    def pending(self) -> int:
        """How many characters are held back, waiting for the text after them."""
        return len(self._specials.held) + self._settled.size

    @property
    def unsettled(self) -> int:
        """How many characters of ordinary text are held after the last safe cut."""
        return self._settled.size

    def _settle(self, parts: list[str | int]) -> list[Segment | int]:
        settled: list[Segment | int] = []
        for part in parts:
            if isinstance(part, str):
                if (segment := self._settled.feed(part)) is not None:
                    settled.append(segment)
            else:  # an allowed special token: the ordinary text before it ends
                settled += [self._settled.close(self._special_text[part]), part]
        return settled


class StreamEncoder:
    """Encode text fed in chunks; ``feed`` returns the ids that later text cannot change.

    Made by :meth:`streamcodec.Encoding.stream_encoder`. ``errors`` says what lone surrogates in
    the text are: ``"surrogateescape"``, the bytes they stand for (as ``encode_bytes``); any
    other value, U+FFFD (as ``encode``). So it may be the ``errors`` that decoded the text.
    """

    def __init__(
        self,
        encoding: Encodes,
        *,
        allowed: frozenset[str],
        disallowed: frozenset[str],
        errors: str = "replace",
    ) -> None:
        engine = encoding.ordinary
        self._engine = engine
        # An open model's rules vet the cuts too (streamcodec.engine.model).
        rules = getattr(engine, "cut_allowed", None)
        cuts = cuts_for(engine.pretokenizer, engine.byte_mode, allowed=rules)
        self._stream = SettledStream(
            encoding.special_tokens, cuts, allowed=allowed, disallowed=disallowed
        )
        # "strict" encodes valid text; a lone surrogate then raises and is replaced.
        self._errors = "surrogateescape" if errors == "surrogateescape" else "strict"
        self._emitted = False  # ids of the current ordinary text were returned before

    def feed(self, text: str) -> list[int]:
        """The ids of ``text`` (and of text held from before) that are final."""
        if not isinstance(text, str):
            raise TypeError(f"feed() takes text (str), not {type(text).__name__}")
        return self._encode(self._stream.feed(text))

    def close(self) -> list[int]:
        """The ids of everything still held; the stream ends here."""
        return self._encode(self._stream.close())

    def feed_count(self, text: str) -> int:
        """``len(self.feed(text))``; the compiled pass counts without building the ids."""
        if not isinstance(text, str):
            raise TypeError(f"feed_count() takes text (str), not {type(text).__name__}")
        return self._count(self._stream.feed(text))

    def close_count(self) -> int:
        """``len(self.close())``, as :meth:`feed_count`."""
        return self._count(self._stream.close())

    @property
    def pending(self) -> int:
        """How many characters are held back, waiting for the text after them."""
        return self._stream.pending

    @property
    def fewest_pending_ids(self) -> int:
        """At least this many ids are still to come from the held text: a character is at least
        one byte, a token at most the longest token's bytes. One endless pre-token thus passes
        any count limit in bounded memory (:func:`count_source`)."""
        return -(-self._stream.unsettled // self._engine.longest_token)

    def _encode(self, settled: list[Segment | int]) -> list[int]:
        ids: list[int] = []
        for item in settled:
            if isinstance(item, int):
                ids.append(item)
            else:
                ids += self._segment(item, self._engine.encode)
        return ids

    def _count(self, settled: list[Segment | int]) -> int:
        return sum(
            1 if isinstance(item, int) else self._segment(item, self._engine.count)
            for item in settled
        )

    def _segment(self, segment: Segment, run: Callable[..., R]) -> R:
        """``run`` (the engine's ``encode`` or ``count``) over one settled segment."""
        text, start, end, final = segment
        # The whole-piece rule belongs to the whole ordinary text (it matters in byte mode).
        whole_piece = final and not self._emitted
        self._emitted = not final
        if self._errors != "strict":
            return run(text, self._errors, start=start, end=end, whole_piece=whole_piece)
        # No cut falls inside a surrogate pair, so the parts can be fixed on their own.
        return encode_replacing_surrogates(
            lambda whole, a, b: run(whole, "strict", start=a, end=b, whole_piece=whole_piece),
            text,
            start,
            end,
        )


def encode_text_chunks(stream: StreamEncoder, chunks: Iterable[str]) -> Iterator[list[int]]:
    """Feed ``chunks`` to ``stream``; yield the ids of each chunk (possibly empty) and the rest."""
    for chunk in chunks:
        yield stream.feed(chunk)
    yield stream.close()


def count_text_chunks(stream: StreamEncoder, chunks: Iterable[str]) -> Iterator[int]:
    """:func:`encode_text_chunks`, each chunk's ids counted instead."""
    for chunk in chunks:
        yield stream.feed_count(chunk)
    yield stream.close_count()


def encode_source(
    encoding: Encodes,
    source: Source,
    policy: Policy,
    *,
    progress: Callable[[int], object] | None = None,
) -> Iterator[list[int]]:
    """The ids of ``source`` chunk by chunk, in one process (``Encoding.iter_encode_chunks``)."""
    chunks = text_chunks(source, errors=policy.errors, progress=progress)
    return encode_text_chunks(policy.stream_encoder(encoding), chunks)


def count_source(
    encoding: Encodes,
    source: Source,
    policy: Policy,
    *,
    limit: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> int | None:
    """The number of ids of ``source``, in one process (``Encoding.count_tokens``); with
    ``limit``, None as soon as the count is sure to pass it, the rest unread.

    The ids given so far and the fewest the held text can give (:attr:`StreamEncoder.
    fewest_pending_ids`) settle it: a pre-token with no end (a stream of NUL bytes) stops the
    count within ``limit`` times the longest token, in memory and in time.
    """
    stream = policy.stream_encoder(encoding)
    total = 0
    chunks = text_chunks(source, errors=policy.errors, progress=progress)
    with contextlib.closing(chunks):  # a file source is closed at once
        for chunk in chunks:
            total += stream.feed_count(chunk)
            if limit is not None and total + stream.fewest_pending_ids > limit:
                return None
    total += stream.close_count()
    return None if limit is not None and total > limit else total
