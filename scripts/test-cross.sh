#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test-cross.sh -- build hpshm for another target and run its test suites there.
#
#   ./scripts/test-cross.sh TARGET [ctest arguments...]      e.g.  ./scripts/test-cross.sh s390x -R wire
#
# Targets (doc/portability.md says what each proves):
#   i686           32-bit x86 (gcc-i686-linux-gnu): natively through the target's loader where
#                  the kernel runs 32-bit programs, else under qemu-i386
#   musl           x86_64 with the musl C library (musl-gcc), natively
#   aarch64        64-bit Arm (gcc-aarch64-linux-gnu) under qemu-aarch64
#   s390x          64-bit big-endian IBM Z (gcc-s390x-linux-gnu) under qemu-s390x
#   posix-generic  x86_64 Linux built as a POSIX system with no Linux extras
#                  (-DHPSHM_PORT=posix): ports/posix/ and the plain backend, the portable
#                  suites only
#
# It installs what the target needs from Debian's packages (scripts/deps.sh cross), configures
# build-<target> with cmake/toolchain-<target>.cmake and the in-tree harness (Criterion cannot
# run under qemu, and has no musl or 32-bit build in Debian), builds with warnings as errors,
# runs ctest, and prints the closing line of each test program, then one line:
#
#   <target>: N passed, N failed, N skipped
#
# counting the tests of the suites (a suite that ends without its closing line counts as one
# failure) plus the checks that are one ctest test each (install_client, the harness's
# self-tests).  The exit status is non-zero when ctest fails, when anything failed, or when no
# test passed at all.
#
# Huge pages are never required of a target but musl, which runs on this kernel as the native
# build does: HPSHM_TEST_REQUIRE is dropped for the others.  Under qemu-user they can work (the
# toolchain files run qemu with -p 2097152, so its mappings land on the 2MiB grid the kernel
# needs for hugetlb), but what qemu does with them is not the kernel's contract, and
# posix-generic has no hugetlb provider at all: tests there accept huge pages granted and
# verified, or a clean fallback, and skip with the reason what they cannot check.
#
# Environment: HPSHM_BUILD_DIR (default build-<target>), HPSHM_SKIP_DEPS=1, HPSHM_TEST_REQUIRE.
set -euo pipefail

targets="i686 musl aarch64 s390x posix-generic"
usage() {
	echo "usage: scripts/test-cross.sh TARGET [ctest arguments...]   (TARGET: ${targets// /, })" >&2
	exit 2
}
(($# >= 1)) || usage
target=$1
shift
case " $targets " in
*" $target "*) ;;
*)
	echo "test-cross: unknown target \"$target\"" >&2
	usage
	;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-$target}
t0=$(date +%s)

echo "== $target: dependencies"
bash scripts/deps.sh cross

cmake_args=(-DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=ON -DHPSHM_BUILD_TOOLS=ON -DHPSHM_BUILD_DOCS=OFF
	-DHPSHM_TEST_HARNESS=builtin)
if [[ $target == posix-generic ]]; then
	cmake_args+=(-DHPSHM_PORT=posix)
else
	cmake_args+=("-DCMAKE_TOOLCHAIN_FILE=$root/cmake/toolchain-$target.cmake")
fi

echo "== $target: configure ($build)"
cmake -S . -B "$build" "${cmake_args[@]}"

echo "== $target: build"
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

emulator=$(sed -n 's/^CMAKE_CROSSCOMPILING_EMULATOR:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n $emulator ]] || emulator=$(grep -ho 'HPSHM_TEST_EMULATOR=[^;"]*' "$build/tests/CTestTestfile.cmake" 2>/dev/null |
	head -n 1 | cut -d= -f2 || true)
if [[ $target != musl && -n ${HPSHM_TEST_REQUIRE:-} ]]; then
	echo "note: HPSHM_TEST_REQUIRE=$HPSHM_TEST_REQUIRE is not applied to $target: huge pages cannot be required there"
	unset HPSHM_TEST_REQUIRE
fi
[[ -n $emulator ]] && echo "note: $target programs run under ${emulator//;/ }"

echo "== $target: ctest"
out="$build/ctest-output.txt"
set +e
ctest --test-dir "$build" --output-on-failure --timeout 600 "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e

# Every ctest test's output is in LastTest.log: the suites end with the harness's closing
# line; the other checks are judged by ctest's verdict ("Test Passed." / "Test Failed.").
log="$build/Testing/Temporary/LastTest.log"
echo "== $target: results ($build, $(($(date +%s) - t0)) s)"
if [[ ! -r $log ]]; then
	echo "$target: 0 passed, 1 failed, 0 skipped"
	echo "test-cross: $log is missing: ctest ran nothing" >&2
	exit 1
fi
summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v target="$target" '
	function close_test() {
		if (name == "")
			return
		if (name !~ /^harness_/ && closing != "") {
			split(closing, c, " ")
			p += c[1]; f += c[3]; s += c[5]
			if (verdict == "failed" && c[3] == 0)
				f++   # it failed after its closing line (a leak check, a crash at exit)
		} else if (verdict == "skipped") {
			s++
		} else if (verdict == "passed") {
			p++
		} else {
			f++       # failed, or ended without a verdict or closing line
			if (name !~ /^harness_/)
				print "  " name ": no closing line"
		}
		name = ""
	}
	/^[0-9]+\/[0-9]+ Test: / { close_test(); sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; closing = ""; verdict = ""; next }
	name ~ /^harness_/ { }
	name !~ /^harness_/ && /^\[SKIP\]/ { print "  " name ": " $0 }
	name !~ /^harness_/ && /^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { closing = $0; print "  " name ": " $0 }
	/^Test Passed\./ { verdict = "passed" }
	/^Test Failed\./ || /^Test (Failed|Timeout|Not Run)/ { verdict = "failed" }
	/^Test Skipped\./ || /^Test Not Run/ { if (verdict == "") verdict = "skipped" }
	# A test skipped by its SKIP_REGULAR_EXPRESSION (the preload suite in a static build):
	# ctest logs the reason it counts as skipped, and no "Test Skipped." line.
	/^Skip regular expression found in output/ { verdict = "skipped" }
	END { close_test(); printf "%s: %d passed, %d failed, %d skipped\n", target, p, f, s }')
echo "$summary"
last=$(tail -n 1 <<<"$summary")
if ((rc != 0)); then
	echo "test-cross: ctest failed for $target (exit $rc)" >&2
	exit 1
fi
if [[ $last =~ :\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
	if ((BASH_REMATCH[2] > 0)); then
		echo "test-cross: $target: ${BASH_REMATCH[2]} failed" >&2
		exit 1
	fi
	if ((BASH_REMATCH[1] == 0)); then
		echo "test-cross: $target ran no test" >&2
		exit 1
	fi
fi
exit 0
