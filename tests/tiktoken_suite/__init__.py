"""tiktoken 0.14's own test suite (MIT license, see LICENSE-tiktoken), run on streamcodec.

The files are tiktoken's ``tests/`` with two changes: ``import tiktoken`` reads
``import streamcodec as tiktoken``, and ``test_hyp_roundtrip`` leaves out texts holding a
special token (Hypothesis draws the string constants of local modules: here streamcodec's, whose
special tokens encode refuses, as tiktoken does; installed, tiktoken's are not local). Every
encoding they use is shipped in the package, so all of them run offline (none is skipped).
"""
