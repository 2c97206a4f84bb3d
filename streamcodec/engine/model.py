"""What an open model's tokenizer does to ordinary text beyond tiktoken: NFC, its added tokens,
and single bytes it has no token for.

:class:`ModelEncoder` is an :class:`~streamcodec.engine.ordinary.OrdinaryEncoder` with three
rules a ``tokenizer.json`` or a GGUF may carry, in Hugging Face's order:

- ``normalizer="NFC"``: the text is put in Unicode's NFC first (Qwen 2, Command-R, GPT-NeoX,
  MPT), by Python's ``unicodedata``;
- ``added_tokens``: Hugging Face's added tokens that are not special (GPT-NeoX's runs of
  spaces, DeepSeek's single characters) are found in ordinary text, leftmost and then longest,
  as Hugging Face's added vocabulary finds them, and the text between them is encoded as usual;
- single bytes that are no token (a vocabulary without 0xC0, 0xC1 and 0xF5-0xFF, which UTF-8
  never uses; Falcon's without control characters): the merge runs on the vocabulary with a
  stand-in for each, above every id, so pieces without such a byte merge exactly as before,
  and text that needs one is refused with a line naming it, where Hugging Face drops it.

    >>> ranks = {bytes([b]): b for b in range(256) if b != 7} | {b"ab": 256}
    >>> engine = ModelEncoder(r"\\w+|\\s+|.", ranks, added_tokens={"  ": 300}, normalizer="NFC")
    >>> engine.encode("ab  ab")
    [256, 300, 256]
    >>> engine.encode("a\\x07")
    Traceback (most recent call last):
    ValueError: character 1 ('\\x07') needs byte 0x07, which is not a token of this vocabulary
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from streamcodec.engine.ordinary import OrdinaryEncoder
from streamcodec.pieces.ranks import PlainRanks, Ranks
from streamcodec.vocab import ModelRules

__all__ = ["NORMALIZERS", "ModelEncoder", "model_encoder"]

#: The normalizers an encoding may apply itself.
NORMALIZERS = ("NFC",)


class ModelEncoder(OrdinaryEncoder):
    """An :class:`OrdinaryEncoder` with a model's NFC, added tokens and missing bytes (see the
    module docstring); equal to Hugging Face's ``tokenizers`` on the same ``tokenizer.json``."""

    def __init__(
        self,
        pattern: str,
        ranks: dict[bytes, int],
        *,
        added_tokens: Mapping[str, int] | None = None,
        normalizer: str | None = None,
        **options: Any,
    ) -> None:
        if normalizer is not None and normalizer not in NORMALIZERS:
            raise ValueError(f"normalizer={normalizer!r}: only {', '.join(NORMALIZERS)} is applied")
        self.normalizer = normalizer
        self.added_tokens = dict(added_tokens or {})
        missing = [b for b in range(256) if bytes([b]) not in ranks]
        top = max([*ranks.values(), *self.added_tokens.values()], default=-1) + 1
        stand_ins = {bytes([b]): top + i for i, b in enumerate(missing)}
        self._stand_ins = frozenset(stand_ins.values())
        self._missing = frozenset(missing)
        # Its ids plain already (a vocabulary's, and the stand-ins): not checked again.
        super().__init__(pattern, PlainRanks(ranks | stand_ins if stand_ins else ranks), **options)
        self._added = _added_finder(tuple(self.added_tokens))
        self._spanning = [token for token in self.added_tokens if len(token) > 1]
        # The fused pass cuts the text between the rules' steps; hidden from callers that take
        # ``_fused`` to encode whole texts themselves (engine/batch.py), which would skip them.
        self._fused_plain, self._fused = self._fused, None

    def encode(
        self,
        text: str,
        errors: str = "strict",
        *,
        start: int = 0,
        end: int | None = None,
        whole_piece: bool = True,
    ) -> list[int]:
        """As :meth:`OrdinaryEncoder.encode`, with the model's rules."""
        if end is None:
            end = len(text)
        if self.normalizer is not None:
            text, start, end = self._normal(text, start, end)
        ids: list[int] = []
        plain = self._plain
        at = start
        if self._added is not None:
            for match in self._added.finditer(text, start, end):
                if match.start() > at:
                    ids += plain(text, errors, start=at, end=match.start(), whole_piece=whole_piece)
                ids.append(self.added_tokens[match.group()])
                at = match.end()
        if at < end or not ids:
            ids += plain(text, errors, start=at, end=end, whole_piece=whole_piece)
        if self._stand_ins and not self._stand_ins.isdisjoint(ids):
            raise _missing_byte(text[start:end], self._missing, errors)
        return ids

    def cut_allowed(self, text: str, cut: int) -> bool:
        """Whether a stream may cut ``text`` (all of it seen so far) before ``text[cut]`` as far
        as the rules go, the pattern's safe cut aside: NFC leaves the two sides apart (an ASCII
        character after the cut: none composes with what comes before it), and no added token
        can cover the cut, in the text seen or once more comes."""
        if cut <= 0 or cut >= len(text):
            return False
        if self.normalizer is not None and not text[cut].isascii():
            return False
        for token in self._spanning:
            for k in range(1, len(token)):
                rest = token[k:]
                if text.startswith(token[:k], cut - k) and rest.startswith(
                    text[cut : cut + len(rest)]
                ):
                    return False
        return True

    def _plain(
        self, text: str, errors: str, *, start: int, end: int, whole_piece: bool
    ) -> list[int]:
        if self._fused_plain is not None:
            ids: list[int] = self._fused_plain.encode(text, start, end, errors)
            return ids
        return super().encode(text, errors, start=start, end=end, whole_piece=whole_piece)

    def _normal(self, text: str, start: int, end: int) -> tuple[str, int, int]:
        part = text[start:end]
        if part.isascii():  # ASCII is NFC already
            return text, start, end
        import unicodedata  # here: only NFC models need it

        normal = unicodedata.normalize("NFC", part)
        return normal, 0, len(normal)


@functools.cache
def _added_finder(texts: tuple[str, ...]) -> re.Pattern[str] | None:
    """Leftmost, then longest, of ``texts`` (an alternation tries the longest first)."""
    if not texts:
        return None
    return re.compile("|".join(map(re.escape, sorted(texts, key=len, reverse=True))))


def _missing_byte(text: str, missing: frozenset[int], errors: str) -> ValueError:
    """The error for the first character of ``text`` whose bytes include a stand-in's."""
    escape = "surrogateescape" if errors != "strict" else "replace"
    index, char, byte = next(
        (
            (index, char, byte)
            for index, char in enumerate(text)
            for byte in char.encode("utf-8", escape)
            if byte in missing
        ),
        (0, text[:1], min(missing)),
    )
    return ValueError(
        f"character {index} ({char!r}) needs byte 0x{byte:02x}, which is not a token of this "
        "vocabulary"
    )


def model_encoder(rules: ModelRules, pattern: str, ranks: Ranks, **options: Any) -> OrdinaryEncoder:
    """The engine for ordinary text under ``rules``: a :class:`ModelEncoder` where one applies
    (packed ranks are made a dict for it)."""
    if rules.added_tokens or rules.normalizer or not ranks.every_byte:
        return ModelEncoder(
            pattern,
            ranks.ranks(),
            added_tokens=rules.added_tokens,
            normalizer=rules.normalizer,
            **options,
        )
    return OrdinaryEncoder(pattern, ranks, **options)
