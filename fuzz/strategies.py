"""Hypothesis strategies: vocabularies and texts that are hard for a byte-level BPE encoder.

Vocabularies come in three kinds:

- *trained*: ``reference.train_naive`` run on a random corpus over a small alphabet, so merges
  chain deeply (``a``, ``aa``, ``aaaa``, ...) and every merged token is reachable;
- *scrambled*: a trained vocabulary plus tokens made by gluing random pairs of tokens together
  and random junk byte strings, inserted at random ranks: many of them are *unreachable* (their
  own bytes never merge into them), which is where the whole-piece rule and any fast path that
  assumes a "clean" vocabulary go wrong;
- *real*: the genuine ``cl100k_base`` and ``o200k_base``.

Every generated vocabulary holds all 256 single bytes at ranks 0..255 (so tiktoken accepts it
and any text is encodable), then its multi-byte tokens from rank 256 on, then its special tokens.

Texts mix the vocabulary's alphabet with the inputs that broke tokenizers before: random Unicode,
mixed scripts, emoji with skin tones and joiners, whitespace/CR/LF runs, contractions, digit
runs, text near special tokens, long repetitions.

    >>> vocab = Vocab(tokens=(b"ab", b"abc"), pattern=r"\\S+|\\s+")
    >>> vocab.ranks[b"abc"], len(vocab.ranks)
    (257, 258)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

import streamcodec
from streamcodec.reference import train_naive
from streamcodec.vocab import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

if TYPE_CHECKING:
    from streamcodec import Encoding

__all__ = [
    "BLOCK_FRAGMENTS",
    "CLASS_SAMPLES",
    "REAL_VOCABS",
    "Case",
    "Vocab",
    "block_texts",
    "case",
    "class_texts",
    "pieces",
    "real_vocab",
    "scanner_cases",
    "texts",
    "train_words",
    "vocabs",
]

# Patterns the generated vocabularies are used with: the real ones plus two that make long pieces.
PATTERNS = (GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN, r"\S+|\s+", r"[^\n]+|\n")
SPECIALS = ("<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<s>", "<|end|>", "</s>")

# Small alphabets make merges chain: the same pairs recur, so tokens grow long.
ALPHABETS = ("ab", "abc", "ab ", "aab\n", "xyz'", "éa", "日本", "😀a", "a1 ", "to ken", "01")

SCRIPTS = "aZéßЖжΩωאבعربहिंदीกขあア中文한글ğış٣௧ⅫΣ"
EMOJI = "😀👍👨👩👧👦🏳🌈🇫🇷❤🤖✋🧑🏿"
SKIN_TONES = "\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff"
WHITESPACE = " \t\r\n\x0b\x0c\x85\u00a0\u1680\u2003\u2028\u2029\u3000"
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re", "’s", "'")
DIGITS = "0123456789٣٤٥௧௨१२"
SURROGATES = ("\ud800", "\udfff", "\ud83d", "\ude00", "\ud83d\ude00")
# A character of each class the named patterns tell apart (letters by case, astral ones too,
# marks, digits, whitespace regex and re disagree on, ſ and the Kelvin sign that (?i:s) and
# (?i:k) match, apostrophes, slash, ZWJ, lone surrogates): the native scanner's class boundaries.
CLASS_SAMPLES = (
    "aZǅʰ中\U00020000\U0001d400ſKK\u0301\u0903\u20dd1٣Ⅻ\U0001d7ce\U00010107"
    " \t\r\n\x0b\x0c\x1c\x85\u00a0\u2028\u3000'’/!.😀\u200d\ufe0f\ud800\udfff_sStTlLvVeErRdDmM"
)


@dataclasses.dataclass(frozen=True)
class Vocab:
    """A byte-level BPE vocabulary to fuzz with.

    ``tokens`` are the multi-byte tokens in rank order (ranks 256, 257, ...); the 256 single
    bytes come first. ``real`` names a genuine encoding instead (see :func:`real_vocab`).
    """

    tokens: tuple[bytes, ...] = ()
    pattern: str = GPT2_PATTERN
    specials: tuple[str, ...] = ()
    real: str = ""

    def __repr__(self) -> str:
        if self.real:
            return f"real_vocab({self.real!r})"
        return (
            f"Vocab(tokens={self.tokens!r}, pattern={self.pattern!r}, specials={self.specials!r})"
        )

    @functools.cached_property
    def encoding(self) -> Encoding:
        """streamcodec's Encoding for this vocabulary."""
        if self.real:
            return streamcodec.get_encoding(self.real)
        ranks = {bytes([b]): b for b in range(256)}
        for token in self.tokens:
            ranks.setdefault(token, len(ranks))
        specials = {text: len(ranks) + i for i, text in enumerate(dict.fromkeys(self.specials))}
        return streamcodec.Encoding(
            "fuzz", pat_str=self.pattern, mergeable_ranks=ranks, special_tokens=specials
        )

    @functools.cached_property
    def python_encoding(self) -> Encoding:
        """The same encoding on the pure-Python path (``encoding`` takes the compiled core when
        it is built)."""
        enc = self.encoding
        return streamcodec.Encoding(
            enc.name,
            pat_str=enc.pat_str,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
            backend="python",
        )

    @property
    def ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank."""
        return self.encoding.mergeable_ranks

    @functools.cached_property
    def longest_token(self) -> int:
        """The length in bytes of the longest mergeable token."""
        return max(map(len, self.ranks))

    @functools.cached_property
    def tiktoken(self) -> Any:
        """tiktoken's Encoding built from the same ranks, pattern and special tokens."""
        import tiktoken

        enc = self.encoding
        return tiktoken.Encoding(
            f"fuzz-{self.fingerprint}",
            pat_str=enc.pat_str,
            mergeable_ranks=enc.mergeable_ranks,
            special_tokens=enc.special_tokens,
        )

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest that is equal across processes for equal vocabularies."""
        return hashlib.blake2b(
            repr(self).encode("utf-8", "surrogatepass"), digest_size=8
        ).hexdigest()


@dataclasses.dataclass(frozen=True)
class Case:
    """One fuzz case: a vocabulary and the inputs to run through it.

    ``texts`` are whole texts; ``pieces`` are single pre-tokens as bytes; ``cuts`` are positions
    at which a streaming target splits each text into chunks.
    """

    vocab: Vocab
    texts: tuple[str, ...] = ()
    pieces: tuple[bytes, ...] = ()
    cuts: tuple[int, ...] = ()


@functools.cache
def real_vocab(name: str) -> Vocab:
    """The genuine encoding ``name`` as a :class:`Vocab` (its ranks are loaded by name, once)."""
    return Vocab(pattern=streamcodec.get_encoding(name).pat_str, real=name)


# The genuine encodings the *real* strategy draws from (both shipped in the package).
REAL_VOCABS = ("cl100k_base", "o200k_base")


def train_words(words: Sequence[str], n_merges: int) -> list[bytes]:
    """The tokens ``reference.train_naive`` learns from ``words`` (each one pre-token), in rank
    order, merging any pair seen at least once.

    >>> train_words(["aaaa", "aaab"], 3)
    [b'aa', b'ab', b'aaaa']
    """
    # The separator is a special token, which the trainer cuts out: no merge crosses words.
    ranks = train_naive(
        _SEPARATOR.join(words),
        256 + n_merges,
        pat_str=r"(?s).+",
        special_tokens=[_SEPARATOR],
        min_frequency=1,
    )
    return sorted((token for token in ranks if len(token) > 1), key=ranks.__getitem__)


_SEPARATOR = "\x00<|word|>\x00"


alphabets = st.one_of(st.sampled_from(ALPHABETS), st.text(min_size=1, max_size=4))


@st.composite
def vocabs(draw: st.DrawFn, alphabet: str = "", *, scrambled: bool | None = None) -> Vocab:
    """A trained (or, when ``scrambled``, trained then scrambled) vocabulary over ``alphabet``."""
    alphabet = alphabet or draw(alphabets)
    words = draw(st.lists(st.text(alphabet, min_size=1, max_size=16), min_size=1, max_size=24))
    tokens = train_words(words, draw(st.integers(0, 48)))
    if scrambled if scrambled is not None else draw(st.booleans()):
        tokens = _scramble(draw, alphabet, tokens)
    tokens = [token for token in dict.fromkeys(tokens) if len(token) > 1]
    specials = draw(st.lists(st.sampled_from(SPECIALS), max_size=3, unique=True))
    return Vocab(tuple(tokens), draw(st.sampled_from(PATTERNS)), tuple(specials))


def _scramble(draw: st.DrawFn, alphabet: str, tokens: list[bytes]) -> list[bytes]:
    """Insert glued pairs of tokens and junk byte strings at random ranks."""
    units = [c.encode("utf-8", "surrogatepass") for c in alphabet]
    pool = sorted(set(units + [b for u in units for b in (u[i : i + 1] for i in range(len(u)))]))
    tokens = list(tokens)
    for left, right, where in draw(st.lists(st.tuples(*[st.integers(0, 255)] * 3), max_size=10)):
        parts = pool + tokens
        glued = parts[left % len(parts)] + parts[right % len(parts)]
        tokens.insert(where % (len(tokens) + 1), glued)
    junk = st.lists(st.sampled_from(pool), min_size=2, max_size=6).map(b"".join)
    for token, where in draw(st.lists(st.tuples(junk, st.integers(0, 255)), max_size=6)):
        tokens.insert(where % (len(tokens) + 1), token)
    return tokens


def _emoji() -> st.SearchStrategy[str]:
    """Emoji with optional skin tones, variation selectors, joined by ZWJ."""
    one = st.tuples(
        st.sampled_from(EMOJI),
        st.sampled_from(["", *SKIN_TONES]),
        st.sampled_from(["", "\ufe0f"]),
    ).map("".join)
    return st.lists(one, min_size=1, max_size=4).map("\u200d".join)


def _near_special(specials: Sequence[str]) -> st.SearchStrategy[str]:
    """A special token, whole or cut short, doubled or wrapped in look-alike text."""
    token = st.sampled_from(list(specials) or list(SPECIALS))
    return st.one_of(
        token,
        st.tuples(token, st.integers(1, 12)).map(lambda t: t[0][: t[1]]),
        st.tuples(token, st.integers(1, 12)).map(lambda t: t[0][t[1] :]),
        token.map(lambda t: f"<{t}>"),
        token.map(lambda t: t + t),
        token.map(lambda t: f" {t}\n"),
    )


def _fragments(
    alphabet: str, specials: Sequence[str], *, surrogates: bool, max_repeat: int
) -> st.SearchStrategy[str]:
    words = st.text(st.sampled_from("abcdefghij"), min_size=1, max_size=8)
    options = [
        st.text(max_size=12),
        st.text(st.sampled_from(SCRIPTS), max_size=12),
        _emoji(),
        st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=10),
        st.tuples(words, st.sampled_from(CONTRACTIONS)).map("".join),
        st.text(st.sampled_from(DIGITS), min_size=1, max_size=14),
        _near_special(specials),
        st.tuples(st.text(min_size=1, max_size=3), st.integers(2, max_repeat)).map(
            lambda t: t[0] * t[1]
        ),
    ]
    if alphabet:
        # Twice, so the vocabulary's own alphabet (where its merges apply) dominates.
        options += [st.text(st.sampled_from(alphabet), max_size=24)] * 2
    if surrogates:
        options.append(st.sampled_from(SURROGATES))
    return st.one_of(options)


def class_texts() -> st.SearchStrategy[str]:
    """Text for the pre-tokenizer's scanner: class samples, contractions, whitespace runs and
    emoji sequences glued in any order (so a contraction may end the text)."""
    fragment = st.one_of(
        st.text(st.sampled_from(CLASS_SAMPLES), min_size=1, max_size=6),
        st.sampled_from(CONTRACTIONS),
        st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=6),
        st.text(st.sampled_from(DIGITS), min_size=1, max_size=7),
        _emoji(),
        st.text(max_size=4),
    )
    return st.lists(fragment, max_size=10).map("".join)


# What the scanner's block step (streamcodec/text/_scan_block.h) tells apart, and what it must
# leave to the step of one piece: ASCII words of each case, digit runs, whitespace runs with and
# without newlines, punctuation and its trails, contractions, a few Latin-1 code points; and
# code points past U+00FF of every class (a 2- or 4-byte str's block sorts them by their class):
# letters of both cases, Lt, Lm, Lo, marks alone and after letters, digits, whitespace, symbols,
# an astral emoji, the long s that folds to a contraction's s.
BLOCK_FRAGMENTS = (
    *("the", " the", "The", " WORD", "camelCase", "HTMLParser", "aB", "x"),
    *("1", "12", "123", "1234", "1234567", " 42"),
    *(" ", "  ", "    ", "\t", "\n", "\n\n", "\r\n", "\n    ", "  \n", "\t\n", " \n ", "\v\f"),
    *(".", ",", "...", " (", ");", "=", "//", "/", "\n/", ".\n", ":\n\n  ", "-"),
    *("'", "'s", "'LL", "'ve", "'x", "don't"),
    *("\xe9", "\xa0", "\x85", "\xb2", "\xd7"),
    *(" мир", "Жж", "ΑβΓ", "\u01c5", "\u02b0", "中文", "বাংলা", "\u0301", "e\u0301", "\u0663"),
    *("\u3000", "\u2003", "\u2028", "\u20ac", "\u201c", "\U0001f600", "'\u017f"),
)


def block_texts() -> st.SearchStrategy[str]:
    """Text of mostly ASCII, a few block lengths (64 code points) long, for the scanner's block
    step: :data:`BLOCK_FRAGMENTS` and runs of one of them, glued in any order."""
    fragment = st.one_of(
        st.sampled_from(BLOCK_FRAGMENTS),
        st.tuples(st.sampled_from(BLOCK_FRAGMENTS), st.integers(2, 70)).map(lambda t: t[0] * t[1]),
    )
    return st.lists(fragment, min_size=10, max_size=120).map("".join)


def scanner_cases() -> st.SearchStrategy[Case]:
    """Cases for the pre-tokenizer's scanner: :func:`class_texts`, :func:`block_texts` and cuts
    (the vocabulary is unused: the scanner is checked on every named pattern)."""
    return st.builds(
        Case,
        st.just(Vocab()),
        texts=st.lists(st.one_of(class_texts(), block_texts()), max_size=8).map(tuple),
        cuts=st.lists(st.integers(0, 64), max_size=8).map(tuple),
    )


def texts(
    alphabet: str = "",
    specials: Sequence[str] = (),
    *,
    surrogates: bool = False,
    max_repeat: int = 64,
) -> st.SearchStrategy[str]:
    """Text made of a few fragments (see the module docstring) joined together."""
    fragment = _fragments(alphabet, specials, surrogates=surrogates, max_repeat=max_repeat)
    return st.lists(fragment, max_size=6).map("".join)


def pieces(alphabet: str = "") -> st.SearchStrategy[bytes]:
    """One pre-token's bytes: mostly over ``alphabet``, sometimes any bytes at all."""
    any_bytes = st.binary(min_size=1, max_size=12)
    if not alphabet:
        return any_bytes
    units = st.sampled_from(list(alphabet)).map(lambda c: c.encode("utf-8", "surrogatepass"))
    return st.lists(units, min_size=1, max_size=40).map(b"".join) | any_bytes


@st.composite
def case(
    draw: st.DrawFn,
    *,
    real: bool = False,
    scrambled: bool | None = None,
    surrogates: bool = False,
    max_repeat: int = 64,
    max_texts: int = 8,
    max_pieces: int = 0,
    cuts: bool = False,
) -> Case:
    """A :class:`Case`: a vocabulary (generated, or real when ``real``) with texts and pieces."""
    if real:
        vocab = real_vocab(draw(st.sampled_from(REAL_VOCABS)))
        alphabet = draw(st.sampled_from(["", *ALPHABETS]))
        specials: Sequence[str] = list(vocab.encoding.special_tokens)
    else:
        alphabet = draw(alphabets)
        vocab = draw(vocabs(alphabet, scrambled=scrambled))
        specials = vocab.specials
    text = texts(alphabet, specials, surrogates=surrogates, max_repeat=max_repeat)
    piece = pieces(alphabet)
    if vocab.tokens:
        # The vocabulary's own tokens, alone and glued: exact hits for the whole-piece rule and
        # for unreachable tokens, which random bytes rarely spell.
        own = st.sampled_from(vocab.tokens)
        glued = st.lists(own, min_size=2, max_size=4).map(b"".join)
        piece = st.one_of(piece, own, glued)
        text = st.one_of(text, st.one_of(own, glued).map(lambda b: b.decode("utf-8", "ignore")))
    return Case(
        vocab,
        texts=tuple(draw(st.lists(text, max_size=max_texts))),
        pieces=tuple(draw(st.lists(piece, max_size=max_pieces))),
        cuts=tuple(draw(st.lists(st.integers(0, 64), max_size=8))) if cuts else (),
    )
