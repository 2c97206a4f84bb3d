"""Real text gathered from this machine: Python's sources and docs, translations, emoji.

Everything here is read from the installed Python, so every fresh machine has it.
"""

from __future__ import annotations

import functools
import sysconfig
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@functools.cache
def python_source(limit: int = 400_000) -> str:
    """Source code: a few standard-library modules."""
    names = ["argparse.py", "typing.py", "dataclasses.py", "json/decoder.py", "textwrap.py"]
    text = "".join((STDLIB / name).read_text(encoding="utf-8") for name in names)
    return text[:limit]


def stdlib_files() -> list[Path]:
    """The standard library's modules: top level first, then packages (not site-packages)."""
    packaged = (p for p in sorted(STDLIB.glob("*/**/*.py")) if "site-packages" not in p.parts)
    return [*sorted(STDLIB.glob("*.py")), *packaged]


@functools.cache
def english_prose(limit: int = 300_000) -> str:
    """Prose: the docstrings and comments of the standard library, as English text."""
    import ast

    parts: list[str] = []
    for path in stdlib_files():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 200:
                    parts.append(doc)
        if sum(map(len, parts)) > limit:
            break
    return "\n\n".join(parts)[:limit]


@functools.cache
def translations(limit: int = 600_000, per_language: int = 2_000) -> str:
    """Real translated text in over a hundred languages: the message catalogs (``.mo``) that the
    system's programs ship in /usr/share/locale, a few kilobytes per language. Empty where the
    machine has none."""
    import gettext

    by_language: dict[str, list[Path]] = {}
    for path in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo")):
        by_language.setdefault(path.parts[-3], []).append(path)
    parts: list[str] = []
    for files in by_language.values():
        taken = 0
        for path in files:
            try:
                with open(path, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
            except (OSError, UnicodeDecodeError):
                continue
            for key, message in sorted(catalog.items(), key=str):
                if key and isinstance(message, str) and message.strip():
                    parts.append(message)
                    taken += len(message)
            if taken >= per_language:
                break
    return "\n".join(parts)[:limit]


@functools.cache
def multilingual(limit: int = 300_000) -> str:
    """Non-Latin scripts and emoji: real translations (see :func:`translations`), a fixed sample
    of scripts, emoji with skin tones and ZWJ, and every assigned character of some blocks."""
    import unicodedata

    sample = (
        "Ελληνικά κείμενα και ποίηση. Русский текст: «Съешь же ещё этих мягких французских булок». "
        "中文文本，日本語の文章、한국어 문장. العربية نص تجريبي. עברית טקסט. हिन्दी पाठ। ภาษาไทย "
        "Tiếng Việt có dấu. Türkçe ğüşıöç. 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 ❤️ 🤖\r\n\t  x\u00a0y\u2003z "
        "Ünïcödé façade naïve coöperate déjà vu — “quotes” ‘single’ … ½ ² ³ ¼ ٣٤٥ ௧௨௩\n\n\n"
    )
    parts = [sample]
    # Every assigned character in blocks from many scripts, in runs as words.
    for start, end in [
        (0x0370, 0x03FF),
        (0x0400, 0x04FF),
        (0x0590, 0x06FF),
        (0x0900, 0x097F),
        (0x0E00, 0x0E7F),
        (0x3040, 0x30FF),
        (0x4E00, 0x4FFF),
        (0xAC00, 0xAD00),
        (0x1F300, 0x1F64F),
        (0x1F900, 0x1F9FF),
    ]:
        chars = [chr(c) for c in range(start, end) if unicodedata.category(chr(c)) != "Cn"]
        for i in range(0, len(chars), 7):
            parts.append("".join(chars[i : i + 7]) + (" " if i % 3 else "\n"))
    # No repetition, so caches are not flattered.
    return ("".join(parts) + translations())[:limit]


def samples() -> dict[str, str]:
    return {"prose": english_prose(), "code": python_source(), "multilingual": multilingual()}


@functools.cache
def stdlib_source(limit: int = 4_000_000) -> str:
    """Source code: the standard library's modules in :func:`stdlib_files` order."""
    parts: list[str] = []
    size = 0
    for path in stdlib_files():
        try:
            parts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
        size += len(parts[-1])
        if size > limit:
            break
    return "".join(parts)[:limit]


@functools.cache
def mixed(limit: int = 12_000_000) -> str:
    """About ``limit`` UTF-8 bytes of prose (up to a third), other scripts and code."""
    text = english_prose(limit // 3) + multilingual(limit // 12)
    return text + stdlib_source(limit - len(text.encode("utf-8")))
