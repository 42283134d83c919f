/* SPDX-License-Identifier: MIT */
/*
 * tests/test_bench_windows.c -- `hpshm bench` on Windows (natively or under wine), as a
 * program: what runs, what is left out and why, and the shape of its JSON.
 *
 * One short run (16 MiB, two rounds of 0.05 s phases, about two seconds under wine) is
 * checked from several sides: the members of the JSON, plain's verified page size, the raw
 * section compared with plain in the same rounds (the noise floor) and the limit's setup rows, large pages refused with their reason
 * where the token lacks SeLockMemoryPrivilege (always under wine, which never grants it and
 * backs SEC_LARGE_PAGES sections with 4 KiB pages), page tables null with the reason, and
 * the workloads Windows cannot have named in left_out.  Figures are never asserted beyond
 * being present and positive: a shared machine makes no timing a fair pass/fail line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "fixture.h"
#include "jsonrows.h"
#include "hpshm.h"
#include "port.h"
#include "ports/facts.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

#define bench(...) hpt_tool(HPSHM_TOOL_PATH, "bench", __VA_ARGS__)
/* A run small enough for a test under wine. */
#define SMALL "--size", "16MiB", "--rounds", "2", "--phase-seconds", "0.05", "--quiet", "--json"

TestSuite(bench_windows, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 120);

/* The run every test below reads: made once per test process (the harness forks none here). */
static struct hpt_run *bench_small(void)
{
	struct hpt_run *r = bench(SMALL, NULL);

	cr_assert_eq(r->status, 0, "bench failed (exit %d): %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	return r;
}

Test(bench_windows, json_has_the_members_of_the_linux_shape)
{
	static const char *const members[] = { "\"version\"", "\"size\": 16777216", "\"workers\": 2",
		"\"start\": \"spawn\"", "\"rounds_done\": 2", "\"groups\"", "\"group_members\"", "\"timing\"",
		"\"ratios\"", "\"pool\": \"", "\"left_out\": \"", "\"results\"", "\"unavailable\"" };
	struct hpt_run *r = bench_small();
	const char *nf = strstr(r->out, "\"noise_floor\": {");

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
		cr_expect(strstr(r->out, members[i]), "no %s in:\n%.2000s", members[i], r->out);
	cr_expect(strstr(r->out, "fork"), "left_out does not name fork");
	/* The same-calls pair on Windows: plain and the raw section, both paging-file sections. */
	cr_assert(nf, "no noise_floor:\n%.2000s", r->out);
	cr_expect(strstr(nf, "\"pair\": \"plain / raw section at 4 KiB: the same system calls") &&
		  strstr(nf, "\"pair\"") < strchr(nf, '}'), "noise_floor does not pair plain with the raw section:\n%.300s",
		  nf);
}

Test(bench_windows, plain_and_the_raw_section_run_at_the_base_page_size_and_compare)
{
	struct hpt_run *r = bench_small();
	const char *cur = r->out;
	struct hpt_row row;
	int chase = 0, rmw = 0, setup = 0, teardown = 0, plain_setup = 0, raw_setup = 0, limit_setup = 0;

	/* auto gives 16 MiB one populate thread, so no "raw section x1" is planned (plan.c). */
	cr_assert_eq(hpshm_populate_threads((size_t)16 << 20, 0, NULL), 1u);
	while (hpt_row_next(&cur, &row)) {
		char provider[64], workload[32], by[64];
		double ps, median, vs;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload))
			continue;   /* an "unavailable" entry */
		cr_assert(hpt_row_str(&row, "provider", provider, sizeof provider));
		cr_assert(hpt_row_num(&row, "page_size", &ps), "%s %s: no verified page size", provider, workload);
		cr_expect_eq((size_t)ps, hpshm_base_page_size(), "%s %s: page size %.0f", provider, workload, ps);
		cr_expect(hpt_row_str(&row, "verified_by", by, sizeof by) && strcmp(by, "QueryWorkingSetEx") == 0,
			  "%s %s: verified by %s, not QueryWorkingSetEx", provider, workload, by);
		if (strcmp(workload, "chase") == 0 || strcmp(workload, "rmw") == 0) {
			const char *ref = strcmp(provider, "plain") == 0 ? "ratio_vs_raw" : "ratio_vs_plain";

			cr_assert(hpt_row_num(&row, "median", &median) && median > 0, "%s %s: no positive median", provider,
				  workload);
			cr_assert(hpt_row_num(&row, ref, &vs), "%s %s: no %s", provider, workload, ref);
			cr_expect_gt(vs, 0.0, "%s %s: %s %f", provider, workload, ref, vs);
			chase += strcmp(workload, "chase") == 0;
			rmw += strcmp(workload, "rmw") == 0;
		}
		/* The thread CPU clock moves in ticks: a short setup may read 0, never less. */
		if (strcmp(workload, "setup") == 0 || strcmp(workload, "teardown") == 0) {
			cr_assert(hpt_row_num(&row, "median", &median) && median >= 0, "%s %s: no median", provider, workload);
			double samples;

			cr_expect(hpt_row_num(&row, "samples", &samples) && samples >= 5, "%s %s: %.0f samples, want >= 5",
				  provider, workload, samples);
			setup += strcmp(workload, "setup") == 0;
			teardown += strcmp(workload, "teardown") == 0;
		}
		if (strcmp(workload, "setup") == 0) {
			char metric[32];
			double threads;

			cr_assert(hpt_row_str(&row, "metric", metric, sizeof metric), "%s setup: no metric", provider);
			plain_setup += strcmp(provider, "plain") == 0;
			raw_setup += strcmp(provider, "raw section") == 0;
			if (strcmp(provider, "limit") == 0) {
				/* The limit is its zeroing alone: a create and a populate row of that one figure. */
				cr_expect(strcmp(metric, "create") == 0 || strcmp(metric, "populate") == 0, "limit %s row",
					  metric);
				cr_expect(hpt_row_num(&row, "threads", &threads) && threads == 1, "limit %s: threads %.0f",
					  metric, threads);
				limit_setup++;
			}
			if (strcmp(provider, "plain") == 0 && strcmp(metric, "create") == 0) {
				double share;

				cr_expect(hpt_row_num(&row, "share_of_limit", &share) && share > 0,
					  "plain create: no share of the limit");
			}
		}
	}
	cr_expect_eq(chase, 2, "chase rows for plain and the raw section: %d", chase);
	cr_expect_eq(rmw, 2, "rmw rows for plain and the raw section: %d", rmw);
	/* create, attach, populate and rest for plain and the raw section; create and populate for the limit. */
	cr_expect_eq(plain_setup, 4, "plain setup rows: %d", plain_setup);
	cr_expect_eq(raw_setup, 4, "raw section setup rows: %d", raw_setup);
	cr_expect_eq(limit_setup, 2, "limit setup rows: %d", limit_setup);
	cr_expect_eq(setup, 10, "setup rows (plain, raw section, limit; no raw x1): %d", setup);
	cr_expect_eq(teardown, 2, "teardown rows: %d", teardown);
}

Test(bench_windows, page_tables_are_null_with_the_reason)
{
	struct hpt_run *r = bench_small();
	const char *cur = r->out;
	struct hpt_row row;
	int n = 0;

	while (hpt_row_next(&cur, &row)) {
		char workload[32], reason[256];

		if (!hpt_row_str(&row, "workload", workload, sizeof workload) || strcmp(workload, "pagetables") != 0)
			continue;
		n++;
		cr_expect(hpt_row_null(&row, "median"), "a page-table figure on Windows: %.*s", (int)row.len, row.start);
		cr_expect(hpt_row_str(&row, "reason", reason, sizeof reason) && strstr(reason, "not offered on Windows"),
			  "page-table row without its reason: %.*s", (int)row.len, row.start);
	}
	cr_expect_gt(n, 0, "no page-table rows");
}

Test(bench_windows, large_pages_run_verified_or_are_refused_with_the_reason)
{
	size_t large = hpshm__os_default_page_size();
	struct hpt_run *r;
	const char *cur;
	struct hpt_row row;
	int refused = 0, ran = 0, want;

	if (large == 0)
		HPT_SKIP("GetLargePageMinimum() is 0: this processor has no large pages");
	/* hpshm (auto: windows_large), the raw section and the limit (whose region is a raw
	 * section), and the raw section x1 only where auto gives 16 MiB more than one thread. */
	want = 3 + (hpshm_populate_threads((size_t)16 << 20, large, NULL) > 1);
	r = bench_small();
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32], reason[512];
		double ps;

		cr_assert(hpt_row_str(&row, "provider", provider, sizeof provider));
		if (!hpt_row_num(&row, "page_size", &ps) || (size_t)ps != large)
			continue;
		if (hpt_row_str(&row, "workload", workload, sizeof workload)) {
			ran++;   /* a row at the large page size is one the kernel verified as large */
			continue;
		}
		cr_expect(hpt_row_str(&row, "reason", reason, sizeof reason) && reason[0], "%s refused without a reason",
			  provider);
		if (!hpshm__os_lock_privilege())
			cr_expect(strstr(reason, "SeLockMemoryPrivilege"), "%s: the reason does not name the privilege: %s",
				  provider, reason);
		cr_expect(strcmp(provider, "auto") == 0 || strncmp(provider, "raw section", 11) == 0 ||
			  strcmp(provider, "limit") == 0, "refused at the large page size: %s", provider);
		refused++;
	}
	/* Every large-page member, one way or the other. */
	cr_expect_eq(ran ? want : refused, want, "large pages: %d refused, %d result rows, want %d:\n%.3000s", refused,
		     ran, want, r->out);
	if (!hpshm__os_lock_privilege())
		cr_expect_eq(ran, 0, "large-page rows without SeLockMemoryPrivilege");
}

Test(bench_windows, threads_run_the_same_workloads)
{
	struct hpt_run *r = bench(SMALL, "--threads", NULL);

	cr_assert_eq(r->status, 0, "bench --threads failed (exit %d): %s", r->status, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_expect(strstr(r->out, "\"start\": \"threads\""), "no threads start in:\n%.1500s", r->out);
	cr_expect(strstr(r->out, "\"workload\": \"chase\"") && strstr(r->out, "\"workload\": \"rmw\""),
		  "no chase or rmw rows:\n%.1500s", r->out);
}

Test(bench_windows, fork_is_a_usage_error_that_says_why)
{
	struct hpt_run *r = bench("--fork", NULL);

	cr_expect_eq(r->status, 2, "bench --fork: exit %d, want 2 (usage)", r->status);
	cr_expect(strstr(r->err, "--fork") && strstr(r->err, "fork()"), "stderr does not say why: %s", r->err);
}

/* Is this program running under wine?  Asked of ntdll here, as the bench does not tell. */
static int under_wine(void)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

	return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

/*
 * The table and the progress a Windows operator reads name Windows' mechanisms only: no
 * "fallocate + madvise" populate, no "nan" page tables, no System V (issue 22); and the
 * ratios carry a caveat exactly when wine, not Windows, made them.
 */
Test(bench_windows, text_names_no_linux_mechanism_and_warns_under_wine)
{
	struct hpt_run *r = bench("--size", "16MiB", "--rounds", "1", "--phase-seconds", "0.05", NULL);
	const char *at = NULL, *term;

	cr_assert_eq(r->status, 0, "bench failed (exit %d): %s", r->status, r->err);
	cr_assert(strstr(r->out, "setup, part 1: populate ("), "no populate table:\n%s", r->out);
	/* The same-calls pair on Windows is plain and the raw section, both paging-file sections. */
	cr_expect(strstr(r->out, "\nnoise floor: plain / raw section at 4 KiB (the same system calls): chase "),
		  "no noise floor of plain and the raw section:\n%.1500s", r->out);
	term = hpt_linux_term(r->out, &at);
	cr_expect_null(term, "the table prints the Linux-only \"%s\" on Windows: %.80s", term, at);
	term = hpt_linux_term(r->err, &at);
	cr_expect_null(term, "the progress prints the Linux-only \"%s\" on Windows: %.80s", term, at);
	cr_expect_eq(strstr(r->out, "\ncaveat: ") != NULL, under_wine(), "caveat line %s, under wine %d:\n%.1500s",
		     strstr(r->out, "\ncaveat: ") ? "present" : "absent", under_wine(), r->out);
}

/*
 * A spawned worker ties its life to its controller's process, found by pid and start time:
 * a pid whose process started at another time is a later process that took the number over,
 * and the worker refuses it at once instead of serving it (or waiting on it) as its controller.
 * This test process plays the controller: the same pid with its real start time passes that
 * check (and stops at the channel, which no bench made); with another start time it does not.
 */
Test(bench_windows, a_worker_takes_its_controller_by_pid_and_start_time)
{
	char pid[32], start[32], wrong[32];
	uint64_t t = hpshm__port_process_start((long long)GetCurrentProcessId());
	struct hpt_run *r;

	cr_assert_neq(t, 0, "no start time for this process");
	snprintf(pid, sizeof pid, "%lu", (unsigned long)GetCurrentProcessId());
	snprintf(start, sizeof start, "%llu", (unsigned long long)t);
	snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)(t - 1));
	r = hpt_tool(HPSHM_TOOL_PATH, "__bench-worker", "--chan", "999999", "--size", "65536", "--len", "65536",
		     "--addr", "0", "--parent", pid, "--parent-start", wrong, "--hpshm", "0", NULL);
	cr_assert_eq(r->status, 1, "exit %d: %s", r->status, r->err);
	cr_assert(strstr(r->err, "is gone"), "took a process of another start time for its controller: %s", r->err);
	r = hpt_tool(HPSHM_TOOL_PATH, "__bench-worker", "--chan", "999999", "--size", "65536", "--len", "65536",
		     "--addr", "0", "--parent", pid, "--parent-start", start, "--hpshm", "0", NULL);
	cr_assert_eq(r->status, 1, "exit %d: %s", r->status, r->err);
	cr_assert_null(strstr(r->err, "is gone"), "refused its real controller: %s", r->err);
	cr_assert(strstr(r->err, "channel"), "%s", r->err);
}
