#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/windows_exports.sh SOURCE_DIR MINGW_CC -- HPSHM_API on Windows, checked with MinGW.
#
# hpshm has no Windows port yet, but its header already decides how a DLL exports and how a
# program imports (include/hpshm.h), and that is easy to get silently wrong: MinGW exports
# every function of a DLL in which nothing is marked dllexport, and a program that calls a DLL
# without dllimport still links through a stub.  base/ is plain C11 (no OS header), so it is
# built here as hpshm.dll and as libhpshm.a, the way CMake builds the library (HPSHM_BUILDING),
# and checked:
#   - the DLL exports the public functions and nothing else (no hpshm__ helper);
#   - a client of the DLL (no define) calls them through __imp_ pointers (dllimport) and links
#     against the import library;
#   - a client of the static library (HPSHM_STATIC) calls them directly and links against it.
# Exit 77 (skipped) when the cross tools are missing.
set -euo pipefail

src=${1:?usage: windows_exports.sh SOURCE_DIR MINGW_CC}
cc=${2:?usage: windows_exports.sh SOURCE_DIR MINGW_CC}
tools=${cc%gcc}
nm=${tools}nm
ar=${tools}ar
objdump=${tools}objdump
for t in "$cc" "$nm" "$ar" "$objdump"; do
	command -v "$t" >/dev/null || {
		echo "windows_exports: SKIP: $t not found"
		exit 77
	}
done

fail() {
	echo "windows_exports: FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpshm-mingw.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cflags=(-std=c11 -Wall -Wextra -Werror -I"$src/include" -I"$src")
base=("$src/base/errors.c" "$src/base/size.c" "$src/base/text.c")

echo "== windows_exports: the library, as hpshm.dll and libhpshm.a ($cc)"
objs=()
for f in "${base[@]}"; do
	o=$tmp/$(basename "$f" .c).o
	"$cc" "${cflags[@]}" -DHPSHM_BUILDING -c "$f" -o "$o" || fail "cc -DHPSHM_BUILDING $f failed"
	objs+=("$o")
done
"$cc" -shared -o "$tmp/hpshm.dll" "${objs[@]}" -Wl,--out-implib,"$tmp/libhpshm.dll.a" ||
	fail "linking hpshm.dll failed"
"$ar" rcs "$tmp/libhpshm.a" "${objs[@]}"

# The export table's names: the lines after "[Ordinal/Name Pointer] Table".
exports=$("$objdump" -p "$tmp/hpshm.dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' |
	sed -n 's/^[[:space:]]*\[ *[0-9]*\] //p')
for f in hpshm_version hpshm_strerror hpshm_size_parse hpshm_error_set; do
	grep -qx "$f" <<<"$exports" || fail "hpshm.dll does not export $f; it exports: $(tr '\n' ' ' <<<"$exports")"
done
if grep -q '^hpshm__' <<<"$exports"; then
	fail "hpshm.dll exports internal helpers (was nothing marked dllexport?): $(tr '\n' ' ' <<<"$exports")"
fi

cat >"$tmp/client.c" <<'EOF'
#include <stdio.h>

#include <hpshm.h>

int main(void)
{
	size_t n = 0;

	if (hpshm_size_parse("2MiB", &n) < 0)
		return 1;
	printf("hpshm %s: %zu\n", hpshm_version(), n);
	return 0;
}
EOF

echo "== windows_exports: a client of the DLL imports"
"$cc" "${cflags[@]}" -c "$tmp/client.c" -o "$tmp/client_dll.o" || fail "cc client.c failed"
if ! "$nm" "$tmp/client_dll.o" | grep -q ' U __imp_hpshm_version$'; then
	fail "a client of the DLL calls hpshm_version without __imp_ (no dllimport):" \
		"$("$nm" "$tmp/client_dll.o" | tr '\n' ' ')"
fi
"$cc" -o "$tmp/client_dll.exe" "$tmp/client_dll.o" -L"$tmp" -l:libhpshm.dll.a ||
	fail "linking against the import library failed"

echo "== windows_exports: a client of the static library (HPSHM_STATIC) calls directly"
"$cc" "${cflags[@]}" -DHPSHM_STATIC -c "$tmp/client.c" -o "$tmp/client_static.o" ||
	fail "cc -DHPSHM_STATIC client.c failed"
if "$nm" "$tmp/client_static.o" | grep -q '__imp_hpshm'; then
	fail "a client defining HPSHM_STATIC still imports from a DLL: $("$nm" "$tmp/client_static.o" | tr '\n' ' ')"
fi
"$cc" -o "$tmp/client_static.exe" "$tmp/client_static.o" -L"$tmp" -l:libhpshm.a ||
	fail "linking against libhpshm.a failed"
if "$objdump" -p "$tmp/client_static.exe" | grep -qi 'DLL Name: hpshm.dll'; then
	fail "client_static.exe needs hpshm.dll"
fi

echo "== windows_exports: ok"
