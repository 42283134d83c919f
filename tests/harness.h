/* SPDX-License-Identifier: MIT */
/*
 * tests/harness.h -- the one include that gives a test file its harness.
 *
 * The suites are written against Criterion's API.  Where Debian's Criterion runs (Linux,
 * natively and under the sanitizers) the build defines HPSHM_TEST_CRITERION and this header
 * brings in Criterion itself.  Everywhere else (Windows under wine, musl, i686, aarch64 and
 * s390x under qemu-user, where Criterion cannot run) it brings in the in-tree harness in
 * tests/harness/, which implements the same subset.  CMake chooses with HPSHM_TEST_HARNESS;
 * test files include only this header, so they build unchanged against either.
 */
#ifndef HPSHM_TESTS_HARNESS_H
#define HPSHM_TESTS_HARNESS_H

#ifdef HPSHM_TEST_CRITERION
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#else
#include "harness/hpt_harness.h"
#endif

#endif /* HPSHM_TESTS_HARNESS_H */
