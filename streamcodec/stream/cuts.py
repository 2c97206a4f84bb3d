"""Safe cuts: where streamed text can be cut so that the pieces before the cut are final.

A cut at position ``p`` of the text seen so far is *safe* when the pieces of any longer text
that end at or before ``p`` are the pieces of the text before ``p`` read as a whole text. The
stream encodes everything before its last safe cut and holds the rest. The rules and their proof
are written once, in docs/streaming.md ("Where the text is cut, and why it is safe"); each
strategy here names the rules it applies.

    >>> from streamcodec.vocab import CL100K_PATTERN
    >>> cuts = ProvenCuts(CL100K_PATTERN)
    >>> cuts.find([], 0, "Hello world")  # rule 1: before the space
    5

Three strategies, behind the :class:`Cuts` protocol:

- :class:`ProvenCuts`, the named patterns (gpt2/r50k/p50k, cl100k_base, o200k_base): rules 1 to
  6, from the characters either side of the cut;
- :class:`PatternCuts`, any other pattern: the pattern's own piece boundaries, with a wide
  margin, checked by cutting there;
- :class:`ByteModeCuts`, byte mode (no pre-tokenizer): between two bytes no token joins.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Any, Protocol

from streamcodec.pieces import ByteMode
from streamcodec.text.native import NativeScanner
from streamcodec.text.pretokenize import Pretokenizer, class_set
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

__all__ = [
    "PROVEN_PATTERNS",
    "ByteModeCuts",
    "Cuts",
    "GuardedCuts",
    "LastMatch",
    "PatternCuts",
    "ProvenCuts",
    "cuts_for",
    "last_safe_cut",
    "may_cut",
    "safe_cut",
    "safe_cuts",
]


@functools.cache
def _classes() -> dict[str, str]:
    """The classes of the character y just after a safe cut, and of x before it in the
    lookbehind (rules 1 to 5). Letters, numbers, marks and spaces are those of the shipped
    Unicode 16.0 tables (as the pre-tokenizer's), written out for ``re``: not those of ``re``
    or of an installed regex. Written out when first used: 9 ms that every start paid (the
    corpus tool's too, which cuts nothing)."""
    spellings = {
        "letter": r"\p{L}", "number": r"\p{N}", "letter_or_number": r"[\p{L}\p{N}]",
        "after_letter": r"[^\p{L}\p{M}\s'\ud800-\udfff]",
        "after_number": r"[^\p{N}\s\ud800-\udfff]",
        "space": r"\s", "not_space": r"\S", "not_space_or_slash": r"[^\s/]",
    }  # fmt: skip
    return {name: class_set(spelling) for name, spelling in spellings.items()}


def _safe_cut_rules(*, crlf: bool) -> str:
    """Rules 1 to 5; with ``crlf``, rule 6 too, for the patterns with a newline alternative
    (not GPT-2's)."""
    c = _classes()
    rules = (
        rf"(?<={c['not_space']})(?![\r\n]){c['space']}"  # rule 1
        rf"|(?<={c['letter_or_number']})[\r\n]"  # rule 2
        rf"|(?<={c['letter']}){c['after_letter']}"  # rule 3
        rf"|(?<={c['number']}){c['after_number']}"  # rule 4
        rf"|(?<={c['not_space']}[\r\n]){c['not_space_or_slash']}"  # rule 5
    )
    return rules + rf"|(?<={c['not_space']}\r\n){c['not_space_or_slash']}" if crlf else rules


#: The patterns the rules are proven for.
PROVEN_PATTERNS = frozenset((GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN))


@functools.cache
def safe_cut() -> re.Pattern[str]:
    """Rules 1 to 5: safe for every named pattern (compiled on first use: the explicit Unicode
    sets take a few hundred milliseconds, which ``import streamcodec`` should not pay)."""
    return re.compile(_safe_cut_rules(crlf=False))


@functools.cache
def safe_cuts() -> dict[str, re.Pattern[str]]:
    """The safe cuts of each named pattern."""
    return {
        pattern: safe_cut() if pattern == GPT2_PATTERN else re.compile(_safe_cut_rules(crlf=True))
        for pattern in (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN)
    }


class LastMatch:
    """Where a pattern that matches one character matches last: a search from the end, which
    ``re`` lacks (``regex`` has ``REVERSE``). A greedy ``.*`` before the pattern backtracks
    from the end, so the first match found is the last, and the character ends it.

    >>> LastMatch("[0-9]").find("a1b2c", 0, 5)
    3
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._last = re.compile(rf"(?s:.*)(?:{pattern})")

    def find(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> int | None:
        """The last match in ``text[pos:endpos]`` (lookbehinds see before ``pos``), or None."""
        match = self._last.match(text, pos, endpos)
        return None if match is None else match.end() - 1


@functools.cache
def last_safe_cut(pattern: str) -> LastMatch:
    """``pattern``'s safe cuts (a named pattern's), searched backwards from the end: the last
    safe cut first (compiled on first use, as :func:`safe_cut`)."""
    return LastMatch(safe_cuts()[pattern].pattern)


def __getattr__(name: str) -> Any:
    """``SAFE_CUT`` and ``SAFE_CUTS``, the compiled rules, built when first asked for."""
    if name == "SAFE_CUT":
        return safe_cut()
    if name == "SAFE_CUTS":
        return safe_cuts()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every rule needs a whitespace, letter or number character just before or at the cut. Python's
# own classes (``\s``, ``\w``) hold at least those of the shipped tables, bar letters newer than
# Python's Unicode (a cut missed that way only delays the ids), and rule out in nanoseconds a
# character what the rules take microseconds on: a run of NUL bytes or of punctuation.
_NEAR_A_CUT = re.compile(r"[\s\w]")


def may_cut(text: str, lo: int, hi: int) -> bool:
    """False when no safe cut can fall before one of ``text[lo:hi]``."""
    return _NEAR_A_CUT.search(text, max(0, lo - 1), hi) is not None


@functools.cache
def _last_word_start() -> LastMatch:
    """For other patterns: the end of a whitespace run, searched backwards."""
    return LastMatch(rf"(?<={_classes()['space']}){_classes()['not_space']}")


class Cuts(Protocol):
    """A way to find safe cuts in text that arrives in chunks."""

    #: Text before the held text that the pieces after a cut may look at (lookbehinds).
    context: str

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """The last safe cut in ``held + text`` (``size`` characters are held, with no safe cut
        in them), as an offset there; None if there is none."""

    def settled(self, text: str, end: int) -> None:
        """``text[:end]`` has been encoded: remember what the next cut needs of it."""


class ProvenCuts:
    """The named patterns: rules 1 to 6 (rule 6 not for GPT-2's pattern). The native scanner
    searches them when it is built (``NativeScanner.last_cut``, equal to ``SAFE_CUTS``)."""

    context = ""  # these patterns look neither behind nor at the start of the text

    def __init__(self, pattern: str, scanner: NativeScanner | None = None) -> None:
        self._pattern = pattern
        self._native = scanner

    def settled(self, text: str, end: int) -> None:
        """Nothing to remember."""

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """Only cuts before a character of ``text`` are new."""
        cut = self._last(text, 1)
        if cut is not None:
            return size + cut
        # A cut just before text: the lookbehinds need up to three characters of held text
        # (fewer when the last held chunk is shorter: a missed cut only delays the ids).
        before = held[-1][-3:] if held else ""
        if before and self._last(before + text[0], len(before)) is not None:
            return size
        return None

    def _last(self, text: str, lo: int) -> int | None:
        """The last safe cut before one of ``text[lo:]``, looking back into ``text[:lo]``."""
        if self._native is not None:
            return self._native.last_cut(text, lo, len(text))
        if not may_cut(text, lo, len(text)):
            return None
        return last_safe_cut(self._pattern).find(text, lo)


class ByteModeCuts:
    """Byte mode (no pre-tokenizer, the text is one piece): cut where no token can cross
    (:meth:`streamcodec.pieces.ByteMode.last_cut`)."""

    context = ""  # the parts merge independently: nothing before a cut matters after it

    def __init__(self, mode: ByteMode) -> None:
        self._mode = mode

    def settled(self, text: str, end: int) -> None:
        """Nothing to remember."""

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """Only the cut before the first character of ``text`` and those inside it are new."""
        before = held[-1][-1:] if held else ""
        k = self._mode.last_cut(before + text)
        return size - len(before) + k if k else None


class PatternCuts:
    """Patterns without a proof: the pattern's own boundaries, with a wide margin, checked.

    Assumes only that a match never examines text beyond the first whitespace to
    non-whitespace transition after its end plus ``MARGIN`` characters, and looks behind at
    most ``CONTEXT`` characters (docs/streaming.md, "Other patterns").
    """

    MARGIN = 32  # characters after the end of a whitespace run
    HOLD = 2  # pieces held back
    CONTEXT = 64  # characters kept before the held text, for lookbehinds

    def __init__(self, pieces: Callable[[str, int, int], list[str]]) -> None:
        self._pieces = pieces
        self.context = ""
        self._next_try = 0  # try again once this much text is held (keeps the work linear)

    def settled(self, text: str, end: int) -> None:
        """Keep the end of ``text[:end]`` as context for the text after it."""
        self.context = (self.context + text[max(0, end - self.CONTEXT) : end])[-self.CONTEXT :]

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """Searched only when the held text has doubled since the last try: linear work."""
        whole_size = size + len(text)
        if whole_size < self._next_try:
            return None
        cut = self._find("".join([self.context, *held, text]), len(self.context))
        self._next_try = 0 if cut is not None else 2 * whole_size
        return cut

    def _find(self, text: str, start: int) -> int | None:
        word = _last_word_start().find(text, start, len(text) - self.MARGIN)
        if word is None:
            return None
        pieces = self._pieces(text, start, len(text))
        ends = [start]
        for piece in pieces:
            ends.append(ends[-1] + len(piece))
        count = next((i for i in range(len(ends) - 1, 0, -1) if ends[i] <= word), 0)
        count = min(count, len(pieces) - self.HOLD)
        if count <= 0 or self._pieces(text, start, ends[count]) != pieces[:count]:
            return None
        return ends[count] - start


class GuardedCuts:
    """Another strategy's cuts, only where ``allowed(text, cut)`` also says so (an open model's
    NFC and added tokens, ``streamcodec.engine.model.ModelEncoder.cut_allowed``); a cut it
    refuses delays the ids, never changes them."""

    def __init__(self, inner: Cuts, allowed: Callable[[str, int], bool]) -> None:
        self._inner, self._allowed = inner, allowed
        self.context = inner.context

    def settled(self, text: str, end: int) -> None:
        """As the inner strategy."""
        self._inner.settled(text, end)
        self.context = self._inner.context

    def find(self, held: list[str], size: int, text: str) -> int | None:
        """The inner strategy's cut, if allowed."""
        cut = self._inner.find(held, size, text)
        if cut is None or not self._allowed("".join([*held, text]), cut):
            return None
        return cut


def cuts_for(
    pretokenizer: Pretokenizer,
    byte_mode: ByteMode | None = None,
    *,
    allowed: Callable[[str, int], bool] | None = None,
) -> Cuts:
    """The strategy for ``pretokenizer``'s pattern; the compiled search of the safe cuts where
    it has a compiled scanner (the backend chosen for it); ``allowed`` (an open model's rules)
    vets each cut."""
    if allowed is not None:
        return GuardedCuts(cuts_for(pretokenizer, byte_mode), allowed)
    if byte_mode is not None:
        return ByteModeCuts(byte_mode)
    if pretokenizer.named in PROVEN_PATTERNS:  # any spelling of a named pattern's shape
        return ProvenCuts(pretokenizer.named, pretokenizer.scanner)
    return PatternCuts(pretokenizer.pieces)
