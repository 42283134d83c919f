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

#include "harness.h"

#include "fixture.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

TestSuite(cli, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 60);

/* Run the tool with its arguments, as a NULL-terminated list. */
#define tool(...) hpt_tool(HPSHM_TOOL_PATH, __VA_ARGS__)
#define json_ok(text) hpt_json_ok(text)

Test(cli, json_checker_rejects_broken_json)
{
	cr_assert(json_ok("{\"a\": [1, 2.5, -3e2, true, null, \"x\\n\"]}"));
	cr_assert(!json_ok("{\"a\": 1,}"));
	cr_assert(!json_ok("{\"a\" 1}"));
	cr_assert(!json_ok("{\"a\": 1} {"));
	cr_assert(!json_ok("{\"a\": \"\x01\"}"));
}

/* ---- bad arguments ---- */

static void expect_usage_error(struct hpt_run *r, const char *named)
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
	struct hpt_run *r = tool("check", "--size", "4MiB", "--config", "huge_pages=maybe", NULL);

	expect_usage_error(r, "huge_pages");
	cr_expect(hpt_contains(r->err, "maybe") || hpt_contains(r->err, "off"), "neither value nor choices: %s",
		  r->err);
}

Test(cli, unknown_provider_is_named)
{
	struct hpt_run *r = tool("check", "--size", "4MiB", "--config", "provider=nosuch", NULL);

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
	struct hpt_run *r = tool("check", "--size", "4MiB", "--json", "--config", "huge_pages=off", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"plain\""), "huge_pages=off must give plain: %s", r->out);
}

Test(cli, check_json_on_failure_is_still_json)
{
	struct hpt_run *r = tool("check", "--size", "4MiB", "--json", "--config",
			     "huge_pages=on,huge_page_size=16GiB", NULL);

	cr_assert_neq(r->status, 0, "16GiB pages cannot exist on this machine");
	cr_assert_lt(r->status, 128);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider\""), "%s", r->out);
}

Test(cli, probe_json_parses)
{
	struct hpt_run *r = tool("probe", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"provider"), "%s", r->out);
	cr_assert(strstr(r->out, "mmap_hugetlb"), "%s", r->out);
}

Test(cli, providers_json_lists_plain)
{
	struct hpt_run *r = tool("providers", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"plain\""), "%s", r->out);
}
