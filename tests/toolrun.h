/* SPDX-License-Identifier: MIT */
/*
 * tests/toolrun.h -- running the `hpshm` tool as a program from a test, and checking that its
 * --json output is exactly one well-formed JSON value.
 */
#ifndef HPSHM_TESTS_TOOLRUN_H
#define HPSHM_TESTS_TOOLRUN_H

/* One run of the tool. */
struct hpt_run {
	int  status;       /* exit code, or 128 + signal */
	char out[262144];  /* standard output, NUL-terminated (cut if longer) */
	char err[16384];   /* standard error, NUL-terminated (cut if longer) */
};

/* Run tool_path with the NULL-terminated arguments (argv[0] is added) and env_extra added to
 * PATH; wait for it.  The result lives until the next call. */
struct hpt_run *hpt_tool_argv(const char *tool_path, char *const argv[], char *const env_extra[]);
/* The same with up to 24 arguments as a NULL-terminated list. */
struct hpt_run *hpt_tool(const char *tool_path, const char *a0, ...);
/* Is text exactly one JSON value (with white space around it)? */
int hpt_json_ok(const char *text);
/* The first word in text that names a Linux-only mechanism (CAP_IPC_LOCK, hugetlbfs, SIGBUS,
 * ...: the list is in toolrun.c), or NULL; *where (if where) is set to where it is. */
const char *hpt_linux_term(const char *text, const char **where);

#endif
