#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/install_client.sh BUILD_DIR [CONFIG] -- what a user of an installed hpshm does, checked.
#
# Installs BUILD_DIR (already built) into a temporary prefix, then moves the whole prefix
# elsewhere, so that any path fixed at configure or install time shows up as a failure: the
# pkg-config file and the CMake package must find everything relative to where they now are.
# From the moved prefix it builds and runs a tiny client four ways:
#   - pkg-config, shared library: run with LD_LIBRARY_PATH set to the prefix's libdir (the
#     prefix is not in the loader's search path, as for any private install);
#   - pkg-config --static: linked against libhpshm.a, fully static (-static) unless the
#     library was built with sanitizers, whose runtimes cannot link fully static: then only
#     libhpshm.a is linked statically;
#   - find_package(hpshm) with hpshm::hpshm (CMake's build-tree rpath finds the library);
#   - find_package(hpshm) with hpshm::hpshm_static.
# Each client creates a 1 MiB segment with the default configuration, writes all of it and
# destroys it.  A fully static client must link without glibc's warning that a function needs
# NSS's shared libraries at run time (getpwuid_r: ports/posix/sys.c binds it weakly).
#
# The installed files are checked as a packager ships them: libhpshm.so's soname is the ABI's
# (libhpshm.so.0.MINOR in 0.x, doc/abi.md) and the client needs that name; the interposer of
# `hpshm exec` is in LIBDIR/hpshm/, not in LIBDIR, and bin/hpshm finds it there after the
# prefix moved; bin/hpshm depends on libapr-1 exactly when the build asked for the bench's APR
# peer (-DHPSHM_BENCH_APR=ON), never because APR happened to be installed.  The checks also make sure the client was built against this prefix, not
# against another copy of hpshm that happens to be installed on the machine.  A client linked
# statically must see HPSHM_STATIC (so that on Windows it would not import hpshm from a DLL),
# and a client of the shared library must not: hpshm::hpshm_static defines it, and so does
# `pkg-config --static --cflags` under pkgconf (Cflags.private).
#
# Environment (set by CTest from the build's configuration):
#   HPSHM_CC              the C compiler the library was built with (default: cc)
#   HPSHM_CLIENT_CFLAGS   extra flags for the clients, split on spaces (the sanitizers, if any)
#   HPSHM_TOOLCHAIN_FILE  the CMake toolchain file of a cross build (cmake/toolchain-*.cmake),
#                         for the find_package(hpshm) project
#   HPSHM_EMULATOR        what runs the target's programs (qemu-user), split on '|'; clients
#                         are run through it, and the shared client's dependency on libhpshm.so
#                         is read from its dynamic section, since the host's ldd cannot load
#                         a foreign program
#   HPSHM_SONAME          the soname the library must have (libhpshm.so.0.2)
#   HPSHM_EXPECT_TOOL     1 if bin/hpshm was built (HPSHM_BUILD_TOOLS), else 0
#   HPSHM_EXPECT_PRELOAD  1 if the interposer was built (HPSHM_BUILD_PRELOAD), else 0
#   HPSHM_EXPECT_APR      1 if the bench's APR peer was asked for (HPSHM_BENCH_APR), else 0
set -euo pipefail

build=${1:?usage: install_client.sh BUILD_DIR [CONFIG]}
config=${2:-}
cc=${HPSHM_CC:-cc}
read -r -a cflags <<<"${HPSHM_CLIENT_CFLAGS:-}"
IFS='|' read -r -a emulator <<<"${HPSHM_EMULATOR:-}"
toolchain=()
# The prefix is outside the toolchain's sysroot, where its packages are otherwise looked for.
[[ -n ${HPSHM_TOOLCHAIN_FILE:-} ]] &&
	toolchain=("-DCMAKE_TOOLCHAIN_FILE=$HPSHM_TOOLCHAIN_FILE" -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=BOTH
		-DHPSHM_CROSS_DYNAMIC=ON)
run() { "${emulator[@]}" "$@"; }
# A program run through the target's dynamic loader with --library-path (the i686 toolchain
# on a 64-bit system) searches that list and not LD_LIBRARY_PATH: put the prefix's library
# directory first in it.  run_with_lib DIR PROGRAM...
run_with_lib() {
	local dir=$1 e=("${emulator[@]}") i
	shift
	for ((i = 0; i + 1 < ${#e[@]}; i++)); do
		if [[ ${e[i]} == --library-path ]]; then
			e[i + 1]="$dir:${e[i + 1]}"
		fi
	done
	LD_LIBRARY_PATH=$dir "${e[@]}" "$@"
}

fail() {
	echo "install_client: FAIL: $*" >&2
	exit 1
}
step() { echo "== install_client: $*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpshm-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

step "install $build into a temporary prefix, then move the prefix"
install_args=(--install "$build" --prefix "$tmp/stage")
[[ -n $config ]] && install_args+=(--config "$config")
cmake "${install_args[@]}" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install failed"; }
mv "$tmp/stage" "$tmp/prefix"
prefix=$tmp/prefix

pc=$(find "$prefix" -name hpshm.pc -print -quit)
[[ -n $pc ]] || fail "no hpshm.pc under $prefix"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")   # the .pc sits in LIBDIR/pkgconfig, LIBDIR being lib or lib/<multiarch>
[[ -e $libdir/libhpshm.a && -e $libdir/libhpshm.so ]] || fail "libhpshm.a and libhpshm.so are not in $libdir"
if grep -rlF "$tmp/stage" "$prefix" --include='*.pc' --include='*.cmake' >"$tmp/stale"; then
	fail "installed files still name the prefix they were installed to: $(tr '\n' ' ' <"$tmp/stale")"
fi

step "the installed files: soname, the interposer's directory, bin/hpshm's libraries"
if [[ -n ${HPSHM_SONAME:-} ]]; then
	soname=$(readelf -d "$libdir/libhpshm.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[[ $soname == "$HPSHM_SONAME" ]] || fail "libhpshm.so's soname is '$soname', not $HPSHM_SONAME"
	[[ -e $libdir/$soname ]] || fail "$libdir/$soname (the soname's link) is not installed"
fi
if [[ ${HPSHM_EXPECT_PRELOAD:-0} == 1 ]]; then
	[[ -e $libdir/hpshm/libhpshm_preload.so ]] || fail "the interposer is not in $libdir/hpshm/"
	[[ ! -e $libdir/libhpshm_preload.so ]] || fail "the interposer is installed in $libdir, the loader's directory"
	if [[ ${HPSHM_EXPECT_TOOL:-0} == 1 ]] && ((${#emulator[@]} == 0)) && [[ -z ${HPSHM_TOOLCHAIN_FILE:-} ]]; then
		# `hpshm exec` finds it from where bin/hpshm is now; a program of our own shows what it
		# preloads.  It is built with the library's sanitizers: the interposer of a sanitized
		# build needs their run time, which a system program such as env lacks.
		printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
			'int main(void) { const char *p = getenv("LD_PRELOAD"); printf("%s\n", p ? p : ""); return 0; }' \
			>"$tmp/show-preload.c"
		"$cc" "${cflags[@]}" -o "$tmp/show-preload" "$tmp/show-preload.c" || fail "could not build show-preload"
		preloaded=$("$prefix/bin/hpshm" exec -- "$tmp/show-preload" 2>"$tmp/exec.err") ||
			{ cat "$tmp/exec.err"; fail "hpshm exec -- show-preload failed from the moved prefix"; }
		[[ $preloaded == *"$prefix/"*"/hpshm/libhpshm_preload.so"* ]] ||
			fail "hpshm exec preloads '$preloaded', not the interposer under $libdir/hpshm/"
	fi
fi
if [[ ${HPSHM_EXPECT_TOOL:-0} == 1 ]]; then
	[[ -x $prefix/bin/hpshm ]] || fail "bin/hpshm is not installed"
	if ((${#emulator[@]} == 0)) && [[ -z ${HPSHM_TOOLCHAIN_FILE:-} ]]; then
		deps=$(LD_LIBRARY_PATH=$libdir ldd "$prefix/bin/hpshm")
	else
		deps=$(readelf -d "$prefix/bin/hpshm" | grep NEEDED || true)
	fi
	if [[ ${HPSHM_EXPECT_APR:-0} == 1 ]]; then
		grep -q 'libapr-1' <<<"$deps" || fail "bin/hpshm was built with the APR peer and does not load libapr-1"
	elif grep -qE 'libapr-1|libuuid' <<<"$deps"; then
		fail "bin/hpshm loads APR although the build did not ask for it (-DHPSHM_BENCH_APR): $(grep -E 'apr|uuid' <<<"$deps" | tr -s ' \n' ' ')"
	fi
fi

export PKG_CONFIG_PATH=$pcdir
unset PKG_CONFIG_SYSROOT_DIR
# pkg-config must resolve to this prefix; a path fixed at configure time (/usr/local) would
# build against another copy, or not at all.
same_dir() { [[ $(realpath -m "$1") == $(realpath -m "$2") ]]; }
same_dir "$(pkg-config --variable=includedir hpshm)" "$prefix/include" ||
	fail "pkg-config includedir is $(pkg-config --variable=includedir hpshm), not $prefix/include"
same_dir "$(pkg-config --variable=libdir hpshm)" "$libdir" ||
	fail "pkg-config libdir is $(pkg-config --variable=libdir hpshm), not $libdir"

mkdir "$tmp/src"
cat >"$tmp/src/client.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include <hpshm.h>

#if defined(CLIENT_STATIC) && !defined(HPSHM_STATIC)
#error "a static client was not given HPSHM_STATIC"
#elif !defined(CLIENT_STATIC) && defined(HPSHM_STATIC)
#error "a client of the shared library was given HPSHM_STATIC"
#endif

int main(void)
{
	hpshm_segment *seg;
	hpshm_error err;

	if (hpshm_segment_create(&seg, (size_t)1 << 20, NULL, &err) < 0) {
		fprintf(stderr, "client: %s\n", err.message);
		return 1;
	}
	memset(hpshm_segment_address(seg), 0x5a, hpshm_segment_size(seg));
	printf("client: hpshm %s, provider %s\n", hpshm_version(), hpshm_segment_report(seg)->provider);
	return hpshm_segment_destroy(seg) < 0;
}
EOF

# The client must not need libhpshm.so at run time: no NEEDED entry for it.
not_needing_shared() {
	! readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libhpshm'
}

step "pkg-config, shared"
read -r -a pc_cflags <<<"$(pkg-config --cflags hpshm)"
read -r -a pc_libs <<<"$(pkg-config --libs hpshm)"
"$cc" "${cflags[@]}" -o "$tmp/client_shared" "$tmp/src/client.c" "${pc_cflags[@]}" "${pc_libs[@]}" ||
	fail "cc client.c \$(pkg-config --cflags --libs hpshm) failed"
if ((${#emulator[@]} == 0)) && [[ -z ${HPSHM_TOOLCHAIN_FILE:-} ]]; then
	LD_LIBRARY_PATH=$libdir ldd "$tmp/client_shared" | grep -F "$libdir/libhpshm.so" >/dev/null ||
		fail "client_shared does not load libhpshm.so from $libdir"
else
	# Another architecture or C library: the dynamic section says what the loader will look
	# for, and the run below, which finds it only through LD_LIBRARY_PATH, that it is there.
	readelf -d "$tmp/client_shared" | grep -E 'NEEDED.*\[libhpshm\.so' >/dev/null ||
		fail "client_shared does not need libhpshm.so"
fi
run_with_lib "$libdir" "$tmp/client_shared" || fail "client_shared did not run"

step "pkg-config --static"
read -r -a pc_static <<<"$(pkg-config --static --libs hpshm)"
read -r -a pc_static_cflags <<<"$(pkg-config --static --cflags hpshm)"
# freedesktop's pkg-config has no Cflags.private: its static users define HPSHM_STATIC.
if [[ " ${pc_static_cflags[*]} " != *" -DHPSHM_STATIC "* ]]; then
	pkg-config --about 2>/dev/null | grep -qi pkgconf &&
		fail "pkg-config --static --cflags hpshm lacks -DHPSHM_STATIC: $(pkg-config --static --cflags hpshm)"
	pc_static_cflags+=(-DHPSHM_STATIC)
fi
static=(-static)
if ((${#cflags[@]})); then
	static=()
	pc_static=("${pc_static[@]/#-lhpshm/-l:libhpshm.a}")
fi
"$cc" "${cflags[@]}" "${static[@]}" -DCLIENT_STATIC -o "$tmp/client_static" "$tmp/src/client.c" \
	"${pc_static_cflags[@]}" "${pc_static[@]}" 2>"$tmp/static.err" ||
	{ cat "$tmp/static.err" >&2; fail "cc ${static[*]} client.c \$(pkg-config --static --cflags --libs hpshm) failed"; }
cat "$tmp/static.err" >&2
# glibc's linker warning for a call that loads NSS modules into a static program.
if grep -E "statically linked applications requires at runtime" "$tmp/static.err" >&2; then
	fail "client_static links a function that needs glibc's shared NSS libraries at run time (above)"
fi
not_needing_shared "$tmp/client_static" || fail "client_static needs libhpshm.so"
if ((${#static[@]})) && readelf -d "$tmp/client_static" 2>/dev/null | grep -q NEEDED; then
	fail "client_static is not a static executable"
fi
run "$tmp/client_static" || fail "client_static did not run"

step "find_package(hpshm)"
cat >"$tmp/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(hpshm_client C)
find_package(hpshm 0.2 REQUIRED)
add_executable(client_cmake client.c)
target_link_libraries(client_cmake PRIVATE hpshm::hpshm)
add_executable(client_cmake_static client.c)
target_compile_definitions(client_cmake_static PRIVATE CLIENT_STATIC)
target_link_libraries(client_cmake_static PRIVATE hpshm::hpshm_static)
EOF
cmake -S "$tmp/src" -B "$tmp/consumer" "${toolchain[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/consumer.log" 2>&1 ||
	{ cat "$tmp/consumer.log"; fail "configuring a find_package(hpshm) project failed"; }
found=$(sed -n 's/^hpshm_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package(hpshm) found $found, not the package under $prefix"
cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 ||
	{ cat "$tmp/consumer.log"; fail "building the find_package(hpshm) project failed"; }
run "$tmp/consumer/client_cmake" || fail "client_cmake (hpshm::hpshm) did not run"
not_needing_shared "$tmp/consumer/client_cmake_static" || fail "client_cmake_static (hpshm::hpshm_static) needs libhpshm.so"
run "$tmp/consumer/client_cmake_static" || fail "client_cmake_static (hpshm::hpshm_static) did not run"

step "ok"
