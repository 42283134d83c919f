#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test.sh -- build hpshm with warnings as errors and run the whole test suite.
#
#   ./scripts/test.sh [ctest arguments...]      e.g.  ./scripts/test.sh -R config
#
# Environment:
#   HPSHM_TEST_HARNESS criterion (default) or builtin: the in-tree harness of tests/harness/
#                      instead of Criterion (scripts/test-builtin.sh sets it)
#   HPSHM_BUILD_DIR    build directory (default: build-test, or build-builtin for builtin)
#   HPSHM_CMAKE_ARGS   extra CMake arguments, split on spaces
#                      (.ci/run uses "-DHPSHM_SANITIZE=ON -DCMAKE_C_COMPILER=clang")
#   HPSHM_TEST_REQUIRE what must not be skipped (set by .ci/run after it reserves a pool);
#                      without it, tests that need huge pages skip and say why.  A page
#                      size may carry the pages the run has of it, "1GiB*2": tests that
#                      need more of them skip (tests/fixture.h)
#   HPSHM_SKIP_DEPS=1  do not check or install Debian packages
#
# After ctest, the closing line of every test program (Criterion's "Synthesis" line, or the
# built-in harness's "N passed, N failed, N skipped") is printed, followed by one summary line,
# so the result is visible even though ctest shows output only for failures, and then the
# target's line, as scripts/test-cross.sh prints one for each cross target:
#   native: N passed, N failed, N skipped        (build-test; build-asan says "asan")
# counting the tests of the programs (a crash counts as a failure, a [SKIP] line as a skip).
# The exit status is non-zero when ctest fails or when no test passed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
harness=${HPSHM_TEST_HARNESS:-criterion}
case "$harness" in
criterion) build=${HPSHM_BUILD_DIR:-build-test} ;;
builtin) build=${HPSHM_BUILD_DIR:-build-builtin} ;;
*)
	echo "test: HPSHM_TEST_HARNESS=$harness: use criterion or builtin" >&2
	exit 2
	;;
esac
read -r -a extra_cmake <<<"${HPSHM_CMAKE_ARGS:-}"
extra_cmake+=("-DHPSHM_TEST_HARNESS=$harness")
# The bench's APR peer is off in a default build (packaging: bin/hpshm would link libapr-1);
# the test builds have APR (scripts/deps.sh test) and build it, so test_bench runs it.
extra_cmake=(-DHPSHM_BENCH_APR=ON "${extra_cmake[@]}")

echo "== test: dependencies"
bash scripts/deps.sh test

echo "== test: configure ($build)"
cmake -S . -B "$build" -DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=ON -DHPSHM_BUILD_TOOLS=ON "${extra_cmake[@]}"

echo "== test: build"
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

pool=0
for d in /sys/kernel/mm/hugepages/hugepages-*; do
	[[ -r $d/free_hugepages ]] && pool=$((pool + $(cat "$d/free_hugepages")))
done
if ((pool == 0)) && [[ -z ${HPSHM_TEST_REQUIRE:-} ]]; then
	echo "note: no free huge pages on this machine: tests that need them will skip and say why"
	echo "      (doc/operators.md explains how to reserve a pool; CI does it in .ci/run)"
fi
[[ -n ${HPSHM_TEST_REQUIRE:-} ]] && echo "note: HPSHM_TEST_REQUIRE=$HPSHM_TEST_REQUIRE (these may not skip)"

echo "== test: ctest"
out="$build/ctest-output.txt"
set +e
ctest --test-dir "$build" --output-on-failure "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e

# ctest keeps every test's full output in LastTest.log; show each program's closing line.
log="$build/Testing/Temporary/LastTest.log"
echo "== test: results ($build)"
case $(basename "$build") in
build-test) target=native ;;
build-asan) target=asan ;;
*) target=$(basename "$build") target=${target#build-} ;;
esac
if [[ -r $log ]]; then
	sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v harness="$harness" '
		/^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; next }
		# The harness self-tests (harness_*) fail and skip on purpose; ctest judges them.
		name ~ /^harness_/         { next }
		/\[SKIP\]/                { print "  " name ": " $0; skips++; next }
		/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {
			print "  " name ": " $0
			bp += $1; bf += $3; bs += $5; bn++
			next
		}
		/Synthesis:/ {
			print "  " name ": " $0
			for (i = 1; i <= NF; i++) {
				if ($i == "Tested:")   t += $(i + 1)
				if ($i == "Passing:")  p += $(i + 1)
				if ($i == "Failing:")  f += $(i + 1)
				if ($i == "Crashing:") c += $(i + 1)
			}
			n++
		}
		END {
			if (harness == "builtin") {
				if (bn) printf "builtin: %d passed, %d failed, %d skipped\n", bp, bf, bs
				else print "builtin: no closing lines in the test output"
				tp = bp; tf = bf; ts = bs
			} else if (n) {
				printf "criterion: %d programs, %d tests run, %d passed, %d failed, %d crashed\n", n, t, p, f, c
				tp = p; tf = f + c; ts = skips
			} else {
				print "criterion: no Synthesis lines in the test output"
			}
			printf "%s: %d passed, %d failed, %d skipped\n", target, tp, tf, ts
		}' target="$target" | tee "$build/target-summary.txt"
fi
# "NN% tests passed, F tests failed out of T": ctest counts skipped tests as not failed.
summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1 || true)
if [[ $summary =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
	failed=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
	skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .*\((Skipped|Not Run|Disabled)\)$' "$out" || true)
	echo "ctest ($build): $((total - failed - skipped)) passed, $failed failed, $skipped skipped, $total total"
else
	echo "ctest ($build): no summary line (exit code $rc)"
fi
if [[ -r $build/target-summary.txt ]] && grep -qE '^[^ ]+: 0 passed,' "$build/target-summary.txt"; then
	echo "test: no test passed in $build" >&2
	exit 1
fi
exit "$rc"
