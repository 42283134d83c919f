/* SPDX-License-Identifier: MIT */
/*
 * tests/win_unicode_child.c -- the child tests/test_windows_unicode.c starts with
 * hpshm_child_spawn(), to see from inside what text it really got.  It reads what it checks
 * wide, as Windows holds it (GetEnvironmentVariableW, the UTF-16 command line), never
 * through msvcrt's ANSI copies.
 *
 *   win_unicode_child env        FOO is exactly UNI_VALUE_WIDE
 *   win_unicode_child attach     attach the segment of HPSHM_TOKEN, check the parent's word,
 *                                write the reply, detach
 *   win_unicode_child open NAME  open the named segment NAME (read from the UTF-16 command
 *                                line), check the word, write the reply, detach
 *
 * Exit status: UNI_OK, UNI_MISMATCH (with what differed on stderr) or UNI_USAGE.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpshm.h"
#include "ports/windows/windows.h"

#include <shellapi.h>
#include "win_unicode.h"

static int mismatch(const char *what)
{
	fprintf(stderr, "win_unicode_child: %s\n", what);
	return UNI_MISMATCH;
}

static int child_env(void)
{
	wchar_t value[64];
	DWORD n = GetEnvironmentVariableW(L"" UNI_VAR, value, 64);

	if (n == 0)
		return mismatch(UNI_VAR " is not set");
	return n < 64 && wcscmp(value, UNI_VALUE_WIDE) == 0 ? UNI_OK : mismatch(UNI_VAR " differs");
}

/* Check the parent's word in seg, write the reply, detach. */
static int child_answer(hpshm_segment *seg)
{
	volatile uint32_t *word = hpshm_segment_address(seg);

	if (word[0] != UNI_MAGIC) {
		hpshm_segment_destroy(seg);
		return mismatch("the segment does not hold the parent's word");
	}
	word[2] = UNI_REPLY;
	return hpshm_segment_destroy(seg) < 0 ? mismatch("detaching failed") : UNI_OK;
}

static int child_attach(void)
{
	hpshm_segment *seg;
	hpshm_error err;

	if (hpshm_segment_attach_env(&seg, NULL, &err) < 0) {
		fprintf(stderr, "win_unicode_child: attach: %s (%s)\n", err.message, err.hint);
		return UNI_MISMATCH;
	}
	return child_answer(seg);
}

static int child_open(void)
{
	char name[256];
	int n = 0;
	wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
	hpshm_segment *seg;
	hpshm_error err;

	if (wargv == NULL || n != 3)
		return mismatch("the UTF-16 command line does not have 3 arguments");
	hpshm__win_utf8(wargv[2], name, sizeof(name));
	LocalFree(wargv);
	if (hpshm_segment_open(&seg, name, NULL, &err) < 0) {
		fprintf(stderr, "win_unicode_child: open %s: %s (%s)\n", name, err.message, err.hint);
		return UNI_MISMATCH;
	}
	return child_answer(seg);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "env") == 0)
		return child_env();
	if (argc == 2 && strcmp(argv[1], "attach") == 0)
		return child_attach();
	if (argc == 3 && strcmp(argv[1], "open") == 0)
		return child_open();
	return UNI_USAGE;
}
