#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-package.sh -- build hpshm as a distribution packages it, and check what it installs.
#
#   ./scripts/check-package.sh
#
# A packager configures a Release build with warnings as errors and nothing else asked for:
#   cmake -DCMAKE_BUILD_TYPE=Release -DHPSHM_WERROR=ON
# That must build (gcc at -O3 sees further than the -O2 of the test builds: -Wformat-truncation
# once failed it), and what `cmake --install` puts in a prefix must be what a package ships
# (tests/install_client.sh, run here on this build): libhpshm.so with the ABI's soname
# (libhpshm.so.0.MINOR in 0.x, doc/abi.md), the interposer in LIBDIR/hpshm/, bin/hpshm
# without libapr-1 (the bench's APR peer is off unless -DHPSHM_BENCH_APR=ON), static clients
# that link without glibc's NSS warning, and the pkg-config and CMake files from a moved prefix.
#
# Environment: HPSHM_BUILD_DIR (default build-release), HPSHM_SKIP_DEPS=1 (no package check).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-release}

bash scripts/deps.sh build

echo "== check-package: configure and build ($build: Release, -DHPSHM_WERROR=ON)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=OFF \
	-DHPSHM_BUILD_DOCS=OFF
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)"

# The soname the rule in CMakeLists.txt gives, from the version in include/hpshm.h: written
# out here a second time, so a change of the rule is seen.
version() { sed -n "s/^#define HPSHM_VERSION_$1 \\([0-9]*\\)$/\\1/p" include/hpshm.h; }
major=$(version MAJOR) minor=$(version MINOR)
if ((major == 0)); then
	soname=libhpshm.so.0.$minor
else
	soname=libhpshm.so.$major
fi
cache() { sed -n "s/^$1:BOOL=//p" "$build/CMakeCache.txt"; }
flag() { [[ $(cache "$1") == ON ]] && echo 1 || echo 0; }

echo "== check-package: what it installs (tests/install_client.sh)"
HPSHM_CC=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") \
	HPSHM_SONAME=$soname HPSHM_EXPECT_TOOL="$(flag HPSHM_BUILD_TOOLS)" \
	HPSHM_EXPECT_PRELOAD="$(flag HPSHM_BUILD_PRELOAD)" HPSHM_EXPECT_APR="$(flag HPSHM_BENCH_APR)" \
	bash tests/install_client.sh "$build" Release
echo "check-package: a Release build with -DHPSHM_WERROR=ON builds and installs as a package ships ($soname)"
