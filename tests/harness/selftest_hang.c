/* SPDX-License-Identifier: MIT */
/*
 * selftest_hang.c -- a test that never ends: the runner must kill it after its .timeout of
 * 1 s, count it failed ("timed out") and end, even though a process the test forked still
 * holds the runner's pipe open.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "hpt_harness.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

static void nap(void)
{
#ifdef _WIN32
	Sleep(1000);
#else
	sleep(1);
#endif
}

Test(selftest, hangs, .timeout = 1)
{
#ifndef _WIN32
	if (fork() == 0)
		for (;;)
			nap();
#endif
	for (;;)
		nap();
}
