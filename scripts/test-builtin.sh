#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/test-builtin.sh -- build and run the whole suite against the built-in harness
# (tests/harness/) instead of Criterion, in build-builtin, so that every run proves the same
# test sources work with the harness that the cross targets (mingw, musl, i686, qemu) use.
#
#   ./scripts/test-builtin.sh [ctest arguments...]      e.g.  ./scripts/test-builtin.sh -R config
#
# Prints the closing line of each test program and then one summary line,
# "builtin: N passed, N failed, N skipped", followed by ctest's own count.  The harness's
# self-tests (ctest label "harness") run too; they fail on purpose inside and are judged by
# ctest, so they are not in the summary.  Environment: as scripts/test.sh.
set -euo pipefail
export HPSHM_TEST_HARNESS=builtin
exec "$(dirname "${BASH_SOURCE[0]}")/test.sh" "$@"
