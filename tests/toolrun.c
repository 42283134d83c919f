/*
 * tests/toolrun.c -- running the `hpshm` tool as a program, and checking its JSON.
 *
 * The tool runs with an empty environment apart from PATH (and what the caller adds), so no
 * HPSHM_* variable of the caller leaks into what it decides.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "toolrun.h"

static struct hpt_run result;

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

