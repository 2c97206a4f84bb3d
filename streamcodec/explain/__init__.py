"""Explaining a tokenization: the merges of a piece, and a page that shows a whole text.

- :mod:`.trace`: :func:`explain_piece`, a piece's merges in rank order beside greedy
  longest-match (what ``streamcodec explain`` prints);
- :mod:`.html`: :func:`explain_html`, one self-contained page (what ``explain --html`` writes).

Both rest on the specification (:mod:`streamcodec.reference`) and nothing else of streamcodec's:
the page takes any encoding through a small protocol, so ``Encoding.explain_html`` can call it.
"""

from streamcodec.explain.html import explain_html
from streamcodec.explain.trace import Explanation, Step, explain_piece

__all__ = ["Explanation", "Step", "explain_html", "explain_piece"]
