/* SPDX-License-Identifier: MIT */
/*
 * selftest_mismatch.c -- tests whose process ends other than they declared: an exit status
 * nobody expected, an expected signal that never came, and a failed cr_assert in a process
 * the test forked (the failure still reaches the runner).  All three count as failed.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <signal.h>
#include <stdlib.h>

#include "hpt_harness.h"

#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

Test(selftest, exits_with_an_unexpected_status)
{
	exit(7);
}

Test(selftest, expected_signal_never_comes, .signal = SIGSEGV)
{
}

Test(selftest, forked_child_fails)
{
#ifndef _WIN32
	pid_t pid = fork();
	int status = 0;

	if (pid == 0)
		cr_assert_fail("the forked child failed on purpose");
	waitpid(pid, &status, 0);
#else
	cr_assert_fail("the forked child failed on purpose"); /* no fork: fail the same way */
#endif
}
