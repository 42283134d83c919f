#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test-tsan.sh -- the suites that start threads, under ThreadSanitizer: no data race.
#
#   ./scripts/test-tsan.sh [ctest arguments...]
#
# include/hpshm.h ("Threads") says which calls may run at once; this holds the library to it.
# scripts/test.sh builds build-tsan with clang and -DHPSHM_TSAN=ON (every object of the library
# and of the tests instrumented), then runs the suites that start threads of their own:
#   test_threads         8 threads creating, spawning children that attach, destroying,
#                        listing and probing at once (written for this);
#   test_registry        a walk of the providers while another thread registers;
#   test_paths_ports     a guarded touch while another thread waits for its turn;
#   test_paths_populate  guarded touches of two threads, and SIGBUS sent to another thread;
#   test_populate        populates split over 2 and 4 threads, one of them failing;
#   test_numa            populate threads placed on their nodes' CPUs;
#   test_populate_paths  split populates whose parts fail, retry and stop each other.
# A race, or a lock used wrongly, makes ThreadSanitizer print its report and end the test's
# process (halt_on_error), which fails the suite.  The interposer is left out of this tree: an
# instrumented libhpshm_preload.so cannot load into the uninstrumented programs `hpshm exec`
# runs (test_preload runs in the other builds).
#
# Environment: as scripts/test.sh (HPSHM_TEST_REQUIRE, HPSHM_TEST_HUGETLBFS, HPSHM_SKIP_DEPS);
# HPSHM_BUILD_DIR defaults to build-tsan.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export HPSHM_BUILD_DIR=${HPSHM_BUILD_DIR:-build-tsan}
export HPSHM_CMAKE_ARGS="-DHPSHM_TSAN=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DHPSHM_BUILD_PRELOAD=OFF -DHPSHM_BUILD_EXAMPLES=OFF -DHPSHM_BUILD_DOCS=OFF ${HPSHM_CMAKE_ARGS:-}"
# halt_on_error: the first report ends the process, so the suite cannot pass over it;
# second_deadlock_stack: a lock-order report shows both stacks.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4 ${TSAN_OPTIONS:-}"
if (($# == 0)); then
	set -- -R '^(test_threads|test_registry|test_paths_ports|test_paths_populate|test_populate|test_numa|test_populate_paths)$'
fi
# Criterion cannot run under ThreadSanitizer (BoxFort cannot make its inheritable arena in
# TSan's address layout): the in-tree harness runs the same sources, a process per test.
export HPSHM_TEST_HARNESS=builtin
exec bash "$root/scripts/test.sh" "$@"
