"""The command line offers only what works (issue 22 §3): each option in a --help is accepted."""

from __future__ import annotations

import argparse

import pytest

from streamcodec.cli import build_parser


def _help(command: str) -> str:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return " ".join(commands.choices[command].format_help().split())


def test_verify_offers_no_word_mode() -> None:
    """verify refused --mode word and --codes, which its help offered."""
    helped = _help("verify")
    assert "{bytelevel,bytes}" in helped and "--codes" not in helped and "word" not in helped
    with pytest.raises(SystemExit):
        build_parser().parse_args(["verify", "x", "--mode", "word"])
