#!/usr/bin/env bash
# scripts/run.sh -- build hpshm and show what it can do on this machine.
#
#   ./scripts/run.sh [hpshm check options...]     e.g.  ./scripts/run.sh --config huge_pages=on
#
# 1. installs the build dependencies from Debian if any are missing (scripts/deps.sh build);
# 2. configures and builds a Release tree in ./build (library and tool, no tests);
# 3. runs `hpshm probe` (which providers can work here, and why not);
# 4. runs `hpshm check --size 64MiB` with the defaults (provider=auto, huge_pages=try): creates
#    a segment on the best backend, verifies what backs it, and prints the report.
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

# ---- BENCH (not yet) -------------------------------------------------------------------------
# The stress benchmark (`hpshm bench`, DESIGN.md sections 1 and 2) does not exist yet.  When it
# does, run a short bench on the defaults here, e.g. `"$tool" bench --quick`, and keep its
# exit status out of rc unless it fails outright.
# -----------------------------------------------------------------------------------------------

if ((rc != 0)); then
	echo "run: hpshm check failed (exit $rc)" >&2
fi
exit "$rc"
