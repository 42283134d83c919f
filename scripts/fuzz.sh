#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/fuzz.sh -- build the libFuzzer harnesses (tests/fuzz/) and run each for a bounded time.
#
#   ./scripts/fuzz.sh [target...]        targets: size config config_file token (default: all)
#
# Environment:
#   HPSHM_FUZZ_SECONDS  seconds per target (default 60)
#   HPSHM_BUILD_DIR     build directory (default: build-fuzz)
#   HPSHM_SKIP_DEPS=1   do not check or install Debian packages (clang, libclang-rt-14-dev)
#
# Each target starts from its checked-in seed corpus, tests/fuzz/corpus/<target>/, which is
# only read: what libFuzzer finds on the way goes to a scratch directory that is removed
# afterwards.  A crash, a leak, a timeout or a broken contract (the harnesses abort) makes
# this script print the reproducer (libFuzzer's report and an xxd of the input) and exit 1;
# the input is kept under $build/fuzz-artifacts/ to replay with
#   $build/tests/fuzz/fuzz_<target> <file>
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-fuzz}
seconds=${HPSHM_FUZZ_SECONDS:-60}
all=(size config config_file token)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds == 0)); then
	echo "fuzz: HPSHM_FUZZ_SECONDS must be a positive number of seconds, not \"$seconds\"" >&2
	exit 2
fi
for t in "${targets[@]}"; do
	[[ " ${all[*]} " == *" $t "* ]] || {
		echo "fuzz: unknown target \"$t\" (targets: ${all[*]})" >&2
		exit 2
	}
done

echo "== fuzz: dependencies"
bash scripts/deps.sh test

echo "== fuzz: configure ($build)"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPSHM_WERROR=ON \
	-DHPSHM_BUILD_FUZZ=ON -DHPSHM_BUILD_TESTS=OFF -DHPSHM_BUILD_TOOLS=OFF -DHPSHM_BUILD_EXAMPLES=OFF \
	-DHPSHM_BUILD_DOCS=OFF

echo "== fuzz: build"
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]/#/fuzz_}"

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hpshm-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

failed=()
for t in "${targets[@]}"; do
	seeds="tests/fuzz/corpus/$t"
	[[ -d $seeds ]] || {
		echo "fuzz: $seeds is missing: every target needs a seed corpus" >&2
		exit 1
	}
	mkdir -p "$scratch/$t" "$artifacts/$t"
	rm -f "$artifacts/$t"/*
	echo "== fuzz: $t, ${seconds}s, seeds from $seeds"
	set +e
	# New inputs go to the first directory (scratch); the seed corpus is only read.
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$artifacts/$t/" "$scratch/$t" "$seeds" 2>&1 | tee "$scratch/$t.log" |
		grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
	rc=${PIPESTATUS[0]}
	set -e
	crashes=("$artifacts/$t"/*)
	[[ -e ${crashes[0]} ]] || crashes=()
	if ((rc != 0)) || ((${#crashes[@]})); then
		failed+=("$t")
		echo "fuzz: $t FAILED (exit $rc)"
		for c in "${crashes[@]}"; do
			echo "---- reproducer $c ($(stat -c %s "$c") bytes); replay: $build/tests/fuzz/fuzz_$t $c"
			if command -v xxd >/dev/null 2>&1; then xxd "$c" | head -n 64; else od -A x -t x1z "$c" | head -n 64; fi
		done
	else
		echo "fuzz: $t passed: $(grep -E '^stat::number_of_executed_units' "$scratch/$t.log" | awk '{print $2}') inputs"
	fi
done

if ((${#failed[@]})); then
	echo "fuzz: FAILED: ${failed[*]}"
	exit 1
fi
echo "fuzz: all passed (${targets[*]}, ${seconds}s each)"
