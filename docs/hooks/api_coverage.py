"""mkdocs hook: the API reference must show every public name (the build fails otherwise).

On the reference page, every name of ``streamcodec.__all__`` and every public member of
``streamcodec.Encoding``, inherited ones included (``iter_encode_chunks``, ``count_tokens``,
``split``... come from base classes) and the attributes it sets (``name``, ``max_token_value``,
``backend``...), must have its anchor (``id="streamcodec.Encoding.split"``), each name of
``__all__`` at its public path (``streamcodec.Window``, not only its module's).
A missing one is an error naming it, so ``mkdocs build`` fails, in CI too
(tests/test_docs_site.py builds the site).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
PAGE = "reference.md"


def missing_names(html: str) -> list[str]:
    """The public names that have no anchor in ``html``."""
    sys.path.insert(0, str(ROOT))
    import streamcodec

    ids = set(re.findall(r'id="(streamcodec\.[\w.]+)"', html))
    # at its public path: Window only under streamcodec.stream.windows was not enough
    missing = [name for name in streamcodec.__all__ if f"streamcodec.{name}" not in ids]
    members = [name for name in dir(streamcodec.Encoding) if not name.startswith("_")]
    # and the attributes __init__ sets (name, backend...), which dir() of the class has not
    members += [name for name in streamcodec.Encoding.__annotations__ if not name.startswith("_")]
    missing += [
        f"Encoding.{name}" for name in members if f"streamcodec.Encoding.{name}" not in ids
    ]
    return missing


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Fail the build when the reference page leaves out a public name."""
    if page.file.src_uri == PAGE and (missing := missing_names(output)):
        raise PluginError(f"{PAGE} leaves out public names: {', '.join(missing)}")
    return output
