#!/usr/bin/env bash
# ThreadSanitizer on the compiled core's state that threads share (the rank-order facts written
# lazily by the backtracking encoder): tools/tsan_core.c, built with -fsanitize=thread with the
# core's C units, encodes the same long pieces on 4 threads at once. Any race report fails.
#
#     tools/tsan.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-gcc} -O1 -g -fsanitize=thread -std=c11 -pthread -o "$work/tsan_core" "$root/tools/tsan_core.c" \
    "$root"/streamcodec/pieces/_core_{tables,merge,backtrack,piece}.c
TSAN_OPTIONS=halt_on_error=1:abort_on_error=1 "$work/tsan_core"
