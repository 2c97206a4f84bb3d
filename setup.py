"""Builds the optional compiled core (streamcodec.pieces._core) and native pre-tokenizer
(streamcodec.text._scan); everything else is in
pyproject.toml. Without a working C compiler the install goes on, pure Python, with a warning."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed build into a one-line warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no Python headers, ...
            self._warn("compiled core and native scanner were", exc, "pure Python")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            name, instead = NAMES.get(ext.name, (ext.name, "pure Python"))
            self._warn(f"{name} ({ext.name}) was", exc, instead)

    @staticmethod
    def _warn(what: str, exc: Exception, instead: str) -> None:
        print(f"WARNING: streamcodec's {what} not built ({exc}); using {instead} instead.")


# What each extension is, and what runs without it, in the warning.
NAMES = {
    "streamcodec.pieces._core": ("compiled core", "pure Python"),
    "streamcodec.text._scan": ("native scanner", "the regex pre-tokenizer"),
}


core = Extension(
    "streamcodec.pieces._core",
    sources=[
        "streamcodec/pieces/_core.c",
        "streamcodec/pieces/_core_engine.c",
        "streamcodec/pieces/_core_backtrack.c",
    ],
    depends=["streamcodec/pieces/_core.h", "streamcodec/pieces/_core_internal.h"],
)

scan = Extension(
    "streamcodec.text._scan",
    sources=["streamcodec/text/_scan.c"],
    depends=[
        "streamcodec/text/_scan_kind.h",
        "streamcodec/text/_scan_pattern.h",
        "streamcodec/text/_scan_ascii.h",
        "streamcodec/text/_unicode_tables.h",
        "streamcodec/pieces/_core.h",
    ],
)

setup(ext_modules=[core, scan], cmdclass={"build_ext": OptionalBuildExt})
