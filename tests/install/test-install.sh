#!/bin/sh
# SPDX-License-Identifier: MIT
# Install round trip (utf8proc's install_uninstall test, extended):
#   1. make install DESTDIR=<tmp> PREFIX=/usr/local installs exactly the expected files;
#   2. every examples/*.c compiles against the installed copy through
#      `pkg-config --cflags --libs gpufit` (PKG_CONFIG_LIBDIR/SYSROOT point into DESTDIR) with
#      -Wall -Wextra -Wpedantic -Werror, links libgpufit.so.SOVERSION and runs with
#      LD_LIBRARY_PATH; it also links and runs against the installed libgpufit.a;
#   3. the installed gpufit command (if built) runs;
#   4. make uninstall leaves no file or link behind.
# Usage: tests/install/test-install.sh   (from the repository root; make check-install)
# Environment: CC, BUILD (build dir, default build), GPUFIT_MAKE (make command, default make).
set -eu

CC=${CC:-cc}
BUILD=${BUILD:-build}
MAKE_CMD=${GPUFIT_MAKE:-make}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
prefix=/usr/local

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dest="$tmp/root"
libdir="$prefix/lib"
fail() {
    echo "test-install: FAIL: $*" >&2
    exit 1
}

header_int() {
    sed -n "s/^[[:blank:]]*#[[:blank:]]*define[[:blank:]]\{1,\}GPUFIT_$1[[:blank:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" include/gpufit.h
}
version="$(header_int VERSION_MAJOR).$(header_int VERSION_MINOR).$(header_int VERSION_PATCH)"
soversion=$(header_int SOVERSION)

# Every directory variable is given, so that values from an outer `make check LIBDIR=...`
# (inherited through MAKEFLAGS) cannot leak into this test.
dirs="PREFIX=$prefix LIBDIR=$libdir INCLUDEDIR=$prefix/include BINDIR=$prefix/bin PKGCONFIGDIR=$libdir/pkgconfig"

# --- 1. install
# shellcheck disable=SC2086
$MAKE_CMD --no-print-directory install BUILD="$BUILD" DESTDIR="$dest" $dirs >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "make install failed"; }

expected="$prefix/include/gpufit.h
$libdir/libgpufit.a
$libdir/libgpufit.so
$libdir/libgpufit.so.$soversion
$libdir/libgpufit.so.$version
$libdir/pkgconfig/gpufit.pc"
have_cli=no
for f in cli/*.c; do [ -f "$f" ] && have_cli=yes; done # as the Makefile's $(wildcard cli/*.c)
if [ "$have_cli" = yes ]; then
    expected="$expected
$prefix/bin/gpufit
$prefix/share/man/man1/gpufit.1"
fi
printf '%s\n' "$expected" | sort >"$tmp/expected"
(cd "$dest" && find . ! -type d | sed 's|^\.||' | sort) >"$tmp/installed"
if ! cmp -s "$tmp/expected" "$tmp/installed"; then
    diff "$tmp/expected" "$tmp/installed" >&2 || true
    fail "installed files differ from the expected list (< expected, > installed)"
fi
[ "$(readlink "$dest$libdir/libgpufit.so.$soversion")" = "libgpufit.so.$version" ] ||
    fail "libgpufit.so.$soversion is not a link to libgpufit.so.$version"
[ "$(readlink "$dest$libdir/libgpufit.so")" = "libgpufit.so.$soversion" ] ||
    fail "libgpufit.so is not a link to libgpufit.so.$soversion"
echo "test-install: installed $(wc -l <"$tmp/installed" | tr -d ' ') files under DESTDIR$prefix"

# --- 2. pkg-config and the examples
PKG_CONFIG_PATH=
PKG_CONFIG_LIBDIR="$dest$libdir/pkgconfig"
PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
"$PKG_CONFIG" --exists gpufit || fail "pkg-config cannot find gpufit.pc in $PKG_CONFIG_LIBDIR"
pcversion=$("$PKG_CONFIG" --modversion gpufit)
[ "$pcversion" = "$version" ] || fail "gpufit.pc Version is $pcversion, header says $version"
cflags=$("$PKG_CONFIG" --cflags gpufit)
libs=$("$PKG_CONFIG" --libs gpufit)
case " $cflags " in
*GPUFIT_BUILDING* | *" -D"*) fail "gpufit.pc Cflags carry a build-only define: $cflags" ;;
esac
case "$cflags $libs" in
*"$dest"*) ;;
*) fail "pkg-config flags do not point into DESTDIR: $cflags $libs" ;;
esac
echo "test-install: pkg-config gpufit $pcversion: $cflags $libs"

found=0
for ex in examples/*.c; do
    [ -f "$ex" ] || continue
    found=1
    name=$(basename "$ex" .c)
    # shellcheck disable=SC2086
    "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$ex" -o "$tmp/$name" $libs ||
        fail "$ex does not build against the installed library"
    "${READELF:-readelf}" -d "$tmp/$name" | grep -q "NEEDED.*\[libgpufit\.so\.$soversion\]" ||
        fail "$name does not link libgpufit.so.$soversion"
    echo "--- $name (shared, LD_LIBRARY_PATH=DESTDIR$libdir)"
    LD_LIBRARY_PATH="$dest$libdir" "$tmp/$name" || fail "$name (shared) exited with status $?"
    # shellcheck disable=SC2086
    "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$ex" -o "$tmp/$name-static" \
        "$dest$libdir/libgpufit.a" -lm || fail "$ex does not link against the installed libgpufit.a"
    "$tmp/$name-static" >/dev/null || fail "$name (static) exited with status $?"
    echo "--- $name (static): OK"
done
[ "$found" -eq 1 ] || fail "no examples/*.c to build"

# --- 3. the installed command
if [ -x "$dest$prefix/bin/gpufit" ]; then
    "$dest$prefix/bin/gpufit" --help >/dev/null 2>&1 || "$dest$prefix/bin/gpufit" --version >/dev/null 2>&1 ||
        fail "installed gpufit runs neither --help nor --version successfully"
    echo "test-install: installed gpufit command runs"
fi

# --- 4. uninstall
# shellcheck disable=SC2086
$MAKE_CMD --no-print-directory uninstall BUILD="$BUILD" DESTDIR="$dest" $dirs >"$tmp/uninstall.log" 2>&1 ||
    { cat "$tmp/uninstall.log" >&2; fail "make uninstall failed"; }
left=$(cd "$dest" && find . ! -type d)
[ -z "$left" ] || fail "make uninstall left files behind: $left"
echo "test-install: OK: install, pkg-config build of examples, uninstall leaves nothing"
