"""mkdocs hook: the docstrings' reST habits rendered in Markdown (the API reference).

The docstrings are written for ``help()`` and doctest: examples are ``>>>`` lines, and
cross-references are Sphinx roles. In the generated reference, a run of ``>>>`` lines and their
output becomes a code block, and ``:func:`~a.b``` becomes the code span ``b`` (``a.b`` without
the tilde). Fenced blocks are left alone.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj):`(~?)([\w.]+)`")


class _Docstrings(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fenced = in_example = False
        for line in lines:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if not fenced and line.startswith(">>> ") and not in_example:
                in_example = True
                out.append("")  # an indented block must follow a blank line
            elif in_example and not line.strip():
                in_example = False
            if in_example:
                out.append("    " + line)
            else:
                out.append(line if fenced else ROLE.sub(_role, line))
        return out


def _role(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


class DocstringExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(_Docstrings(md), "streamcodec_docstrings", 35)


@event_priority(100)  # before mkdocstrings reads the extensions
def on_config(config: Any) -> Any:
    config.markdown_extensions.append(DocstringExtension())
    return config
