"""tiktoken 0.14's own test suite (MIT license, see LICENSE-tiktoken), run on streamcodec.

The files are tiktoken's ``tests/`` with one change: ``import tiktoken`` reads
``import streamcodec as tiktoken``. A test whose vocabulary cannot be found offline (gpt2,
r50k_base and p50k_base need their files in tiktoken's cache or ``$STREAMCODEC_DATA_DIR``)
is skipped, with the reason, by conftest.py.
"""
