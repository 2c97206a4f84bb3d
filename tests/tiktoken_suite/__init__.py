"""tiktoken 0.14's own test suite (MIT license, see LICENSE-tiktoken), run on streamcodec.

The files are tiktoken's ``tests/`` with one change: ``import tiktoken`` reads
``import streamcodec as tiktoken``. Every encoding they use is shipped in the package, so all
of them run offline (none is skipped).
"""
