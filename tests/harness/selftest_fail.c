/* SPDX-License-Identifier: MIT */
/*
 * selftest_fail.c -- a test that fails on purpose: the runner must report the first failure
 * with its place, go on after a failed cr_expect, stop at a failed cr_assert, still run .fini,
 * print "0 passed, 1 failed, 0 skipped" and exit non-zero (check_selftest.cmake checks it).
 */
#include "hpt_harness.h"

static void fini_after_failure(void)
{
	cr_log_info("fini ran after the failure");
}

Test(selftest, fails, .fini = fini_after_failure)
{
	cr_expect_eq(1, 2, "the expectation fails first (%d)", 1);
	cr_log_info("went on after the failed expectation");
	cr_assert_str_eq("left", "right");
	cr_log_info("went on after the failed assertion");
}
