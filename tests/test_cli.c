/*
 * tests/test_cli.c -- the `hpshm` tool, run as a program (HPSHM_TOOL_PATH, set by CMake).
 *
 * Bad arguments must exit non-zero and name the key or argument on stderr; --json output
 * must be one well-formed JSON value.  The tool runs with an empty environment apart from
 * PATH, so no HPSHM_* variable of the caller leaks into what it decides.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fixture.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

TestSuite(cli, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 60);

struct run {
	int  status;   /* exit code, or 128 + signal */
	char out[65536];
	char err[16384];
};

static struct run result;

/* Run the tool with up to 8 arguments (NULL-terminated list). */
static struct run *tool(const char *a0, ...)
{
	static char path_env[] = "PATH=/usr/bin:/bin", tool_path[] = HPSHM_TOOL_PATH, args[12][256];
	char *argv[12], *envp[] = {path_env, NULL};
	int po[2], pe[2], n = 1, st = 0;
	size_t lo = 0, le = 0;
	struct pollfd fds[2];
	va_list ap;
	pid_t pid;

	argv[0] = tool_path;
	va_start(ap, a0);
	for (const char *a = a0; a && n < 11; a = va_arg(ap, const char *)) {
		snprintf(args[n], sizeof args[n], "%s", a);
		argv[n] = args[n];
		n++;
	}
	va_end(ap);
	argv[n] = NULL;

	memset(&result, 0, sizeof result);
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
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
	close(po[1]);
	close(pe[1]);
	fds[0].fd = po[0];
	fds[1].fd = pe[0];
	fds[0].events = fds[1].events = POLLIN;
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		if (poll(fds, 2, 30000) <= 0)
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
	cr_log_info("hpshm %s ... -> %d\nstderr: %s", a0 ? a0 : "", result.status, result.err);
	return &result;
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

static int json_ok(const char *text)
{
	const char *end = json_value(text, 0);

	return end && *json_ws(end) == '\0';
}

Test(cli, json_checker_rejects_broken_json)
{
	cr_assert(json_ok("{\"a\": [1, 2.5, -3e2, true, null, \"x\\n\"]}"));
	cr_assert(!json_ok("{\"a\": 1,}"));
	cr_assert(!json_ok("{\"a\" 1}"));
	cr_assert(!json_ok("{\"a\": 1} {"));
	cr_assert(!json_ok("{\"a\": \"\x01\"}"));
}

/* ---- bad arguments ---- */

static void expect_usage_error(struct run *r, const char *named)
{
	cr_assert_neq(r->status, 0, "exit 0 for a bad argument");
	cr_assert_lt(r->status, 128, "the tool died of signal %d", r->status - 128);
	cr_assert(hpt_contains(r->err, named), "stderr does not name %s: %s", named, r->err);
}

Test(cli, unknown_key_is_named)
{
	expect_usage_error(tool("check", "--size", "4MiB", "--config", "huge_pagez=on", NULL), "huge_pagez");
}

Test(cli, bad_value_is_named_with_its_key)
{
	struct run *r = tool("check", "--size", "4MiB", "--config", "huge_pages=maybe", NULL);

	expect_usage_error(r, "huge_pages");
	cr_expect(hpt_contains(r->err, "maybe") || hpt_contains(r->err, "off"), "neither value nor choices: %s",
		  r->err);
}

Test(cli, unknown_provider_is_named)
{
	struct run *r = tool("check", "--size", "4MiB", "--config", "provider=nosuch", NULL);

	expect_usage_error(r, "provider");
	cr_expect(hpt_contains(r->err, "nosuch"), "%s", r->err);
}

Test(cli, size_zero_is_refused)
{
	expect_usage_error(tool("check", "--size", "0", NULL), "size");
}

Test(cli, overflowing_size_is_refused)
{
	expect_usage_error(tool("check", "--size", "99999999999999999999", NULL), "size");
	expect_usage_error(tool("check", "--size", "16EiB", NULL), "size");
}

Test(cli, not_a_size_is_refused)
{
	expect_usage_error(tool("check", "--size", "lots", NULL), "size");
}

Test(cli, missing_size_is_refused)
{
	expect_usage_error(tool("check", NULL), "size");
}

Test(cli, unknown_command_is_refused)
{
	expect_usage_error(tool("frobnicate", NULL), "frobnicate");
}

Test(cli, unknown_option_is_named)
{
	expect_usage_error(tool("check", "--size", "4MiB", "--bogus-flag", NULL), "--bogus-flag");
}

/* ---- JSON ---- */

Test(cli, check_json_parses_and_names_the_provider)
{
	struct run *r = tool("check", "--size", "4MiB", "--json", "--config", "huge_pages=off", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"plain\""), "huge_pages=off must give plain: %s", r->out);
}

Test(cli, check_json_on_failure_is_still_json)
{
	struct run *r = tool("check", "--size", "4MiB", "--json", "--config",
			     "huge_pages=on,huge_page_size=16GiB", NULL);

	cr_assert_neq(r->status, 0, "16GiB pages cannot exist on this machine");
	cr_assert_lt(r->status, 128);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider\""), "%s", r->out);
}

Test(cli, probe_json_parses)
{
	struct run *r = tool("probe", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider"), "%s", r->out);
	cr_assert(strstr(r->out, "mmap_hugetlb"), "%s", r->out);
}

Test(cli, providers_json_lists_plain)
{
	struct run *r = tool("providers", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"plain\""), "%s", r->out);
}
