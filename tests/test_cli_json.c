/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli_json.c -- the one shape of every `hpshm CMD --json` (tools/envelope.c,
 * doc/schema/): {"ok", "version", "command", "result", "error"}, on success, on a usage error
 * (exit 2), on a bad configuration (exit 2) and when the machine says no (exit 1).
 *
 * The writer indents by two spaces per level, so a member of the envelope is a line that
 * starts with exactly two spaces: a substring search for "\n  \"ok\": true" is exact enough
 * and needs no JSON parser (scripts/check-json.sh validates against the schemas).
 */
#include <stdio.h>
#include <string.h>
#ifdef __linux__
#include <unistd.h> /* getpid, unlink: exec's case */
#endif

#include "harness.h"
#include "fixture.h"
#include "hpshm.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

TestSuite(cli_json, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 60);

/* Windows' stdout is in text mode: its "\r\n" read as "\n", so one pattern fits every OS. */
static struct hpt_run *lf(struct hpt_run *r)
{
	char *w = r->out;

	for (const char *p = r->out; *p; p++)
		if (*p != '\r')
			*w++ = *p;
	*w = '\0';
	return r;
}

#define tool(...) lf(hpt_tool(HPSHM_TOOL_PATH, __VA_ARGS__))

/* Is the envelope member `"key": value` (value as written) in out? */
static int member(const char *out, const char *key, const char *value)
{
	char want[160];

	snprintf(want, sizeof want, "\n  \"%s\": %s", key, value);
	return strstr(out, want) != NULL;
}

/* r printed one envelope of cmd, ok or not, with the library's version. */
static void expect_envelope(const struct hpt_run *r, const char *cmd, int ok)
{
	char v[64], c[64];

	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s\nstderr: %s", r->out, r->err);
	cr_assert(strncmp(r->out, "{\n  \"ok\": ", 10) == 0, "ok is not the first member:\n%s", r->out);
	cr_assert(member(r->out, "ok", ok ? "true" : "false"), "ok is not %d:\n%s", ok, r->out);
	snprintf(v, sizeof v, "\"%s\"", hpshm_version());
	cr_assert(member(r->out, "version", v), "no version %s:\n%s", v, r->out);
	snprintf(c, sizeof c, "\"%s\"", cmd);
	cr_assert(member(r->out, "command", c), "no command %s:\n%s", c, r->out);
	cr_assert(member(r->out, "result", ok ? "{" : ""), "no result:\n%s", r->out);
	cr_assert(member(r->out, "error", ok ? "null" : "{"), "error does not match ok=%d:\n%s", ok, r->out);
}

Test(cli_json, every_command_wraps_its_result)
{
	static const char *const runs[][6] = {
		{ "providers", "--json", NULL },
		{ "probe", "--json", NULL },
		{ "plan", "64MiB", "--json", NULL },
		{ "ls", "--json", NULL },
		{ "gc", "--dry-run", "--json", NULL },
		{ "check", "--size", "1MiB", "--config", "huge_pages=off", "--json" },
	};

	size_t sizes[8];
	/* A system that offers no huge page size (posix-generic) has nothing to plan: plan fails,
	 * and its failure is an envelope too. */
	int no_sizes = hpshm_huge_page_sizes(sizes, 8) <= 0;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct hpt_run *r = tool(runs[i][0], runs[i][1], runs[i][2], runs[i][3], runs[i][4], runs[i][5],
					 NULL);

		if (no_sizes && strcmp(runs[i][0], "plan") == 0) {
			cr_assert_eq(r->status, 1, "plan with no huge page size: exit %d, stderr: %s", r->status, r->err);
			expect_envelope(r, "plan", 0);
			continue;
		}
		cr_assert_eq(r->status, 0, "%s: exit %d, stderr: %s", runs[i][0], r->status, r->err);
		expect_envelope(r, runs[i][0], 1);
	}
}

Test(cli_json, providers_lists_under_result)
{
	struct hpt_run *r = tool("providers", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "\n  \"result\": {\n    \"providers\": [\n"), "not an object with providers:\n%s",
		  r->out);
	cr_assert(strstr(r->out, "\"name\": \"plain\""), "%s", r->out);
}

Test(cli_json, a_usage_error_before_or_after_json_is_an_envelope)
{
	static const char *const cmds[] = { "providers", "probe", "plan", "check", "ls", "gc", "bench" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct hpt_run *r = tool(cmds[i], "--bogus", "--json", NULL);

		cr_assert_eq(r->status, 2, "%s: exit %d", cmds[i], r->status);
		expect_envelope(r, cmds[i], 0);
		cr_assert(member(r->out, "result", "null"), "%s:\n%s", cmds[i], r->out);
		cr_assert(strstr(r->out, "\"name\": \"HPSHM_EINVAL\""), "%s:\n%s", cmds[i], r->out);
		cr_assert(strstr(r->out, "\"key\": \"--bogus\""), "%s: the key names the option:\n%s", cmds[i],
			  r->out);
		cr_assert(strstr(r->err, "--bogus"), "%s: stderr still says it: %s", cmds[i], r->err);
	}
	/* A value missing: the key is the option that lacks it. */
	{
		struct hpt_run *r = tool("check", "--json", "--size", NULL);

		cr_assert_eq(r->status, 2);
		expect_envelope(r, "check", 0);
		cr_assert(strstr(r->out, "\"key\": \"--size\""), "%s", r->out);
	}
}

Test(cli_json, a_usage_error_without_json_prints_nothing_on_stdout)
{
	struct hpt_run *r = tool("check", "--bogus", NULL);

	cr_assert_eq(r->status, 2);
	cr_assert_eq(r->out[0], '\0', "stdout: %s", r->out);
}

Test(cli_json, a_bad_config_is_the_librarys_error_record)
{
	struct hpt_run *r = tool("plan", "64MiB", "--config", "huge_pages=maybe", "--json", NULL);

	cr_assert_eq(r->status, 2, "stderr: %s", r->err);
	expect_envelope(r, "plan", 0);
	cr_assert(strstr(r->out, "\"code\": -3,\n    \"name\": \"HPSHM_EVALUE\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"key\": \"huge_pages\""), "%s", r->out);
	r = tool("probe", "--config", "no_such_key=1", "--json", NULL);
	cr_assert_eq(r->status, 2, "stderr: %s", r->err);
	expect_envelope(r, "probe", 0);
	cr_assert(strstr(r->out, "\"name\": \"HPSHM_ENOKEY\""), "%s", r->out);
}

Test(cli_json, a_failed_check_keeps_its_attempts_and_the_error_record)
{
	/* No architecture has 2GiB pages, and a 32-bit build can still name the size. */
	struct hpt_run *r = tool("check", "--size", "4MiB", "--json", "--config", "huge_pages=on,huge_page_size=2GiB",
				 NULL);

	cr_assert_eq(r->status, 1, "stderr: %s", r->err);
	expect_envelope(r, "check", 0);
	cr_assert(strstr(r->out, "\n    \"attempts\": ["), "%s", r->out);
	for (const char *const *k = (const char *const[]){ "code", "name", "message", "hint", "key", "call",
							   "provider", "errno", NULL };
	     *k; k++) {
		char want[32];

		snprintf(want, sizeof want, "\n    \"%s\": ", *k);
		cr_assert(strstr(strstr(r->out, "\n  \"error\": "), want), "no %s in the error:\n%s", *k, r->out);
	}
}

Test(cli_json, run_has_no_json)
{
	/* run's stdout is CMD's: --json is an unknown option there, and its error is text. */
	struct hpt_run *r = tool("run", "--json", "--size", "1MiB", "--", "true", NULL);

	cr_assert_eq(r->status, 2, "stderr: %s", r->err);
	cr_assert_eq(r->out[0], '\0', "stdout: %s", r->out);
}

#if defined(__linux__) && defined(HPSHM_PRELOAD_CHILD)
/* exec starts a program of this build (preload_child): the interposer of a sanitizer or musl
 * build cannot load into the system's programs.  A build without the interposer has no case. */
Test(cli_json, exec_says_its_verdict_before_the_exec)
{
	char marker[64];
	struct hpt_run *r;

	snprintf(marker, sizeof marker, "/tmp/hpt-cli-json-ran.%ld", (long)getpid());
	unlink(marker);
	r = tool("exec", "--json", "--min-size", "64MiB", "--", HPSHM_PRELOAD_CHILD, "touch", marker, NULL);
	unlink(marker);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	expect_envelope(r, "exec", 1);
	cr_assert(strstr(r->out, "\"min_size\": 67108864"), "%s", r->out);
	cr_assert(strstr(r->out, "\"preload\": \"/"), "%s", r->out);

	/* CMD is looked up first: the document never says ok for a program that is not there. */
	r = tool("exec", "--json", "--", "/nonexistent/hpshm-no-such-program", NULL);
	cr_assert_eq(r->status, 127, "stderr: %s", r->err);
	expect_envelope(r, "exec", 0);
	cr_assert(strstr(r->out, "\"call\": \"execvp\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"errno\": 2"), "%s", r->out);

	/* The checks' refusals too: name= cannot apply to anonymous regions. */
	r = tool("exec", "--json", "--config", "name=x", "--", "true", NULL);
	cr_assert_eq(r->status, 2, "stderr: %s", r->err);
	expect_envelope(r, "exec", 0);
}
#endif
