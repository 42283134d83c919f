/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/process.c -- starting a child that inherits exactly the segment's handle and
 * finds the segment's range free, and waiting for it.  (A process's identity, start time and
 * liveness are in ports/windows/identity.c.)
 *
 * Starting a child, the way PostgreSQL starts its backends on Windows:
 *   1. the program is found (SearchPathW() for a bare name, ".exe" added when it has no
 *      extension) and a command line is built from argv with the quoting the C runtime's
 *      parser undoes (backslashes double only before a quote), and the environment block
 *      sorted as Windows wants it: ports/windows/command.c;
 *   2. the handles the child inherits are exactly the ones asked for, plus duplicates of our
 *      standard handles so its output goes where ours does: PROC_THREAD_ATTRIBUTE_HANDLE_LIST
 *      limits inheritance to that list, whatever else of ours is inheritable.  A listed handle
 *      must be inheritable, so one that is not is made so for the CreateProcessW() call only
 *      and restored right after (another thread that starts a program in that window with
 *      bInheritHandles and no list of its own would pass it on: a leak of one handle, never
 *      a wrong mapping);
 *   3. the child is created suspended, the segment's range reserved in it before it runs an
 *      instruction of its own (neither its DLLs, nor heaps, nor thread stacks can take it); then
 *      resumed.  A placeholder on Windows 10 1803+, which the child's view replaces; a plain
 *      reservation elsewhere and on wine, released just before mapping (placeholder.c);
 *   4. a program that cannot be started is an error of hpshm__port_spawn() with CreateProcessW()'s
 *      code (2 not found, 193 not a program for this machine, 740 needs elevation), never a
 *      child that exits with some code.
 *   5. a child that must end with this process (HPSHM__SPAWN_KILL_WITH_PARENT) is put, still
 *      suspended, in one job object per process with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE.  Its
 *      handle is never inheritable and never closed: when this process ends, however it ends,
 *      the kernel closes it and ends every process in the job.  Windows 8 and later nest jobs,
 *      so a server that runs in a job itself (a service host, CI) can still do this.
 * A server that creates its children itself gets steps 3 and 2 from hpshm__port_child_prepare():
 * the range reserved in its suspended child, and the handles duplicated into that process
 * (DuplicateHandle(), as PostgreSQL gives its backends their sockets), so the token carries
 * the child's values and nothing of ours becomes inheritable.
 * The process handle is kept until hpshm__port_wait(): it is what keeps the exit code, and the
 * pid from being reused, for the waiter.
 */
#include "windows/windows.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows/sys.h"

#define PROCESS_PATH_MAX 32768 /* the longest path the wide calls take, in wchar_t */
#define PROCESS_STD      3     /* standard handles: input, output, error */
#ifndef ERROR_ELEVATION_REQUIRED
#define ERROR_ELEVATION_REQUIRED 740 /* winerror.h of mingw-w64 10 lacks it */
#endif

/* ---- handles the child inherits ---- */

struct process_inherit {
	HANDLE  list[64 + PROCESS_STD]; /* the handle list of the child */
	DWORD   flags[64];              /* the caller's handles: their flags before we touched them */
	int     ncaller;                /* the caller's handles in list[0..ncaller) */
	int     n;                      /* handles in list */
	HANDLE  std[PROCESS_STD];       /* our inheritable duplicates of the standard handles, or NULL */
};

static int process_listed(const struct process_inherit *in, HANDLE h)
{
	for (int i = 0; i < in->n; i++)
		if (in->list[i] == h)
			return 1;
	return 0;
}

/* Undo process_inherit_setup(): flags back as they were, duplicates closed. */
static void process_inherit_undo(struct process_inherit *in)
{
	for (int i = 0; i < in->ncaller; i++)
		if (!(in->flags[i] & HANDLE_FLAG_INHERIT))
			(void)hpshm__win_sys.set_handle_information(in->list[i], HANDLE_FLAG_INHERIT, 0);
	for (int i = 0; i < PROCESS_STD; i++)
		if (in->std[i] != NULL)
			(void)hpshm__win_sys.close_handle(in->std[i]);
}

static int process_inherit_setup(struct process_inherit *in, const intptr_t *inherit, int ninherit, hpshm_error *err)
{
	static const DWORD which[PROCESS_STD] = { STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE };
	char text[256];
	DWORD code;

	memset(in, 0, sizeof(*in));
	if (ninherit < 0 || ninherit > 64)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "a child can inherit 0 to 64 handles, not %d",
				       ninherit);
	for (int i = 0; i < ninherit; i++) {
		HANDLE h = (HANDLE)inherit[i];

		if (process_listed(in, h))
			continue;
		if (!hpshm__win_sys.get_handle_information(h, &in->flags[in->n])) {
			code = GetLastError();
			process_inherit_undo(in);
			return hpshm_error_set(err, HPSHM_EINVAL, (int)code, "GetHandleInformation", NULL,
					       "handle %p for the child is not open in this process: %s", (void *)h,
					       hpshm__win_strerror(code, text, sizeof(text)));
		}
		if (!(in->flags[in->n] & HANDLE_FLAG_INHERIT) &&
		    !hpshm__win_sys.set_handle_information(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) {
			code = GetLastError();
			process_inherit_undo(in);
			return hpshm_error_set(err, HPSHM_ESYS, (int)code, "SetHandleInformation", NULL,
					       "cannot make handle %p inheritable: %s", (void *)h,
					       hpshm__win_strerror(code, text, sizeof(text)));
		}
		in->list[in->n++] = h;
		in->ncaller = in->n;
	}
	/* Duplicates, so the caller's standard handles keep their own flags; a handle that cannot
	 * be duplicated (none, or a console of another kind) is simply not passed. */
	for (int i = 0; i < PROCESS_STD; i++) {
		HANDLE h = GetStdHandle(which[i]), dup = NULL;

		if (h == NULL || h == INVALID_HANDLE_VALUE)
			continue;
		if (DuplicateHandle(GetCurrentProcess(), h, GetCurrentProcess(), &dup, 0, TRUE, DUPLICATE_SAME_ACCESS)) {
			in->std[i] = dup;
			in->list[in->n++] = dup;
		}
	}
	return 0;
}

/* ---- spawn and wait ---- */

static int process_fail(hpshm_error *err, int code, DWORD sys, const char *call, const char *hint, const char *what,
			const char *path)
{
	char text[256];

	return hpshm_error_set(err, code, (int)sys, call, hint, "%s %s: %s", what, path,
			       hpshm__win_strerror(sys, text, sizeof(text)));
}

/* End a child that never ran a line of its own, and forget it. */
static void process_abandon(PROCESS_INFORMATION *pi)
{
	(void)hpshm__win_sys.terminate_process(pi->hProcess, 1);
	(void)hpshm__win_sys.wait_for_single_object(pi->hProcess, INFINITE);
	(void)hpshm__win_sys.close_handle(pi->hThread);
	(void)hpshm__win_sys.close_handle(pi->hProcess);
}

static const char *process_hint(DWORD code)
{
	switch (code) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return "give the program's full path, or add its directory to PATH";
	case ERROR_BAD_EXE_FORMAT:
		return "run a program built for this machine (a 64-bit .exe on x64)";
	case ERROR_ELEVATION_REQUIRED:
		return "start the parent from an elevated prompt, or run a program that needs no elevation";
	case ERROR_ACCESS_DENIED:
		return "check the program's permissions";
	case ERROR_INTERNAL_ERROR: /* wine: the new process ended before its start was done */
		return "the program ended while it was starting, before any of it ran: start it again";
	default:
		return NULL;
	}
}

/* What hpshm__port_spawn() holds until CreateProcessW() is done with it: process_spawn_release() frees it. */
struct process_spawn {
	wchar_t                     *full;    /* the program's full path */
	wchar_t                     *cmd;     /* its command line */
	wchar_t                     *env;     /* its environment block; NULL: ours */
	struct process_inherit       in;      /* the handles it inherits */
	int                          have_in; /* 1 once in is set up, so it is undone */
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;   /* the handle list attribute, or NULL */
	STARTUPINFOEXW               si;      /* its start-up information */
};

/* The program found, its command line and environment converted: 0, or an error. */
static int process_spawn_prepare(struct process_spawn *sp, const char *path, char *const argv[], char *const envp[],
				 hpshm_error *err)
{
	char text[256];
	DWORD code;

	sp->full = malloc(PROCESS_PATH_MAX * sizeof(*sp->full));
	if (sp->full == NULL)
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, "malloc", NULL, "out of memory to start %s", path);
	code = hpshm__win_program_find(path, sp->full, PROCESS_PATH_MAX);
	if (code != ERROR_SUCCESS)
		return hpshm_error_set(err, HPSHM_ESYS, (int)code, "SearchPathW", process_hint(code), "cannot run %s: %s%s",
				       path, hpshm__win_strerror(code, text, sizeof(text)),
				       strpbrk(path, "\\/:") ? "" : " (searched PATH)");
	sp->cmd = hpshm__win_command_line(argv);
	if (envp != NULL)
		sp->env = hpshm__win_environment_block(envp);
	if (sp->cmd == NULL || (envp != NULL && sp->env == NULL))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass arguments and environment as UTF-8",
				       "cannot convert the command line or environment of %s", path);
	return 0;
}

/* The start-up information: our standard handles' duplicates, and the list of handles to inherit. */
static int process_spawn_startup(struct process_spawn *sp, const char *path, hpshm_error *err)
{
	SIZE_T attrs_len = 0;
	DWORD code;

	sp->si.StartupInfo.cb = sizeof(sp->si);
	sp->si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	sp->si.StartupInfo.hStdInput = sp->in.std[0];
	sp->si.StartupInfo.hStdOutput = sp->in.std[1];
	sp->si.StartupInfo.hStdError = sp->in.std[2];
	if (sp->in.n == 0)
		return 0;
	(void)InitializeProcThreadAttributeList(NULL, 1, 0, &attrs_len);
	sp->attrs = malloc(attrs_len);
	if (sp->attrs == NULL || !InitializeProcThreadAttributeList(sp->attrs, 1, 0, &attrs_len)) {
		code = sp->attrs == NULL ? ERROR_NOT_ENOUGH_MEMORY : GetLastError();
		free(sp->attrs);
		sp->attrs = NULL; /* not initialized: nothing to delete */
		return process_fail(err, HPSHM_ESYS, code, "InitializeProcThreadAttributeList", NULL,
				    "cannot prepare the handles of", path);
	}
	sp->si.lpAttributeList = sp->attrs;
	if (!UpdateProcThreadAttribute(sp->attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, sp->in.list,
				       (SIZE_T)sp->in.n * sizeof(HANDLE), NULL, NULL))
		return process_fail(err, HPSHM_ESYS, GetLastError(), "UpdateProcThreadAttribute", NULL,
				    "cannot list the handles of", path);
	return 0;
}

/* Undo what the phases before CreateProcessW() did: handle flags back, duplicates closed, memory freed. */
static void process_spawn_release(struct process_spawn *sp)
{
	if (sp->have_in)
		process_inherit_undo(&sp->in);
	if (sp->attrs != NULL) {
		DeleteProcThreadAttributeList(sp->attrs);
		free(sp->attrs);
	}
	free(sp->cmd);
	free(sp->env);
	free(sp->full);
}

/*
 * Reserve [reserve, reserve+len) in process, a child that has not run yet.  0, or HPSHM_EEXIST
 * (something of the child's image lies there) with nothing left reserved.
 */
static int process_reserve(HANDLE process, const void *reserve, size_t len, const char *path, hpshm_error *err)
{
	char text[256];
	void *got;
	DWORD code;

	if (reserve == NULL || len == 0)
		return 0;
	got = hpshm__win_reserve_in(process, (void *)(uintptr_t)reserve, len); /* a placeholder where Windows has them */
	if (got == reserve)
		return 0;
	code = got == NULL ? GetLastError() : ERROR_INVALID_ADDRESS;
	if (got != NULL)
		(void)VirtualFreeEx(process, got, 0, MEM_RELEASE);
	return hpshm_error_set(err, HPSHM_EEXIST, (int)code, "VirtualAllocEx",
			       "create the segment again (reattach=exec picks another address), or give "
			       "base_address a range the program's image does not use",
			       "cannot keep %p-%p free in the new process %s: %s", reserve,
			       (void *)((uintptr_t)reserve + len), path, hpshm__win_strerror(code, text, sizeof(text)));
}

/*
 * The job object of the children that end with this process: made once, never inheritable,
 * closed only when the process ends, which is what ends them (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
 * NULL with *code set if Windows refused it.
 */
static HANDLE process_job(DWORD *code)
{
	static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
	static HANDLE job;
	static DWORD job_code;
	BOOL pending;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;

	if (!InitOnceBeginInitialize(&once, 0, &pending, NULL)) {
		*code = GetLastError();
		return NULL;
	}
	if (pending) {
		job = CreateJobObjectW(NULL, NULL);
		memset(&li, 0, sizeof(li));
		li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
		if (job == NULL ||
		    !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, (DWORD)sizeof(li))) {
			job_code = GetLastError();
			if (job != NULL)
				(void)CloseHandle(job);
			job = NULL;
		}
		(void)InitOnceComplete(&once, 0, NULL);
	}
	*code = job_code;
	return job;
}

/* The suspended child given its reserved range (and its job), then resumed; abandoned on failure. */
static int process_spawn_run(PROCESS_INFORMATION *pi, const void *reserve, size_t reserve_len, unsigned flags,
			     const char *path, hpshm_error *err)
{
	HANDLE job;
	DWORD code;
	int rc;

	if ((rc = process_reserve(pi->hProcess, reserve, reserve_len, path, err)) < 0) {
		process_abandon(pi);
		return rc;
	}
	/* In the job before its first instruction, so nothing it starts escapes it either. */
	if (flags & HPSHM__SPAWN_KILL_WITH_PARENT) {
		job = process_job(&code);
		if (job == NULL || !AssignProcessToJobObject(job, pi->hProcess)) {
			code = job == NULL ? code : GetLastError();
			process_abandon(pi);
			return process_fail(err, HPSHM_ESYS, code, job == NULL ? "CreateJobObjectW" : "AssignProcessToJobObject",
					    "run the server outside a job that forbids nested jobs (Windows 7 and older "
					    "allow one job per process)",
					    "cannot tie to this process the life of", path);
		}
	}
	if (hpshm__win_sys.resume_thread(pi->hThread) == (DWORD)-1) {
		code = GetLastError();
		process_abandon(pi);
		return process_fail(err, HPSHM_ESYS, code, "ResumeThread", NULL, "cannot start", path);
	}
	return 0;
}

int hpshm__port_spawn(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit, int ninherit,
		 const void *reserve, size_t reserve_len, struct hpshm__process *child, hpshm_error *err)
{
	return hpshm__port_spawn_ex(path, argv, envp, inherit, ninherit, reserve, reserve_len, 0, child, err);
}

int hpshm__port_spawn_ex(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit,
			 int ninherit, const void *reserve, size_t reserve_len, unsigned flags,
			 struct hpshm__process *child, hpshm_error *err)
{
	struct process_spawn sp;
	PROCESS_INFORMATION pi;
	DWORD code;
	int rc;

	memset(&sp, 0, sizeof(sp));
	memset(&pi, 0, sizeof(pi));
	child->pid = 0;
	child->handle = 0;
	if ((rc = process_spawn_prepare(&sp, path, argv, envp, err)) < 0)
		goto done;
	if ((rc = process_inherit_setup(&sp.in, inherit, ninherit, err)) < 0)
		goto done; /* it undid itself */
	sp.have_in = 1;
	if ((rc = process_spawn_startup(&sp, path, err)) < 0)
		goto done;
	if (!hpshm__win_sys.create_process(sp.full, sp.cmd, NULL, NULL, sp.in.n > 0,
					   CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
						   (sp.attrs != NULL ? EXTENDED_STARTUPINFO_PRESENT : 0),
					   sp.env, NULL, &sp.si.StartupInfo, &pi)) {
		code = GetLastError();
		rc = process_fail(err, HPSHM_ESYS, code, "CreateProcessW", process_hint(code), "cannot run", path);
	}
done:
	process_spawn_release(&sp);
	if (rc < 0 || (rc = process_spawn_run(&pi, reserve, reserve_len, flags, path, err)) < 0)
		return rc;
	(void)hpshm__win_sys.close_handle(pi.hThread);
	child->pid = (long long)pi.dwProcessId;
	child->handle = (intptr_t)pi.hProcess;
	return 0;
}

void hpshm__port_child_unprepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *out,
				 int n)
{
	HANDLE ph = (HANDLE)process;

	/* DUPLICATE_CLOSE_SOURCE closes the handle in the child, whatever else fails. */
	for (int i = 0; i < n; i++)
		(void)DuplicateHandle(ph, (HANDLE)out[i], NULL, NULL, 0, FALSE, DUPLICATE_CLOSE_SOURCE);
	if (reserve != NULL && reserve_len > 0)
		(void)VirtualFreeEx(ph, (void *)(uintptr_t)reserve, 0, MEM_RELEASE);
}

int hpshm__port_child_prepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *handles,
			      int n, intptr_t *out, hpshm_error *err)
{
	HANDLE ph = (HANDLE)process, dup;
	char text[256];
	DWORD code;
	int rc;

	if ((rc = process_reserve(ph, reserve, reserve_len, "prepared by the caller", err)) < 0)
		return rc;
	for (int i = 0; i < n; i++) {
		/* Not inheritable there: the child's own children must not get the segment. */
		if (!DuplicateHandle(GetCurrentProcess(), (HANDLE)handles[i], ph, &dup, 0, FALSE, DUPLICATE_SAME_ACCESS)) {
			code = GetLastError();
			hpshm__port_child_unprepare(process, reserve, reserve_len, out, i);
			return hpshm_error_set(err, code == ERROR_ACCESS_DENIED ? HPSHM_EACCES : HPSHM_ESYS, (int)code,
					       "DuplicateHandle",
					       code == ERROR_INVALID_HANDLE
						       ? "pass the process HANDLE CreateProcess() returned"
						       : "open the child with PROCESS_DUP_HANDLE and PROCESS_VM_OPERATION",
					       "cannot give the segment's handle to process %p: %s", (void *)ph,
					       hpshm__win_strerror(code, text, sizeof(text)));
		}
		out[i] = (intptr_t)dup;
	}
	return 0;
}

/* An exit code that is an exception's NTSTATUS, as the signal C raises for it; 0 if none. */
static int process_signal(DWORD code)
{
	switch (code) {
	case 0xC0000005u: /* STATUS_ACCESS_VIOLATION */
	case 0xC00000FDu: /* STATUS_STACK_OVERFLOW */
	case 0xC0000006u: /* STATUS_IN_PAGE_ERROR */
		return SIGSEGV;
	case 0xC000001Du: /* STATUS_ILLEGAL_INSTRUCTION */
	case 0xC0000096u: /* STATUS_PRIVILEGED_INSTRUCTION */
		return SIGILL;
	case 0xC0000094u: /* STATUS_INTEGER_DIVIDE_BY_ZERO */
	case 0xC000008Eu: /* STATUS_FLOAT_DIVIDE_BY_ZERO */
		return SIGFPE;
	case 0xC000013Au: /* STATUS_CONTROL_C_EXIT */
		return SIGINT;
	case 0xC0000409u: /* STATUS_STACK_BUFFER_OVERRUN: __fastfail, abort() in the UCRT */
		return SIGABRT;
	default:
		return 0;
	}
}

int hpshm__port_wait(struct hpshm__process *child, int *status, hpshm_error *err)
{
	HANDLE h = (HANDLE)child->handle;
	DWORD code = 0;
	char text[256];
	int sig;

	if (h == NULL) {
		if (child->pid <= 0 || child->pid > (long long)UINT32_MAX)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "no process %lld to wait for", child->pid);
		h = hpshm__win_sys.open_process(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)child->pid);
		if (h == NULL) {
			code = GetLastError();
			return hpshm_error_set(err, HPSHM_ESYS, (int)code, "OpenProcess", NULL,
					       "cannot wait for process %lld: %s", child->pid,
					       hpshm__win_strerror(code, text, sizeof(text)));
		}
	}
	if (hpshm__win_sys.wait_for_single_object(h, INFINITE) == WAIT_FAILED ||
	    !hpshm__win_sys.get_exit_code_process(h, &code)) {
		code = GetLastError();
		(void)hpshm__win_sys.close_handle(h);
		child->handle = 0;
		return hpshm_error_set(err, HPSHM_ESYS, (int)code, "WaitForSingleObject", NULL,
				       "cannot wait for process %lld: %s", child->pid,
				       hpshm__win_strerror(code, text, sizeof(text)));
	}
	(void)hpshm__win_sys.close_handle(h);
	child->handle = 0;
	sig = process_signal(code);
	if (status)
		*status = sig ? 128 + sig : (int)code;
	return 0;
}
