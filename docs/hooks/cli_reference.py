"""mkdocs hook: the command-line reference, rendered from the argparse parser at build time.

A page holding the marker ``<!-- cli-reference -->`` gets, in its place, the help of
``streamcodec`` and of each subcommand, exactly as ``streamcodec COMMAND --help`` prints it, so
the page cannot drift from the code. The tree the site is built from is imported first, ahead of
any installed streamcodec.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- cli-reference -->"
ROOT = Path(__file__).resolve().parents[2]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker with the reference (mkdocs calls this for every page)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())


def cli_reference() -> str:
    """Markdown: the top-level help, then one section per subcommand."""
    sys.path.insert(0, str(ROOT))
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: make the page reproducible
    from streamcodec.cli import build_parser

    parser = build_parser()
    (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sections = [_block(parser.format_help())]
    for name, command in subcommands.choices.items():
        sections.append(f"## streamcodec {name}\n\n{_block(command.format_help())}")
    return "\n\n".join(sections)


def _block(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```"
