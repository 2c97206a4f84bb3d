#!/usr/bin/env bash
# Memory safety of the compiled core, the native scanner, the fused and batch passes and the corpus
# tool's JSON Lines reader: build them with AddressSanitizer and
# UBSan, then run the native tests, the fuzz targets that reach them, and a campaign budget under
# the sanitizers.
#
#     tools/sanitize.sh            # 120 s of fuzzing (FUZZ_SECONDS=600 tools/sanitize.sh for more)
#
# Needs gcc (its libasan and libubsan) and the test dependencies (pip install -e '.[test]').
# The sanitized build goes to a copy of the tree in a temporary directory, so the checkout's own
# build is untouched. Any sanitizer report fails the run (halt_on_error); leaks are not checked,
# since CPython keeps much memory alive until exit by design.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python}
seconds=${FUZZ_SECONDS:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The tracked files, plus this script's siblings when run from an uncommitted tree.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '\.so$' \
    | xargs -0 cp --parents -t "$work")
cd "$work"
CC=${CC:-gcc} CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
    LDFLAGS="-fsanitize=address,undefined" \
    "$python" setup.py -q build_ext --inplace 2>&1 | grep -v Warning || true
ls streamcodec/pieces/_core*.so streamcodec/text/_scan*.so streamcodec/engine/_fused*.so \
    streamcodec/corpus/_jsonl*.so >/dev/null  # all must be built

asan=$(${CC:-gcc} -print-file-name=libasan.so)
ubsan=$(${CC:-gcc} -print-file-name=libubsan.so)
export LD_PRELOAD="$asan:$ubsan"
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export PYTHONMALLOC=malloc  # every Python allocation through malloc, so ASan sees it
export PYTHONPATH="$work" STREAMCODEC_BACKEND=native

"$python" -c 'import streamcodec.pieces._core as c; print("sanitized core:", c.__file__)'
# Resident memory is not checked here: ASan keeps freed memory in quarantine (it grows up to
# 256 MB by design); benchmarks/native_memory.py checks it on a normal build.
# -s: a sanitizer's report is written to fd 2, which pytest would capture and lose at the abort.
# The engine's and the scanner's own tests whole (a name filter once skipped new ones), the
# others' native cases.
"$python" -m pytest -q -s -p no:cacheprovider tests/test_scan.py tests/test_scan_block.py \
    tests/test_fused.py tests/test_fused_buffer.py tests/test_fused_ahead.py tests/test_long_store.py \
    tests/test_fused_parts.py \
    tests/test_batch.py tests/test_batch_utf8.py \
    tests/test_batch_cache.py tests/test_concurrent_calls.py \
    tests/test_long_merge.py \
    tests/test_corpus_columns.py
"$python" -m pytest -q -s -p no:cacheprovider tests/test_native.py tests/test_known_patterns.py \
    tests/test_fuzz.py tests/test_hostile_vocab.py \
    -k "native or backends or tiktoken or stream or reference or cache or scan or pretokenize or pattern" \
    --deselect tests/test_native.py::test_memory_stays_flat_over_many_calls
# Half the budget on the core's own targets, half on whole encodings through it; each target
# its own part (fuzz.campaign.work). Under the sanitizers a few hundred examples of the cheap
# targets (jsonl, backends, real_tiktoken: 15-35 ms each) take the default budget's part, about
# 10 s; FUZZ_SECONDS=10 gives them tens, and batch (0.8-3.1 s an example) a few.
"$python" -m fuzz.campaign --seconds "$((seconds / 2))" --workers 1 --batch 10 --no-save \
    --targets native_core,real_native_core,scanner,patterns
"$python" -m fuzz.campaign --seconds "$((seconds / 2))" --workers 1 --batch 10 --no-save \
    --targets backends,real_backends,real_tiktoken,real_stream,batch,jsonl
# Coverage-guided inputs (atheris) into the core's entry points, if atheris is installed.
if "$python" -c 'import atheris' 2>/dev/null; then
    "$python" -m fuzz.atheris_harness native_core -runs=2000 2>&1 | tail -1
    "$python" -m fuzz.atheris_harness backends -runs=1000 2>&1 | tail -1
    "$python" -m fuzz.atheris_harness scanner -runs=2000 2>&1 | tail -1
    "$python" -m fuzz.atheris_harness patterns -runs=2000 2>&1 | tail -1
fi
echo "sanitize: clean (AddressSanitizer + UBSan, ${seconds} s of fuzzing)"
