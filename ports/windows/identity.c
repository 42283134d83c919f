/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/identity.c -- which process this is, when a process started, and whether it
 * still runs.
 *
 * Windows recycles process ids as Linux recycles pids, so a creator is the pair (pid,
 * creation time): GetProcessTimes()'s creation time, in 100 ns units since 1601.  A process
 * is alive when it can be opened, has not exited (GetExitCodeProcess() answers STILL_ACTIVE,
 * 259, which a program can also exit with, so the handle is waited on with a timeout of 0 as
 * well) and has the creation time we were given.  A process we may not open (another user's,
 * a protected one: ERROR_ACCESS_DENIED) exists, but whether it is ours to keep cannot be
 * told: -1.
 */
#include "windows/windows.h"

#include "windows/sys.h"

static uint64_t process_filetime(const FILETIME *ft)
{
	return ((uint64_t)ft->dwHighDateTime << 32) | ft->dwLowDateTime;
}

/* The creation time of an open process, 0 if unknown. */
static uint64_t process_created(HANDLE h)
{
	FILETIME created, exited, kernel, user;

	if (!hpshm__win_sys.get_process_times(h, &created, &exited, &kernel, &user))
		return 0;
	return process_filetime(&created);
}

long long hpshm__port_self(uint64_t *start)
{
	/* A question to the kernel about this process, no file to read: nothing to keep. */
	*start = process_created(GetCurrentProcess());
	return (long long)GetCurrentProcessId();
}

uint64_t hpshm__port_process_start(long long pid)
{
	HANDLE h;
	uint64_t t;

	if (pid <= 0 || pid > (long long)UINT32_MAX)
		return 0;
	if ((DWORD)pid == GetCurrentProcessId())
		return process_created(GetCurrentProcess());
	h = hpshm__win_sys.open_process(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
	if (h == NULL)
		return 0;
	t = process_created(h);
	(void)hpshm__win_sys.close_handle(h);
	return t;
}

int hpshm__port_process_alive(long long pid, uint64_t start)
{
	DWORD code = 0;
	HANDLE h;
	int alive;

	if (pid <= 0 || pid > (long long)UINT32_MAX)
		return 0;
	h = hpshm__win_sys.open_process(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, (DWORD)pid);
	if (h == NULL)
		return GetLastError() == ERROR_ACCESS_DENIED ? -1 : 0; /* 87: no such process */
	if (!hpshm__win_sys.get_exit_code_process(h, &code))
		alive = -1;
	else if (code != STILL_ACTIVE || hpshm__win_sys.wait_for_single_object(h, 0) == WAIT_OBJECT_0)
		alive = 0; /* exited; someone still holds a handle to it */
	else if (start == 0)
		alive = -1; /* running, but it may be a recycled pid */
	else
		alive = process_created(h) == start;
	(void)hpshm__win_sys.close_handle(h);
	return alive;
}
