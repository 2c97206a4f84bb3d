"""Differential fuzzing for streamcodec: every fast path against the specification and tiktoken.

- :mod:`fuzz.strategies`: hypothesis strategies for vocabularies and texts that break tokenizers;
- :mod:`fuzz.registry`: the registry of named differential targets (cases + a check);
- :mod:`fuzz.targets`: the targets (importing it registers all, those of
  :mod:`fuzz.native_targets` and :mod:`fuzz.scan_targets` too);
- :mod:`fuzz.campaign`: ``python -m fuzz.campaign --seconds N`` runs every target for a budget;
- :mod:`fuzz.atheris_harness`: the same targets under coverage-guided fuzzing (atheris).

See docs/fuzzing.md.
"""
