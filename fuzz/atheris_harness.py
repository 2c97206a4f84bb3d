"""Coverage-guided fuzzing of the differential targets with atheris (libFuzzer for Python).

    pip install -e '.[fuzz]'
    python -m fuzz.atheris_harness merge_piece                    # 10,000 runs (the default)
    python -m fuzz.atheris_harness tiktoken -max_total_time=300   # any libFuzzer option
    python -m fuzz.atheris_harness --list

libFuzzer's input bytes drive the target's hypothesis strategy (hypothesis's
``fuzz_one_input``), so atheris explores the same cases as the tests and the campaign, guided by
the branches it reaches in streamcodec (only streamcodec is instrumented). A run is always
bounded: ``-runs=10000`` is added unless ``-runs`` or ``-max_total_time`` is given; and
``-max_len=4096 -len_control=0`` unless given, since a case needs a few hundred bytes; libFuzzer's
artifacts go to ``$TMPDIR/streamcodec-atheris/`` unless ``-artifact_prefix`` is given. A mismatch
stops the run with libFuzzer's crash report; its case (not shrunk: libFuzzer does not shrink
through hypothesis) is appended to tests/regressions/fuzz_found.json.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

DEFAULT_RUNS = "-runs=10000"
# libFuzzer starts with tiny inputs and grows them slowly, but hypothesis rejects an input that
# runs out before a case is drawn (a case needs a few hundred bytes): start long at once.
DEFAULT_LENGTHS = ("-max_len=4096", "-len_control=0")


def main(argv: Sequence[str] | None = None) -> int:
    """Fuzz the target named first in ``argv``; the other arguments go to libFuzzer."""
    args = list(sys.argv[1:] if argv is None else argv)
    import atheris

    # Instrument streamcodec only (every module the targets import): coverage of hypothesis or
    # tiktoken would not guide anything.
    with atheris.instrument_imports(include=["streamcodec"]):
        from fuzz.targets import TARGETS

    if not args or args[0] in ("--list", "-h", "--help") or args[0] not in TARGETS:
        print(__doc__)
        print("targets:", ", ".join(TARGETS))
        return 0 if args and args[0] in ("--list", "-h", "--help") else 2
    name, libfuzzer_args = args[0], args[1:]
    if not any(a.startswith(("-runs=", "-max_total_time=")) for a in libfuzzer_args):
        libfuzzer_args.append(DEFAULT_RUNS)
    if not any(a.startswith("-artifact_prefix=") for a in libfuzzer_args):
        # libFuzzer writes crash-*/slow-unit-* files into the working directory by default:
        # keep them out of the repository (the regression corpus keeps the failing case).
        artifacts = Path(tempfile.gettempdir(), "streamcodec-atheris")
        artifacts.mkdir(exist_ok=True)
        libfuzzer_args.append(f"-artifact_prefix={artifacts}/")
    for default in DEFAULT_LENGTHS:
        if not any(a.startswith(default.split("=")[0] + "=") for a in libfuzzer_args):
            libfuzzer_args.append(default)
    atheris.Setup([sys.argv[0], *libfuzzer_args], _fuzz_one_input(name))
    atheris.Fuzz()
    return 0


def _fuzz_one_input(name: str):  # type: ignore[no-untyped-def]
    """The function libFuzzer calls with each input: it runs one case of target ``name``."""
    import dataclasses

    from fuzz.campaign import save_failures
    from fuzz.strategies import Case
    from fuzz.targets import TARGETS, Tally, hypothesis_test

    chosen = TARGETS[name]

    def check(case: Case) -> Tally:
        try:
            return chosen.check(case)
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            save_failures([{"target": name, "case": repr(case), "error": error[:2000]}])
            raise

    test = hypothesis_test(dataclasses.replace(chosen, check=check), max_examples=1)
    return test.hypothesis.fuzz_one_input  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
