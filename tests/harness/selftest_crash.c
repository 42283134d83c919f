/* SPDX-License-Identifier: MIT */
/*
 * selftest_crash.c -- a test that crashes: the runner must count it failed and name the
 * signal (SIGSEGV), with no .signal option to excuse it.
 */
#include <stdint.h>

#include "hpt_harness.h"

Test(selftest, crashes)
{
	volatile uintptr_t address = 0; /* volatile: the compiler cannot see that it is NULL */

	*(volatile int *)address = 1;
	cr_assert_fail("wrote through a NULL pointer and lived");
}
