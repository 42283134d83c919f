/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli.c -- the `hpshm` tool, run as a program (HPSHM_TOOL_PATH, set by CMake).
 *
 * Bad arguments must exit non-zero and name the key or argument on stderr; --json output
 * must be one well-formed JSON value.  The tool runs with an empty environment apart from
 * PATH, so no HPSHM_* variable of the caller leaks into what it decides.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#endif

#include "fixture.h"
#include "hpshm.h"
#include "port.h"
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

/*
 * The commands an unknown command's error offers are the tool's: each one `hpshm --help` lists
 * (both come from the one command table in tools/hpshm.c), and no other.  The list was once
 * written by hand and left out exec.
 */
Test(cli, unknown_command_lists_every_command_of_the_table)
{
	static const char *const refusals[][3] = { { "frobnicate", NULL, NULL }, { "help", "frobnicate", NULL } };
	char names[32][32], list[1024];
	const char *p;
	int n = 0;
	struct hpt_run *r = tool("--help", NULL);

	cr_assert_eq(r->status, 0, "%s", r->err);
	p = strstr(r->out, "commands:");
	cr_assert(p && strchr(p, '\n'), "no command list in --help:\n%s", r->out);
	/* one "  name  summary" line each (Windows' console ends them in \r\n) */
	for (p = strchr(p, '\n') + 1; strncmp(p, "  ", 2) == 0 && strchr(p, '\n') && n < 32; p = strchr(p, '\n') + 1)
		cr_assert_eq(sscanf(p, "%31s", names[n++]), 1);
	cr_assert_geq(n, 2, "--help lists %d commands:\n%s", n, r->out);
	for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; k++) {
		int commas = 0;

		r = tool(refusals[k][0], refusals[k][1], NULL);
		expect_usage_error(r, "frobnicate");
		p = strstr(r->err, "commands: ");
		cr_assert_not_null(p, "no list of commands: %s", r->err);
		snprintf(list, sizeof list, ", %.*s, ", (int)strcspn(p + 10, "\r\n"), p + 10);
		for (int i = 0; i < n; i++) {
			char want[40];

			snprintf(want, sizeof want, ", %.32s, ", names[i]);
			cr_expect(strstr(list, want), "'%s': the list leaves out %s: %s", refusals[k][0], names[i], r->err);
		}
		for (p = list + 2; (p = strstr(p, ", ")) != NULL; p += 2)
			commas++;
		cr_expect_eq(commas, n, "'%s': %d commands listed, --help has %d: %s", refusals[k][0], commas, n,
			     r->err);
	}
	cr_expect(strstr(list, ", exec, "), "exec is not listed: %s", list);
}

Test(cli, unknown_option_is_named)
{
	expect_usage_error(tool("check", "--size", "4MiB", "--bogus-flag", NULL), "--bogus-flag");
}

Test(cli, gc_all_users_without_force_is_refused)
{
	/* Alone it would widen nothing (dead segments go whoever owns them): a usage error, not a silent no-op. */
	expect_usage_error(tool("gc", "--all-users", NULL), "--all-users");
}

Test(cli, mode_without_the_owners_read_and_write_is_named)
{
	static const char *const modes[] = {"0", "0000", "0400", "0200", "0066"};

	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		char kv[32];
		struct hpt_run *r;

		snprintf(kv, sizeof kv, "mode=%s,huge_pages=off", modes[i]);
		r = tool("check", "--size", "4MiB", "--config", kv, NULL);
		expect_usage_error(r, "mode");
		cr_expect(hpt_contains(r->err, "0600"), "mode=%s: the accepted values are not shown: %s", modes[i],
			  r->err);
	}
}

Test(cli, mode_with_the_owners_read_and_write_is_accepted)
{
	struct hpt_run *r = tool("check", "--size", "4MiB", "--config", "mode=0640,huge_pages=off", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
}

/* ---- plan ---- */

/* The unsigned number after "key": in the tool's JSON; cr_assert when it is missing. */
static size_t json_uint(const char *text, const char *key)
{
	char quoted[64];
	const char *at;

	snprintf(quoted, sizeof quoted, "\"%s\":", key);
	at = strstr(text, quoted);
	cr_assert_not_null(at, "no %s in:\n%s", key, text);
	return (size_t)strtoull(at + strlen(quoted), NULL, 10);
}

/*
 * plan SIZE [--config kv] --json: page_size, pages, mapped and usable size.  Where the port
 * offers no huge page size (ports/posix/pages_none.c) plan has nothing to count: it must fail
 * saying so, and the test skips.
 */
static void plan_json(const char *size, const char *kv, size_t *ps, size_t *pages, size_t *mapped, size_t *usable)
{
	size_t offered[8];
	struct hpt_run *r;

	if (hpshm_huge_page_sizes(offered, 8) <= 0) {
		r = tool("plan", size, "--json", NULL);
		cr_assert_neq(r->status, 0, "plan succeeded with no huge page size offered");
		cr_assert(hpt_contains(r->err, "huge page"), "stderr: %s", r->err);
		HPT_SKIP("this system offers no huge page size: plan has no pages to count (it says so: %s)", r->err);
	}
	r = kv ? tool("plan", size, "--config", kv, "--json", NULL) : tool("plan", size, "--json", NULL);

	cr_assert_eq(r->status, 0, "plan %s %s: stderr: %s", size, kv ? kv : "", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	*ps = json_uint(r->out, "page_size");
	*pages = json_uint(r->out, "pages");
	*mapped = json_uint(r->out, "mapped_size");
	*usable = json_uint(r->out, "usable_size");
}

/* The kernel's default huge page size if 64MiB is a whole number of them; skips otherwise. */
static size_t plan_page_size(void)
{
	size_t ps = hpt_default_huge_page_size();

	if (ps == 0)
		HPT_SKIP("the kernel offers no huge pages: plan has nothing to count");
	if (ps > ((size_t)64 << 20) || ((size_t)64 << 20) % ps)
		HPT_SKIP("the default huge page size (%zu bytes) does not divide 64MiB", ps);
	return ps;
}

Test(cli, plan_counts_whole_pages_without_a_header)
{
	size_t want_ps = plan_page_size(), ps, pages, mapped, usable;
	size_t want = ((size_t)64 << 20) / want_ps;
	char line[128], psz[32];
	struct hpt_run *r;

	plan_json("64MiB", NULL, &ps, &pages, &mapped, &usable);
	cr_assert_eq(ps, want_ps);
	cr_assert_eq(pages, want, "64MiB on %zu-byte pages: plan says %zu pages, want %zu", ps, pages, want);
	cr_assert_eq(mapped, (size_t)64 << 20);
	cr_assert_eq(usable, mapped);

	r = tool("plan", "64MiB", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	snprintf(line, sizeof line, "needs %zu huge pages of %s", want, hpt_size_text(ps, psz, sizeof psz));
	cr_assert(strstr(r->out, line), "no \"%s\" in:\n%s", line, r->out);
}

/*
 * A named segment keeps its header at its tail, in the object, so a size that fills whole
 * pages takes one more; an unnamed re-attachable one keeps it in its provider's label of the
 * object or in a companion of base pages, and takes exactly the pages its size fills (and
 * all of them are usable).
 */
Test(cli, plan_counts_a_header_page_only_for_named_segments)
{
	static const struct {
		const char *kv;
		size_t      extra; /* pages beyond 64 MiB's */
	} cases[] = {{"name=plan-test", 1}, {"reattach=exec", 0}};
	size_t want_ps = plan_page_size();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t ps, pages, mapped, usable, want = ((size_t)64 << 20) / want_ps + cases[i].extra;
		char line[128], psz[32];
		struct hpt_run *r;

		plan_json("64MiB", cases[i].kv, &ps, &pages, &mapped, &usable);
		cr_assert_eq(pages, want, "64MiB with %s: plan says %zu pages, want %zu", cases[i].kv, pages, want);
		cr_assert_eq(mapped, want * ps);
		if (cases[i].extra)
			cr_assert_eq(usable, mapped - 4096, "%s: the header region is not out of the usable size",
				     cases[i].kv);
		else
			cr_assert_eq(usable, mapped, "%s: the header took usable bytes", cases[i].kv);
		cr_assert_geq(usable, (size_t)64 << 20);

		r = tool("plan", "64MiB", "--config", cases[i].kv, NULL);
		cr_assert_eq(r->status, 0, "stderr: %s", r->err);
		snprintf(line, sizeof line, "needs %zu huge pages of %s", want, hpt_size_text(ps, psz, sizeof psz));
		cr_assert(strstr(r->out, line), "%s: no \"%s\" in:\n%s", cases[i].kv, line, r->out);
		cr_assert(strstr(r->out, cases[i].kv), "%s: the check command does not repeat it:\n%s", cases[i].kv,
			  r->out);
	}
}

Test(cli, plan_bad_config_is_named)
{
	expect_usage_error(tool("plan", "64MiB", "--config", "reattach=maybe", NULL), "reattach");
}

#ifdef _WIN32
/* Does this process's token hold SeLockMemoryPrivilege, enabled or not?  Asked of Windows here,
 * not of the library. */
static int token_holds_lock_memory(void)
{
	TOKEN_PRIVILEGES *tp;
	HANDLE token;
	DWORD need = 0;
	LUID luid;
	int held = 0;

	cr_assert(LookupPrivilegeValueW(NULL, L"SeLockMemoryPrivilege", &luid));
	cr_assert(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
	(void)GetTokenInformation(token, TokenPrivileges, NULL, 0, &need);
	tp = malloc(need);
	cr_assert_not_null(tp);
	cr_assert(GetTokenInformation(token, TokenPrivileges, tp, need, &need));
	for (DWORD i = 0; i < tp->PrivilegeCount; i++)
		held |= tp->Privileges[i].Luid.LowPart == luid.LowPart && tp->Privileges[i].Luid.HighPart == luid.HighPart;
	free(tp);
	CloseHandle(token);
	return held;
}
#endif

/*
 * What plan counts is what create maps: a re-attachable segment of 64MiB, created for real
 * on the planned page size, has the planned mapped size.
 */
Test(cli, plan_agrees_with_create)
{
	size_t want_ps = plan_page_size(), ps, pages, mapped, usable;
	struct hpt_pool pool;
	hpshm_segment *seg = NULL;
	hpshm_config *cfg = NULL;
	hpshm_report rep;
	hpshm_error err;
	char psz[32];
	int rc;

	plan_json("64MiB", "reattach=exec", &ps, &pages, &mapped, &usable);
	cr_assert_eq(ps, want_ps);
	hpt_size_text(ps, psz, sizeof psz);
#ifdef _WIN32
	(void)pool;
	if (!token_holds_lock_memory())
		HPT_UNAVAILABLE("windows_large", psz, "large pages need \"Lock pages in memory\", which this token lacks");
#else
	if (hpt_pool_read(ps, &pool) < 0 || hpt_pool_available(&pool) < pages)
		HPT_UNAVAILABLE("pool", psz, "needs %zu free %s pages to create what plan counted", pages, psz);
#endif

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, "reattach=exec,huge_pages=on", &err);
	cr_assert_eq(rc, 0, "%s", err.message);
	rc = hpshm_segment_create_ex(&seg, (size_t)64 << 20, cfg, &rep, &err);
	hpt_skip_emulated_refusal(rc, &err);
	hpshm_config_free(cfg);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_expect_eq(rep.page_size, ps);
	cr_expect_eq(rep.mapped_size, mapped, "create mapped %zu bytes, plan said %zu", rep.mapped_size, mapped);
	cr_expect_eq(rep.usable_size, usable, "create gave %zu usable bytes, plan said %zu", rep.usable_size, usable);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
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
	/* No architecture has 2GiB pages, and a 32-bit build can still name the size. */
	struct hpt_run *r = tool("check", "--size", "4MiB", "--json", "--config",
			     "huge_pages=on,huge_page_size=2GiB", NULL);

	cr_assert_neq(r->status, 0, "2GiB pages cannot exist on this machine");
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
	cr_assert(strstr(r->out, "\"plain\""), "%s", r->out);
#ifdef __linux__
	cr_assert(strstr(r->out, "mmap_hugetlb"), "%s", r->out);
#endif
}

Test(cli, providers_json_lists_plain)
{
	struct hpt_run *r = tool("providers", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"plain\""), "%s", r->out);
}

/* ---- ls and gc ---- */

/* The value of "key" in the first JSON object member after `from` in text, as "value" text; cr_asserts. */
static const char *json_after(const char *text, const char *from, const char *key)
{
	char quoted[64];
	const char *at = strstr(text, from);

	cr_assert_not_null(at, "no %s in:\n%s", from, text);
	snprintf(quoted, sizeof quoted, "\"%s\": ", key);
	at = strstr(at, quoted);
	cr_assert_not_null(at, "no %s after %s in:\n%s", key, from, text);
	return at + strlen(quoted);
}

Test(cli, ls_shows_a_live_named_segment_and_gc_keeps_it)
{
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	struct hpt_run *r;
	char name[64], kv[96], quoted[80];
	volatile unsigned char *p;

	snprintf(name, sizeof name, "cli-ls-%lld", (long long)hpshm__port_getpid());
	snprintf(kv, sizeof kv, "huge_pages=off,name=%s", name);
	snprintf(quoted, sizeof quoted, "\"name\": \"%s\"", name);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, (size_t)1 << 20, cfg, &err), 0, "%s", err.message);
	hpshm_config_free(cfg);
	p = hpshm_segment_address(seg);
	p[0] = 0x5a;

	r = tool("ls", "--json", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
#if !defined(__linux__) && !defined(_WIN32)
	/* POSIX gives no way to list shm objects: ls works, lists none of plain's, and says so. */
	cr_assert_null(strstr(r->out, quoted), "listed what this system cannot list:\n%s", r->out);
	r = tool("ls", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "cannot be listed on this system") != NULL, "no note:\n%s", r->out);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	return;
#endif
	cr_assert(strncmp(json_after(r->out, quoted, "state"), "\"alive\"", 7) == 0, "not alive:\n%s", r->out);

	r = tool("gc", NULL);
	cr_assert_eq(r->status, 0, "gc failed: %s", r->err);
	r = tool("ls", "--json", NULL);
	cr_assert(strstr(r->out, quoted), "gc removed a live segment:\n%s", r->out);
	cr_assert_eq(p[0], 0x5a);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	r = tool("ls", "--json", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert_null(strstr(r->out, quoted), "still listed after destroy:\n%s", r->out);
}

/* ---- the privilege huge pages need, per OS ---- */

Test(cli, probe_json_names_the_privilege_in_this_systems_terms)
{
	struct hpt_run *r = tool("probe", "--json", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"lock_privilege_held\":"), "no OS-neutral key:\n%s", r->out);
#ifdef _WIN32
	cr_assert(strstr(r->out, "\"lock_privilege\": \"SeLockMemoryPrivilege\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"se_lock_memory_privilege\":"), "%s", r->out);
	cr_assert_null(strstr(r->out, "cap_ipc_lock"), "a Linux key on Windows:\n%s", r->out);
#elif defined(__linux__)
	cr_assert(strstr(r->out, "\"lock_privilege\": \"CAP_IPC_LOCK\""), "%s", r->out);
	cr_assert(strstr(r->out, "\"cap_ipc_lock\":"), "Linux's key is gone:\n%s", r->out);
	cr_assert(strstr(r->out, "\"in_hugetlb_shm_group\":"), "Linux's key is gone:\n%s", r->out);
	cr_assert_null(strstr(r->out, "se_lock_memory_privilege"), "a Windows key on Linux:\n%s", r->out);
#endif
}

#ifdef _WIN32
Test(cli, plan_on_windows_says_how_to_grant_lock_pages_in_memory)
{
	struct hpt_run *r = tool("plan", "64MiB", "--json", NULL);
	int held = token_holds_lock_memory();

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"pool\": null"), "Windows has no pool to show:\n%s", r->out);
	cr_assert(strstr(r->out, held ? "\"ready\": true" : "\"ready\": false"), "held=%d:\n%s", held, r->out);
	if (!held) {
		cr_assert(strstr(r->out, "\"what\": \"privilege\""), "%s", r->out);
		cr_assert(strstr(r->out, "SeLockMemoryPrivilege = *S-1-"), "no line naming the account's SID:\n%s",
			  r->out);
		cr_assert(strstr(r->out, "secedit /configure"), "%s", r->out);
		cr_assert(strstr(r->out, "sign out and in again"), "%s", r->out);
	}
	r = tool("plan", "64MiB", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "no pool to reserve"), "%s", r->out);
	if (!held)
		cr_assert(strstr(r->out, "Lock pages in memory"), "%s", r->out);
	cr_assert(strstr(r->out, "hpshm check --size 64MiB"), "no check to verify with:\n%s", r->out);
}
#endif

#ifdef _WIN32
/* ---- Windows words on Windows (issue 22) ---- */

/* Fail naming the term, the command and the line it is on. */
static void expect_no_linux_term(const char *what, const char *text)
{
	const char *at = NULL, *term = hpt_linux_term(text, &at);
	const char *line = at;

	if (!term)
		return;
	while (line > text && line[-1] != '\n')
		line--;
	cr_assert_fail("%s prints the Linux-only \"%s\" on Windows: %.*s", what, term,
		       (int)(strchr(line, '\n') ? strchr(line, '\n') - line : (ptrdiff_t)strlen(line)), line);
}

Test(cli, help_on_windows_names_no_linux_mechanism)
{
	static const char *const cmds[] = { "providers", "probe", "plan", "check", "bench", "run", "exec", "ls", "gc" };
	struct hpt_run *r = tool("help", NULL);
	char what[64];

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	expect_no_linux_term("hpshm help", r->out);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tool("help", cmds[i], NULL);
		cr_assert_eq(r->status, 0, "help %s: %s", cmds[i], r->err);
		cr_assert(strstr(r->out, cmds[i]), "help %s names no command:\n%s", cmds[i], r->out);
		snprintf(what, sizeof what, "hpshm help %s", cmds[i]);
		expect_no_linux_term(what, r->out);
	}
}

Test(cli, probe_on_windows_names_no_linux_mechanism)
{
	struct hpt_run *r = tool("probe", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "SeLockMemoryPrivilege"), "no privilege in:\n%s", r->out);
	expect_no_linux_term("hpshm probe", r->out);
	expect_no_linux_term("hpshm probe (stderr)", r->err);
	r = tool("probe", "--json", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"populate\":"), "the keys that apply are gone:\n%s", r->out);
	expect_no_linux_term("hpshm probe --json", r->out);
}

/* The other commands an operator runs on Windows before a create: the same words. */
Test(cli, plan_ls_and_providers_on_windows_name_no_linux_mechanism)
{
	static const char *const runs[][3] = {
		{ "plan", "64MiB", NULL }, { "plan", "64MiB", "--json" }, { "providers", NULL, NULL },
		{ "ls", NULL, NULL }, { "ls", "--json", NULL },
	};
	char what[64];

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct hpt_run *r = tool(runs[i][0], runs[i][1], runs[i][2], NULL);

		snprintf(what, sizeof what, "hpshm %s %s %s", runs[i][0], runs[i][1] ? runs[i][1] : "",
			 runs[i][2] ? runs[i][2] : "");
		cr_assert_eq(r->status, 0, "%s: exit %d: %s", what, r->status, r->err);
		expect_no_linux_term(what, r->out);
		expect_no_linux_term(what, r->err);
	}
}
#endif

#ifdef __linux__
/* ---- NUMA placement (issue 23): the tool on this machine's real nodes ---- */

/* This machine's nodes, with their 2 MiB pools, or a skip naming why none can be shown. */
static int cli_nodes(struct hpshm__node *n, int max)
{
	int count = hpshm__port_numa_nodes((size_t)2 << 20, n, max);

	if (count == 0)
		HPT_SKIP("this kernel shows no NUMA nodes (/sys/devices/system/node)");
	return count;
}

Test(cli, probe_lists_the_nodes_with_their_pools_and_the_populate_threads)
{
	struct hpshm__node n[HPSHM__MAX_NODES];
	struct hpt_run *r;
	char want[64];

	cli_nodes(n, HPSHM__MAX_NODES);
	r = tool("probe", "--size", "1GiB", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "NUMA nodes (/sys/devices/system/node)"), "%s", r->out);
	cr_assert(strstr(r->out, "populate threads for 1GiB"), "%s", r->out);
	r = tool("probe", "--json", "--size", "1GiB", NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	snprintf(want, sizeof want, "\"node\": %d", n[0].id);
	cr_assert(strstr(r->out, "\"numa_nodes\"") && strstr(r->out, want), "%s", r->out);
	cr_assert(strstr(r->out, "\"populate_threads\""), "%s", r->out);
}

/*
 * Did the tool's plan (text or --json) see node 0's pool as n[0] says: its share of the
 * segment, pool_free + 1 pages, and the pool's free and total pages?
 */
static int plan_saw(const char *out, const struct hpshm__node *n, int json)
{
	char share[96], pool[96];
	const char *p;

	if (!json) {
		snprintf(share, sizeof share, "node %d: its share %lu pages, %lu free of its pool of %lu", n[0].id,
			 n[0].pool_free + 1, n[0].pool_free, n[0].pool_total);
		return strstr(out, share) != NULL;
	}
	snprintf(share, sizeof share, "\"share\": %lu,", n[0].pool_free + 1);
	snprintf(pool, sizeof pool, "\"free\": %lu,", n[0].pool_free);
	if ((p = strstr(out, share)) == NULL || (p = strstr(p, pool)) == NULL)
		return 0;
	snprintf(pool, sizeof pool, "\"total\": %lu", n[0].pool_total);
	return strstr(p, pool) != NULL;
}

/*
 * hpshm plan of one page more than node 0 has free, bound to it.  The pool is the machine's:
 * a neighbour (a PostgreSQL, a churner, another suite) that takes or returns pages between
 * this read and the tool's makes another plan, so a run in which the tool saw node 0's pool
 * other than this read did is made again.  What the tool printed for the node says what it
 * saw; the pool read before and after the run can agree while a neighbour took pages and gave
 * them back in between.
 */
static struct hpt_run *plan_one_page_short(struct hpshm__node *n, int json)
{
	char size[32], cfg[32];
	struct hpt_run *r;

	for (int tries = 0;; tries++) {
		cli_nodes(n, HPSHM__MAX_NODES);
		snprintf(size, sizeof size, "%luMiB", (n[0].pool_free + 1) * 2);
		snprintf(cfg, sizeof cfg, "numa=bind:%d", n[0].id);
		if (json)
			r = tool("plan", size, "--json", "--huge-page-size", "2MiB", "--config", cfg, NULL);
		else
			r = tool("plan", size, "--huge-page-size", "2MiB", "--config", cfg, NULL);
		if (r->status != 0 || plan_saw(r->out, n, json))
			return r;
		/* a plan without the node's share is wrong however the pool moved */
		cr_assert(strstr(r->out, json ? "\"share\"" : "its share"), "no share of node %d in the plan:\n%s", n[0].id,
			  r->out);
		if (tries == 20)
			HPT_SKIP("node %d's pool kept changing under the test (other programs take and return pages)",
				 n[0].id);
	}
}

Test(cli, plan_prints_the_per_node_command_for_a_bound_node_that_is_short)
{
	struct hpshm__node n[HPSHM__MAX_NODES];
	char want[160];
	struct hpt_run *r;

	r = plan_one_page_short(n, 0);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	snprintf(want, sizeof want, "echo %lu > /sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages",
		 n[0].pool_total + 1, n[0].id);
	cr_assert(strstr(r->out, want), "no per-node command \"%s\":\n%s", want, r->out);
	cr_assert(strstr(r->out, "populate: "), "%s", r->out);
	r = plan_one_page_short(n, 1);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"populate_threads\"") && strstr(r->out, "\"node_pool\""), "%s", r->out);
}

Test(cli, plan_and_check_name_a_node_the_machine_lacks)
{
	struct hpshm__node n[HPSHM__MAX_NODES];
	struct hpt_run *r;
	char cfg[32];
	int count = cli_nodes(n, HPSHM__MAX_NODES);

	snprintf(cfg, sizeof cfg, "numa=bind:%d", n[count - 1].id + 1);
	r = tool("plan", "64MiB", "--huge-page-size", "2MiB", "--config", cfg, NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "numa_node"), "%s", r->out);
	r = tool("check", "--size", "4MiB", "--config", cfg, NULL);
	cr_assert_eq(r->status, 1, "stderr: %s", r->err);
	cr_assert(strstr(r->err, "this machine has node"), "%s", r->err);
	cr_assert(strstr(r->err, "key: numa"), "%s", r->err);
}

Test(cli, check_reports_the_bytes_per_node_and_the_populate_threads)
{
	struct hpshm__node n[HPSHM__MAX_NODES];
	struct hpt_run *r;
	char cfg[96], want[64];

	HPT_SKIP_UNDER_EMULATOR("qemu-user implements no mbind: a policy is refused as on a kernel without NUMA");
	if (cli_nodes(n, HPSHM__MAX_NODES) != 1)
		HPT_SKIP("all of the segment is on one node only on a one-node machine");
	snprintf(cfg, sizeof cfg, "numa=bind:%d,huge_pages=off,populate=on,populate_threads=2", n[0].id);
	r = tool("check", "--size", "8MiB", "--config", cfg, NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	snprintf(want, sizeof want, "nodes=%d:8MiB", n[0].id);
	cr_assert(strstr(r->out, want), "%s", r->out);
	cr_assert(strstr(r->out, "pages by NUMA node"), "%s", r->out);
	r = tool("check", "--size", "8MiB", "--json", "--config", cfg, NULL);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(json_ok(r->out), "not one JSON value:\n%s", r->out);
	snprintf(want, sizeof want, "\"%d\": %zu", n[0].id, (size_t)8 << 20);
	cr_assert(strstr(r->out, want), "no %s in:\n%s", want, r->out);
	cr_assert(strstr(r->out, "\"populate_threads\": 2"), "%s", r->out);
}
#endif
