#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the exported interface of the built library (jansson's check-exports, extended):
#   1. the dynamic symbols defined by libgpufit.so == the names listed in lib/gpufit.map
#      == the functions declared with GPUFIT_API in include/gpufit.h;
#   2. every dynamic symbol carries a GPUFIT_* version tag, and the map has no wildcard exports;
#   3. libgpufit.a defines only gpufit__* internals and the public gpufit_* functions;
#   4. the SONAME is libgpufit.so.$GPUFIT_SOVERSION, the symlinks point where they should, and
#      GPUFIT_VERSION_STRING agrees with MAJOR.MINOR.PATCH.
# Usage: tests/abi/check-exports.sh [BUILD_DIR]   (run from the repository root; make check-abi)
set -eu

build=${1:-build}
NM=${NM:-nm}
READELF=${READELF:-readelf}
hdr=include/gpufit.h
map=lib/gpufit.map

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufit-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
fail() {
    echo "check-exports: FAIL: $*" >&2
    status=1
}

header_int() {
    sed -n "s/^[[:blank:]]*#[[:blank:]]*define[[:blank:]]\{1,\}GPUFIT_$1[[:blank:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "$hdr"
}
major=$(header_int VERSION_MAJOR)
minor=$(header_int VERSION_MINOR)
patch=$(header_int VERSION_PATCH)
soversion=$(header_int SOVERSION)
vstring=$(sed -n 's/^[[:blank:]]*#[[:blank:]]*define[[:blank:]]\{1,\}GPUFIT_VERSION_STRING[[:blank:]]\{1,\}"\([^"]*\)".*/\1/p' "$hdr")
version="$major.$minor.$patch"
so="$build/libgpufit.so.$version"
ar="$build/libgpufit.a"
for f in "$so" "$ar"; do
    [ -f "$f" ] || { echo "check-exports: $f not built (run make first)" >&2; exit 1; }
done

# --- 1a. Header: the function name of each declaration that starts with GPUFIT_API (a
# declaration may wrap; the name is the last identifier before the first '(').
awk '
    /^[[:blank:]]*GPUFIT_API[[:blank:]]/ { decl = ""; collecting = 1 }
    collecting {
        decl = decl " " $0
        p = index(decl, "(")
        if (p) {
            decl = substr(decl, 1, p - 1)
            n = split(decl, w, /[^A-Za-z0-9_]+/)
            name = ""
            for (i = n; i >= 1 && name == ""; i--) name = w[i]
            print name
            collecting = 0
        }
    }' "$hdr" | sort >"$tmp/header"
decls=$(grep -c '^[[:blank:]]*GPUFIT_API[[:blank:]]' "$hdr" || true)
[ "$decls" -eq "$(wc -l <"$tmp/header")" ] || fail "could not parse every GPUFIT_API declaration"
[ -s "$tmp/header" ] || fail "no GPUFIT_API declarations found in $hdr"
sort -u "$tmp/header" | cmp -s - "$tmp/header" || fail "a function is declared twice in $hdr"
grep -v '^gpufit_[a-z0-9_]*$' "$tmp/header" >"$tmp/bad" && fail "public names outside gpufit_*: $(cat "$tmp/bad")"
grep '^gpufit__' "$tmp/header" >"$tmp/bad" && fail "gpufit__* is internal, not API: $(cat "$tmp/bad")"

# --- 1b. Map: names in global: sections (comments stripped; node names and inheritance skipped).
# shellcheck disable=SC2020 # tr maps each of { } ; to a newline, on purpose
awk '
    {
        line = $0; out = ""
        while (line != "") {
            if (inc) {
                p = index(line, "*/")
                if (!p) { line = ""; break }
                line = substr(line, p + 2); inc = 0
            } else {
                p = index(line, "/*")
                if (!p) { out = out line; line = ""; break }
                out = out substr(line, 1, p - 1) " "; line = substr(line, p + 2); inc = 1
            }
        }
        sub(/#.*/, "", out)
        print out
    }' "$map" | tr '{};' '\n\n\n' | sed 's/\(global:\|local:\)/\n\1\n/g' | awk '
    { gsub(/^[[:blank:]]+|[[:blank:]]+$/, "") }
    $0 == "" { next }
    $0 == "global:" { mode = "g"; next }
    $0 == "local:" { mode = "l"; next }
    /^GPUFIT_/ { mode = ""; next }
    mode == "g" { print }
    mode == "l" && $0 != "*" { print "LOCAL " $0 }' >"$tmp/map.raw"
grep '^LOCAL ' "$tmp/map.raw" >"$tmp/bad" && fail "unexpected local: entries in $map: $(cat "$tmp/bad")"
grep -v '^LOCAL ' "$tmp/map.raw" | sort >"$tmp/map" || true
grep '[][*?]' "$tmp/map" >"$tmp/bad" && fail "wildcards in a global: list of $map: $(cat "$tmp/bad")"
sort -u "$tmp/map" | cmp -s - "$tmp/map" || fail "a symbol is listed twice in $map"
grep -q 'local:[[:blank:]]*\*' "$map" || grep -q '^[[:blank:]]*\*;' "$map" || fail "$map lacks local: *;"

# --- 1c. Shared object: defined dynamic symbols and their version tags.
"$NM" -D --defined-only "$so" >"$tmp/nm.so"
awk '$2 != "A" && NF >= 3 { print $3 }' "$tmp/nm.so" | sort -u >"$tmp/dyn.full"
sed 's/@.*//' "$tmp/dyn.full" | sort -u >"$tmp/so"
grep -v '@@\{0,1\}GPUFIT_[0-9]\{1,\}\.[0-9]\{1,\}$' "$tmp/dyn.full" >"$tmp/bad" &&
    fail "exports without a GPUFIT_x.y version tag: $(tr '\n' ' ' <"$tmp/bad")"

compare() { # compare A-file A-name B-file B-name
    if ! cmp -s "$1" "$3"; then
        fail "$2 != $4"
        comm -23 "$1" "$3" | awk -v w="$2" '{ print "    only in " w ": " $0 }' >&2
        comm -13 "$1" "$3" | awk -v w="$4" '{ print "    only in " w ": " $0 }' >&2
    fi
}
compare "$tmp/header" "$hdr" "$tmp/map" "$map"
compare "$tmp/map" "$map" "$tmp/so" "$so"

# --- 3. Static archive: global definitions are gpufit__* or public API names only.
"$NM" -g --defined-only "$ar" | awk 'NF >= 3 { print $3 }' | sort -u >"$tmp/a"
grep -v '^gpufit_' "$tmp/a" >"$tmp/bad" &&
    fail "$ar defines names outside gpufit_/gpufit__: $(tr '\n' ' ' <"$tmp/bad")"
grep '^gpufit_' "$tmp/a" | grep -v '^gpufit__' | comm -23 - "$tmp/header" >"$tmp/bad" &&
    [ -s "$tmp/bad" ] && fail "$ar defines gpufit_* names that are not API (internal names are gpufit__*): $(tr '\n' ' ' <"$tmp/bad")"
comm -23 "$tmp/header" "$tmp/a" >"$tmp/bad"
[ -s "$tmp/bad" ] && fail "$ar lacks API functions: $(tr '\n' ' ' <"$tmp/bad")"

# --- 4. SONAME, symlinks, version string.
soname=$("$READELF" -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = "libgpufit.so.$soversion" ] || fail "SONAME is '$soname', want libgpufit.so.$soversion"
[ "$(readlink "$build/libgpufit.so.$soversion" 2>/dev/null)" = "libgpufit.so.$version" ] ||
    fail "$build/libgpufit.so.$soversion does not link to libgpufit.so.$version"
[ "$(readlink "$build/libgpufit.so" 2>/dev/null)" = "libgpufit.so.$soversion" ] ||
    fail "$build/libgpufit.so does not link to libgpufit.so.$soversion"
[ "$vstring" = "$version" ] || fail "GPUFIT_VERSION_STRING \"$vstring\" != MAJOR.MINOR.PATCH $version"
"$READELF" -d "$so" | grep -q 'TEXTREL' && fail "$so has text relocations"

if [ "$status" -eq 0 ]; then
    echo "check-exports: OK: $(wc -l <"$tmp/so" | tr -d ' ') functions; header == map == .so exports;" \
        "$ar clean; SONAME $soname; version $version"
fi
exit "$status"
