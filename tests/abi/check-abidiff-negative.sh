#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI gate must fail on an incompatible change: this test gives check-abidiff.sh a
# baseline in which two members of the public struct gpufit_summary trade places (as if the
# library had reordered them) and one in which a public function is gone from the library's
# point of view (a symbol the baseline has and the library lacks), and expects both refused.
# Usage: tests/abi/check-abidiff-negative.sh [LIB]   (make check-abi)
set -euo pipefail
lib=${1:-build/libgpufit.so.0}
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$dir/gpufit.abi" "$tmp" <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
xml = open(src).read()
# 1. gpufit_summary: 'fits' and 'n_roles' swap names (a reordered struct)
i = xml.index("<class-decl name='gpufit_summary'")
j = xml.index("</class-decl>", i)
body = xml[i:j]
a, b = "<var-decl name='fits'", "<var-decl name='n_roles'"
assert a in body and b in body
body = body.replace(a, "@A@").replace(b, a).replace("@A@", b)
open(out + "/reordered.abi", "w").write(xml[:i] + body + xml[j:])
# 2. a function the baseline exports that the library lacks (as if it had been removed)
k = xml.index("<elf-function-symbols>") + len("<elf-function-symbols>")
sym = "\n    <elf-symbol name='gpufit_gone_in_test' type='func-type' binding='global-binding' " \
      "visibility='default-visibility' is-defined='yes'/>"
open(out + "/removed.abi", "w").write(xml[:k] + sym + xml[k:])
PY
for case in reordered removed; do
    if GPUFIT_ABI_BASE="$tmp/$case.abi" bash "$dir/check-abidiff.sh" "$lib" >"$tmp/$case.log" 2>&1; then
        cat "$tmp/$case.log" >&2
        echo "check-abidiff-negative: the gate accepted a $case baseline" >&2
        exit 1
    fi
    # refused for the right reason: the change is named, not a failure to run
    if ! grep -q -e gpufit_summary -e gpufit_gone_in_test "$tmp/$case.log"; then
        cat "$tmp/$case.log" >&2
        echo "check-abidiff-negative: refused, but not for the $case change" >&2
        exit 1
    fi
    echo "    the ABI gate refuses a $case struct/function (as it must)"
done
