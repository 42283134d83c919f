/* SPDX-License-Identifier: MIT */
/*
 * bench/worker_windows.c -- os.h on Windows: the bench's clocks, Ctrl-C, and
 * its workers as processes started by CreateProcessW() and as Win32 threads, over named pipes.
 *
 * Workers.  An hpshm worker is started by hpshm_child_spawn(): a suspended child that
 * inherits exactly the section's handle, has the range reserved before it runs, and attaches
 * the segment at the controller's address (hpshm_segment_attach_env()).  The raw peer's
 * worker is started the way a server without hpshm would write it, call for call the same:
 * CreateProcessW(CREATE_SUSPENDED) with PROC_THREAD_ATTRIBUTE_HANDLE_LIST naming the section
 * alone, VirtualAllocEx(MEM_RESERVE) of the range in the child, ResumeThread(); the child
 * releases the range and maps the inherited section there with MapViewOfFileEx().  A worker
 * thread is a CreateThread() thread of the controller.  Windows has no fork().
 *
 * Channels.  hpshm_child_spawn() lets a child inherit the segment's handles and nothing else,
 * so a worker's channel is found by name: the controller creates one byte-mode named pipe
 * per worker, \\.\pipe\hpshm-bench-<controller pid>-<n> (FILE_FLAG_FIRST_PIPE_INSTANCE, one
 * instance: nobody else can sit on the name), and the worker opens it with CreateFileW().
 * The controller's end is overlapped, and every wait on it also waits on the worker's
 * process handle: a worker that dies before it connects, or mid-phase, ends the wait instead
 * of hanging the run.  Messages are fixed-size and read whole; a short read is the end.
 *
 * Lifetime.  A worker process has no PR_SET_PDEATHSIG: it opens its controller's process
 * handle and a small thread ends the worker when that handle is signalled.  Workers ignore
 * Ctrl-C (SetConsoleCtrlHandler(NULL, TRUE)): the console sends it to every process on it,
 * and the controller decides; the controller's handler only sets bench_stop, and a
 * controller waiting for a reply sees it when the phase ends (within four budgets), then
 * stops every worker, terminates what does not exit within the grace period, and releases
 * the memory.
 *
 * Clocks.  Thread CPU time is GetThreadTimes() (kernel + user, 100 ns units, advanced at the
 * scheduler tick, about 15.6 ms); wall time is QueryPerformanceCounter().
 */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/process.h"

#define PIPE_BUF_BYTES 4096 /* the pipe's buffer each way: a command or reply fits many times */
#define PIPE_NAME_MAX  96   /* \\.\pipe\hpshm-bench-<pid>-<n> */
#define CMD_MAX        8192 /* a raw worker's command line, in wchar_t */

/* One end of a channel. */
struct win_chan {
	HANDLE pipe;      /* the pipe */
	HANDLE event;     /* overlapped I/O completion (controller's end), NULL for blocking I/O */
	HANDLE watch;     /* the worker process the controller's waits also end on, or NULL */
	int    pending;   /* a ConnectNamedPipe() is outstanding on ov */
	int    dead;      /* the worker was collected: nothing more to wait for */
	OVERLAPPED ov;    /* the outstanding connect */
};

static unsigned long chan_counter; /* numbers the pipes of this controller */

/* ---- clocks and stopping ------------------------------------------------------------------- */

uint64_t bench_cpu_ns(void)
{
	FILETIME created, exited, kernel, user;
	ULARGE_INTEGER k, u;

	if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user))
		return 0;
	k.LowPart = kernel.dwLowDateTime;
	k.HighPart = kernel.dwHighDateTime;
	u.LowPart = user.dwLowDateTime;
	u.HighPart = user.dwHighDateTime;
	return (k.QuadPart + u.QuadPart) * 100u;
}

uint64_t bench_cpu_turn_ns(void)
{
	return 20000000u;   /* GetThreadTimes() moves in ticks of 15.6 ms */
}

uint64_t bench_wall_ns(void)
{
	static LARGE_INTEGER freq; /* counts per second, fixed at boot */
	LARGE_INTEGER now;
	uint64_t f, c;

	if (freq.QuadPart == 0)
		(void)QueryPerformanceFrequency(&freq);
	(void)QueryPerformanceCounter(&now);
	f = (uint64_t)freq.QuadPart;
	c = (uint64_t)now.QuadPart;
	if (f == 0)
		return 0;
	/* In two parts, so the product cannot overflow 64 bits. */
	return c / f * 1000000000u + c % f * 1000000000u / f;
}

const char *bench_cpu_clock_name(void)
{
	return "thread CPU time (GetThreadTimes, advanced at the scheduler tick); wall_median by "
	       "QueryPerformanceCounter";
}

static BOOL WINAPI on_ctrl(DWORD type)
{
	if (type == CTRL_C_EVENT || type == CTRL_BREAK_EVENT || type == CTRL_CLOSE_EVENT) {
		bench_stop = 1;
		return TRUE;
	}
	return FALSE;
}

void bench_os_stop_catch(void)
{
	(void)SetConsoleCtrlHandler(on_ctrl, TRUE);
}

void bench_os_stop_release(void)
{
	(void)SetConsoleCtrlHandler(on_ctrl, FALSE);
}

const char *bench_os_left_out(void)
{
	return "fork workers (Windows has no fork(): workers are spawned by CreateProcessW, or are threads)";
}

const char *bench_os_no_fork(void)
{
	return "Windows has no fork()";
}

int bench_os_pool_writable(char *why, size_t len)
{
	snprintf(why, len, "--reserve: Windows keeps no large page pool to resize: large pages come from free "
		 "physical memory when a section is created");
	return -1;
}

/* ---- channels ------------------------------------------------------------------------------ */

static void chan_name(wchar_t *buf, size_t len, unsigned long long pid, unsigned long long n)
{
	(void)_snwprintf(buf, len, L"\\\\.\\pipe\\hpshm-bench-%llu-%llu", pid, n);
	buf[len - 1] = L'\0';
}

static struct win_chan *chan_new(HANDLE pipe, HANDLE event)
{
	struct win_chan *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->pipe = pipe;
	c->event = event;
	return c;
}

/* Wait for the overlapped operation on c to end: 0 with *done, or -1 (failed, or the worker died). */
static int chan_wait(struct win_chan *c, OVERLAPPED *ov, DWORD *done)
{
	HANDLE h[2];
	DWORD nh = 0, r;

	h[nh++] = c->event;
	if (c->watch != NULL)
		h[nh++] = c->watch;
	r = WaitForMultipleObjects(nh, h, FALSE, INFINITE);
	if (r != WAIT_OBJECT_0) {
		/* The worker ended first, or the wait failed: take the operation back. */
		(void)CancelIo(c->pipe);
		(void)GetOverlappedResult(c->pipe, ov, done, TRUE);
		return -1;
	}
	return GetOverlappedResult(c->pipe, ov, done, FALSE) ? 0 : -1;
}

/* The controller's end: the worker has connected, or -1. */
static int chan_connected(struct win_chan *c)
{
	DWORD done;

	if (!c->pending)
		return 0;
	c->pending = 0;
	return chan_wait(c, &c->ov, &done);
}

/* Read or write n bytes of buf, whole: 0, or -1. */
static int chan_io(struct win_chan *c, int write, void *buf, size_t n)
{
	unsigned char *p = buf;

	if (c->dead || (c->event != NULL && chan_connected(c) < 0))
		return -1;
	while (n > 0) {
		DWORD done = 0, want = n > 0x10000 ? 0x10000 : (DWORD)n;
		BOOL ok;

		if (c->event == NULL) {
			ok = write ? WriteFile(c->pipe, p, want, &done, NULL) : ReadFile(c->pipe, p, want, &done, NULL);
			if (!ok)
				return -1;
		} else {
			OVERLAPPED ov;

			memset(&ov, 0, sizeof(ov));
			ov.hEvent = c->event;
			(void)ResetEvent(c->event);
			ok = write ? WriteFile(c->pipe, p, want, NULL, &ov) : ReadFile(c->pipe, p, want, NULL, &ov);
			if (!ok && GetLastError() != ERROR_IO_PENDING)
				return -1;
			if (chan_wait(c, &ov, &done) < 0)
				return -1;
		}
		if (done == 0)
			return -1;
		p += done;
		n -= done;
	}
	return 0;
}

int bench_os_chan_send(intptr_t chan, const void *buf, size_t n)
{
	if (chan == BENCH_OS_NONE)
		return -1;
	return chan_io((struct win_chan *)chan, 1, (void *)(uintptr_t)buf, n);
}

long bench_os_chan_recv(intptr_t chan, void *buf, size_t n)
{
	if (chan == BENCH_OS_NONE)
		return -1;
	return chan_io((struct win_chan *)chan, 0, buf, n) == 0 ? (long)n : 0;
}

void bench_os_chan_close(intptr_t chan)
{
	struct win_chan *c = (struct win_chan *)chan;

	if (chan == BENCH_OS_NONE || c == NULL)
		return;
	if (c->pending) {
		DWORD done;

		(void)CancelIo(c->pipe);
		(void)GetOverlappedResult(c->pipe, &c->ov, &done, TRUE);
	}
	(void)CloseHandle(c->pipe);
	if (c->event != NULL)
		(void)CloseHandle(c->event);
	free(c);
}

intptr_t bench_os_chan_open(uint64_t arg, long long parent)
{
	wchar_t name[PIPE_NAME_MAX];
	struct win_chan *c;
	HANDLE h;

	chan_name(name, PIPE_NAME_MAX, (unsigned long long)parent, (unsigned long long)arg);
	h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return BENCH_OS_NONE;
	c = chan_new(h, NULL);
	if (c == NULL) {
		(void)CloseHandle(h);
		return BENCH_OS_NONE;
	}
	return (intptr_t)c;
}

/* The controller's end of a new channel, listening; *number names it for the worker. */
static struct win_chan *chan_listen(unsigned long *number, char *why, size_t len)
{
	wchar_t name[PIPE_NAME_MAX];
	struct win_chan *c;
	HANDLE pipe, event;

	*number = ++chan_counter;
	chan_name(name, PIPE_NAME_MAX, (unsigned long long)GetCurrentProcessId(), (unsigned long long)*number);
	pipe = CreateNamedPipeW(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
				PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1,
				PIPE_BUF_BYTES, PIPE_BUF_BYTES, 0, NULL);
	if (pipe == INVALID_HANDLE_VALUE) {
		snprintf(why, len, "CreateNamedPipeW: error %lu", (unsigned long)GetLastError());
		return NULL;
	}
	event = CreateEventW(NULL, TRUE, FALSE, NULL);
	c = event != NULL ? chan_new(pipe, event) : NULL;
	if (c == NULL) {
		snprintf(why, len, "CreateEventW: error %lu", (unsigned long)GetLastError());
		if (event != NULL)
			(void)CloseHandle(event);
		(void)CloseHandle(pipe);
		return NULL;
	}
	c->ov.hEvent = event;
	if (ConnectNamedPipe(pipe, &c->ov)) {
		c->pending = 0;
	} else if (GetLastError() == ERROR_IO_PENDING) {
		c->pending = 1;
	} else if (GetLastError() != ERROR_PIPE_CONNECTED) {
		snprintf(why, len, "ConnectNamedPipe: error %lu", (unsigned long)GetLastError());
		bench_os_chan_close((intptr_t)c);
		return NULL;
	}
	return c;
}

/* ---- the worker's side --------------------------------------------------------------------- */

static DWORD WINAPI watch_parent(void *arg)
{
	(void)WaitForSingleObject((HANDLE)arg, INFINITE);
	ExitProcess(1);
}

int bench_os_worker_setup(long long parent, uint64_t parent_start)
{
	HANDLE h, t;

	(void)SetConsoleCtrlHandler(NULL, TRUE);   /* Ctrl-C is the controller's to act on */
	if (parent <= 0 || parent > (long long)UINT32_MAX)
		return -1;
	h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)parent);
	if (h == NULL)
		return -1;   /* the controller is gone already */
	/*
	 * A pid alone may name a later process that took the controller's over: the start time
	 * tells them apart (as the library tells a segment's creator).  The handle held keeps the
	 * pid from being reused while it is asked.
	 */
	if (parent_start != 0 && hpshm__port_process_start(parent) != parent_start) {
		(void)CloseHandle(h);
		return -1;
	}
	t = CreateThread(NULL, 64 * 1024, watch_parent, h, 0, NULL);
	if (t == NULL) {
		(void)CloseHandle(h);
		return -1;
	}
	(void)CloseHandle(t);
	return 0;
}

int bench_os_raw_map(struct bench_view *v, char *msg, size_t len)
{
	HANDLE section = (HANDLE)v->raw;
	DWORD access = FILE_MAP_READ | FILE_MAP_WRITE | ((v->raw_flags & BENCH_RAW_LARGE) ? FILE_MAP_LARGE_PAGES : 0);
	void *p;

	/* The range the controller reserved in this process before it ran: give it up, map there. */
	(void)VirtualFree(v->addr, 0, MEM_RELEASE);
	p = MapViewOfFileEx(section, access, 0, 0, v->len, v->addr);
	if (p != (void *)v->addr) {
		snprintf(msg, len, "MapViewOfFileEx of the inherited section at %p: %s %lu", (void *)v->addr,
			 p == NULL ? "error" : "mapped elsewhere, at", p == NULL ? (unsigned long)GetLastError() :
			 (unsigned long)(uintptr_t)p);
		if (p != NULL)
			(void)UnmapViewOfFile(p);
		return -1;
	}
	v->raw_view = p;
	return 0;
}

void bench_os_raw_unmap(struct bench_view *v)
{
	(void)UnmapViewOfFile(v->raw_view);
	v->raw_view = NULL;
	if (v->raw != BENCH_OS_NONE)
		(void)CloseHandle((HANDLE)v->raw);
	v->raw = BENCH_OS_NONE;
}

/* ---- the controller's side ----------------------------------------------------------------- */

static DWORD WINAPI worker_thread(void *arg)
{
	struct bench_view *v = arg;

	bench_worker_serve(v, 0);
	bench_os_chan_close(v->chan);
	free(v);
	return 0;
}

/* Append arg to cmd, quoted as CommandLineToArgvW() and the C runtime split it back. */
static int cmd_quote(wchar_t *cmd, size_t *used, size_t max, const char *arg)
{
	wchar_t wide[4096];
	size_t n = *used;
	int w = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, arg, -1, wide, (int)(sizeof(wide) / sizeof(wide[0])));

	if (w <= 0)
		return -1;
#define CMD_PUT(c) do { if (n + 1 >= max) return -1; cmd[n++] = (c); } while (0)
	if (n > 0)
		CMD_PUT(L' ');
	CMD_PUT(L'"');
	for (const wchar_t *p = wide;; p++) {
		size_t slashes = 0;

		while (*p == L'\\') {
			slashes++;
			p++;
		}
		/* Backslashes double only before a quote (the closing one included). */
		if (*p == L'\0' || *p == L'"')
			slashes = slashes * 2 + (*p == L'"');
		for (size_t i = 0; i < slashes; i++)
			CMD_PUT(L'\\');
		if (*p == L'\0')
			break;
		CMD_PUT(*p);
	}
	CMD_PUT(L'"');
#undef CMD_PUT
	cmd[n] = L'\0';
	*used = n;
	return 0;
}

/*
 * The handles a raw worker inherits, and nothing else: the section, then this process's
 * standard error when it has one (a console, a pipe or a file; a GUI start has none).  Their
 * inherit flags as they are now go to flags[], to be put back.  Returns how many.
 */
static size_t raw_inherited(const struct bench_region *r, HANDLE list[3], DWORD flags[3])
{
	HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
	size_t n = 1;

	list[0] = (HANDLE)r->handle;
	if (!GetHandleInformation(list[0], &flags[0]))
		flags[0] = 0;
	/* A handle the list cannot take (none, or not a real handle) stays out: the worker then
	 * runs without standard handles, as before. */
	if (err != NULL && err != INVALID_HANDLE_VALUE && err != list[0] && GetHandleInformation(err, &flags[1]))
		list[n++] = err;
	return n;
}

/*
 * A worker's start that is worth trying again: CreateProcessW() failing with
 * ERROR_INTERNAL_ERROR, wine's report of a new process that ended before its start was done
 * and gave no code of its own (its loader failed, before any of the worker ran).  On a busy
 * host one small run in twelve met one (a CI run too), and that member was dropped for the
 * rest of the run, its rows without ratios.  Such a start is tried twice more.
 */
static int start_ended_early(int code, const char *call)
{
	return code == (int)ERROR_INTERNAL_ERROR && strcmp(call, "CreateProcessW") == 0;
}

/*
 * The raw peer's worker, started as a server without hpshm would: suspended, inheriting the
 * section alone, the range reserved in it, then resumed.  0, or -1 with why.
 */
static int raw_spawn(struct bench_worker *w, const struct bench_region *r, const char *self_exe, unsigned long chan,
		     char *why, size_t len)
{
	static wchar_t cmd[CMD_MAX];
	static wchar_t exe[4096];
	char **argv = bench_worker_argv(self_exe, r, (intptr_t)chan, r->handle, (long long)GetCurrentProcessId());
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
	SIZE_T attrs_len = 0;
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	HANDLE list[3];
	DWORD flags[3], code = 0;
	size_t used = 0, n;
	BOOL ok;

	cmd[0] = L'\0';
	for (size_t i = 0; argv[i] != NULL; i++)
		if (cmd_quote(cmd, &used, CMD_MAX, argv[i]) < 0) {
			snprintf(why, len, "the worker's command line does not fit or is not UTF-8");
			return -1;
		}
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, self_exe, -1, exe, (int)(sizeof(exe) / sizeof(exe[0]))) <= 0) {
		snprintf(why, len, "this program's path is not UTF-8 or too long");
		return -1;
	}
	(void)InitializeProcThreadAttributeList(NULL, 1, 0, &attrs_len);
	attrs = malloc(attrs_len);
	if (attrs == NULL || !InitializeProcThreadAttributeList(attrs, 1, 0, &attrs_len)) {
		free(attrs);
		snprintf(why, len, "InitializeProcThreadAttributeList: error %lu", (unsigned long)GetLastError());
		return -1;
	}
	n = raw_inherited(r, list, flags);
	if (!UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list, n * sizeof(list[0]), NULL,
				       NULL)) {
		code = GetLastError();
		DeleteProcThreadAttributeList(attrs);
		free(attrs);
		snprintf(why, len, "UpdateProcThreadAttribute: error %lu", (unsigned long)code);
		return -1;
	}
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.lpAttributeList = attrs;
	/* The worker's errors go where the controller's go: its stderr, for output and error both
	 * (stdout is the controller's results); no input. */
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = NULL;
	si.StartupInfo.hStdOutput = n > 1 ? list[1] : NULL;
	si.StartupInfo.hStdError = n > 1 ? list[1] : NULL;
	/* A listed handle must be inheritable: for this one call only, so no other start takes it. */
	for (size_t i = 0; i < n; i++)
		(void)SetHandleInformation(list[i], HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
	for (int tries = 0;; tries++) {
		memset(&pi, 0, sizeof(pi));
		ok = CreateProcessW(exe, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED | EXTENDED_STARTUPINFO_PRESENT, NULL,
				    NULL, &si.StartupInfo, &pi);
		code = ok ? 0 : GetLastError();
		if (ok || !start_ended_early((int)code, "CreateProcessW") || tries == 2)
			break;
		Sleep(10u * (unsigned)(tries + 1));
	}
	for (size_t i = 0; i < n; i++)
		(void)SetHandleInformation(list[i], HANDLE_FLAG_INHERIT, flags[i] & HANDLE_FLAG_INHERIT);
	DeleteProcThreadAttributeList(attrs);
	free(attrs);
	if (!ok) {
		snprintf(why, len, "CreateProcessW: error %lu", (unsigned long)code);
		return -1;
	}
	if (VirtualAllocEx(pi.hProcess, r->addr, r->len, MEM_RESERVE, PAGE_NOACCESS) != (void *)r->addr ||
	    ResumeThread(pi.hThread) == (DWORD)-1) {
		code = GetLastError();
		(void)TerminateProcess(pi.hProcess, 1);
		(void)WaitForSingleObject(pi.hProcess, INFINITE);
		(void)CloseHandle(pi.hThread);
		(void)CloseHandle(pi.hProcess);
		snprintf(why, len, "cannot keep %p free in the worker, or resume it: error %lu", (void *)r->addr,
			 (unsigned long)code);
		return -1;
	}
	(void)CloseHandle(pi.hThread);
	w->pid = (long long)pi.dwProcessId;
	w->process = pi.hProcess;
	return 0;
}

int bench_os_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
			  const char *self_exe, char *why, size_t len)
{
	unsigned long number;
	struct win_chan *ch = chan_listen(&number, why, len);

	if (ch == NULL)
		return -1;
	w->chan = (intptr_t)ch;

	if (c->start == BENCH_START_THREAD) {
		struct bench_view *v = calloc(1, sizeof(*v));
		intptr_t end = bench_os_chan_open(number, (long long)GetCurrentProcessId());
		HANDLE t;

		if (v == NULL || end == BENCH_OS_NONE) {
			free(v);
			bench_os_chan_close(end);
			snprintf(why, len, "cannot open the thread's end of its pipe: error %lu", (unsigned long)GetLastError());
			goto fail;
		}
		v->chan = end;
		v->addr = r->addr;
		v->size = r->size;
		v->len = r->len;
		v->raw = BENCH_OS_NONE;
		t = CreateThread(NULL, 0, worker_thread, v, 0, NULL);
		if (t == NULL) {
			snprintf(why, len, "CreateThread: error %lu", (unsigned long)GetLastError());
			bench_os_chan_close(end);
			free(v);
			goto fail;
		}
		w->thread = t;
		return 0;
	}
	if (c->start == BENCH_START_FORK) {
		snprintf(why, len, "%s", bench_os_no_fork());
		goto fail;
	}
	if (r->seg) {
		hpshm_error err;
		char **argv = bench_worker_argv(self_exe, r, (intptr_t)number, BENCH_OS_NONE,
						(long long)GetCurrentProcessId());

		int rc;

		/* Tried again on the start that ended before it was done (raw_spawn()). */
		for (int tries = 0;; tries++) {
			memset(&err, 0, sizeof(err));
			rc = hpshm_child_spawn(r->seg, self_exe, argv, NULL, &w->child, &err);
			if (rc == 0 || !start_ended_early(err.sys_errno, err.call) || tries == 2)
				break;
			Sleep(10u * (unsigned)(tries + 1));
		}
		if (rc < 0) {
			snprintf(why, len, "hpshm_child_spawn: %.300s", err.message[0] ? err.message : hpshm_strerror(err.code));
			goto fail;
		}
		w->pid = w->child.pid;
		w->spawned = 1;
		ch->watch = (HANDLE)w->child.handle;
		return 0;
	}
	if (raw_spawn(w, r, self_exe, number, why, len) < 0)
		goto fail;
	ch->watch = (HANDLE)w->process;
	return 0;
fail:
	bench_os_chan_close(w->chan);
	w->chan = BENCH_OS_NONE;
	return -1;
}

/* The worker's process handle, NULL for a thread. */
static HANDLE worker_handle(const struct bench_worker *w)
{
	return w->spawned ? (HANDLE)w->child.handle : (HANDLE)w->process;
}

/* Collect an ended (or killed) worker process: its exit code, and the handle closed. */
static int worker_collect(struct bench_worker *w, DWORD *code)
{
	HANDLE h = worker_handle(w);
	int status = 0;

	*code = 0;
	if (h == NULL)
		return -1;
	if (w->chan != BENCH_OS_NONE) {
		/* The handle closes below: no wait on the channel may name it again. */
		((struct win_chan *)w->chan)->watch = NULL;
		((struct win_chan *)w->chan)->dead = 1;
	}
	if (w->spawned) {
		if (hpshm_child_wait(&w->child, &status, NULL) < 0)
			return -1;
		*code = (DWORD)status;
		w->spawned = 0;
	} else {
		(void)GetExitCodeProcess(h, code);
		(void)CloseHandle(h);
		w->process = NULL;
	}
	w->pid = 0;
	return 0;
}

void bench_os_worker_gone(struct bench_worker *w, unsigned i, char *why, size_t len)
{
	HANDLE h = worker_handle(w);
	DWORD code;

	if (h != NULL && WaitForSingleObject(h, 2000) == WAIT_OBJECT_0 && worker_collect(w, &code) == 0) {
		snprintf(why, len, "worker %u exited with status %lu before answering", i, (unsigned long)code);
		return;
	}
	snprintf(why, len, "worker %u closed its pipe before answering", i);
}

void bench_os_worker_reap(struct bench_worker *w, uint64_t deadline_ns)
{
	HANDLE h = worker_handle(w);
	DWORD code;

	if (h != NULL) {
		uint64_t now = bench_wall_ns();
		DWORD ms = bench_stop || now >= deadline_ns ? 0 : (DWORD)((deadline_ns - now) / 1000000u);

		if (WaitForSingleObject(h, ms) != WAIT_OBJECT_0) {
			(void)TerminateProcess(h, 1);
			(void)WaitForSingleObject(h, INFINITE);
		}
		(void)worker_collect(w, &code);
	}
	if (w->thread) {
		/* A thread leaves its loop at EXIT, or within a batch once bench_stop is set. */
		(void)WaitForSingleObject((HANDLE)w->thread, INFINITE);
		(void)CloseHandle((HANDLE)w->thread);
		w->thread = NULL;
	}
}
