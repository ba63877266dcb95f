#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench-layouts: the bench's summary and cold-path lines with the library's functions
# placed three ways (gcc's default alignment, 32 and 64 bytes: -falign-functions), each in a
# build directory of its own. The same code moves by several per cent with where its
# functions land (instruction-cache sets, branch-predictor aliasing), so a change is judged by
# its figures under all three, not by one build's.
# Usage: tools/bench_layouts.sh [BUILD_PREFIX] (default build-layout); MAKE names make.
set -euo pipefail
prefix=${1:-build-layout}
make_cmd=${MAKE:-make}
base_opt=$("$make_cmd" -s print-lib-opt) # the optimisation the library's files get

for align in default 32 64; do
    opt=$base_opt
    [ "$align" != default ] && opt="$opt -falign-functions=$align"
    dir="$prefix-$align"
    "$make_cmd" -s BUILD="$dir" LIB_OPT="$opt" "$dir/bench/bench" >/dev/null
    summary='' cold=''
    for run in 1 2; do
        out=$("$dir/bench/bench")
        summary="$summary $(printf '%s\n' "$out" | awk '/no allocation/ { printf "%.2f", $(NF - 1) / 1e6 }')"
        cold="$cold $(printf '%s\n' "$out" | awk '/^  cold:/ { for (i = 1; i <= NF; i++) if ($i == "free:") { printf "%.0f", $(i + 1) / 1e3 } }')"
    done
    printf 'functions aligned %-7s  gpufit_evaluate_summary M/s:%s   cold path k jobs/s:%s\n' \
        "$align" "$summary" "$cold"
done
