#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-build-options.sh -- a backend switched off at build time is really gone.
#
#   scripts/check-build-options.sh [build-dir]      (default: build-nobackends)
#
# Builds the tool with every optional backend off (-DHPSHM_WITH_<NAME>=OFF) and checks what a
# user of that build sees: `hpshm providers` lists plain alone, naming a provider that was
# left out is a configuration error, and leaving it out at run time (provider=auto,-name)
# is still accepted, so one config file serves every build.  .ci/run runs it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build-nobackends}
cd "$root"

# Every optional backend of a Linux build, from the one list of them (backends/list.h).
mapfile -t off < <(sed -n 's/^HPSHM_BACKEND([a-z0-9_]*, *\([A-Z0-9_]*\), *\(linux\|posix\), *option,.*/\1/p' backends/list.h)
((${#off[@]} > 0)) || { echo "check-build-options: no optional backend in backends/list.h" >&2; exit 1; }
args=()
for b in "${off[@]}"; do args+=("-DHPSHM_WITH_$b=OFF"); done
cmake -S . -B "$build" -DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=OFF -DHPSHM_BUILD_DOCS=OFF \
	-DHPSHM_BUILD_EXAMPLES=OFF "${args[@]}" >/dev/null
cmake --build "$build" --target hpshm_tool --parallel "$(nproc 2>/dev/null || echo 2)" >/dev/null
tool=$build/tools/hpshm

fail=0
check() { # check WHAT COMMAND... : the command must succeed
	local what=$1
	shift
	if "$@"; then
		echo "ok:   $what"
	else
		echo "FAIL: $what"
		fail=1
	fi
}

providers=$("$tool" providers | awk '{ print $1 }' | tr '\n' ' ')
check "providers of a build with every optional backend off: '$providers'" test "$providers" = "plain "
check "provider=sysv_hugetlb is refused when sysv_hugetlb was not built" \
	bash -c "! '$tool' check --size 1MiB --config provider=sysv_hugetlb >/dev/null 2>&1"
check "provider=auto,-sysv_hugetlb is accepted and ends on plain" \
	bash -c "'$tool' check --size 1MiB --config provider=auto,-sysv_hugetlb,huge_pages=try | grep -q 'provider=plain'"
exit "$fail"
