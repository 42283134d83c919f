/* SPDX-License-Identifier: MIT */
/*
 * tests/test_windows_spawn.c -- what a Windows server that manages its own workers gets, on
 * Windows or under wine: hpshm_child_prepare() for a child it created suspended itself,
 * hpshm_child_spawn_ex()'s extra handles, and workers that end with their server.
 *
 * Each test judges what Windows reports (VirtualQueryEx in the child, GetHandleInformation,
 * the worker's own process handle) and what the child saw from inside (tests/win_spawn_child.c),
 * never the library's word alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/internal.h"
#include "hpshm.h"
#include "port.h"
#include "ports/windows/windows.h"
#include "win_beside.h"
#include "win_child.h"

#define MiB ((size_t)1 << 20)
#define SPAWN_GONE_MS 20000 /* how long a tied worker may take to end after its server */

TestSuite(winspawn);

/* win_spawn_child.exe beside this program, as UTF-8 and as UTF-16. */
static char *helper_path(wchar_t *wide, size_t wlen)
{
	static char path[MAX_PATH * 4];

	hpt_win_beside("win_spawn_child.exe", path, sizeof(path));
	if (wide != NULL)
		cr_assert_geq(hpshm__win_wide(path, wide, wlen), 0);
	return path;
}

static hpshm_segment *segment(size_t size)
{
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "huge_pages=off,reattach=exec", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, size, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	return seg;
}

/* A kill-on-close job of this test's process, made once and closed only by its end. */
static HANDLE test_job(void)
{
	static HANDLE job;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;

	if (job == NULL) {
		job = CreateJobObjectW(NULL, NULL);
		cr_assert_not_null(job, "CreateJobObjectW: %lu", (unsigned long)GetLastError());
		memset(&li, 0, sizeof(li));
		li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
		cr_assert(SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof(li)));
	}
	return job;
}

/*
 * Create "win_spawn_child stdin-attach ADDR" suspended, as a server would, its standard input
 * the pipe's read end and nothing else of ours inherited (a handle list): a child left
 * suspended by a failed assertion then holds no pipe the harness reads to its end.
 */
static PROCESS_INFORMATION create_suspended(const void *addr, HANDLE in)
{
	wchar_t path[MAX_PATH * 2], cmd[MAX_PATH * 3];
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	SIZE_T len = 0;
	BOOL ok;

	helper_path(path, MAX_PATH * 2);
	swprintf(cmd, MAX_PATH * 3, L"\"%ls\" stdin-attach %llx", path, (unsigned long long)(uintptr_t)addr);
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = in;
	(void)InitializeProcThreadAttributeList(NULL, 1, 0, &len);
	si.lpAttributeList = malloc(len);
	cr_assert_not_null(si.lpAttributeList);
	cr_assert(InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &len));
	cr_assert(UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, &in, sizeof(in),
					    NULL, NULL));
	ok = CreateProcessW(path, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED | EXTENDED_STARTUPINFO_PRESENT, NULL, NULL,
			    &si.StartupInfo, &pi);
	DeleteProcThreadAttributeList(si.lpAttributeList);
	free(si.lpAttributeList);
	cr_assert(ok, "CreateProcessW: %lu", (unsigned long)GetLastError());
	/* Wine passes its Unix standard descriptors on whatever the list says: the child is tied to
	 * this test's process, so one a failed assertion leaves suspended cannot hold them. */
	cr_assert(AssignProcessToJobObject(test_job(), pi.hProcess), "AssignProcessToJobObject: %lu",
		  (unsigned long)GetLastError());
	return pi;
}

/* The exit status of a process, waited for. */
static DWORD exit_status(HANDLE h)
{
	DWORD code = 0;

	cr_assert_eq(WaitForSingleObject(h, 60000), WAIT_OBJECT_0, "the child did not end");
	cr_assert(GetExitCodeProcess(h, &code));
	return code;
}

Test(winspawn, a_child_the_server_created_suspended_attaches_once_prepared)
{
	hpshm_segment *seg = segment(4 * MiB);
	void *base = hpshm_segment_address(seg);
	volatile uint32_t *word = base;
	char token[HPSHM_TOKEN_MAX + 1];
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	MEMORY_BASIC_INFORMATION mbi;
	PROCESS_INFORMATION pi;
	HANDLE rd, wr;
	DWORD flags = 0, done = 0;
	hpshm_error err;
	int n;

	word[0] = WIN_CHILD_MAGIC;
	word[2] = 0;
	cr_assert(CreatePipe(&rd, &wr, &sa, 0), "CreatePipe: %lu", (unsigned long)GetLastError());
	cr_assert(SetHandleInformation(wr, HANDLE_FLAG_INHERIT, 0));
	pi = create_suspended(base, rd);
	CloseHandle(rd);
	n = hpshm_child_prepare(seg, pi.hProcess, token, HPSHM_TOKEN_MAX, &err);
	cr_assert_gt(n, 0, "hpshm_child_prepare: %s (%s)", err.message, err.hint);
	/* The range is held in the child before it runs, and nothing of ours became inheritable. */
	cr_assert_eq(VirtualQueryEx(pi.hProcess, base, &mbi, sizeof(mbi)), sizeof(mbi));
	cr_assert_eq(mbi.State, MEM_RESERVE, "the segment's range is not reserved in the child");
	cr_assert_eq(mbi.AllocationBase, base);
	cr_assert(GetHandleInformation((HANDLE)seg->map.handle, &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0, "the segment's handle became inheritable in the server");
	token[n] = '\n';
	cr_assert(WriteFile(wr, token, (DWORD)n + 1, &done, NULL) && done == (DWORD)n + 1);
	CloseHandle(wr);
	cr_assert_neq(ResumeThread(pi.hThread), (DWORD)-1);
	cr_assert_eq(exit_status(pi.hProcess), WIN_CHILD_OK, "the prepared child did not attach");
	cr_assert_eq(word[2], WIN_CHILD_REPLY, "the child's write is not in the segment");
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(winspawn, a_prepared_child_that_is_ended_takes_nothing_of_ours)
{
	hpshm_segment *seg = segment(1 * MiB);
	char token[HPSHM_TOKEN_MAX];
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	PROCESS_INFORMATION pi;
	HANDLE rd, wr;
	hpshm_error err;

	cr_assert(CreatePipe(&rd, &wr, &sa, 0));
	pi = create_suspended(hpshm_segment_address(seg), rd);
	CloseHandle(rd);
	CloseHandle(wr);
	/* A range the child already holds is refused, naming it, and the handle is not passed. */
	cr_assert_not_null(VirtualAllocEx(pi.hProcess, hpshm_segment_address(seg), 64 * 1024, MEM_RESERVE, PAGE_NOACCESS));
	cr_assert_eq(hpshm_child_prepare(seg, pi.hProcess, token, sizeof(token), &err), HPSHM_EEXIST);
	cr_assert_eq(strcmp(err.call, "VirtualAllocEx"), 0, "the failed call is %s", err.call);
	cr_assert_eq(hpshm_child_prepare(NULL, pi.hProcess, token, sizeof(token), &err), HPSHM_EINVAL);
	TerminateProcess(pi.hProcess, 1);
	WaitForSingleObject(pi.hProcess, INFINITE);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(winspawn, an_extra_handle_reaches_the_child_only)
{
	hpshm_segment *seg = segment(1 * MiB);
	char *path = helper_path(NULL, 0), handle[32], got[64], mode[] = "pipe", text[] = "through the pipe";
	char *argv[] = { path, mode, handle, text, NULL };
	hpshm_spawn_options opt;
	intptr_t extra;
	hpshm_child child;
	hpshm_error err;
	HANDLE rd, wr;
	DWORD flags = 0, n = 0, total = 0;
	int status = -1;

	cr_assert(CreatePipe(&rd, &wr, NULL, 0), "CreatePipe: %lu", (unsigned long)GetLastError());
	snprintf(handle, sizeof(handle), "%lld", (long long)(intptr_t)wr);
	memset(&opt, 0, sizeof(opt));
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
	extra = (intptr_t)wr;
	opt.handles = &extra;
	opt.nhandles = 1;
	cr_assert_eq(hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &child, &err), 0, "%s (%s)", err.message,
		     err.hint);
	/* Our end is as it was: not inheritable, so no other program gets it. */
	cr_assert(GetHandleInformation(wr, &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0, "the caller's handle was left inheritable");
	CloseHandle(wr);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, WIN_CHILD_OK, "the child could not write to the handle (status %d)", status);
	while (total < sizeof(got) - 1 && ReadFile(rd, got + total, (DWORD)(sizeof(got) - 1 - total), &n, NULL) && n > 0)
		total += n;
	got[total] = '\0';
	cr_assert_str_eq(got, "through the pipe");
	CloseHandle(rd);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(winspawn, spawn_options_of_another_version_are_refused)
{
	hpshm_segment *seg = segment(1 * MiB);
	char *path = helper_path(NULL, 0), mode[] = "sleep";
	char *argv[] = { path, mode, NULL };
	hpshm_spawn_options opt;
	hpshm_child child;
	hpshm_error err;

	memset(&opt, 0, sizeof(opt));
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION + 1;
	cr_assert_eq(hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &child, &err), HPSHM_EINVAL);
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
	opt.reserved[5] = 1;
	cr_assert_eq(hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &child, &err), HPSHM_EINVAL);
	opt.reserved[5] = 0;
	opt.flags = 0x80;
	cr_assert_eq(hpshm_child_spawn_ex(seg, path, argv, NULL, &opt, &child, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/*
 * Start "win_spawn_child server" (a server with its own segment), which starts a "sleep"
 * worker, tied to it or not, and tells us its pid; end the server the hard way
 * (TerminateProcess: no clean-up of its own runs) and report whether the worker ended too.
 * The worker's handle is opened while the server still runs, so its pid cannot be reused.
 */
static int worker_ends_with_server(const char *kill, DWORD wait_ms)
{
	char *path = helper_path(NULL, 0), handle[32], line[32] = "", mode[] = "server", tied[2] = { kill[0], '\0' };
	char *argv[] = { path, mode, handle, tied, NULL };
	struct hpshm__process server;
	intptr_t inherit[1];
	hpshm_error err;
	HANDLE rd, wr, worker;
	DWORD n = 0, total = 0, waited;
	int status;

	cr_assert(CreatePipe(&rd, &wr, NULL, 0));
	snprintf(handle, sizeof(handle), "%lld", (long long)(intptr_t)wr);
	inherit[0] = (intptr_t)wr;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(hpshm__port_spawn(path, argv, NULL, inherit, 1, NULL, 0, &server, &err), 0, "%s", err.message);
	CloseHandle(wr);
	while (total < sizeof(line) - 1 && strchr(line, '\n') == NULL &&
	       ReadFile(rd, line + total, (DWORD)(sizeof(line) - 1 - total), &n, NULL) && n > 0) {
		total += n;
		line[total] = '\0';
	}
	CloseHandle(rd);
	cr_assert_not_null(strchr(line, '\n'), "the server did not say its worker's pid (\"%s\")", line);
	worker = OpenProcess(SYNCHRONIZE | PROCESS_TERMINATE, FALSE, (DWORD)strtoul(line, NULL, 10));
	cr_assert_not_null(worker, "cannot open the worker %s: %lu", line, (unsigned long)GetLastError());
	cr_assert_eq(WaitForSingleObject(worker, 0), WAIT_TIMEOUT, "the worker ended before its server");
	cr_assert(TerminateProcess((HANDLE)server.handle, 9));
	cr_assert_eq(hpshm__port_wait(&server, &status, &err), 0, "%s", err.message);
	waited = WaitForSingleObject(worker, wait_ms);
	if (waited != WAIT_OBJECT_0)
		TerminateProcess(worker, 1); /* ours to clean up: the test started it */
	CloseHandle(worker);
	return waited == WAIT_OBJECT_0;
}

Test(winspawn, a_worker_tied_to_its_server_ends_when_the_server_is_killed)
{
	cr_assert(worker_ends_with_server("1", SPAWN_GONE_MS), "the worker outlived its server by %d ms", SPAWN_GONE_MS);
}

Test(winspawn, a_worker_not_tied_to_its_server_outlives_it)
{
	/* The control of the test above: without the flag, the same worker lives on. */
	cr_assert(!worker_ends_with_server("0", 2000), "the worker ended with its server without being tied to it");
}
