#!/bin/sh
# Builds a wheel of the gpufit bindings that bundles the shared library, offline.
#
#   bindings/python/build_wheel.sh [OUT_DIR]        (default: bindings/python/dist)
#
# Runs `make` at the repository root when build/libgpufit.so.0 is missing, then builds the
# wheel with pip and the stdlib-only backend of _build/gpufit_build.py, which copies
# build/libgpufit.so.0 into the wheel as gpufit/_libs/libgpufit.so.0 (set
# GPUFIT_BUNDLE_LIBRARY=/path/to/libgpufit.so.0 to bundle another build). Needs only pip.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-"$here/dist"}
PYTHON=${PYTHON:-python3}

if [ -z "${GPUFIT_BUNDLE_LIBRARY:-}" ] && [ ! -e "$repo/build/libgpufit.so.0" ]; then
    echo "build_wheel.sh: building the library first (make lib)"
    make -C "$repo" lib
fi
mkdir -p "$out"
"$PYTHON" -m pip wheel --no-build-isolation --no-deps --no-index -w "$out" "$here"
ls -l "$out"/gpufit-*.whl
