/* SPDX-License-Identifier: MIT */
/*
 * tests/win_child.h -- what tests/test_windows.c and its helper program tests/win_child.c agree
 * on: the arguments whose quoting must survive CreateProcessW(), and the exit codes.
 */
#ifndef HPSHM_TESTS_WIN_CHILD_H
#define HPSHM_TESTS_WIN_CHILD_H

/*
 * Arguments the C runtime's parser only gives back unchanged if hpshm__port_spawn() quoted them
 * right: blanks, empty, quotes, backslashes before a quote and at the end, a UNC-like path.
 */
static const char *const win_child_args[] = {
	"plain",
	"two words",
	"",
	"quote\"inside",
	"trailing\\",
	"back\\\\slashes\\\"and quote",
	"tab\there",
	"ends with space ",
	"\\\\server\\share\\dir with space\\",
};
/* An argument outside ASCII, in UTF-8: the child reads it from its UTF-16 command line, since
 * msvcrt hands argv over in the ANSI code page. */
#define WIN_CHILD_UTF8 "caf\xc3\xa9 \xe2\x82\xac"
#define WIN_CHILD_NARGS (sizeof(win_child_args) / sizeof(win_child_args[0]))

#define WIN_CHILD_OK       0  /* the check held */
#define WIN_CHILD_USAGE    2  /* unknown mode or bad arguments */
#define WIN_CHILD_MISMATCH 3  /* the check failed */

/* The word the attach mode writes back at offset 8 of the segment. */
#define WIN_CHILD_REPLY 0xC0FFEE42u
/* The word the parent writes at offset 0 before starting the attach mode. */
#define WIN_CHILD_MAGIC 0x5A5A1234u

#endif /* HPSHM_TESTS_WIN_CHILD_H */
