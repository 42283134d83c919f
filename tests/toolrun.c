/* SPDX-License-Identifier: MIT */
/*
 * tests/toolrun.c -- running the `hpshm` tool as a program, and checking its JSON.
 *
 * The tool runs with an empty environment apart from PATH (and what the caller adds), so no
 * HPSHM_* variable of the caller leaks into what it decides.
 *
 * On Windows the tool is started with CreateProcessW(), its standard output and error going to
 * two temporary files that are read once it has ended (no pipe to drain while waiting), with
 * PATH and SystemRoot from this process's environment (a Windows program needs the second to
 * load some system libraries).  A tool path without a directory is the program of that name
 * beside the running test program, which is how CMake names it for Windows (wine runs the
 * test with Windows paths; a Unix path of the build tree would not start).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include "ports/windows/windows.h"
#else
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "harness.h"

#include "fixture.h"
#include "toolrun.h"

static struct hpt_run result;

#ifdef _WIN32
/* Append arg to the command line cmd[0..len) as CommandLineToArgvW() and the C runtime split
 * it back: quoted, with backslashes doubled only before a quote. */
static void win_quote(char *cmd, size_t len, const char *arg)
{
	size_t n = strlen(cmd);

#define WIN_PUT(c) do { if (n + 1 < len) cmd[n++] = (c); } while (0)
	if (n > 0)
		WIN_PUT(' ');
	WIN_PUT('"');
	for (const char *p = arg;; p++) {
		size_t slashes = 0;

		while (*p == '\\') {
			slashes++;
			p++;
		}
		if (*p == '\0' || *p == '"')
			slashes = slashes * 2 + (*p == '"');
		for (size_t i = 0; i < slashes; i++)
			WIN_PUT('\\');
		if (*p == '\0')
			break;
		WIN_PUT(*p);
	}
	WIN_PUT('"');
#undef WIN_PUT
	cmd[n] = '\0';
}

/* A temporary file the child can write to (inheritable) and that goes when closed. */
static HANDLE win_capture(void)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	wchar_t dir[MAX_PATH], path[MAX_PATH];
	HANDLE h;

	cr_assert(GetTempPathW(MAX_PATH, dir) > 0, "GetTempPathW: %lu", (unsigned long)GetLastError());
	cr_assert(GetTempFileNameW(dir, L"hpt", 0, path) != 0, "GetTempFileNameW: %lu", (unsigned long)GetLastError());
	h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa,
			CREATE_ALWAYS, FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
	cr_assert_neq(h, INVALID_HANDLE_VALUE, "CreateFileW: %lu", (unsigned long)GetLastError());
	return h;
}

/* Read what the child wrote to h into buf[0..cap), NUL-terminated, and close h. */
static void win_collect(HANDLE h, char *buf, size_t cap)
{
	DWORD got = 0;
	size_t len = 0;

	SetFilePointer(h, 0, NULL, FILE_BEGIN);
	while (len + 1 < cap && ReadFile(h, buf + len, (DWORD)(cap - 1 - len), &got, NULL) && got > 0)
		len += got;
	buf[len] = '\0';
	CloseHandle(h);
}

/* tool_path, or the program of that name beside this one when it has no directory. */
static void win_program(const char *tool_path, char *out, size_t len)
{
	wchar_t self[MAX_PATH];
	char *slash;

	if (strchr(tool_path, '\\') != NULL || strchr(tool_path, '/') != NULL) {
		snprintf(out, len, "%s", tool_path);
		return;
	}
	cr_assert(GetModuleFileNameW(NULL, self, MAX_PATH) > 0);
	hpshm__win_utf8(self, out, len);
	slash = strrchr(out, '\\');
	cr_assert_not_null(slash);
	snprintf(slash + 1, len - (size_t)(slash + 1 - out), "%s", tool_path);
}

struct hpt_run *hpt_tool_argv(const char *tool_path, char *const argv_in[], char *const env_extra[])
{
	static char cmd[8192], env[16384], program[1024];
	static const char *const keep[] = { "PATH", "SystemRoot" };
	wchar_t *wcmd, *wprogram, *wenv;
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	HANDLE out, err;
	DWORD code = 0;
	size_t el = 0;

	memset(&result, 0, sizeof result);
	win_program(tool_path, program, sizeof program);
	cmd[0] = '\0';
	win_quote(cmd, sizeof cmd, program);
	for (int i = 0; argv_in[i]; i++)
		win_quote(cmd, sizeof cmd, argv_in[i]);
	/* The environment block: NAME=value strings, each NUL-terminated, then an empty one. */
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		const char *v = getenv(keep[i]);

		if (v != NULL)
			el += (size_t)snprintf(env + el, sizeof env - el, "%s=%s", keep[i], v) + 1;
	}
	for (int i = 0; env_extra && env_extra[i]; i++)
		el += (size_t)snprintf(env + el, sizeof env - el, "%s", env_extra[i]) + 1;
	env[el++] = '\0';
	cr_assert_lt(el, sizeof env);
	wenv = calloc(el, sizeof(wchar_t));
	cr_assert_not_null(wenv);
	for (size_t at = 0, wat = 0; env[at] != '\0'; at += strlen(env + at) + 1) {
		int n = hpshm__win_wide(env + at, wenv + wat, el - wat);

		cr_assert_geq(n, 0, "cannot convert %s", env + at);
		wat += (size_t)n + 1;
	}
	wcmd = hpshm__win_wide_dup(cmd);
	wprogram = hpshm__win_wide_dup(program);
	cr_assert(wcmd != NULL && wprogram != NULL);

	out = win_capture();
	err = win_capture();
	memset(&si, 0, sizeof si);
	si.cb = sizeof si;
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = INVALID_HANDLE_VALUE;
	si.hStdOutput = out;
	si.hStdError = err;
	/* ERROR_INTERNAL_ERROR: under wine, the tool ended before its start was done, none of it
	 * ran (the harness's run_case()): tried twice more. */
	for (int tries = 0;; tries++) {
		BOOL ok = CreateProcessW(wprogram, wcmd, NULL, NULL, TRUE, CREATE_UNICODE_ENVIRONMENT, wenv, NULL, &si, &pi);
		DWORD fail = ok ? 0 : GetLastError();

		if (ok)
			break;
		cr_assert(fail == ERROR_INTERNAL_ERROR && tries < 2, "cannot start %s: error %lu", program,
			  (unsigned long)fail);
		Sleep(10u * (unsigned)(tries + 1));
	}
	free(wcmd);
	free(wprogram);
	free(wenv);
	CloseHandle(pi.hThread);
	cr_assert_eq(WaitForSingleObject(pi.hProcess, 120000), WAIT_OBJECT_0, "%s did not end in 120 s", program);
	cr_assert(GetExitCodeProcess(pi.hProcess, &code));
	CloseHandle(pi.hProcess);
	win_collect(out, result.out, sizeof result.out);
	win_collect(err, result.err, sizeof result.err);
	/* An exception code (0xC0000005 ...) is a crash: reported above 128 as a signal would be. */
	result.status = code >= 0xC0000000u ? 128 + 11 : (int)code;
	cr_log_info("hpshm %s ... -> %d\nstderr: %s", argv_in[0] ? argv_in[0] : "", result.status, result.err);
	return &result;
}
#else

struct hpt_run *hpt_tool_argv(const char *tool_path, char *const argv_in[], char *const env_extra[])
{
	char path_env[] = "PATH=/usr/bin:/bin", *argv[32], *envp[16];
	int po[2], pe[2], n = 0, st = 0, ne = 0;
	size_t lo = 0, le = 0;
	struct pollfd fds[2];
	pid_t pid;

	argv[n++] = (char *)(uintptr_t)tool_path;
	for (int i = 0; argv_in[i] && n < 31; i++)
		argv[n++] = argv_in[i];
	argv[n] = NULL;
	envp[ne++] = path_env;
	for (int i = 0; env_extra && env_extra[i] && ne < 15; i++)
		envp[ne++] = env_extra[i];
	envp[ne] = NULL;

	memset(&result, 0, sizeof result);
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid = hpt_fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		close(po[1]);
		close(pe[1]);
		execve(tool_path, argv, envp);
		_exit(127);
	}
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	close(po[1]);
	close(pe[1]);
	fds[0].fd = po[0];
	fds[1].fd = pe[0];
	fds[0].events = fds[1].events = POLLIN;
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		if (poll(fds, 2, 120000) <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			char *buf = i ? result.err : result.out;
			size_t cap = i ? sizeof result.err : sizeof result.out, *len = i ? &le : &lo;
			char sink[4096];
			ssize_t r;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (*len + 1 < cap)
				r = read(fds[i].fd, buf + *len, cap - 1 - *len);
			else
				r = read(fds[i].fd, sink, sizeof sink);
			if (r <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
			} else if (*len + 1 < cap) {
				*len += (size_t)r;
			}
		}
	}
	if (fds[0].fd >= 0)
		close(fds[0].fd);
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	result.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	cr_log_info("hpshm %s ... -> %d\nstderr: %s", argv[1] ? argv[1] : "", result.status, result.err);
	return &result;
}
#endif

struct hpt_run *hpt_tool(const char *tool_path, const char *a0, ...)
{
	static char args[24][256];
	char *argv[25];
	int n = 0;
	va_list ap;

	va_start(ap, a0);
	for (const char *a = a0; a && n < 24; a = va_arg(ap, const char *)) {
		snprintf(args[n], sizeof args[n], "%s", a);
		argv[n] = args[n];
		n++;
	}
	va_end(ap);
	argv[n] = NULL;
	return hpt_tool_argv(tool_path, argv, NULL);
}

/* ---- a small JSON checker: is text exactly one JSON value? ---- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		int object = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (object) {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

int hpt_json_ok(const char *text)
{
	const char *end = json_value(text, 0);

	return end && *json_ws(end) == '\0';
}


/*
 * Words that name a mechanism only Linux (or the other POSIX systems) has: the Windows tool
 * must print none of them (issue 22).  "nan" is a number printed from NaN, matched as a word.
 */
static const char *const linux_terms[] = {
	"CAP_IPC_LOCK", "hugetlb_shm_group", "hugetlbfs", "SysV", "System V", "sysv_hugetlb", "memfd",
	"shmget", "IPC_RMID", "SIGTERM", "SIGHUP", "SIGBUS", "LD_PRELOAD", "libhpshm_preload", "cgroup",
	"fallocate", "madvise", "/proc/", "/sys/", "nr_hugepages", "sysctl", "nan",
};

static int is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const char *hpt_linux_term(const char *text, const char **where)
{
	for (size_t i = 0; i < sizeof(linux_terms) / sizeof(linux_terms[0]); i++) {
		const char *t = linux_terms[i];
		size_t n = strlen(t);

		for (const char *at = strstr(text, t); at; at = strstr(at + 1, t)) {
			/* "nan" only as a word of its own: "financial" is no NaN. */
			if (strcmp(t, "nan") == 0 && ((at > text && is_word_char(at[-1])) || is_word_char(at[n])))
				continue;
			if (where)
				*where = at;
			return t;
		}
	}
	return NULL;
}
