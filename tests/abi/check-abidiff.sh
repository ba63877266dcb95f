#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI against the committed baseline (tests/abi/gpufit.abi, abidw of the release's
# libgpufit.so.0; hidden visibility leaves only the public API): appended functions,
# enumerators and struct fields are fine (printed); a removed symbol (abidiff bit 8) or a
# member, enumerator or type that changed, moved or went away fails. The opaque handles and
# the internal gpufit__* types are suppressed (opaque.suppr): callers never see their layout.
# Refresh the baseline only
# at a release:
#   abidw --no-show-locs --no-corpus-path build/libgpufit.so.0 \
#       > tests/abi/gpufit.abi
set -uo pipefail
lib=${1:-build/libgpufit.so.0}
base=${GPUFIT_ABI_BASE:-tests/abi/gpufit.abi}  # another baseline: the negative test
if ! command -v abidiff >/dev/null; then
    echo "check-abidiff: abidiff (abigail-tools) is not installed" >&2
    exit 1
fi
# a private report file: parallel checks (the negative test, other clones) must not share one
out=$(mktemp "${TMPDIR:-/tmp}/gpufit-abidiff.XXXXXX")
trap 'rm -f "$out"' EXIT
abidiff --suppressions "$(dirname "$0")/opaque.suppr" "$base" "$lib" >"$out" 2>&1
rc=$?
if [ $((rc & 1)) -ne 0 ] || [ $((rc & 2)) -ne 0 ]; then
    cat "$out" >&2
    echo "check-abidiff: abidiff failed to run (exit $rc)" >&2
    exit 1
fi
if [ $((rc & 8)) -ne 0 ]; then
    cat "$out" >&2
    echo "check-abidiff: an incompatible ABI change against $base" >&2
    exit 1
fi
# abidiff reports every sub-type change with bit 4: only insertions (appended members and
# enumerators, added functions) may appear
bad=$(grep -E "offset changed|type of '|name changed|deletion|deleted|removed|[1-9][0-9]* Removed|value changed" "$out" || true)
if [ -n "$bad" ]; then
    cat "$out" >&2
    echo "check-abidiff: an incompatible ABI change against $base:" >&2
    printf '%s\n' "$bad" | head -10 >&2
    exit 1
fi
if [ $((rc & 4)) -ne 0 ]; then
    echo "    compatible additions against the baseline:"
    sed 's/^/      /' "$out" | head -40
fi
echo "    $lib is ABI-compatible with $base"
