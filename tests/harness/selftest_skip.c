/* SPDX-License-Identifier: MIT */
/*
 * selftest_skip.c -- a test that skips: counted as skipped with its reason, the program exits
 * 0, and no .fini runs after the skip (Criterion 2.4.1 runs none, and the suites rely on it).
 */
#include "hpt_harness.h"

static void fini_after_skip(void)
{
	cr_log_info("fini ran after the skip");
}

Test(selftest, skips, .fini = fini_after_skip)
{
	cr_skip_test("nothing to test here: %s", "on purpose");
}
