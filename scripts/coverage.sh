#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/coverage.sh -- build hpshm with gcc --coverage, run the whole ctest suite, and print
# what the tests ran: one table per directory (base, ports, backends, core, tools, bench,
# preload; lines and branches) and one per file.  Exits non-zero when a directory is below its
# floor.
#
#   ./scripts/coverage.sh [ctest arguments...]
#
# Environment:
#   HPSHM_BUILD_DIR      build directory (default: build-coverage)
#   HPSHM_COVERAGE_ONLY  =report: do not build or run, only read the data already in the tree
#   HPSHM_SKIP_DEPS=1    do not check or install Debian packages (scripts/deps.sh coverage)
#   and what scripts/test.sh reads (HPSHM_TEST_REQUIRE, HPSHM_TEST_HUGETLBFS): the numbers
#   mean most with a huge page pool and a hugetlbfs mount, as .ci/run gives, because without
#   them every test that needs huge pages skips and the hugetlb backends show as unrun.
#
# What shows as unrun although a test runs it: gcov writes its counters when a process
# returns from main() or calls exit(), so a child that ends with _exit(), execs, or is
# killed (SIGKILL, a crash a test provokes) loses what it ran since it forked.  The library
# is built with -DHPSHM_COVERAGE here, and the one child of the library that _exit()s after
# real work (the spawn helper's child in ports/posix/process.c, when exec fails) calls
# __gcov_dump() first; the benchmark's workers and the creators the crash and gc suites kill
# on purpose stay unrun in the table.  Criterion runs each test in a child of its own that
# returns normally, so the suites themselves lose nothing.
#
# The floors.  The project's acceptance floors are lines >= 85 % and branches >= 70 % in
# backends/ and ports/, lines >= 75 % in tools/, lines >= 90 % in core/.  core/ and tools/
# meet theirs and are held to them.  backends/ and ports/ are above their goals now, and
# their floors below are regression guards a point or two under what was measured with a
# pool (gcc 12, Linux 6.18, every suite, as root: some paths are driven by root-only tests),
# since paths that depend on timing (lock retries, races) make the figures move a little from
# run to run.  Raise them as tests are added, never lower them to let a change through.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-coverage}

# directory  lines%  branches%   (0: no floor)
floors=(
	"backends 93 79" # regression guard (measured 95.1 % / 80.9 %; the goal 85 70 is met)
	"ports    96 87" # regression guard (measured 97.6 % / 88.9 % after issue 23's NUMA and threads; the goal 85 70 is met)
	"core     90 0"  # the acceptance floor (measured 93.2 %)
	"tools    75 0"  # the acceptance floor (measured 80.9 %)
)

if [[ ${HPSHM_COVERAGE_ONLY:-} != report ]]; then
	echo "== coverage: dependencies"
	bash scripts/deps.sh coverage

	echo "== coverage: configure ($build)"
	# -O0 keeps one line one block, so the counts read as the source does; atomic counter
	# updates keep the threads of the suites (the registry walk, the touch's SIGBUS chain)
	# from tearing a counter, which gcov then prints as a negative count.  Warnings are not
	# errors here: gcc's -Wformat-truncation guesses differently at -O0 than in the -O2 build
	# scripts/test.sh holds to -Werror, which is where warnings are judged.  The examples are
	# left out: no test runs them on Linux.  HPSHM_COVERAGE lets the library flush gcov's
	# counters in children that end with _exit() (see above).
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DHPSHM_WERROR=OFF -DHPSHM_BUILD_TESTS=ON \
		-DHPSHM_BUILD_TOOLS=ON -DHPSHM_BUILD_DOCS=OFF -DHPSHM_BUILD_EXAMPLES=OFF \
		-DCMAKE_C_COMPILER=gcc \
		"-DCMAKE_C_FLAGS=--coverage -fprofile-update=atomic -O0 -DHPSHM_COVERAGE=1" \
		-DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage

	echo "== coverage: build"
	cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

	# Counters of an earlier run would add up with this one's.
	find "$build" -name '*.gcda' -delete

	echo "== coverage: ctest"
	set +e
	# -LE install: the install check links static clients against this build's libhpshm.a,
	# which would need libgcov; it checks packaging, not paths, and runs in every other build.
	ctest --test-dir "$build" --output-on-failure -LE install "$@" >"$build/ctest-output.txt" 2>&1
	rc=$?
	set -e
	tail -n 25 "$build/ctest-output.txt"
	if ((rc != 0)); then
		echo "coverage: ctest failed (exit $rc): the figures below are of a failed run" >&2
	fi
else
	rc=0
fi

echo "== coverage: report"
# One JSON summary per file; the directories are added up from it, so the two tables agree.
# --gcov-ignore-parse-errors: should a torn counter still reach gcov's output, the line is
# left out and named on stderr rather than the whole report lost.
# --exclude-directories: the object libraries CMakeLists.txt compiles on Linux only to keep
# other ports building and links into nothing (hpshm_freebsd_check: FreeBSD's provider and
# page facts; hpshm_posix_fallbacks: the POSIX fallbacks, ports/posix/'s tool facts and
# ports/facts_absent.c), so no process here can run them; their lines would count as unrun
# in every Linux table.  The FreeBSD and posix-generic
# targets are where they run.  Only $build is searched for counters: a developer's tree also
# holds other builds, and build-mingw's wine prefix links its z: drive to the root directory.
gcovr --root "$root" --object-directory "$build" --gcov-ignore-parse-errors \
	--exclude-directories '.*/CMakeFiles/hpshm_(freebsd_check|posix_fallbacks)\.dir(/.*)?' \
	--filter "$root/(base|ports|backends|core|tools|bench|preload)/" \
	--json-summary "$build/coverage-summary.json" --json-summary-pretty \
	--print-summary "$build" >/dev/null

floor_text=$(printf '%s\n' "${floors[@]}")
set +e
FLOORS="$floor_text" python3 - "$build/coverage-summary.json" <<'EOF'
import json, os, sys

data = json.load(open(sys.argv[1]))
dirs = ["base", "ports", "backends", "core", "tools", "bench", "preload"]
totals = {d: [0, 0, 0, 0] for d in dirs}
rows = []
for f in data["files"]:
    name = f["filename"]
    top = name.split("/", 1)[0]
    if top not in totals:
        continue
    t = totals[top]
    t[0] += f["line_covered"]; t[1] += f["line_total"]
    t[2] += f["branch_covered"]; t[3] += f["branch_total"]
    rows.append((name, f["line_covered"], f["line_total"], f["branch_covered"], f["branch_total"]))

def pct(a, b):
    return 100.0 * a / b if b else 100.0

def line(name, lc, lt, bc, bt):
    return "%-34s %6.1f%% %5d/%-5d %6.1f%% %5d/%-5d" % (name, pct(lc, lt), lc, lt, pct(bc, bt), bc, bt)

print("coverage per file")
print("%-34s %20s %20s" % ("file", "lines", "branches"))
for r in sorted(rows):
    print(line(*r))
print()
print("coverage per directory")
print("%-34s %20s %20s" % ("directory", "lines", "branches"))
all_ = [0, 0, 0, 0]
for d in dirs:
    t = totals[d]
    if t[1] == 0:
        continue
    print(line(d + "/", *t))
    all_ = [a + b for a, b in zip(all_, t)]
print(line("all", *all_))

missed = 0
print()
for item in os.environ["FLOORS"].split("\n"):
    if not item.strip():
        continue
    d, lf, bf = item.split()
    lf, bf = float(lf), float(bf)
    t = totals[d]
    lp, bp = pct(t[0], t[1]), pct(t[2], t[3])
    ok = lp >= lf and bp >= bf
    print("floor %-9s lines %5.1f%% >= %3.0f%%, branches %5.1f%% >= %3.0f%%: %s"
          % (d + "/", lp, lf, bp, bf, "ok" if ok else "BELOW THE FLOOR"))
    missed += not ok
sys.exit(1 if missed else 0)
EOF
floor_rc=$?
set -e
if ((floor_rc != 0)); then
	echo "coverage: a directory is below its floor" >&2
	exit 1
fi
exit "$rc"
