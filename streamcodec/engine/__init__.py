"""The engine: where pre-tokens, pieces and ids meet, on the path chosen once.

- :mod:`.backend`: the one reader of ``STREAMCODEC_BACKEND``; compiled code or pure Python.
- :mod:`.ordinary`: :class:`OrdinaryEncoder`, ordinary text to ids (the fused C pass, the
  compiled piece encoder over ``regex`` pieces, or the pure-Python twin with its cache).
- :mod:`.cache`: the pure path's cache of ids.
- ``_fused.c``: the fused pass (scanner, word cache, core) with the GIL released.

It imports the layers below it (``text``, ``pieces``, ``vocab``); ``stream`` and the facade
import it. (Nothing is imported here: ``import streamcodec`` stays cheap.)
"""
