"""Special tokens: find them in text, refuse the disallowed ones, split a stream around them.

Special tokens (``<|endoftext|>``...) are matched as literal text before pre-tokenization, and
only where the caller allows them: text from users may contain them, and encoding such text as
the special id would let it inject control tokens (tiktoken refuses it too). Where several
tokens start at one place, the longest wins.

    >>> splitter = SpecialSplitter({"<|end|>": 9}, allowed=frozenset({"<|end|>"}),
    ...                            disallowed=frozenset())
    >>> splitter.feed("a<|en")  # all held: a token may start in it
    ['']
    >>> splitter.feed("d|>b") + splitter.close()
    ['a', 9, '', 'b']
"""

from __future__ import annotations

import functools
import os.path
import re
from collections.abc import Collection, Iterator
from collections.abc import Set as AbstractSet
from typing import Literal, NoReturn

__all__ = [
    "AllowedSpecial",
    "DisallowedSpecial",
    "DisallowedSpecialTokenError",
    "SpecialSplitter",
    "allowed_special_matches",
    "clean_before",
    "raise_disallowed_special_token",
    "refuse_disallowed",
    "special_pair",
    "special_policy",
    "special_token_regex",
    "straddles",
]


#: ``allowed_special``: the special tokens to encode as such ("all", or a set of them).
AllowedSpecial = Literal["all"] | AbstractSet[str]
#: ``disallowed_special``: those whose presence is an error ("all": every one not allowed).
DisallowedSpecial = Literal["all"] | Collection[str]


def special_policy(
    special_tokens: Collection[str],
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
) -> tuple[frozenset[str], frozenset[str]]:
    """The special tokens to encode as such, and those whose presence is an error.

    As in tiktoken: ``allowed_special`` is ``"all"`` or a set (anything else is a ``TypeError``:
    ``"ALL"``, a list), and a false ``disallowed_special`` (``()``, ``None``) checks nothing.

    >>> special_policy({"<|a|>", "<|b|>"}, {"<|a|>"}, "all")
    (frozenset({'<|a|>'}), frozenset({'<|b|>'}))
    """
    if allowed_special == "all":
        allowed = frozenset(special_tokens)
    elif isinstance(allowed_special, (set, frozenset)):
        allowed = frozenset(allowed_special)
    else:
        raise TypeError(
            f'allowed_special must be "all" or a set of special tokens, not {allowed_special!r}'
        )
    if disallowed_special == "all":
        return allowed, frozenset(special_tokens) - allowed
    return allowed, frozenset(disallowed_special) if disallowed_special else frozenset()


def refuse_disallowed(text: str, disallowed: frozenset[str], *, start: int = 0) -> None:
    """Raise :class:`DisallowedSpecialTokenError` if ``text`` holds one of ``disallowed``;
    ``start``: a place before which none of them starts, known already (the engine's look for
    their :func:`special_pair` as it encodes)."""
    if not disallowed or start >= len(text):
        return
    at = clean_before(text, disallowed, start)
    if at < len(text) and (match := special_token_regex(disallowed).search(text, at)):
        raise_disallowed_special_token(match.group())


#: Places ``clean_before`` checks (besides one per 4 KiB of text) before it leaves the rest to
#: the regex: a text full of the probe character costs no more than the regex alone, and a
#: little of it.
PROBE_BUDGET = 64


def clean_before(text: str, tokens: frozenset[str], start: int = 0) -> int:
    """A place in ``text`` before which none of ``tokens`` starts: the first place one starts,
    ``len(text)`` when none does, or, where the text holds the probe character too often, the
    place after the last one checked (the regex goes on from there; ``start`` without a probe).
    ``start``: a place before which none starts, known already.

    The regex's search (``re``'s loop over characters) took 17% of a warm ``encode_to_numpy`` of
    prose (0.7 ms a 1.6 MB text). Every token starts with their common prefix, so a character of
    it (the probe, :func:`_probe`) lies as many characters into each of them: ``str.find`` of
    one character (``memchr``) skips to each place it occurs, where ``str.startswith`` asks
    whether a token starts that many characters before. Places are checked left to right, so
    the first that holds a token is the leftmost start, where the regex's search finds the same
    match.

    >>> clean_before("a <|x|> b", frozenset({"<|x|>", "<|y|>"}))
    2
    >>> clean_before("a | b", frozenset({"<|x|>"}))
    5
    """
    probe = _probe(tokens)
    if probe is None:
        return start
    char, offset, alternatives = probe
    budget = PROBE_BUDGET + (len(text) - start) // 4096
    found = text.find(char, start + offset)
    while found >= 0:
        start = found - offset
        if text.startswith(alternatives, start):
            return start
        budget -= 1
        if not budget:
            return start + 1
        found = text.find(char, found + 1)
    return len(text)


@functools.lru_cache(maxsize=128)
def _probe(tokens: frozenset[str]) -> tuple[str, int, tuple[str, ...]] | None:
    """The probe character of ``tokens``, its offset in each, and the tokens as ``startswith``
    takes them; ``None`` when they share no prefix. The probe is the last character of their
    common prefix that is neither a letter, a digit nor a space (rare in text: ``|`` of
    ``<|endof``, not ``f``), else its last."""
    prefix = os.path.commonprefix(list(tokens))  # noqa: RUF071  (characters, not paths)
    if not prefix:
        return None
    rare = [at for at, char in enumerate(prefix) if not (char.isalnum() or char.isspace())]
    offset = rare[-1] if rare else len(prefix) - 1
    return prefix[offset], offset, tuple(sorted(tokens))


@functools.lru_cache(maxsize=128)
def special_pair(tokens: frozenset[str]) -> str | None:
    """The two characters every one of ``tokens`` starts with, where both are ASCII (not NUL):
    the engine can look for them as it encodes (``engine/_fused_parts.h``); else None.

    >>> special_pair(frozenset({"<|endoftext|>", "<|endofprompt|>"}))
    '<|'
    >>> special_pair(frozenset({"<s>", "</s>"})) is None
    True
    """
    pair = os.path.commonprefix(list(tokens))[:2]  # noqa: RUF071  (characters, not paths)
    return pair if len(pair) == 2 and pair.isascii() and "\0" not in pair else None


@functools.lru_cache(maxsize=128)
def special_token_regex(tokens: frozenset[str]) -> re.Pattern[str]:
    """A regex matching any of ``tokens``; where several start at one place, the longest.

    >>> special_token_regex(frozenset({"<|a|>", "<|a|>x"})).findall("<|a|>x <|a|>")
    ['<|a|>x', '<|a|>']
    """
    # Longest first, so a special token that is a prefix of another cannot hide it.
    alternatives = sorted(tokens, key=lambda t: (-len(t), t))
    return re.compile("|".join(re.escape(token) for token in alternatives))


def allowed_special_matches(
    finder: re.Pattern[str], text: str, allowed: AbstractSet[str], limit: int | None = None
) -> Iterator[re.Match[str]]:
    """The matches of ``finder`` (a :func:`special_token_regex`) that are ``allowed``, left to
    right, each starting before ``limit``.

    A match of a token that is not allowed is skipped one character at a time, not as a whole:
    an allowed token may start inside it.

    >>> finder = special_token_regex(frozenset({"<|a|>", "<|a|>b|>", "b|>"}))
    >>> [m.group() for m in allowed_special_matches(finder, "<|a|>b|>", {"b|>"})]
    ['b|>']
    """
    if limit is None:
        limit = len(text)
    match = finder.search(text)
    while match is not None and match.start() < limit:
        if match.group() in allowed:
            yield match
            match = finder.search(text, match.end())
        else:
            match = finder.search(text, match.start() + 1)


def straddles(finder: re.Pattern[str], text: str, cut: int, longest: int) -> bool:
    """Whether an occurrence of a special token (``finder``, its longest ``longest``
    characters) starts before ``cut`` and ends after it.

    >>> straddles(special_token_regex(frozenset({"<|a|>"})), "x<|a|>", 3, 5)
    True
    """
    # Each start before the cut, as an overlapped search would try them.
    end = cut + longest - 1
    starts = range(max(0, cut - longest + 1), cut)
    return any((match := finder.match(text, s, end)) and match.end() > cut for s in starts)


class DisallowedSpecialTokenError(ValueError):
    """Text contains a special token that the caller did not allow (``.token`` says which).

    A ``ValueError``, with tiktoken's message, so code written for tiktoken catches it.
    """

    def __init__(self, message: str, token: str) -> None:
        super().__init__(message)
        self.token = token

    def __reduce__(self) -> tuple[type[DisallowedSpecialTokenError], tuple[str, str]]:
        return type(self), (str(self), self.token)


def raise_disallowed_special_token(token: str) -> NoReturn:
    """Raise the ``ValueError`` tiktoken raises for a special token in untrusted text."""
    raise DisallowedSpecialTokenError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        f"If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        f"To disable this check for all special tokens, pass `disallowed_special=()`.\n",
        token,
    )


class SpecialSplitter:
    """Split streamed text into ordinary text and allowed special tokens (as their ids).

    Finds special tokens as encoding the whole text does (:func:`allowed_special_matches`): a
    match at ``q`` is final once ``longest`` characters from ``q`` have been seen, so the last
    ``longest - 1`` characters are held until the next feed. A disallowed token raises
    :class:`DisallowedSpecialTokenError` from the feed that completes it.
    """

    def __init__(
        self,
        special_tokens: dict[str, int],
        *,
        allowed: frozenset[str],
        disallowed: frozenset[str],
    ) -> None:
        self._ids = special_tokens
        self._allowed = allowed
        self._finder = special_token_regex(frozenset(special_tokens)) if allowed else None
        self._hold = max(map(len, special_tokens), default=1) - 1 if allowed else 0
        self._refused = disallowed
        self._refused_tail = max(map(len, disallowed), default=1) - 1
        self.held = ""  # may be the start of a special token
        self._checked = ""  # the end of the text already searched for disallowed tokens

    def feed(self, text: str, *, final: bool = False) -> list[str | int]:
        """Ordinary text (``str``) and allowed special tokens (their ids), in order."""
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
        """The parts of the held text: the stream ends here."""
        return self.feed("", final=True)

    def _refuse_disallowed(self, text: str) -> None:
        if not self._refused or not text:
            return
        tail = self._refused_tail
        # The border region first: a token split across feeds is found there.
        for region in (self._checked + text[:tail], text):
            refuse_disallowed(region, self._refused)
        self._checked = (self._checked + text[-tail:])[-tail:] if tail else ""
