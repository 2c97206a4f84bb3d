#!/usr/bin/env bash
# ThreadSanitizer on the compiled state that threads share:
#   1. the rank-order facts the backtracking encoder writes lazily: tools/tsan_core.c, built
#      with -fsanitize=thread with the core's C units, encodes the same long pieces on 4
#      threads at once;
#   2. the batch pass (engine/_fused_batch.h: its counter, cancel flag, first invalid document,
#      per-thread buffers; the primary word cache its threads read together and the private
#      ones promoted into it, engine/_shared_cache.h): the compiled modules built with
#      -fsanitize=thread in a copy of the tree, then tools/tsan_batch.py under Python with
#      libtsan preloaded.
# Any race report fails.
#
#     tools/tsan.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-gcc} -O1 -g -fsanitize=thread -std=c11 -pthread -o "$work/tsan_core" "$root/tools/tsan_core.c" \
    "$root"/streamcodec/pieces/_core_{tables,merge,backtrack,piece}.c
TSAN_OPTIONS=halt_on_error=1:abort_on_error=1 "$work/tsan_core"

mkdir "$work/tree"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '\.so$' \
    | xargs -0 cp --parents -t "$work/tree")
(cd "$work/tree" && CC=${CC:-gcc} CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
    "$python" setup.py -q build_ext --inplace >/dev/null 2>&1)
ls "$work"/tree/streamcodec/engine/_fused*.so >/dev/null  # must be built
LD_PRELOAD=$(${CC:-gcc} -print-file-name=libtsan.so) TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
    PYTHONPATH="$work/tree" STREAMCODEC_BACKEND=native "$python" "$root/tools/tsan_batch.py"
