#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test-windows.sh -- cross-build hpshm for 64-bit Windows with mingw-w64 and run the
# Windows suites under wine, with the in-tree harness (tests/harness/).
#
#   ./scripts/test-windows.sh [ctest arguments...]      e.g.  ./scripts/test-windows.sh -R test_windows
#
# Installs mingw-w64 and wine from Debian's registry when they are missing (apt-get,
# --no-install-recommends: about 45 s and 350 MB the first time), configures build-mingw with
# cmake/toolchain-mingw64.cmake and warnings as errors, builds, checks with clang (when
# installed) that the Windows sources are ISO C11 without GNU extensions, and runs ctest
# through wine: test_windows and the portable suites (test_wire, test_api, test_cli).
# Prints the closing line of every test program and then one summary line,
#   windows-wine: N passed, N failed, N skipped
# counting each test of a harness program, and each other ctest test (the examples, the
# harness self-tests) as one.  The exit status is ctest's.
#
# wine: a private prefix in the build directory (created on the first run, about 10 s), and a
# persistent wineserver started before ctest with its standard streams detached.  Without the
# persistent server every test pays about 3 s, because wine's background services inherit
# ctest's output pipe and ctest waits for them; a server started naively (`wineserver -p`
# with ctest's streams) keeps that pipe open forever and ctest hangs.  The server is killed
# on exit, whatever happens, and waited for, so no wine process outlives the script.
#
# Large pages cannot be tested under wine (it makes SEC_LARGE_PAGES sections without the
# privilege, backed by small pages): the suites check that hpshm refuses them after
# verification and falls back cleanly.
#
# Environment:
#   HPSHM_BUILD_DIR   build directory (default: build-mingw)
#   HPSHM_CMAKE_ARGS  extra CMake arguments, split on spaces
#   HPSHM_SKIP_DEPS=1 do not check or install packages
#   WINEPREFIX        the wine prefix (default: <build>/wineprefix)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-mingw}
[[ $build == /* ]] || build=$root/$build
read -r -a extra_cmake <<<"${HPSHM_CMAKE_ARGS:-}"

echo "== test-windows: dependencies"
bash scripts/deps.sh windows
for tool in x86_64-w64-mingw32-gcc wine wineserver; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "test-windows: $tool not found; install mingw-w64 and wine (apt-get install mingw-w64 wine wine64)" >&2
		exit 1
	}
done

echo "== test-windows: configure ($build)"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-mingw64.cmake" -DHPSHM_WERROR=ON \
	-DHPSHM_BUILD_TESTS=ON -DHPSHM_TEST_HARNESS=builtin -DHPSHM_BUILD_TOOLS=ON -DHPSHM_BUILD_EXAMPLES=ON \
	-DHPSHM_BUILD_DOCS=OFF "${extra_cmake[@]}"

echo "== test-windows: build"
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

# No GNU extension in what builds for Windows, so MSVC can take it: clang, targeting mingw-w64
# with its headers, checks the library's and the tool's Windows sources as ISO C11 (-Wpedantic
# -Wgnu -Wvla; GCC has no -Wgnu).  A check in MSVC mode proper
# (--target=x86_64-pc-windows-msvc) needs the Windows SDK's headers, which Debian does not
# package: mingw-w64's reject clang's MSVC mode in their own declarations.
echo "== test-windows: ISO C check of the Windows sources (clang)"
if command -v clang >/dev/null 2>&1; then
	c_errors=0
	# The backends this build has (HPSHM_WITH_<KEY>, from backends/list.h), as CMake defined them.
	mapfile -t with_backends < <(grep -o -- '-DHPSHM_WITH_[A-Z0-9_]*=[01]' "$build/compile_commands.json" | sort -u)
	for f in ports/windows/*.c backends/winsection.c backends/winsection_large.c \
		base/*.c core/*.c tools/check.c tools/hpshm.c tools/util.c tools/ls.c tools/plan.c tools/probe.c tools/run.c \
		tools/unavailable.c tools/bench.c bench/workload.c bench/memory.c bench/apr.c bench/worker.c bench/pool.c \
		bench/run.c bench/stats.c bench/output.c bench/svg.c bench/worker_windows.c bench/memory_windows.c; do
		# Each file's layer, as cmake/layers.cmake gives it, so layer-private headers admit it.
		layer=${f%%/*}
		if ! clang --target=x86_64-w64-windows-gnu -std=c11 -fsyntax-only -Werror -Wall -Wextra -Wpedantic -Wgnu \
			-Wvla -Wno-unneeded-internal-declaration -D_WIN32_WINNT=0x0A00 -DUNICODE -D_UNICODE -DHPSHM_BUILDING \
			"-DHPSHM_LAYER_${layer^^}" "${with_backends[@]}" \
			-isystem /usr/x86_64-w64-mingw32/include -Iinclude -Iports -Ibench -I. -I"$build" -I"$build/include" "$f"; then
			c_errors=$((c_errors + 1))
		fi
	done
	if ((c_errors > 0)); then
		echo "test-windows: $c_errors Windows source(s) use GNU extensions or do not compile as ISO C11" >&2
		exit 1
	fi
	echo "test-windows: the Windows sources are ISO C11 without GNU extensions"
else
	echo "test-windows: clang not installed: the ISO C check of the Windows sources is skipped"
fi

echo "== test-windows: wine"
export WINEPREFIX=${WINEPREFIX:-$build/wineprefix}
export WINEDEBUG=-all
# winedbg off: a crash (the crash tests) then costs one line, not a register dump.
export WINEDLLOVERRIDES="winedbg.exe=d;mscoree,mshtml="
mkdir -p "$WINEPREFIX"
stop_wine() {
	wineserver -k >/dev/null 2>&1 || true
	# Its services linger a few seconds after the kill; let them go before the script ends.
	timeout 20 wineserver -w >/dev/null 2>&1 || true
}
trap stop_wine EXIT
# One persistent server for the whole run, its stdio detached (ctest hangs on it otherwise);
# one already running for this prefix (a run by hand) serves as well.
wineserver -p </dev/null >/dev/null 2>&1 || true
if [[ ! -f $WINEPREFIX/system.reg ]]; then
	echo "test-windows: creating the wine prefix $WINEPREFIX (once)"
fi
wine wineboot --init </dev/null >/dev/null 2>&1
wine --version

# What .ci/run requires of the Linux suites names Linux's pools; under wine large pages never
# exist (the right is never held), so nothing huge can be required of the Windows suites.
if [[ -n ${HPSHM_TEST_REQUIRE:-} ]]; then
	echo "note: HPSHM_TEST_REQUIRE=$HPSHM_TEST_REQUIRE is not applied under wine: it has no large pages"
	unset HPSHM_TEST_REQUIRE
fi

echo "== test-windows: ctest"
out="$build/ctest-output.txt"
set +e
ctest --test-dir "$build" --timeout 300 --output-on-failure "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e

# Each harness program ends with "N passed, N failed, N skipped"; other tests count as one,
# by ctest's verdict.
log="$build/Testing/Temporary/LastTest.log"
echo "== test-windows: results ($build)"
names="$build/closing-names.txt" counts="$build/closing-counts.txt"
: >"$names"
echo "0 0 0" >"$counts"
if [[ -r $log ]]; then
	sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v names="$names" -v counts="$counts" '
		/^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; next }
		name ~ /^harness_/ { next }   # the self-tests fail on purpose inside; ctest judges them
		/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {
			print "  " name ": " $0
			print name > names
			p += $1; f += $3; s += $5
		}
		END { printf "%d %d %d\n", p, f, s > counts }'
fi
read -r passed failed skipped <"$counts"
# ctest's own lines: "  3/11 Test  #3: name .....   Passed    0.1 sec" (or ***Failed, ***Skipped ...).
while read -r name verdict; do
	grep -qx -- "$name" "$names" && continue
	case $verdict in
	Passed) passed=$((passed + 1)) ;;
	Skipped | Not | Disabled) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done < <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[* ]*([A-Za-z]+).*/\1 \2/p' "$out")
echo "windows-wine: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
