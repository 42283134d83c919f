/* SPDX-License-Identifier: MIT */
/*
 * tests/win_beside.h -- the path of a helper program built beside the running test program
 * (every program is built into bin/), in UTF-8, for the Windows suites that start one.
 */
#ifndef HPSHM_TESTS_WIN_BESIDE_H
#define HPSHM_TESTS_WIN_BESIDE_H

#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "ports/windows/windows.h"

/* program's path in out[0..len): this program's directory and the name; returns out. */
static inline char *hpt_win_beside(const char *program, char *out, size_t len)
{
	wchar_t self[MAX_PATH * 2];
	DWORD n = GetModuleFileNameW(NULL, self, MAX_PATH * 2);
	char *slash;

	cr_assert(n > 0 && n < MAX_PATH * 2, "GetModuleFileNameW failed: %lu", (unsigned long)GetLastError());
	hpshm__win_utf8(self, out, len);
	slash = strrchr(out, '\\');
	cr_assert_not_null(slash, "no directory in %s", out);
	snprintf(slash + 1, len - (size_t)(slash + 1 - out), "%s", program);
	return out;
}

#endif /* HPSHM_TESTS_WIN_BESIDE_H */
