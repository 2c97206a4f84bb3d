"""Streaming: encode text that arrives in chunks, and decode ids as they come, in bounded memory.

A :class:`StreamEncoder` is fed text in chunks of any size and returns, from each ``feed``, the
ids that no later text can change; ``close`` returns the rest. Concatenated, the ids equal
``encode`` of the whole text. It holds back only the text after the last *safe cut*.

    >>> import streamcodec
    >>> enc = streamcodec.get_encoding("cl100k_base")
    >>> stream = enc.stream_encoder()
    >>> stream.feed("Hello wor"), stream.feed("ld, again"), stream.close()
    ([9906], [1917, 11], [1578])
    >>> enc.encode("Hello world, again")
    [9906, 1917, 11, 1578]

Safe cuts
---------
A cut at position ``p`` of the text seen so far (``B``, ``n`` characters; more may follow) is
safe when the pieces of any longer text ``B + C`` that end at or before ``p`` are the pieces of
``B[:p]`` read as a whole text. The regex engine decides each match from the characters it
examines; a match is final if the engine never examined position ``n`` (where it would have seen
"end of text", which ``$`` and ``(?!\\S)`` accept and every character class refuses), and the
slice ``B[:p]`` is equivalent if nothing before ``p`` examined ``p`` in a way that tells "end of
text" from the character there.

**Named patterns** (gpt2/r50k/p50k, cl100k_base, o200k_base). Let ``x = B[p-1]`` and ``y = B[p]``
(``y`` must have been seen: ``p < n``). The cut is safe in six contexts:

1. ``x`` is not whitespace and ``y`` is whitespace other than ``\\r`` and ``\\n``;
2. ``x`` is a letter or digit and ``y`` is ``\\r`` or ``\\n``;
3. ``x`` is a letter and ``y`` is none of: letter, mark (o200k counts marks as letters),
   whitespace, ``'`` (o200k glues ``'s``, ``'ll``... to the word), a surrogate;
4. ``x`` is a digit and ``y`` is none of: digit, whitespace, a surrogate;
5. ``x`` is ``\\r`` or ``\\n`` after a non-whitespace character, and ``y`` is neither whitespace
   nor ``/``;
6. (cl100k_base and o200k_base only) ``x`` is the ``\\n`` of a ``\\r\\n`` after a
   non-whitespace character, and ``y`` is neither whitespace nor ``/``.

Rules 5 and 6 matter for scripts whose words end in a combining mark (Devanagari, Thaana, Thai):
a mark is not a letter, so rules 2 and 3 never cut a list of such words, one per line.

Why. Every alternative of these patterns is one of: a whitespace run (``\\s++$``,
``\\s*[\\r\\n]``, ``\\s+(?!\\S)``, ``\\s``), which holds only whitespace; or a non-whitespace run
(letters, digits, punctuation, contractions) with at most one leading space or symbol, which never
holds whitespace after its first character, except cl100k/o200k's punctuation runs, which take
the ``\\r``/``\\n`` (and ``/``) that follow them. So the piece holding ``x`` is a non-whitespace
piece, and in each context it cannot take ``y``: (1) ``y`` is whitespace but no newline; (2)
letter and digit runs never take a newline; (3) a letter run ends at anything that is not a
letter or mark, unless o200k's contraction begins there (``'``); (4) digit runs hold only digits.
Hence ``p`` is a piece boundary. What did the engine examine? Whitespace pieces before ``p`` end
before ``x``, which stops their run, so they examined nothing at or after ``p``; the lookaheads
``(?!\\S)`` and ``$`` only follow whitespace runs, so no lookahead is evaluated at ``p``. The piece
holding ``x``, and the alternatives tried before it, examined ``y`` only to be refused by it
(a letter run refuses a non-letter, o200k's contraction refuses a non-``'``, a punctuation run's
``[\\r\\n]*`` refuses a space...), and "end of text" refuses the same. Contraction alternatives
look at most three characters ahead, and stop at the first character that is not the expected
letter. So nothing before ``p`` examined anything after ``y``, ``y`` itself was only refused, and
``B[:p]`` has the same pieces: the cut is safe whatever follows.

Rules 5 and 6: the whitespace run ``W`` that ends with ``x`` is a line break of one character
(rule 5) or ``\\r\\n`` (rule 6), after a non-whitespace character. A punctuation run may take
it (cl100k's ``[\\r\\n]*+``, o200k's ``[\\r\\n/]*``), and stops at ``y`` as at the end of text
(``y`` is no line break and not ``/``). Otherwise ``W`` starts a piece: no alternative can start
with a line break and take ``y`` (the optional prefixes ``[^\\r\\n\\p{L}\\p{N}]?`` and `` ?``
exclude it). With ``y`` after it, cl100k's ``\\s*[\\r\\n]`` and o200k's ``\\s*[\\r\\n]+`` take
all of ``W`` (backtracking one character at most); at the end of text ``\\s++$`` (cl100k) or the
same ``\\s*[\\r\\n]+`` (o200k) takes all of ``W``: the same piece. GPT-2's pattern has no
newline alternative: ``\\s+(?!\\S)`` before ``y`` splits ``\\r\\n`` into ``\\r`` and ``\\n``,
while ``\\s++$`` keeps it whole, which is why rule 6 is not used for it; a single character is
``\\s`` before ``y`` and ``\\s++$`` at the end, the same piece.

The tests check all of this for every chunking of adversarial text (tests/test_stream.py).

Surrogates: ``encode`` turns a lone surrogate into U+FFFD and a pair into its character, which
may be a letter or digit; a cut never falls before a surrogate in contexts 3 and 4, so pairs are
never split and the fix is the same per chunk.

**Other patterns.** streamcodec has no proof for a pattern it does not know, so it asks the
pattern and assumes only this: *a match never examines text beyond the first whitespace ->
non-whitespace transition after its end plus 32 characters, and looks behind at most 64
characters*. Every BPE pattern published so far satisfies it. The cut is then the last piece
boundary (of the pattern's own pieces of the text so far) that has at least two pieces, a
transition from whitespace to non-whitespace, and 32 more characters after it; and the pieces of
the slice before it must equal those pieces (checked, not assumed). The text before the cut is
kept as 64 characters of context for lookbehinds and anchors. This costs a second scan of the
text, and a pattern that never produces such a cut (``[\\s\\S]+``) holds all its text until
``close``: correct, not bounded.

Special tokens
--------------
Allowed special tokens end the ordinary text around them. Any of them may straddle two feeds, so
the last ``longest special - 1`` characters wait until the next feed shows whether a special token
starts there. A disallowed special token raises ``ValueError`` from the ``feed`` that completes
it (the ids returned before stay valid for the text before it).

Memory
------
Held back: the text after the last safe cut, plus a few characters. Real text has a safe cut
every few characters. One huge pre-token (100 MB of one letter, or of spaces) has no cut inside
it: it is held whole (its characters, as the chunks that arrived) and encoded when it ends, so
it needs memory proportional to the piece plus what the piece encoder (:mod:`streamcodec.bpe`)
needs for one piece of that size, and takes that encoder's time. The search for cuts only looks
at new text, and the held chunks are joined once, so the stream's own work stays linear.
Emitting ids from inside such a piece would need a proof that the merge result of its prefix
cannot change as the piece grows; there is none here, so the stream waits.

**Byte mode** (``BYTE_MODE_PATTERN``: no pre-tokenizer, the whole text is one piece) has such a
proof at some places: between two bytes that are adjacent inside no token, no merge can ever
cross, so the text before is final (:mod:`streamcodec.bytemode`). The stream cuts there and
holds the longest stretch without such a place: a few hundred bytes at most on real text with
real vocabularies, the whole input when every neighbouring pair of bytes is inside some token.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

import regex

from streamcodec.encoding import (
    allowed_special_matches,
    raise_disallowed_special_token,
    replace_lone_surrogates,
    special_token_regex,
)
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

if TYPE_CHECKING:
    from streamcodec.bytemode import ByteMode
    from streamcodec.encoding import Encoding

__all__ = [
    "CHUNK_SIZE",
    "PROVEN_PATTERNS",
    "SAFE_CUT",
    "SAFE_CUTS",
    "InvalidUTF8Error",
    "Policy",
    "StreamDecoder",
    "StreamEncoder",
    "count_source",
    "decode_utf8",
    "encode_source",
    "encode_text_chunks",
    "text_chunks",
]

CHUNK_SIZE = 1 << 20  # characters or bytes read at a time

# The character y just after a safe cut, with x before it in the lookbehind (rules 1 to 5).
_SAFE_CUT = (
    r"(?<=\S)[^\S\r\n]"
    r"|(?<=[\p{L}\p{N}])[\r\n]"
    r"|(?<=\p{L})[^\p{L}\p{M}\s'\ud800-\udfff]"
    r"|(?<=\p{N})[^\p{N}\s\ud800-\udfff]"
    r"|(?<=\S[\r\n])[^\s/]"
)
SAFE_CUT = regex.compile(_SAFE_CUT)
# Rule 6, for the patterns with a newline alternative (not GPT-2's).
_SAFE_CUT_CRLF = _SAFE_CUT + r"|(?<=\S\r\n)[^\s/]"
# The safe cuts of each named pattern (SAFE_CUT alone is safe for all three).
SAFE_CUTS = {
    pattern: regex.compile(_SAFE_CUT if pattern == GPT2_PATTERN else _SAFE_CUT_CRLF)
    for pattern in (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN)
}
# The patterns the safe-cut rules in the module docstring are proven for.
PROVEN_PATTERNS = frozenset(SAFE_CUTS)
# For other patterns: the end of a whitespace run.
_LAST_WORD_START = regex.compile(r"(?<=\s)\S", regex.REVERSE)


class InvalidUTF8Error(ValueError):
    """Input bytes are not UTF-8; the message names the byte offset."""

    def __init__(self, offset: int, reason: str, source: str) -> None:
        super().__init__(
            f"{source}: invalid UTF-8 at byte offset {offset} ({reason}); "
            "decode with errors='replace' or errors='surrogateescape' to accept it"
        )
        self.offset, self.reason, self.source = offset, reason, source

    def __reduce__(self) -> tuple[type[InvalidUTF8Error], tuple[int, str, str]]:
        # Raised in worker processes too, so it must survive pickling.
        return type(self), (self.offset, self.reason, self.source)


class Policy(NamedTuple):
    """How to read a source: special tokens to encode as such, those that are errors, and what
    invalid UTF-8 does (``"strict"``, ``"replace"`` or ``"surrogateescape"``)."""

    allowed: frozenset[str]
    disallowed: frozenset[str]
    errors: str = "strict"

    def stream_encoder(self, encoding: Encoding) -> StreamEncoder:
        """A :class:`StreamEncoder` for text decoded under this policy."""
        return StreamEncoder(
            encoding,
            allowed=self.allowed,
            disallowed=self.disallowed,
            errors=self.errors,
        )


class StreamEncoder:
    """Encode text fed in chunks; ``feed`` returns the ids that later text cannot change.

    Made by :meth:`streamcodec.Encoding.stream_encoder`. ``errors`` says what lone surrogates in
    the text are: ``"surrogateescape"``, the bytes they stand for (as ``encode_bytes``); any
    other value, U+FFFD (as ``encode``). So it may be the ``errors`` that decoded the text.
    """

    def __init__(
        self,
        encoding: Encoding,
        *,
        allowed: frozenset[str],
        disallowed: frozenset[str],
        errors: str = "replace",
    ) -> None:
        self._specials = _SpecialSplitter(encoding, allowed, disallowed)
        self._ordinary = _OrdinaryText(encoding, errors)
        self._special_text = {i: text for text, i in encoding.special_tokens.items()}

    def feed(self, text: str) -> list[int]:
        """The ids of ``text`` (and of text held from before) that are final."""
        if not isinstance(text, str):
            raise TypeError(f"StreamEncoder.feed: text must be str, not {type(text).__name__}")
        return self._encode(self._specials.feed(text))

    def close(self) -> list[int]:
        """The ids of everything still held; the stream ends here."""
        return self._encode(self._specials.close()) + self._ordinary.close()

    @property
    def pending(self) -> int:
        """How many characters are held back, waiting for the text after them."""
        return len(self._specials.held) + self._ordinary.size

    def _encode(self, parts: list[str | int]) -> list[int]:
        ids: list[int] = []
        for part in parts:
            if isinstance(part, str):
                ids += self._ordinary.feed(part)
            else:  # an allowed special token: the ordinary text before it ends
                ids += self._ordinary.close(self._special_text[part])
                ids.append(part)
        return ids


class _SpecialSplitter:
    """Split streamed text into ordinary text and allowed special tokens (as their ids).

    Finds special tokens as ``Encoding._encode`` does on the whole text
    (:func:`~streamcodec.encoding.allowed_special_matches`): a match at ``q`` is final once
    ``longest`` characters from ``q`` have been seen.
    """

    def __init__(
        self, encoding: Encoding, allowed: frozenset[str], disallowed: frozenset[str]
    ) -> None:
        self._ids = encoding.special_tokens
        self._allowed = allowed
        self._finder = special_token_regex(frozenset(self._ids)) if allowed else None
        self._hold = max(map(len, self._ids), default=1) - 1 if allowed else 0
        self._refused = special_token_regex(disallowed) if disallowed else None
        self._refused_tail = max(map(len, disallowed), default=1) - 1
        self.held = ""  # may be the start of a special token
        self._checked = ""  # the end of the text already searched for disallowed tokens

    def feed(self, text: str, *, final: bool = False) -> list[str | int]:
        self._refuse_disallowed(text)
        if self._finder is None:
            return [text]
        text = self.held + text
        limit = len(text) if final else len(text) - self._hold
        parts: list[str | int] = []
        start = 0
        for match in allowed_special_matches(self._finder, text, self._allowed, limit):
            parts += [text[start : match.start()], self._ids[match.group()]]
            start = match.end()
        keep = max(start, limit)
        parts.append(text[start:keep])
        self.held = text[keep:]
        return parts

    def close(self) -> list[str | int]:
        return self.feed("", final=True)

    def _refuse_disallowed(self, text: str) -> None:
        if self._refused is None or not text:
            return
        tail = self._refused_tail
        # The border region first: a token split across feeds is found there.
        for region in (self._checked + text[:tail], text):
            if match := self._refused.search(region):
                raise_disallowed_special_token(match.group())
        self._checked = (self._checked + text[-tail:])[-tail:] if tail else ""


class _OrdinaryText:
    """Ordinary text (between special tokens) in, ids of the text before the last safe cut out."""

    def __init__(self, encoding: Encoding, errors: str) -> None:
        self._encoding = encoding
        # "strict" encodes valid text; a lone surrogate then raises and is replaced in _encode.
        self._errors = "surrogateescape" if errors == "surrogateescape" else "strict"
        self._parts: list[str] = []  # held text, joined only when it is encoded
        self.size = 0
        self._cuts: _ProvenCuts | _PatternCuts | _ByteModeCuts
        if encoding._byte_mode is not None:
            self._cuts = _ByteModeCuts(encoding._byte_mode)
        elif encoding.pat_str in PROVEN_PATTERNS:
            self._cuts = _ProvenCuts(encoding.pat_str)
        else:
            self._cuts = _PatternCuts(encoding)

    def feed(self, text: str) -> list[int]:
        if not text:
            return []
        cut = self._cuts.find(self._parts, self.size, text)
        self._parts.append(text)
        self.size += len(text)
        if cut is None:
            return []
        held = "".join(self._parts)
        self._parts, self.size = [held[cut:]], len(held) - cut
        return self._encode(held, cut)

    def close(self, special: str = "") -> list[int]:
        """Encode the held text, which ends here (before the special token ``special``)."""
        held = "".join(self._parts)
        self._parts, self.size = [], 0
        ids = self._encode(held, len(held), final=True)
        self._cuts.settled(special, len(special))
        return ids

    def _encode(self, text: str, end: int, *, final: bool = False) -> list[int]:
        """The ids of ``text[:end]`` (not sliced: a huge held piece is not copied again);
        ``final`` when the ordinary text ends there."""
        if isinstance(self._cuts, _ByteModeCuts):
            return self._cuts.encode(text[:end], self._errors, final=final)
        context = self._cuts.context
        self._cuts.settled(text, end)
        whole = context + text
        start = len(context)
        try:
            return self._encoding._encode_ordinary(
                whole, self._errors, start=start, end=start + end
            )
        except UnicodeEncodeError:
            if self._errors != "strict":
                raise
            # No cut falls inside a surrogate pair, so the parts can be fixed on their own.
            fixed = replace_lone_surrogates(context)
            return self._encoding._encode_ordinary(
                fixed + replace_lone_surrogates(text[:end]), start=len(fixed)
            )


class _ProvenCuts:
    """The safe cuts of the module docstring's rules (gpt2, cl100k_base, o200k_base)."""

    context = ""  # these patterns look neither behind nor at the start of the text

    def __init__(self, pattern: str) -> None:
        self._cut = SAFE_CUTS[pattern]
        self._last_cut = regex.compile(self._cut.pattern, regex.REVERSE)

    def settled(self, text: str, end: int) -> None:
        """``text[:end]`` was encoded: nothing to remember."""

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """The last safe cut in ``held + text`` (as an offset there), or None.

        ``held`` had none, so only cuts before a character of ``text`` are new.
        """
        match = self._last_cut.search(text, 1)
        if match is not None:
            return size + match.start()
        # A cut just before text: the lookbehinds need up to three characters of held text
        # (fewer when the last held chunk is shorter: a missed cut only delays the ids).
        before = held[-1][-3:] if held else ""
        if before and self._cut.match(before + text[0], len(before)):
            return size
        return None


class _ByteModeCuts:
    """Byte mode (no pre-tokenizer, the text is one piece): cut where no token can cross.

    See :mod:`streamcodec.bytemode`. The whole-piece rule belongs to the whole ordinary text, so
    the parts are merged without it, unless the text ends before anything was emitted.
    """

    context = ""  # the parts merge independently: nothing before a cut matters after it

    def __init__(self, mode: ByteMode) -> None:
        self._mode = mode
        self._emitted = False  # ids of this ordinary text were returned before

    def settled(self, text: str, end: int) -> None:
        """Text was encoded: nothing to remember (``encode`` keeps track of what it emitted)."""

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """The last safe cut in ``held + text`` (as an offset there), or None.

        ``held`` had none, so only the cut before the first character of ``text`` and those
        inside ``text`` are new.
        """
        before = held[-1][-1:] if held else ""
        k = self._mode.last_cut(before + text)
        return size - len(before) + k if k else None

    def encode(self, text: str, errors: str, *, final: bool) -> list[int]:
        """The ids of ``text``, a part of the ordinary text (its end if ``final``)."""
        whole_piece = final and not self._emitted
        self._emitted = not final
        try:
            data = text.encode("utf-8", errors)
        except UnicodeEncodeError:
            if errors != "strict":
                raise
            # No cut touches a surrogate, so each part is fixed as the whole text would be.
            data = replace_lone_surrogates(text).encode("utf-8")
        return self._mode.encode(data, whole_piece=whole_piece) if data else []


class _PatternCuts:
    """Cuts for patterns without a proof: the pattern's own boundaries, with a wide margin."""

    MARGIN = 32  # characters after the end of a whitespace run
    HOLD = 2  # pieces held back
    CONTEXT = 64  # characters kept before the held text, for lookbehinds

    def __init__(self, encoding: Encoding) -> None:
        self._pieces = encoding._pretokenizer.pieces
        self.context = ""
        self._next_try = 0  # try again once this much text is held (keeps the work linear)

    def settled(self, text: str, end: int) -> None:
        """``text[:end]`` was encoded: keep its end as context for the text after it."""
        self.context = (self.context + text[max(0, end - self.CONTEXT) : end])[-self.CONTEXT :]

    def find(self, held: list[str], size: int, text: str) -> int | None:
        whole_size = size + len(text)
        if whole_size < self._next_try:
            return None
        cut = self._find("".join([self.context, *held, text]), len(self.context))
        self._next_try = 0 if cut is not None else 2 * whole_size
        return cut

    def _find(self, text: str, start: int) -> int | None:
        word = _LAST_WORD_START.search(text, start, len(text) - self.MARGIN)
        if word is None:
            return None
        pieces = self._pieces(text, start)
        ends = [start]
        for piece in pieces:
            ends.append(ends[-1] + len(piece))
        count = next((i for i in range(len(ends) - 1, 0, -1) if ends[i] <= word.start()), 0)
        count = min(count, len(pieces) - self.HOLD)
        if count <= 0 or self._pieces(text, start, ends[count]) != pieces[:count]:
            return None
        return ends[count] - start


class StreamDecoder:
    """Decode ids fed in batches; ``feed`` returns the text that is complete.

    A character whose bytes are split across tokens waits for its last byte. ``errors`` is the
    policy for invalid UTF-8, as in ``bytes.decode``: the stream gives the same text as
    ``Encoding.decode`` of all the ids.

        >>> import streamcodec
        >>> enc = streamcodec.get_encoding("cl100k_base")
        >>> ids = enc.encode("a 🦜")  # the parrot is three tokens: b" \xf0\x9f", b"\xa6", b"\x9c"
        >>> stream = enc.stream_decoder()
        >>> [stream.feed([i]) for i in ids] + [stream.close()]
        ['a', ' ', '', '🦜', '']
    """

    def __init__(self, encoding: Encoding, *, errors: str = "replace") -> None:
        self._bytes = encoding.decode_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def feed(self, ids: Iterable[int]) -> str:
        """The text completed by ``ids``."""
        return self._decoder.decode(self._bytes(list(ids)))

    def close(self) -> str:
        """What is left: a replacement character for an unfinished one (per ``errors``)."""
        return self._decoder.decode(b"", final=True)


# ---------------------------------------------------------------------- sources


def text_chunks(
    source: Any,
    *,
    errors: str = "strict",
    progress: Callable[[int], object] | None = None,
) -> Iterator[str]:
    """The text of ``source`` in chunks: see ``Encoding.iter_encode`` for what a source is.

    Bytes are decoded as UTF-8 incrementally; ``progress`` is called with each count of bytes
    read.

        >>> list(text_chunks([b"caf\\xc3", b"\\xa9!"]))
        ['caf', 'é!', '']
    """
    if isinstance(source, str):
        yield from (source[i : i + CHUNK_SIZE] for i in range(0, len(source), CHUNK_SIZE))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        yield from decode_utf8([bytes(source)], errors=errors, name="<bytes>", progress=progress)
    elif isinstance(source, os.PathLike):
        with open(source, "rb") as f:
            yield from decode_utf8(
                _blocks(f), errors=errors, name=os.fspath(source), progress=progress
            )
    elif hasattr(source, "read"):
        yield from _file_chunks(source, errors, progress)
    else:
        yield from _iterable_chunks(iter(source), errors, progress)


def _file_chunks(f: Any, errors: str, progress: Callable[[int], object] | None) -> Iterator[str]:
    first = f.read(CHUNK_SIZE)
    if isinstance(first, str):
        yield first
        yield from _blocks(f)
    else:
        name = str(getattr(f, "name", "<file>"))
        yield from decode_utf8(
            _prepend(first, _blocks(f)), errors=errors, name=name, progress=progress
        )


def _iterable_chunks(
    chunks: Iterator[Any], errors: str, progress: Callable[[int], object] | None
) -> Iterator[str]:
    first = next(chunks, "")
    if isinstance(first, str):
        yield first
        yield from chunks
    else:
        yield from decode_utf8(
            _prepend(bytes(first), chunks), errors=errors, name="<chunks>", progress=progress
        )


def _prepend(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _blocks(f: Any) -> Iterator[Any]:
    while block := f.read(CHUNK_SIZE):
        yield block


def decode_utf8(
    blocks: Iterable[bytes],
    *,
    errors: str = "strict",
    name: str = "<bytes>",
    offset: int = 0,
    progress: Callable[[int], object] | None = None,
) -> Iterator[str]:
    """Decode UTF-8 blocks incrementally (a character may straddle blocks).

    Under ``errors="strict"`` invalid input raises :class:`InvalidUTF8Error` naming its byte
    offset (``offset`` is that of the first block).

        >>> list(decode_utf8([b"ok", b"\\xff"], name="x"))
        Traceback (most recent call last):
        ...
        streamcodec.stream.InvalidUTF8Error: x: invalid UTF-8 at byte offset 2 (invalid start \
byte 0xff); decode with errors='replace' or errors='surrogateescape' to accept it
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    block = b""
    try:
        for block in blocks:
            text = decoder.decode(block)
            offset += len(block)
            if progress is not None:
                progress(len(block))
            yield text
        block = b""
        yield decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        # exc.start counts from the bytes the decoder held from before, then ``block``.
        held = len(exc.object) - len(block)
        bad = exc.object[exc.start]
        at = offset - held + exc.start
        raise InvalidUTF8Error(at, f"{exc.reason} 0x{bad:02x}", name) from None


def encode_source(
    encoding: Encoding,
    source: Any,
    policy: Policy,
    *,
    jobs: int = 1,
    progress: Callable[[int], object] | None = None,
) -> Iterator[list[int]]:
    """The ids of ``source`` chunk by chunk (``Encoding.iter_encode_chunks``)."""
    if _parallel(source, encoding, jobs):
        from streamcodec.parallel import encode_file_parts

        return encode_file_parts(encoding, source, policy, jobs=jobs, progress=progress)
    chunks = text_chunks(source, errors=policy.errors, progress=progress)
    return encode_text_chunks(policy.stream_encoder(encoding), chunks)


def count_source(encoding: Encoding, source: Any, policy: Policy, *, jobs: int = 1) -> int:
    """The number of ids of ``source`` (``Encoding.count_tokens``)."""
    if _parallel(source, encoding, jobs):
        from streamcodec.parallel import count_file_parts

        return count_file_parts(encoding, source, policy, jobs=jobs)
    return sum(map(len, encode_source(encoding, source, policy)))


def _parallel(source: Any, encoding: Encoding, jobs: int) -> TypeGuard[os.PathLike[str]]:
    """Whether to split ``source`` across ``jobs`` processes: only a file, and only with a pattern
    whose safe cuts are proven (any other pattern is encoded in one process)."""
    if jobs <= 1:
        return False
    if not isinstance(source, os.PathLike):
        raise ValueError(f"jobs={jobs} needs a file path (os.PathLike) to split the work")
    return encoding.pat_str in PROVEN_PATTERNS


def encode_text_chunks(stream: StreamEncoder, chunks: Iterable[str]) -> Iterator[list[int]]:
    """Feed ``chunks`` to ``stream``; yield the ids of each chunk (possibly empty) and the rest."""
    for chunk in chunks:
        yield stream.feed(chunk)
    yield stream.close()
