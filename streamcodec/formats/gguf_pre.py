r"""llama.cpp's pre-tokenizer names (``tokenizer.ggml.pre``) as the ``tokenizer.json`` parts
they stand for.

A GGUF stores a byte-level BPE tokenizer's tokens, merges and token types, but not how the text
is cut before merging: it names that (``"llama-bpe"``, ``"qwen2"``...), and llama.cpp maps each
name to regexes of its own (``src/llama-vocab.cpp``, ``llm_tokenizer_bpe``), some of them
adapted to its regex engine. Here each name maps to what the model's own ``tokenizer.json``
says, the ``normalizer`` and ``pre_tokenizer`` that Hugging Face runs, with where it was read:
:func:`huggingface_document` then rebuilds the model's ``tokenizer.json`` from a GGUF, and
streamcodec reads it as it reads any (:mod:`~streamcodec.formats.huggingface`), so a GGUF and
its ``tokenizer.json`` load the same way.

    >>> PRE["llama-bpe"].models
    'Llama 3, 3.1, 3.2, 3.3; DBRX and Smaug (same pattern)'
    >>> sorted(PRE) == sorted(set(PRE))
    True

A name not in :data:`PRE` is refused with a line naming it, never approximated.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from streamcodec.formats.hf_sequences import DEEPSEEK_V3_SPLITS
from streamcodec.formats.huggingface import added_token, bpe_model
from streamcodec.text.known_patterns import KNOWN, QWEN35_PATTERN
from streamcodec.vocab import Vocabulary

__all__ = ["PRE", "PreTokenizer", "gguf_special_tokens", "huggingface_document"]

_SOURCE = "ggml-org/llama.cpp src/llama-vocab.cpp (llm_tokenizer_bpe), "


@dataclasses.dataclass(frozen=True)
class PreTokenizer:
    """What a ``tokenizer.ggml.pre`` name stands for: a ``tokenizer.json``'s parts."""

    models: str
    pre_tokenizer: dict[str, Any]
    source: str
    normalizer: dict[str, Any] | None = None
    ignore_merges: bool = False

    @property
    def normalizer_name(self) -> str | None:
        """The normalizer the encoding applies: ``"NFC"`` or None."""
        return "NFC" if self.normalizer == _NFC else None


def _split(pattern: str) -> dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def _byte_level(*, use_regex: bool) -> dict[str, Any]:
    return {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": use_regex,
    }


def _sequence(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": list(steps)}


def _one_split(pattern: str) -> dict[str, Any]:
    return _sequence(_split(pattern), _byte_level(use_regex=False))


_NFC = {"type": "NFC"}
_DIGITS_THEN_BYTE_LEVEL = _sequence(
    {"type": "Digits", "individual_digits": True}, _byte_level(use_regex=True)
)
# Written with escapes: an editor's NFC would turn U+1FD3 into U+0390 and empty a range.
_DEEPSEEK_LETTERS = (
    "\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
    "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5"
    "\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a"
    "\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d"
    "\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3"
    "\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115"
    "\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f"
    "\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf"
    "\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f"
    "\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2"
    "\U000118a0-\U000118df\U0001e900-\U0001e943]+"
)
_DEEPSEEK_PUNCTUATION = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
_DEEPSEEK_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"

#: ``tokenizer.ggml.pre`` -> the tokenizer.json parts it stands for.
PRE: dict[str, PreTokenizer] = {
    "gpt-2": PreTokenizer(
        "GPT-2",
        _byte_level(use_regex=True),
        _SOURCE + "GPT2; openai-community/gpt2 tokenizer.json",
    ),
    "mpt": PreTokenizer(
        "MPT (GPT-NeoX's tokenizer)",
        _byte_level(use_regex=True),
        _SOURCE + "MPT; mosaicml/mpt-7b tokenizer.json",
        normalizer=_NFC,
    ),
    "olmo": PreTokenizer(
        "OLMo (GPT-NeoX's tokenizer)",
        _byte_level(use_regex=True),
        _SOURCE + "OLMO, as GPT2; allenai/OLMo-1.7-7B-hf tokenizer.json",
        normalizer=_NFC,
    ),
    "llama-bpe": PreTokenizer(
        "Llama 3, 3.1, 3.2, 3.3; DBRX and Smaug (same pattern)",
        _one_split(KNOWN["llama3"]),
        _SOURCE + "LLAMA3 ('original regex from tokenizer.json')",
        ignore_merges=True,
    ),
    "dbrx": PreTokenizer("DBRX", _one_split(KNOWN["llama3"]), _SOURCE + "DBRX ('same as llama3')"),
    "smaug-bpe": PreTokenizer(
        "Smaug", _one_split(KNOWN["llama3"]), _SOURCE + "SMAUG ('same as llama3')"
    ),
    "qwen2": PreTokenizer(
        "Qwen 2, 2.5, 3",
        _one_split(KNOWN["qwen2"]),
        _SOURCE + "QWEN2 ('original regex from tokenizer.json'); Qwen/Qwen2-7B tokenizer.json",
        normalizer=_NFC,
    ),
    "qwen35": PreTokenizer(
        "Qwen 3.5",
        _one_split(QWEN35_PATTERN),
        _SOURCE + "QWEN35 ('original regex from tokenizer.json')",
    ),
    "deepseek-llm": PreTokenizer(
        "DeepSeek LLM",
        _sequence(
            _split("[\r\n]"),
            _split(_DEEPSEEK_LETTERS),
            _split(_DEEPSEEK_PUNCTUATION),
            _split("\\s+$"),
            _split(_DEEPSEEK_CJK),
            {"type": "Digits", "individual_digits": False},
            _byte_level(use_regex=False),
        ),
        _SOURCE + "DEEPSEEK_LLM; deepseek-ai/deepseek-llm-7b-base tokenizer.json",
        normalizer={"type": "Sequence", "normalizers": []},
    ),
    "deepseek-coder": PreTokenizer(
        "DeepSeek Coder",
        _sequence(
            _split("[\r\n]"),
            _split("\\s?\\p{L}+"),
            _split("\\s?\\p{P}+"),
            _split(_DEEPSEEK_CJK),
            {"type": "Digits", "individual_digits": True},
            _byte_level(use_regex=False),
        ),
        _SOURCE + "DEEPSEEK_CODER; deepseek-ai/deepseek-coder-6.7b-base tokenizer.json",
        normalizer={"type": "Sequence", "normalizers": []},
    ),
    "deepseek-v3": PreTokenizer(
        "DeepSeek V3, R1",
        _sequence(*map(_split, DEEPSEEK_V3_SPLITS), _byte_level(use_regex=False)),
        _SOURCE + "DEEPSEEK3_LLM; deepseek-ai/DeepSeek-V3 tokenizer.json",
    ),
    "falcon": PreTokenizer(
        "Falcon",
        _sequence(
            {"type": "Punctuation", "behavior": "Contiguous"},
            _byte_level(use_regex=True),
            {"type": "Digits", "individual_digits": False},
            _split("[0-9][0-9][0-9]"),
        ),
        _SOURCE + "FALCON; tiiuae/falcon-7b tokenizer.json",
    ),
    **{
        name: PreTokenizer(
            models,
            _DIGITS_THEN_BYTE_LEVEL,
            _SOURCE + f"{name.upper().replace('-', '_')} ('\\p{{N}}' then GPT-2's)",
            normalizer=_NFC if name == "command-r" else None,
        )
        for name, models in (
            ("starcoder", "StarCoder, StarCoder 2"),
            ("refact", "Refact"),
            ("command-r", "Command-R"),
            ("smollm", "SmolLM"),
        )
    },
    "tekken": PreTokenizer(
        "Mistral Tekken (Nemo, Pixtral, Mistral Small 3)",
        _one_split(KNOWN["tekken"]),
        _SOURCE + "TEKKEN ('original regex from tokenizer.json')",
    ),
    "gpt-4o": PreTokenizer(
        "GPT-4o's pattern (o200k_base)",
        _one_split(KNOWN["o200k_harmony"]),
        _SOURCE + "GPT4O ('original regex from tokenizer.json')",
    ),
}


def huggingface_document(metadata: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The ``tokenizer.json`` document of a GGUF's byte-level BPE tokenizer (its metadata, as
    :func:`~streamcodec.formats.gguf.read_metadata` returns it), as Hugging Face writes the
    model's own: the vocabulary, merges, added tokens (control tokens special, user-defined
    ones not; llama.cpp's ``[PAD<id>]`` fillers left out), and the pre-tokenizer of
    :data:`PRE`. Raises ``ValueError`` naming what it cannot follow."""
    kind = metadata.get("tokenizer.ggml.model")
    if kind != "gpt2":
        what = {"llama": "SentencePiece", "bert": "WordPiece", "t5": "Unigram"}.get(str(kind))
        named = f" ({what})" if what else ""
        raise ValueError(
            f"{source}: tokenizer.ggml.model is {kind!r}{named}, not byte-level BPE ('gpt2'); "
            "streamcodec reads only byte-level BPE"
        )
    pre_name = metadata.get("tokenizer.ggml.pre", "default")
    pre = PRE.get(pre_name)
    if pre is None:
        raise ValueError(
            f"{source}: tokenizer.ggml.pre is {pre_name!r}, a pre-tokenizer streamcodec does not "
            f"know; known: {', '.join(sorted(PRE))}"
        )
    tokens: list[str] = metadata.get("tokenizer.ggml.tokens") or []
    types: list[int] = metadata.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    if len(types) != len(tokens):
        raise ValueError(f"{source}: {len(tokens)} tokens but {len(types)} token types")
    vocab: dict[str, int] = {}
    added: list[dict[str, Any]] = []
    for token_id, (token, kind_of) in enumerate(zip(tokens, types, strict=True)):
        if token == f"[PAD{token_id}]":
            continue  # llama.cpp fills ids the model does not use
        if kind_of in (_CONTROL, _USER_DEFINED):
            added.append(added_token(token_id, token, special=kind_of == _CONTROL))
        else:
            vocab.setdefault(token, token_id)
    merges: list[str] = metadata.get("tokenizer.ggml.merges") or []
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": pre.normalizer,
        "pre_tokenizer": pre.pre_tokenizer,
        "post_processor": None,
        "decoder": _byte_level(use_regex=True),
        "model": bpe_model(vocab, merges, ignore_merges=pre.ignore_merges),
    }


def gguf_special_tokens(metadata: dict[str, Any], vocabulary: Vocabulary) -> dict[str, Any]:
    """The BOS and EOS special tokens a GGUF names (``tokenizer.ggml.bos_token_id``...), and
    whether llama.cpp adds each (``add_bos_token``, ``add_eos_token``)."""
    tokens: list[str] = metadata.get("tokenizer.ggml.tokens") or []
    found: dict[str, Any] = {}
    for end in ("bos", "eos"):
        token_id = metadata.get(f"tokenizer.ggml.{end}_token_id")
        text = tokens[token_id] if isinstance(token_id, int) and token_id < len(tokens) else None
        if text is not None and vocabulary.special_tokens.get(text) == token_id:
            found[f"{end}_token"] = text
            found[f"add_{end}"] = bool(metadata.get(f"tokenizer.ggml.add_{end}_token", False))
    return found


# llama.cpp's token types (llama_token_type): 1 normal, 2 unknown, 3 control, 4 user-defined,
# 5 unused, 6 byte.
_CONTROL, _USER_DEFINED = 3, 4
