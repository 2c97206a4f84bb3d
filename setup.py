"""Builds the optional compiled code: the piece encoder (streamcodec.pieces._core), the native
pre-tokenizer (streamcodec.text._scan), the fused pass over both (streamcodec.engine._fused) and
the corpus tool's JSON Lines reader (streamcodec.corpus._jsonl);
everything else is in pyproject.toml. Without a working C compiler the install goes on, pure
Python, with a warning (streamcodec.engine.backend takes the compiled path only when all three
are built). ``STREAMCODEC_PURE=1`` builds none of them: ``STREAMCODEC_PURE=1 pip wheel .`` makes
the pure wheel (``py3-none-any``) that Pyodide's micropip installs (docs/browser.md)."""

import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed build into a one-line warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no Python headers, ...
            self._warn("compiled code was", exc, "pure Python")

    def build_extension(self, ext: Extension) -> None:
        if self.compiler.compiler_type == "msvc":  # C11 atomics (pieces/_core_internal.h)
            ext.extra_compile_args = [*ext.extra_compile_args, "/std:c11", "/experimental:c11atomics"]  # noqa: E501
        try:
            super().build_extension(ext)
        except Exception as exc:
            name, instead = NAMES.get(ext.name, (ext.name, "pure Python"))
            self._warn(f"{name} ({ext.name}) was", exc, instead)

    @staticmethod
    def _warn(what: str, exc: Exception, instead: str) -> None:
        print(f"WARNING: streamcodec's {what} not built ({exc}); using {instead} instead.")


# What each extension is, in the warning; without any of them, the pure-Python path runs.
NAMES = {
    "streamcodec.pieces._core": ("compiled core", "pure Python"),
    "streamcodec.text._scan": ("native scanner", "pure Python"),
    "streamcodec.engine._fused": ("fused pass", "pure Python"),
    "streamcodec.corpus._jsonl": ("JSON Lines reader", "the Python reader"),
}

# Every header of the package, for each extension: one forgotten in a hand-kept list left an old
# build in place after that header changed (the units include each other's headers).
HEADERS = sorted(glob.glob("streamcodec/**/*.h", recursive=True))

core = Extension(
    "streamcodec.pieces._core",
    sources=[
        "streamcodec/pieces/_core.c",
        "streamcodec/pieces/_core_tables.c",
        "streamcodec/pieces/_core_merge.c",
        "streamcodec/pieces/_core_backtrack.c",
        "streamcodec/pieces/_core_piece.c",
    ],
    # pthread_once and pthread_atfork (the candidates' index, _core_tables.c).
    extra_link_args=[] if sys.platform == "win32" else ["-pthread"],
    depends=HEADERS,
)

scan = Extension(
    "streamcodec.text._scan",
    sources=["streamcodec/text/_scan.c"],
    depends=HEADERS,
)

fused = Extension(
    "streamcodec.engine._fused",
    sources=["streamcodec/engine/_fused.c"],
    # The batch pass's threads (engine/_fused_batch.h); Windows runs a batch on one thread.
    extra_link_args=[] if sys.platform == "win32" else ["-pthread"],
    depends=HEADERS,
)

# The corpus tool's JSON Lines reader (corpus/_jsonl.c): each line's text field, off the GIL.
jsonl = Extension(
    "streamcodec.corpus._jsonl",
    sources=["streamcodec/corpus/_jsonl.c"],
    depends=HEADERS,
)

# The pure wheel: no extension at all, so the wheel is tagged for any Python and platform. It
# takes only the declared package data (a normal build lists the C sources as package data in
# the egg-info, which later builds read back) and builds in its own folder (build/lib keeps the
# files a normal build copied there).
PURE = os.environ.get("STREAMCODEC_PURE", "") not in ("", "0")
ONLY_PURE = {"include_package_data": False, "options": {"build": {"build_base": "build/pure"}}}
setup(
    ext_modules=[] if PURE else [core, scan, fused, jsonl],
    cmdclass={"build_ext": OptionalBuildExt},
    **(ONLY_PURE if PURE else {}),
)
