#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/run.sh -- build hpshm and show what it can do on this machine.
#
#   ./scripts/run.sh [hpshm check options...]     e.g.  ./scripts/run.sh --config huge_pages=on
#
# 1. installs the build dependencies from Debian if any are missing (scripts/deps.sh build);
# 2. configures and builds a Release tree in ./build (library and tool, no tests);
# 3. runs `hpshm probe` (which providers can work here, and why not);
# 4. runs `hpshm check --size 64MiB` with the defaults (provider=auto, huge_pages=try): creates
#    a segment on the best backend, verifies what backs it, and prints the report;
# 5. runs `hpshm bench --quick`: each backend against plain pages, the raw system calls and
#    THP, in under a minute (doc/bench.md says how to read it).
# Extra arguments go to `hpshm check`.  The exit status is non-zero if the check fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=build

echo "== run: dependencies"
bash scripts/deps.sh build

echo "== run: configure and build ($build, Release)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHPSHM_BUILD_TESTS=OFF -DHPSHM_BUILD_TOOLS=ON
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

tool=./$build/tools/hpshm

echo "== run: hpshm probe"
"$tool" probe

echo "== run: hpshm check --size 64MiB $*"
rc=0
"$tool" check --size 64MiB "$@" || rc=$?

# ---- BENCH ------------------------------------------------------------------------------------
# A short stress benchmark on the defaults (doc/bench.md): 256 MiB, 5 rounds, under a minute on
# 2 vCPUs.  It changes no system setting; with an empty huge page pool it says which providers
# it could not use and why, and compares the rest (plain pages, the raw system calls, THP).
echo "== run: hpshm bench --quick"
brc=0
"$tool" bench --quick || brc=$?
if ((brc != 0)); then
	echo "run: hpshm bench failed (exit $brc)" >&2
	((rc != 0)) || rc=$brc
fi
# -----------------------------------------------------------------------------------------------

if ((rc != 0)); then
	echo "run: hpshm check failed (exit $rc)" >&2
fi
exit "$rc"
