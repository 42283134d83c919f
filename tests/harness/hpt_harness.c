/* SPDX-License-Identifier: MIT */
/*
 * tests/harness/hpt_harness.c -- the runner of the in-tree test harness (see hpt_harness.h).
 *
 * Every test runs in a process of its own, so a crash, a hang or a leaked global in one test
 * cannot touch the next, and the runner can judge the test by how its process ended.  On
 * POSIX the runner fork()s; the child runs the test and exits.  Windows has no fork, so the
 * runner starts its own executable again with --hpt-run=suite/name (and --hpt-param=i for a
 * parameterised test), and that process finds the test by name and runs it.  Either way the
 * test's process reports to the runner over a pipe: each failed assertion, a skip and the phase
 * it is in (init, test, fini).  The pipe carries facts only; the verdict comes from those
 * facts together with how the process ended, because a crash or a kill says nothing on the
 * pipe.
 *
 * Tests run one after another, never in parallel: hpshm's fixture compares machine-wide state
 * before and after each test, which two tests at once would spoil.  --jobs is accepted for
 * Criterion's command line and ignored.
 *
 * On POSIX each test's process leads a process group of its own, so that a timeout kills
 * whatever the test started along with it (a forked helper holding a segment would otherwise
 * outlive the test and show up as a leak in the next one).  On Windows a job object does the
 * same.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#if defined(__MINGW32__) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1 /* C99 formats such as %zu, as hpt_harness.h promises */
#endif

#include "hpt_harness.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#endif

#define HPT_DEFAULT_TIMEOUT 60.0

/* Records on the pipe from a test's process to the runner: one kind byte, a 4-byte length, text. */
enum {
	REC_FAIL   = 'F', /* "file:line\nmessage": an assertion or expectation failed */
	REC_SKIP   = 'S', /* "file:line\nreason": cr_skip_test() */
	REC_PHASE  = 'P', /* "init", "test" or "fini": where the process is now */
	REC_SIGNAL = 'K', /* a decimal signal number: Windows only, see win_on_signal() */
};

static struct hpt_test  *registered_tests;
static struct hpt_suite *registered_suites;

void hpt__register_test(struct hpt_test *t)
{
	t->next = registered_tests;
	registered_tests = t;
}

void hpt__register_suite(struct hpt_suite *s)
{
	s->next = registered_suites;
	registered_suites = s;
}

static const struct hpt_suite *find_suite(const char *name)
{
	for (const struct hpt_suite *s = registered_suites; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Text helpers                                                                               */

static char *vformat(const char *fmt, va_list ap) HPT__PRINTF(1, 0);
static char *vformat(const char *fmt, va_list ap)
{
	va_list copy;
	int n;
	char *s;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		n = 0;
	s = malloc((size_t)n + 1);
	if (!s) {
		fputs("hpt_harness: out of memory formatting a message\n", stderr);
		abort();
	}
	if (vsnprintf(s, (size_t)n + 1, fmt, ap) < 0)
		s[0] = '\0';
	return s;
}

static char *format(const char *fmt, ...) HPT__PRINTF(1, 2);
static char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	return s;
}

/* Does name match pattern, where '*' is any run of characters and '?' any one? */
static int glob_match(const char *pattern, const char *name)
{
	const char *star = NULL, *resume = NULL;

	while (*name) {
		if (*pattern == '*') {
			star = pattern++;
			resume = name;
		} else if (*pattern == '?' || *pattern == *name) {
			pattern++;
			name++;
		} else if (star) {
			pattern = star + 1;
			name = ++resume;
		} else {
			return 0;
		}
	}
	while (*pattern == '*')
		pattern++;
	return *pattern == '\0';
}

static const char *signal_name(int sig)
{
	static const struct {
		int         sig;
		const char *name;
	} names[] = {
		{SIGABRT, "SIGABRT"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
		{SIGINT, "SIGINT"},   {SIGSEGV, "SIGSEGV"}, {SIGTERM, "SIGTERM"},
#ifndef _WIN32
		{SIGALRM, "SIGALRM"}, {SIGBUS, "SIGBUS"},   {SIGHUP, "SIGHUP"},
		{SIGKILL, "SIGKILL"}, {SIGPIPE, "SIGPIPE"}, {SIGQUIT, "SIGQUIT"},
		{SIGTRAP, "SIGTRAP"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
		{SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
#endif
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "an unnamed signal";
}

/* ------------------------------------------------------------------------------------------ */
/* The test's side: runs in the test's own process                                          */

#ifdef _WIN32
static HANDLE report_pipe = INVALID_HANDLE_VALUE;
#else
static int   report_pipe = -1;
static pid_t test_pid;     /* the test's own process: a forked helper of the test is not it */
#endif
static jmp_buf abort_jump; /* where a failed cr_assert leaves the test (or its init or fini) */
static int     jump_armed;

static int in_test_process(void)
{
#ifdef _WIN32
	return report_pipe != INVALID_HANDLE_VALUE;
#else
	return report_pipe >= 0;
#endif
}

static void send_record(char kind, const char *text)
{
	size_t len = strlen(text), total = 5 + len;
	unsigned char *buf = malloc(total);
	uint32_t n = (uint32_t)len;

	if (!buf)
		abort();
	buf[0] = (unsigned char)kind;
	memcpy(buf + 1, &n, 4); /* both ends are the same program on the same machine */
	memcpy(buf + 5, text, len);
#ifdef _WIN32
	{
		DWORD done = 0;
		size_t off = 0;

		while (off < total && WriteFile(report_pipe, buf + off, (DWORD)(total - off), &done, NULL))
			off += done;
	}
#else
	for (size_t off = 0; off < total;) {
		ssize_t w = write(report_pipe, buf + off, total - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
#endif
	free(buf);
}

static void send_located(char kind, const char *file, int line, const char *msg)
{
	char *text = format("%s:%d\n%s", file, line, msg);

	send_record(kind, text);
	free(text);
}

/* A failure text: the test's message (taken over) if it gave one, and the expression that did not hold. */
static char *failure_text(const char *expr, char *msg)
{
	char *text;

	if (!msg)
		return format("%s is false", expr ? expr : "the assertion");
	if (!expr)
		return msg;
	text = format("%s (%s is false)", msg, expr);
	free(msg);
	return text;
}

/* Outside a test (a parameter generator, a constructor) there is no test to fail: stop the run. */
static HPT__NORETURN void fail_outside_test(const char *file, int line, const char *text)
{
	fflush(stdout);
	fprintf(stderr, "hpt_harness: assertion failed outside any test: %s at %s:%d\n", text, file, line);
	exit(2);
}

static HPT__NORETURN void assert_failed(const char *file, int line, char *text)
{
	if (!in_test_process())
		fail_outside_test(file, line, text);
	send_located(REC_FAIL, file, line, text);
	free(text);
	fflush(NULL);
#ifndef _WIN32
	/*
	 * A process the test forked has no test to leave: its parent still runs it.  The failure
	 * is already on the pipe (the child inherited it), so the test fails; the child just ends.
	 */
	if (getpid() != test_pid)
		_exit(1);
#endif
	/* Outside init, test and fini (an atexit handler, say) there is nowhere to return to. */
	if (!jump_armed)
		_Exit(1);
	longjmp(abort_jump, 1);
}

static void expect_failed(const char *file, int line, char *text)
{
	if (!in_test_process())
		fail_outside_test(file, line, text);
	send_located(REC_FAIL, file, line, text);
	free(text);
}

void hpt__assert_failed(const char *file, int line, const char *expr)
{
	assert_failed(file, line, failure_text(expr, NULL));
}

void hpt__assert_failedf(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = failure_text(expr, vformat(fmt, ap));
	va_end(ap);
	assert_failed(file, line, text);
}

void hpt__expect_failed(const char *file, int line, const char *expr)
{
	expect_failed(file, line, failure_text(expr, NULL));
}

void hpt__expect_failedf(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = failure_text(expr, vformat(fmt, ap));
	va_end(ap);
	expect_failed(file, line, text);
}

/*
 * A skip ends the test's process at once and runs no .fini, as Criterion 2.4.1 does: the
 * suites are written for that (a test that skips after its .init undoes its setup first).
 */
void hpt__skip(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = vformat(fmt, ap);
	va_end(ap);
	if (!in_test_process())
		fail_outside_test(file, line, "cr_skip_test() outside any test");
	send_located(REC_SKIP, file, line, text);
	free(text);
	fflush(NULL);
	exit(0);
}

void hpt__log(const char *tag, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = vformat(fmt, ap);
	va_end(ap);
	printf("%s%s\n", tag, text);
	fflush(stdout); /* a test that forks next must not hand its child this line to print again */
	free(text);
}

int hpt__str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Run fn (or param_fn(param)) so that a failed cr_assert inside returns here: 0 if it completed. */
static int guarded(void (*fn)(void), void (*param_fn)(void *), void *param)
{
	if (setjmp(abort_jump)) {
		jump_armed = 0;
		return -1;
	}
	jump_armed = 1;
	if (param_fn)
		param_fn(param);
	else
		fn();
	jump_armed = 0;
	return 0;
}

/* The whole life of one test, in its own process; never returns. */
static HPT__NORETURN void run_test_here(const struct hpt_test *t, void *param)
{
	const struct hpt_suite *s = find_suite(t->suite);
	int suite_ready = 0, test_ready = 0;

	send_record(REC_PHASE, "init");
	if (s && s->opts.init)
		suite_ready = guarded(s->opts.init, NULL, NULL) == 0;
	else
		suite_ready = 1;
	if (suite_ready)
		test_ready = t->opts.init ? guarded(t->opts.init, NULL, NULL) == 0 : 1;
	if (test_ready) {
		send_record(REC_PHASE, "test");
		(void)guarded(t->body, t->param_body, param);
	}
	send_record(REC_PHASE, "fini");
	if (test_ready && t->opts.fini)
		(void)guarded(t->opts.fini, NULL, NULL);
	if (suite_ready && s && s->opts.fini)
		(void)guarded(s->opts.fini, NULL, NULL);
	fflush(NULL);
	exit(0);
}

/* ------------------------------------------------------------------------------------------ */
/* The runner's side                                                                          */

/* One runnable instance: a test, or one element of a parameterised test. */
struct hpt_case {
	const struct hpt_test *test;
	size_t                 index;    /* element of the parameter array */
	int                    is_param; /* print "[index]" after the name */
};

/* What the runner learnt about one test's process. */
struct outcome {
	int    timed_out;     /* the runner killed it */
	int    exited;        /* it ended with exit() */
	int    code;          /* ... with this status */
	int    signaled;      /* a signal ended it */
	int    sig;           /* ... this one */
	char  *records;       /* everything it sent */
	size_t len, cap;      /* bytes in records, bytes allocated */
	int    spawn_failed;  /* the runner could not start it */
	unsigned long spawn_error; /* ... the error of CreateProcessW() (Windows), 0 if not that */
};

static void outcome_add(struct outcome *o, const void *data, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *p;

		while (o->len + n > cap)
			cap *= 2;
		p = realloc(o->records, cap);
		if (!p)
			abort();
		o->records = p;
		o->cap = cap;
	}
	memcpy(o->records + o->len, data, n);
	o->len += n;
}

static double case_timeout(const struct hpt_test *t, double fallback)
{
	const struct hpt_suite *s = find_suite(t->suite);

	if (t->opts.timeout > 0)
		return t->opts.timeout;
	if (s && s->opts.timeout > 0)
		return s->opts.timeout;
	return fallback;
}

#ifndef _WIN32
static void *case_param(const struct hpt_case *c, const struct hpt_params *p)
{
	if (!c->is_param)
		return NULL;
	/* The element is handed to the test as a non-const pointer, as Criterion does. */
	return (void *)((uintptr_t)p->array + c->index * p->size);
}
#endif

#ifdef _WIN32
/*
 * The re-launched test's process: a test that calls abort() or raise() ends through the C
 * runtime's signal handling with exit status 3, which cannot be told apart from exit(3), so
 * the signal is named on the pipe first.  Crashes that never reach a C signal handler show up
 * as an exception code in the exit status instead (see win_exception_signal()).
 */
static void win_on_signal(int sig)
{
	/* The record is built by hand on the stack: the crash may have happened inside malloc. */
	unsigned char rec[5 + 4];
	uint32_t n = 0;
	DWORD done = 0;

	for (int v = sig < 0 ? 0 : sig, d = 1000; d > 0; d /= 10)
		if (v >= d || n > 0 || d == 1)
			rec[5 + n++] = (unsigned char)('0' + (v / d) % 10);
	rec[0] = REC_SIGNAL;
	memcpy(rec + 1, &n, 4);
	WriteFile(report_pipe, rec, 5 + n, &done, NULL);
	_exit(3);
}

static int win_exception_signal(DWORD code)
{
	switch (code) {
	case 0xC0000005: /* EXCEPTION_ACCESS_VIOLATION */
	case 0xC00000FD: /* EXCEPTION_STACK_OVERFLOW */
	case 0xC0000006: /* EXCEPTION_IN_PAGE_ERROR */
		return SIGSEGV;
	case 0xC000001D: /* EXCEPTION_ILLEGAL_INSTRUCTION */
	case 0xC0000096: /* EXCEPTION_PRIV_INSTRUCTION */
		return SIGILL;
	case 0xC0000094: /* EXCEPTION_INT_DIVIDE_BY_ZERO */
	case 0xC0000095: /* EXCEPTION_INT_OVERFLOW */
	case 0xC000008E: /* EXCEPTION_FLT_DIVIDE_BY_ZERO */
	case 0xC0000090: /* EXCEPTION_FLT_INVALID_OPERATION */
		return SIGFPE;
	case 0xC0000409: /* STATUS_STACK_BUFFER_OVERRUN, also what __fastfail reports */
		return SIGABRT;
	default:
		return 0;
	}
}

static wchar_t *utf8_to_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;

	if (!w || MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) <= 0) {
		free(w);
		return NULL;
	}
	return w;
}

static void drain_pipe(HANDLE rd, struct outcome *o)
{
	DWORD avail = 0, got = 0;
	char buf[4096];

	while (PeekNamedPipe(rd, NULL, 0, NULL, &avail, NULL) && avail > 0) {
		if (!ReadFile(rd, buf, avail < sizeof buf ? avail : (DWORD)sizeof buf, &got, NULL) || got == 0)
			break;
		outcome_add(o, buf, got);
	}
}

static void run_case(const struct hpt_case *c, double timeout, struct outcome *o)
{
	SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	HANDLE rd, wr, job;
	wchar_t exe[32768], *args;
	char *narrow;
	ULONGLONG start;
	DWORD code = 0;
	int done = 0;

	if (!CreatePipe(&rd, &wr, &sa, 1 << 16)) {
		o->spawn_failed = 1;
		return;
	}
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0); /* only the write end goes to the test */
	if (!GetModuleFileNameW(NULL, exe, (DWORD)(sizeof exe / sizeof exe[0]))) {
		CloseHandle(rd);
		CloseHandle(wr);
		o->spawn_failed = 1;
		return;
	}
	/* Suite and test names are C identifiers, so only the program's path needs quoting. */
	narrow = format(" --hpt-run=%s/%s --hpt-param=%zu --hpt-pipe=%llu", c->test->suite, c->test->name,
			c->index, (unsigned long long)(uintptr_t)wr);
	args = utf8_to_wide(narrow);
	free(narrow);
	{
		size_t le = wcslen(exe), la = args ? wcslen(args) : 0;
		wchar_t *cmd = malloc((le + la + 3) * sizeof *cmd);

		if (!cmd || !args) {
			free(cmd);
			free(args);
			CloseHandle(rd);
			CloseHandle(wr);
			o->spawn_failed = 1;
			return;
		}
		cmd[0] = L'"';
		memcpy(cmd + 1, exe, le * sizeof *cmd);
		cmd[le + 1] = L'"';
		memcpy(cmd + le + 2, args, (la + 1) * sizeof *cmd);
		free(args);
		args = cmd;
	}
	memset(&si, 0, sizeof si);
	si.cb = sizeof si;
	fflush(NULL);
	/*
	 * Started suspended so that it is in the job before it can start anything of its own.
	 * ERROR_INTERNAL_ERROR is wine's report of a process that ended before its start was
	 * done, its loader failed and none of the test ran (seen once in a CI run on a busy host):
	 * such a start is tried twice more.
	 */
	for (int tries = 0;; tries++) {
		if (CreateProcessW(exe, args, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi))
			break;
		o->spawn_error = (unsigned long)GetLastError();
		if (o->spawn_error != ERROR_INTERNAL_ERROR || tries == 2) {
			free(args);
			CloseHandle(rd);
			CloseHandle(wr);
			o->spawn_failed = 1;
			return;
		}
		Sleep(10u * (unsigned)(tries + 1));
	}
	free(args);
	CloseHandle(wr);
	job = CreateJobObjectW(NULL, NULL);
	if (job && !AssignProcessToJobObject(job, pi.hProcess)) {
		CloseHandle(job);
		job = NULL; /* then a timeout ends the test's process alone */
	}
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);

	start = GetTickCount64();
	while (!done) {
		DWORD w = WaitForSingleObject(pi.hProcess, 50);

		drain_pipe(rd, o);
		if (w == WAIT_OBJECT_0) {
			done = 1;
		} else if ((double)(GetTickCount64() - start) / 1000.0 >= timeout) {
			if (job)
				TerminateJobObject(job, 1);
			TerminateProcess(pi.hProcess, 1);
			WaitForSingleObject(pi.hProcess, INFINITE);
			o->timed_out = 1;
			done = 1;
		}
	}
	drain_pipe(rd, o);
	if (!o->timed_out && GetExitCodeProcess(pi.hProcess, &code)) {
		int sig = win_exception_signal(code);

		if (sig) {
			o->signaled = 1;
			o->sig = sig;
		} else {
			o->exited = 1;
			o->code = (int)code;
		}
	}
	if (job)
		CloseHandle(job);
	CloseHandle(pi.hProcess);
	CloseHandle(rd);
}

#else /* POSIX */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The test running now, so that an interrupted runner takes it down too. */
static volatile sig_atomic_t running_pid;

static void on_runner_signal(int sig)
{
	pid_t pid = (pid_t)running_pid;

	if (pid > 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Read what is there without blocking; 1 once every writer has closed the pipe. */
static int drain_fd(int fd, struct outcome *o)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n > 0)
			outcome_add(o, buf, (size_t)n);
		else if (n == 0)
			return 1;
		else if (errno != EINTR)
			return 0;
	}
}

static void run_case(const struct hpt_case *c, void *param, double timeout, struct outcome *o)
{
	int fds[2], status = 0, reaped = 0, eof = 0;
	double start;
	pid_t pid;

	if (pipe(fds) < 0) {
		o->spawn_failed = 1;
		return;
	}
	/* A program the test execs must not hold the pipe open: the runner reads until EOF. */
	(void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	fflush(NULL); /* else the child would print the runner's buffered output a second time */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		o->spawn_failed = 1;
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		(void)setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		report_pipe = fds[1];
		test_pid = getpid();
		run_test_here(c->test, param);
	}
	(void)setpgid(pid, pid); /* both sides set it, so there is no window where kill(-pid) misses */
	running_pid = pid;
	close(fds[1]);
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);

	start = now_seconds();
	for (;;) {
		struct pollfd pfd = {fds[0], POLLIN, 0};
		double left = timeout - (now_seconds() - start);
		pid_t r;

		/*
		 * Wake at least every 100 ms: a helper the test forked may hold the pipe open after
		 * the test itself has ended, so EOF alone does not say the test is over.  After EOF
		 * the pipe is always "ready", so then only the 10 ms pause paces the loop.
		 */
		if (left > 0)
			(void)poll(&pfd, eof ? 0 : 1, eof ? 10 : left < 0.1 ? (int)(left * 1000) + 1 : 100);
		if (!eof)
			eof = drain_fd(fds[0], o);
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid) {
			reaped = 1;
			break;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (now_seconds() - start >= timeout) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			o->timed_out = 1;
			break;
		}
	}
	running_pid = 0;
	(void)drain_fd(fds[0], o);
	close(fds[0]);
	if (o->timed_out || !reaped)
		return;
	if (WIFEXITED(status)) {
		o->exited = 1;
		o->code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		o->signaled = 1;
		o->sig = WTERMSIG(status);
	}
}
#endif

/* What the records of one test say. */
struct facts {
	char    *fail;           /* the first failure, "file:line\nmessage" */
	unsigned more_failures;  /* failures after the first, printed as they are read */
	char    *skip;           /* the skip, "file:line\nreason" */
	char     phase[8];       /* the last phase the test's process announced */
	int      win_sig;        /* the signal named by a Windows test's process, or 0 */
};

/* Split "file:line\nmessage" into its two parts (the text is modified). */
static const char *located_message(char *text, const char **at)
{
	char *nl = strchr(text, '\n');

	*at = text;
	if (!nl)
		return "";
	*nl = '\0';
	return nl + 1;
}

static void read_records(const struct outcome *o, struct facts *f)
{
	size_t off = 0;

	memset(f, 0, sizeof *f);
	while (o->len - off >= 5) {
		char kind = o->records[off], *text;
		uint32_t n;

		memcpy(&n, o->records + off + 1, 4);
		if (o->len - off - 5 < n)
			break; /* cut short by a crash: the partial record says nothing */
		text = malloc((size_t)n + 1);
		if (!text)
			abort();
		memcpy(text, o->records + off + 5, n);
		text[n] = '\0';
		off += 5 + (size_t)n;
		if (kind == REC_FAIL && !f->fail) {
			f->fail = text;
			continue;
		}
		if (kind == REC_FAIL) {
			const char *at, *msg = located_message(text, &at);

			f->more_failures++;
			printf("[----]   then: %s at %s\n", msg, at);
		} else if (kind == REC_SKIP && !f->skip) {
			f->skip = text;
			continue;
		} else if (kind == REC_PHASE) {
			snprintf(f->phase, sizeof f->phase, "%s", text);
		} else if (kind == REC_SIGNAL) {
			f->win_sig = atoi(text);
		}
		free(text);
	}
}

enum result { PASSED, FAILED, SKIPPED };

static void print_name(const struct hpt_case *c)
{
	if (c->is_param)
		printf("%s::%s[%zu]", c->test->suite, c->test->name, c->index);
	else
		printf("%s::%s", c->test->suite, c->test->name);
}

static enum result judge(const struct hpt_case *c, struct outcome *o, double timeout)
{
	const struct hpt_test *t = c->test;
	enum result result = PASSED;
	struct facts f;
	const char *during, *at, *msg;
	char *why = NULL;

	/* read_records() prints the failures after the first, so the verdict line comes last. */
	read_records(o, &f);
	if (f.win_sig && !o->timed_out) {
		o->signaled = 1;
		o->sig = f.win_sig;
		o->exited = 0;
	}
	during = !strcmp(f.phase, "init") ? " during .init" : !strcmp(f.phase, "fini") ? " during .fini" : "";

	if (o->spawn_failed) {
		why = o->spawn_error ? format("the runner could not start the test's process (CreateProcessW: error %lu) at %s:%d",
					      o->spawn_error, t->file, t->line)
				     : format("the runner could not start the test's process at %s:%d", t->file, t->line);
	} else if (o->timed_out) {
		why = format("timed out after %g s%s at %s:%d", timeout, during, t->file, t->line);
	} else if (f.fail) {
		msg = located_message(f.fail, &at);
		why = format("%s at %s%s%s", msg, at, f.more_failures ? " (and later failures, above)" : "",
			     o->signaled && o->sig != t->opts.signal ? "; then the process was killed by a signal" : "");
	} else if (f.skip) {
		msg = located_message(f.skip, &at);
		why = format("%s", msg);
		result = SKIPPED;
	} else if (o->signaled) {
		if (o->sig != t->opts.signal)
			why = format("crashed: killed by %s (signal %d)%s at %s:%d", signal_name(o->sig), o->sig,
				     during, t->file, t->line);
	} else if (o->exited) {
		if (t->opts.signal)
			why = format("exited with status %d, but %s (signal %d) was expected at %s:%d", o->code,
				     signal_name(t->opts.signal), t->opts.signal, t->file, t->line);
		else if (o->code != t->opts.exit_code)
			why = format("exited with status %d, expected %d%s at %s:%d", o->code, t->opts.exit_code,
				     during, t->file, t->line);
	} else {
		why = format("ended in a way the runner cannot tell at %s:%d", t->file, t->line);
	}
	if (why && result == PASSED)
		result = FAILED;
	printf("%s ", result == PASSED ? "[PASS]" : result == FAILED ? "[FAIL]" : "[SKIP]");
	print_name(c);
	if (why)
		printf(": %s", why);
	printf("\n");
	free(why);
	free(f.fail);
	free(f.skip);
	return result;
}

/* ------------------------------------------------------------------------------------------ */
/* main                                                                                       */

static int compare_tests(const void *a, const void *b)
{
	const struct hpt_test *x = *(const struct hpt_test *const *)a, *y = *(const struct hpt_test *const *)b;
	int d = strcmp(x->suite, y->suite);

	return d ? d : strcmp(x->name, y->name);
}

static void usage(FILE *to, const char *prog)
{
	fprintf(to,
		"usage: %s [--filter suite/name] [--timeout seconds] [--list] [--verbose] [--jobs=N]\n"
		"  --filter PATTERN   run only tests whose suite/name matches PATTERN ('*' and '?' are wildcards)\n"
		"  --timeout S        default limit per test in seconds, for tests and suites that set none\n"
		"                     (default %g)\n"
		"  --list             print the tests, run none\n"
		"  --verbose          also print a line when each test starts\n"
		"  --jobs=N           accepted for Criterion's sake; tests always run one at a time\n",
		prog, HPT_DEFAULT_TIMEOUT);
}

/* "--name=value" or "--name value": the value, advancing *i past it; NULL if arg is not --name. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *arg = argv[*i];

	if (strncmp(arg, name, n) != 0)
		return NULL;
	if (arg[n] == '=')
		return arg + n + 1;
	if (arg[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s: %s needs a value\n", argv[0], name);
		exit(2);
	}
	return argv[++*i];
}

static struct hpt_test **sorted_tests(size_t *count)
{
	size_t n = 0, i = 0;
	struct hpt_test **v;

	for (struct hpt_test *t = registered_tests; t; t = t->next)
		n++;
	v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		abort();
	for (struct hpt_test *t = registered_tests; t; t = t->next)
		v[i++] = t;
	qsort(v, n, sizeof *v, compare_tests);
	*count = n;
	return v;
}

static int filter_matches(const char *filter, const struct hpt_test *t)
{
	char *full;
	int match;

	if (!filter)
		return 1;
	full = format("%s/%s", t->suite, t->name);
	match = glob_match(filter, full);
	free(full);
	return match;
}

#ifdef _WIN32
/* The re-launched process: find the test named on the command line and run it here. */
static int run_named_test(const char *which, const char *param_text, const char *pipe_text)
{
	size_t n, index = param_text ? (size_t)strtoull(param_text, NULL, 10) : 0;
	struct hpt_test **tests = sorted_tests(&n);
	void *param = NULL;

	report_pipe = (HANDLE)(uintptr_t)strtoull(pipe_text, NULL, 10);
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX); /* no crash dialog to wait on */
	signal(SIGABRT, win_on_signal);
	signal(SIGSEGV, win_on_signal);
	signal(SIGILL, win_on_signal);
	signal(SIGFPE, win_on_signal);
	for (size_t i = 0; i < n; i++) {
		char *full = format("%s/%s", tests[i]->suite, tests[i]->name);
		int same = !strcmp(full, which);

		free(full);
		if (!same)
			continue;
		if (tests[i]->params) {
			/* The generator runs again here and must give the same elements as in the runner. */
			struct hpt_params p = tests[i]->params();

			if (index >= p.length) {
				fprintf(stderr, "hpt_harness: %s has no parameter %zu\n", which, index);
				return 2;
			}
			param = (void *)((uintptr_t)p.array + index * p.size);
		}
		run_test_here(tests[i], param);
	}
	fprintf(stderr, "hpt_harness: no test %s in this program\n", which);
	return 2;
}
#endif

int main(int argc, char **argv)
{
	const char *filter = NULL, *value;
	double timeout = HPT_DEFAULT_TIMEOUT;
	int list = 0, verbose = 0;
	unsigned passed = 0, failed = 0, skipped = 0;
	struct hpt_test **tests;
	struct hpt_params *params;
	size_t ntests;
#ifdef _WIN32
	const char *run_which = NULL, *run_param = NULL, *run_pipe = NULL;
#endif

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if ((value = option_value(argc, argv, &i, "--filter")) != NULL) {
			filter = value;
		} else if ((value = option_value(argc, argv, &i, "--timeout")) != NULL) {
			char *end;

			timeout = strtod(value, &end);
			if (end == value || *end != '\0' || !(timeout > 0)) {
				fprintf(stderr, "%s: --timeout %s: give the seconds as a number above 0, e.g. --timeout 120\n",
					argv[0], value);
				return 2;
			}
		} else if ((value = option_value(argc, argv, &i, "--jobs")) != NULL || !strncmp(arg, "-j", 2)) {
			/* Always serial: see the top of this file. */
			if (!strcmp(arg, "-j") && i + 1 < argc)
				i++;
		} else if (!strcmp(arg, "--list") || !strcmp(arg, "-l")) {
			list = 1;
		} else if (!strncmp(arg, "--verbose", 9)) {
			verbose = 1;
#ifdef _WIN32
		} else if (!strncmp(arg, "--hpt-run=", 10)) {
			run_which = arg + 10;
		} else if (!strncmp(arg, "--hpt-param=", 12)) {
			run_param = arg + 12;
		} else if (!strncmp(arg, "--hpt-pipe=", 11)) {
			run_pipe = arg + 11;
#endif
		} else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout, argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option %s (this is hpshm's built-in test harness; "
					"it takes the options below)\n", argv[0], arg);
			usage(stderr, argv[0]);
			return 2;
		}
	}

#ifdef _WIN32
	if (run_which && run_pipe)
		return run_named_test(run_which, run_param, run_pipe);
#else
	signal(SIGINT, on_runner_signal);
	signal(SIGTERM, on_runner_signal);
	signal(SIGHUP, on_runner_signal);
#endif

	tests = sorted_tests(&ntests);
	params = calloc(ntests ? ntests : 1, sizeof *params);
	if (!params)
		abort();
	for (size_t i = 0; i < ntests; i++) {
		const struct hpt_test *t = tests[i];
		size_t count;

		if (!filter_matches(filter, t))
			continue;
		if (t->params)
			params[i] = t->params();
		count = t->params ? params[i].length : 1;
		for (size_t k = 0; k < count; k++) {
			struct hpt_case c = {t, k, t->params != NULL};
			struct outcome o;
			double limit = case_timeout(t, timeout);

			if (list) {
				print_name(&c);
				printf("%s\n", t->opts.disabled ? " (disabled)" : "");
				continue;
			}
			if (t->opts.disabled) {
				printf("[SKIP] ");
				print_name(&c);
				printf(": disabled\n");
				skipped++;
				continue;
			}
			if (verbose) {
				printf("[RUN ] ");
				print_name(&c);
				printf("\n");
			}
			fflush(stdout);
			memset(&o, 0, sizeof o);
#ifdef _WIN32
			run_case(&c, limit, &o);
#else
			run_case(&c, case_param(&c, &params[i]), limit, &o);
#endif
			switch (judge(&c, &o, limit)) {
			case PASSED: passed++; break;
			case FAILED: failed++; break;
			case SKIPPED: skipped++; break;
			}
			fflush(stdout);
			free(o.records);
		}
	}
	for (size_t i = 0; i < ntests; i++)
		if (params[i].cleanup)
			params[i].cleanup(&params[i]);
	free(params);
	free(tests);
	if (list)
		return 0;
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	fflush(stdout);
	return failed ? 1 : 0;
}
