/* SPDX-License-Identifier: MIT */
/*
 * tests/test_bench.c -- `hpshm bench` as a program: its arguments, the shape of its JSON, what
 * it does when huge pages cannot be had, and that Ctrl-C leaves nothing behind.
 *
 * These assert behaviour, never speed: the figures themselves are for people to read
 * (doc/bench.md), and on a shared 2-vCPU machine no timing is a fair pass/fail line.  What is
 * exact is asserted exactly: the verified page size of every row and the page-table sizes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "jsonrows.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

/* Why the bench cannot run under an emulator, for the tests that run it. */
#define BENCH_EXEC_SELF "the bench starts its workers by exec of the tool itself, which the kernel refuses for a foreign program (no binfmt_misc)"
#define bench(...) hpt_tool(HPSHM_TOOL_PATH, "bench", __VA_ARGS__)

TestSuite(bench, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 240);

static void expect_usage_error(const char *named, const char *a0, const char *a1, const char *a2)
{
	struct hpt_run *r = bench(a0, a1, a2, NULL);

	cr_expect_eq(r->status, 2, "bench %s %s: exit %d, want 2 (usage)", a0, a1 ? a1 : "", r->status);
	cr_expect(strstr(r->err, named), "bench %s %s: stderr does not name %s: %s", a0, a1 ? a1 : "", named,
		  r->err);
}

Test(bench, rejects_bad_arguments_naming_them)
{
	expect_usage_error("--size", "--size", "0", NULL);
	expect_usage_error("--size", "--size", "lots", NULL);
	expect_usage_error("--size", "--size", "99999999999999999999", NULL);
	expect_usage_error("--workers", "--workers", "0", NULL);
	expect_usage_error("--rounds", "--rounds", "0", NULL);
	expect_usage_error("--phase-seconds", "--phase-seconds", "-1", NULL);
	expect_usage_error("nosuch", "--providers", "nosuch", NULL);
	expect_usage_error("--bogus", "--bogus", NULL, NULL);
	expect_usage_error("--json", "--json", "--csv", NULL);
}

/* A run small enough for a test: two rounds of very short phases. */
#define SMALL "--rounds", "2", "--phase-seconds", "0.05", "--quiet", "--json"

Test(bench, json_has_every_workload_with_verified_page_sizes)
{
	static const char *const workloads[] = { "chase", "rmw", "setup", "teardown", "pagetables" };
	struct hpt_run *r;
	const char *cur;
	struct hpt_row row, nf;
	int seen[5] = { 0 }, plain_pt[5] = { 0 }, rows = 0;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	r = bench("--size", "16MiB", "--providers", "plain,raw", SMALL, NULL);

	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"results\""), "%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32], unit[32];
		double ps, workers, median;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload))
			continue;   /* not a result row (e.g. an "unavailable" entry) */
		rows++;
		cr_assert(hpt_row_str(&row, "provider", provider, sizeof provider));
		cr_assert(hpt_row_str(&row, "unit", unit, sizeof unit), "row without a unit: %.*s", (int)row.len,
			  row.start);
		cr_assert(hpt_row_num(&row, "page_size", &ps), "row without a verified page size");
		cr_expect_eq((long)ps, sysconf(_SC_PAGESIZE), "%s %s: page size %.0f", provider, workload, ps);
		cr_assert(hpt_row_num(&row, "workers", &workers));
		cr_assert(hpt_row_num(&row, "median", &median), "%s %s has no median", provider, workload);
		cr_expect_gt(median, 0.0, "%s %s: median %f", provider, workload, median);
		for (int i = 0; i < 5; i++)
			if (strcmp(workload, workloads[i]) == 0)
				seen[i] = 1;
		if (strcmp(provider, "plain") == 0 && strcmp(workload, "pagetables") == 0 && workers <= 4)
			plain_pt[(int)workers] = 1;
		/* Setup and teardown come from fresh cycles, as many as a workload has rounds. */
		if (strcmp(workload, "setup") == 0 || strcmp(workload, "teardown") == 0) {
			double samples;

			cr_expect(hpt_row_num(&row, "samples", &samples) && samples >= 5, "%s %s: %.0f samples, want >= 5",
				  provider, workload, samples);
		}
		/* Each row is compared with at least one reference: plain's with raw, raw's with plain. */
		cr_expect(strstr(row.start, "\"ratio_vs_plain\"") && strstr(row.start, "\"ratio_vs_raw\""),
			  "%s %s lacks ratio fields", provider, workload);
	}
	cr_assert_gt(rows, 0, "no result rows:\n%s", r->out);
	cr_expect(strstr(r->out, "\"headline\": ["), "no headline list:\n%s", r->out);
	/* Two 16 MiB regions of base pages fit: the rounds keep them alive together, their pages mixed. */
	cr_expect(strstr(r->out, "plain 4KiB} together\""), "the rounds did not run together, mixed:\n%.600s",
		  strstr(r->out, "\"group_members\"") ? strstr(r->out, "\"group_members\"") : r->out);
	/* Together, the noise floor is the median of blocks of turns (A B, B A): at least one
	 * block of each workload per round, and its count said. */
	nf.start = strstr(r->out, "\"noise_floor\": {");
	cr_assert(nf.start, "no noise_floor:\n%s", r->out);
	nf.len = (size_t)(strchr(nf.start, '}') - nf.start);
	for (int k = 0; k < 2; k++) {
		double blocks = 0, ratio = 0;

		cr_expect(hpt_row_num(&nf, k ? "rmw_blocks" : "chase_blocks", &blocks) && blocks >= 2,
			  "noise floor %s: %.0f blocks of turns over 2 rounds, want >= 2:\n%.*s", k ? "rmw" : "chase",
			  blocks, (int)nf.len, nf.start);
		cr_expect(hpt_row_num(&nf, k ? "rmw" : "chase", &ratio) && ratio > 0, "noise floor %s: no ratio",
			  k ? "rmw" : "chase");
	}
	for (int i = 0; i < 5; i++)
		cr_expect(seen[i], "no %s row", workloads[i]);
	cr_expect(plain_pt[1] && plain_pt[2] && plain_pt[4], "page tables not measured with 1, 2 and 4 workers");
}

#ifndef HPSHM_TEST_BENCH_APR
#error "HPSHM_TEST_BENCH_APR must say whether the tool was built with the APR peer (-DHPSHM_BENCH_APR)"
#endif

/*
 * The APR peer is in the tool exactly when the build asked for it (-DHPSHM_BENCH_APR=ON, which
 * scripts/test.sh sets): then it measures APR's segments, on base pages; else the report lists
 * it as unavailable and says how to build it, and the run measures the rest.
 */
Test(bench, apr_peer_runs_when_built_with_it_and_says_how_to_build_it_otherwise)
{
	struct hpt_run *r;
	const char *cur;
	struct hpt_row row;
	int apr_rows = 0, apr_unavailable = 0, plain_rows = 0;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	r = bench("--size", "16MiB", "--fork", "--providers", "plain,apr", SMALL, NULL);
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32], reason[256];
		double ps;

		if (!hpt_row_str(&row, "provider", provider, sizeof provider))
			continue;
		if (!hpt_row_str(&row, "workload", workload, sizeof workload)) {
			if (strcmp(provider, "apr") == 0 && hpt_row_str(&row, "reason", reason, sizeof reason)) {
				apr_unavailable++;
				cr_expect(strstr(reason, "HPSHM_BENCH_APR"), "the reason does not say how to build it: %s",
					  reason);
			}
			continue;
		}
		if (strcmp(provider, "plain") == 0)
			plain_rows++;
		if (strcmp(provider, "apr") != 0)
			continue;
		apr_rows++;
		cr_assert(hpt_row_num(&row, "page_size", &ps), "an apr row without a verified page size");
		cr_expect_eq((long)ps, sysconf(_SC_PAGESIZE), "apr %s: page size %.0f", workload, ps);
	}
	cr_expect_gt(plain_rows, 0, "no plain rows:\n%s", r->out);
#if HPSHM_TEST_BENCH_APR
	cr_expect_gt(apr_rows, 0, "built with the APR peer, and no apr rows:\n%s", r->out);
	cr_expect_eq(apr_unavailable, 0, "built with the APR peer, and it is unavailable:\n%s", r->out);
#else
	cr_expect_eq(apr_rows, 0, "built without the APR peer, and apr rows:\n%s", r->out);
	cr_expect_eq(apr_unavailable, 1, "built without the APR peer, and no unavailable entry for it:\n%s", r->out);
#endif
}

/* Pages of the default huge page pool from its sysfs file (free_hugepages, nr_hugepages). */
static long pool_count(size_t *page_size, const char *file);

/* Free pages of the default huge page pool. */
static long pool_free(size_t *page_size)
{
	return pool_count(page_size, "free_hugepages");
}

static long pool_count(size_t *page_size, const char *file)
{
	char path[128], buf[64];
	long kb = 0, n = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(buf, sizeof buf, f))
		if (sscanf(buf, "Hugepagesize: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb <= 0)
		return -1;
	*page_size = (size_t)kb << 10;
	snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%ldkB/%s", kb, file);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * No huge page to be had: every huge provider must be reported unusable with its reason, and
 * the run must still compare what it can.  Where the test has a hugetlb cgroup of its own
 * (tests/fixture.h), its limits are set to 0, so the pool is empty for this test alone, however
 * large it is and whatever other programs take or return, and a small run does; the reason
 * then names the cgroup's limit, unless the pool is empty anyway: nr_hugepages 0 comes first.
 * Elsewhere the run asks for more than the pool's total, not its free pages, which other
 * programs take for a moment: so it holds with an empty pool and with CI's reserved one alike.
 */
Test(bench, runs_without_huge_pages_and_says_why)
{
	char size[32], psz[32];
	size_t ps = 0;
	long free_pages = pool_count(&ps, "nr_hugepages"); /* the pool's total, not its free pages */
	struct hpt_run *r;
	int limited;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);

	if (free_pages < 0)
		HPT_SKIP("the kernel offers no huge pages: nothing to be unavailable");
	limited = hpt_refuse_huge_pages(ps) == 0;
	if (limited)
		snprintf(size, sizeof size, "%zuMiB", 4 * (ps >> 20) + 8);
	else
		snprintf(size, sizeof size, "%ldMiB", (long)(((size_t)free_pages + 8) * (ps >> 20)) + 8);
	snprintf(psz, sizeof psz, "%zuKiB", ps >> 10);
	r = bench("--size", size, "--page-size", psz, "--providers", "auto,plain", "--rounds", "1", "--phase-seconds",
		  "0.02", "--quiet", "--json", NULL);
	cr_assert_eq(r->status, 0, "bench must run without huge pages: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"unavailable\""), "no unavailable list:\n%s", r->out);
	/* An empty pool is the first reason, with or without a cgroup's limit of 0 on top. */
	if (limited && free_pages > 0)
		cr_expect(strstr(r->out, "hugetlb."), "the reason does not name the cgroup's limit:\n%s", r->out);
	else
		cr_expect(strstr(r->out, "nr_hugepages"), "the reason does not name vm.nr_hugepages:\n%s", r->out);
	cr_expect(strstr(r->out, "\"workload\": \"rmw\""), "plain was not measured:\n%s", r->out);
}

/*
 * With a pool: the huge rows carry the page size the kernel reports, and their page tables
 * are a small fraction of plain's (exact figures: 2 KiB per MiB for 4 KiB pages, next to
 * nothing for 2 MiB ones).
 */
Test(bench, huge_rows_are_verified_and_page_tables_shrink)
{
	size_t ps = 0;
	long free_pages = pool_free(&ps);
	const char *cur;
	struct hpt_row row;
	double huge_pt = -1, plain_pt = -1;
	int huge_rows = 0;
	char psz[32];
	struct hpt_run *r;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);

	if (free_pages < 40)
		HPT_UNAVAILABLE("memfd_hugetlb", "2MiB",
				"needs 40 free huge pages, %ld are (reserve a pool: echo 64 > /proc/sys/vm/nr_hugepages)",
				free_pages);
	snprintf(psz, sizeof psz, "%zuKiB", ps >> 10);
	/*
	 * The workers are spawned and attach at the creator's address.  In a sanitizer build their
	 * runtime maps its own memory before main() and may take part of that range, which the
	 * bench reports as "is taken in this process" and drops the provider: that is the
	 * sanitizer's placement, not what this test judges, so such a run is made again (twice at
	 * most).  Any other reason fails below.
	 */
	for (int tries = 0;; tries++) {
		r = bench("--size", "64MiB", "--page-size", psz, "--providers", "memfd_hugetlb,plain", SMALL, NULL);
		if (tries == 2 || r->status != 0 || !strstr(r->out, "is taken in this process"))
			break;
		cr_log_info("the workers' range was taken in the child (a sanitizer's own mappings): run again");
	}
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32];
		double page, workers, median;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload) ||
		    !hpt_row_str(&row, "provider", provider, sizeof provider) || !hpt_row_num(&row, "page_size", &page))
			continue;
		if (strcmp(provider, "memfd_hugetlb") == 0) {
			huge_rows++;
			cr_expect_eq((size_t)page, ps, "memfd_hugetlb %s: verified page size %.0f, want %zu", workload,
				     page, ps);
		}
		if (strcmp(workload, "pagetables") == 0 && hpt_row_num(&row, "workers", &workers) && workers == 1 &&
		    hpt_row_num(&row, "median", &median))
			*(strcmp(provider, "plain") == 0 ? &plain_pt : &huge_pt) = median;
	}
	cr_assert_gt(huge_rows, 0, "no memfd_hugetlb rows:\n%s\n%s", r->out, r->err);
	cr_assert(plain_pt > 0 && huge_pt >= 0, "page tables missing (plain %f, huge %f)", plain_pt, huge_pt);
	/*
	 * 64 MiB of 4 KiB pages needs 128 KiB of page tables per process (2 KiB per MiB); with
	 * 2 MiB pages nearly all of it goes.  Compared as a difference, so a few pages the worker
	 * allocates for itself meanwhile (more in a sanitizer build) cannot decide it.
	 */
	cr_expect_geq(plain_pt, 128.0, "plain page tables %f KiB", plain_pt);
	cr_expect_geq(plain_pt - huge_pt, 0.9 * 128.0, "huge page tables %f KiB, plain %f KiB", huge_pt, plain_pt);
}

/*
 * hpshm and the raw system calls at the same huge page size share one group, so every
 * hpshm/raw ratio of chase, rmw, setup and teardown is measured, and the headline puts
 * hpshm's gain over plain next to raw's.  Sized so a small pool holds both regions at once.
 */
Test(bench, hpshm_and_raw_share_a_group_at_the_huge_page_size)
{
	size_t ps = 0;
	long free_pages = pool_free(&ps);
	const char *cur, *hl;
	struct hpt_row row;
	int paired = 0;
	char psz[32];
	struct hpt_run *r;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);

	if (free_pages < 20)
		HPT_UNAVAILABLE_PAGES("memfd_hugetlb", "2MiB", 20,
				      "needs 20 free huge pages for its 16 MiB regions, %ld are (echo 64 > "
				      "/proc/sys/vm/nr_hugepages)", free_pages);
	snprintf(psz, sizeof psz, "%zuKiB", ps >> 10);
	r = bench("--size", "16MiB", "--page-size", psz, "--providers", "memfd_hugetlb,raw,plain", "--rounds", "1",
		  "--phase-seconds", "0.02", "--quiet", "--json", NULL);
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_expect(strstr(r->out, "\"kept_apart\": \"\""), "memory split the group:\n%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32], metric[32];
		double ratio, samples;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload) ||
		    !hpt_row_str(&row, "provider", provider, sizeof provider) ||
		    !hpt_row_str(&row, "metric", metric, sizeof metric) || strcmp(provider, "memfd_hugetlb") != 0 ||
		    strcmp(workload, "pagetables") == 0)
			continue;
		cr_expect(hpt_row_num(&row, "ratio_vs_raw", &ratio) && ratio > 0, "memfd_hugetlb %s %s: no ratio_vs_raw",
			  workload, metric);
		if (strcmp(workload, "setup") == 0 || strcmp(workload, "teardown") == 0)
			cr_expect(hpt_row_num(&row, "samples", &samples) && samples >= 5,
				  "memfd_hugetlb %s %s: %.0f samples, want >= 5", workload, metric, samples);
		paired += strcmp(workload, "chase") == 0 || strcmp(workload, "rmw") == 0;
	}
	cr_expect_eq(paired, 2, "want a chase and an rmw row of memfd_hugetlb:\n%s", r->out);
	hl = strstr(r->out, "\"headline\": [");
	cr_assert(hl, "no headline:\n%s", r->out);
	for (int k = 0; k < 2; k++) {
		const char *w = k ? "\"workload\": \"rmw\"" : "\"workload\": \"chase\"", *e = strstr(hl, w);
		const char *res = strstr(hl, "\"results\"");

		cr_expect(e && res && e < res, "no %s headline:\n%.2000s", w, hl);
		if (e && res && e < res) {
			const char *kept = strstr(e, "\"kept\": ");

			const char *why = strstr(r->out, "\"unavailable\"");

			/* The share is missing when plain or a peer dropped out: the bench's "unavailable" says why. */
			cr_expect(kept && kept < res && strncmp(kept + 8, "null", 4) != 0, "%s headline has no kept share:\n%.1500s\n%.1500s",
				  w, e, why ? why : "(no \"unavailable\")");
			cr_expect(strstr(e, "\"raw\": \"raw memfd\"") && strstr(e, "\"raw\": \"raw memfd\"") < res,
				  "%s headline does not name its raw peer", w);
		}
	}
}

/*
 * The setup rows of a populate split over threads: hpshm's create says how many threads
 * populated it (what hpshm_populate_threads() says auto gives), its raw peer used as many,
 * the raw calls with one thread ("raw memfd x1") and the limit ran in the same setup
 * cycles (>= 7 samples each), and the create row has its gain over raw x1 and its share of
 * the limit; the top level has the noise floor of the same-calls pair.  128 MiB, so that
 * auto gives two threads on a machine with two CPUs (64 MiB a thread at least).
 */
Test(bench, setup_rows_have_threads_raw_x1_and_the_limit)
{
	size_t ps = 0;
	long free_pages = pool_free(&ps);
	unsigned want;
	const char *cur, *nf;
	struct hpt_row row;
	int limit = 0, raw1 = 0, hpshm_create = 0;
	char psz[32];
	struct hpt_run *r;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	if (free_pages < 70)
		HPT_UNAVAILABLE_PAGES("memfd_hugetlb", "2MiB", 70,
				      "needs 70 free huge pages for a 128 MiB region, %ld are (echo 160 > "
				      "/proc/sys/vm/nr_hugepages)", free_pages);
	want = hpshm_populate_threads((size_t)128 << 20, ps, NULL);
	snprintf(psz, sizeof psz, "%zuKiB", ps >> 10);
	r = bench("--size", "128MiB", "--page-size", psz, "--providers", "memfd_hugetlb,raw,plain", "--rounds", "1",
		  "--phase-seconds", "0.02", "--quiet", "--json", NULL);
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32], metric[32];
		double threads = 0, samples = 0, v;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload) ||
		    !hpt_row_str(&row, "provider", provider, sizeof provider) ||
		    !hpt_row_str(&row, "metric", metric, sizeof metric) || strcmp(workload, "setup") != 0 ||
		    strcmp(metric, "create") != 0)
			continue;
		cr_assert(hpt_row_num(&row, "threads", &threads), "%s create has no threads", provider);
		cr_expect(hpt_row_num(&row, "samples", &samples) && samples >= 7, "%s create: %.0f samples, want >= 7",
			  provider, samples);
		if (strcmp(provider, "limit") == 0) {
			limit++;
			cr_expect(hpt_row_num(&row, "median", &v) && v > 0, "the limit has no figure");
		} else if (strcmp(provider, "raw memfd x1") == 0) {
			raw1++;
			cr_expect_eq((unsigned)threads, 1u, "raw memfd x1 populated with %.0f threads", threads);
		} else if (strcmp(provider, "memfd_hugetlb") == 0) {
			hpshm_create++;
			cr_expect_eq((unsigned)threads, want, "memfd_hugetlb: %.0f threads, auto gives %u", threads, want);
			cr_expect(hpt_row_num(&row, "share_of_limit", &v) && v > 0, "memfd_hugetlb create: no share_of_limit");
			if (want > 1)
				cr_expect(hpt_row_num(&row, "ratio_vs_raw1", &v) && v > 0, "memfd_hugetlb create: no ratio_vs_raw1");
		} else if (strcmp(provider, "raw memfd") == 0) {
			cr_expect_eq((unsigned)threads, want, "raw memfd (the fair peer): %.0f threads, want %u", threads, want);
		}
	}
	cr_expect_eq(hpshm_create, 1, "want one memfd_hugetlb create row:\n%s", r->out);
	cr_expect_geq(limit, 1, "no limit row:\n%s", r->out);
	if (want > 1)
		cr_expect_geq(raw1, 1, "no raw memfd x1 row:\n%s", r->out);
	nf = strstr(r->out, "\"noise_floor\": {");
	cr_assert(nf, "no noise_floor:\n%s", r->out);
	cr_expect(strstr(nf, "\"chase\": ") && strstr(nf, "\"rmw\": "), "noise_floor lacks chase or rmw:\n%.600s", nf);
}

/*
 * sysv_hugetlb and hugetlbfs are judged against their own calls (shmget + shmat, a file on a
 * hugetlbfs mount), not against a memfd: each row's ratio_vs_raw comes from its own peer in
 * one group, and the headline names that peer.  The peers leave nothing behind (the fixture
 * checks SysV segments and hugetlbfs files).
 */
Test(bench, sysv_and_hugetlbfs_have_raw_peers_of_their_own_calls)
{
	static const struct {
		const char *provider, *peer;
	} want[] = { { "sysv_hugetlb", "\"raw\": \"raw shm\"" }, { "hugetlbfs", "\"raw\": \"raw file\"" } };
	size_t ps = 0;
	long free_pages = pool_free(&ps);
	const char *cur, *hl, *un;
	struct hpt_row row;
	int rows[2] = { 0, 0 };
	char psz[32];
	struct hpt_run *r;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);

	if (free_pages < 40)
		HPT_UNAVAILABLE_PAGES("sysv_hugetlb", "2MiB", 40,
				      "needs 40 free huge pages for four 16 MiB regions at once, %ld are (echo 64 > "
				      "/proc/sys/vm/nr_hugepages)", free_pages);
	snprintf(psz, sizeof psz, "%zuKiB", ps >> 10);
	r = bench("--size", "16MiB", "--page-size", psz, "--providers", "sysv_hugetlb,hugetlbfs,raw,plain", "--rounds",
		  "1", "--phase-seconds", "0.02", "--quiet", "--json", NULL);
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	un = strstr(r->out, "\"unavailable\"");
	cr_assert(un, "no unavailable list:\n%s", r->out);
	for (int k = 0; k < 2; k++) {
		char name[48];

		snprintf(name, sizeof name, "\"%s\"", want[k].provider);
		if (strstr(un, name))   /* no mount, or no SysV privilege: the bench says which */
			HPT_UNAVAILABLE(want[k].provider, "2MiB", "%s is unavailable here: %.600s", want[k].provider, un);
	}
	cr_expect(strstr(r->out, "\"kept_apart\": \"\""), "memory split the group:\n%s", r->out);
	for (cur = r->out; hpt_row_next(&cur, &row);) {
		char provider[64], workload[32];
		double ratio;

		if (!hpt_row_str(&row, "workload", workload, sizeof workload) ||
		    !hpt_row_str(&row, "provider", provider, sizeof provider) ||
		    (strcmp(workload, "chase") != 0 && strcmp(workload, "rmw") != 0))
			continue;
		for (int k = 0; k < 2; k++)
			if (strcmp(provider, want[k].provider) == 0) {
				cr_expect(hpt_row_num(&row, "ratio_vs_raw", &ratio) && ratio > 0,
					  "%s %s: no ratio_vs_raw", provider, workload);
				rows[k]++;
			}
	}
	hl = strstr(r->out, "\"headline\": [");
	cr_assert(hl, "no headline:\n%s", r->out);
	for (int k = 0; k < 2; k++) {
		char h[64];
		const char *e, *end = strstr(hl, "\"results\"");

		cr_expect_eq(rows[k], 2, "want a chase and an rmw row of %s:\n%s", want[k].provider, r->out);
		snprintf(h, sizeof h, "\"hpshm\": \"%s\"", want[k].provider);
		e = strstr(hl, h);
		cr_expect(e && end && e < end, "no %s headline:\n%.2000s", want[k].provider, hl);
		if (e && end && e < end)
			cr_expect(strstr(e, want[k].peer) && strstr(e, want[k].peer) < strstr(e, "}"),
				  "the %s headline does not name %s:\n%.600s", want[k].provider, want[k].peer, e);
	}
}

/*
 * Processes still running that came from the bench whose pid is parent: its workers re-exec
 * the tool with "--parent <pid>".  Only that bench's: the suite's other tests run benches of
 * their own at the same time.
 */
static int bench_workers_alive(pid_t parent)
{
	char mark[48];

	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	snprintf(mark, sizeof mark, " --parent %ld ", (long)parent);
	while (d && (e = readdir(d)) != NULL) {
		char path[300], cmd[512];
		size_t len;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(cmd, 1, sizeof cmd - 1, f);
		fclose(f);
		for (size_t i = 0; i < len; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[len] = '\0';
		if (strstr(cmd, "__bench-worker") && strstr(cmd, mark))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Start a long bench of plain and raw with its stderr on a pipe, and read that until the
 * rounds run (workers started, memory live).  The pid; *rfd the pipe's read end, err what was
 * read.
 */
static pid_t bench_in_rounds(int *rfd, char *err, size_t errlen)
{
	static char tool_path[] = HPSHM_TOOL_PATH, a1[] = "bench", a2[] = "--size", a3[] = "64MiB",
		    a4[] = "--providers", a5[] = "plain,raw", a6[] = "--rounds", a7[] = "64",
		    a8[] = "--phase-seconds", a9[] = "0.2", path_env[] = "PATH=/usr/bin:/bin";
	char *argv[] = { tool_path, a1, a2, a3, a4, a5, a6, a7, a8, a9, NULL };
	char *envp[] = { path_env, NULL };
	size_t used = 0;
	int pe[2], running = 0;
	struct timespec t0, now;
	pid_t pid;

	cr_assert_eq(pipe(pe), 0);
	pid = hpt_fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(pe[1], 2);
		close(pe[0]);
		close(pe[1]);
		execve(tool_path, argv, envp);
		_exit(127);
	}
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	close(pe[1]);
	err[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct pollfd p = { .fd = pe[0], .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 1000) > 0) {
			n = read(pe[0], err + used, errlen - 1 - used);
			if (n <= 0)
				break;
			used += (size_t)n;
			err[used] = '\0';
		}
		running = strstr(err, "round 2/") != NULL;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!running && now.tv_sec - t0.tv_sec < 60 && used < errlen - 1);
	cr_assert(running, "the bench never reached round 2:\n%s", err);
	*rfd = pe[0];
	return pid;
}

Test(bench, ctrl_c_stops_cleanly_and_leaves_nothing)
{
	char err[8192];
	size_t used;
	int rfd, st = 0;
	pid_t pid;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	pid = bench_in_rounds(&rfd, err, sizeof err);
	cr_assert_eq(kill(pid, SIGINT), 0);
	used = strlen(err);
	while (read(rfd, err + used, used < sizeof err - 1 ? sizeof err - 1 - used : 0) > 0 && used < sizeof err - 1)
		used = strlen(err);
	close(rfd);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the bench died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_expect_eq(WEXITSTATUS(st), 130, "exit %d after SIGINT, want 130", WEXITSTATUS(st));
	cr_expect_eq(bench_workers_alive(pid), 0, "bench workers outlived the bench");
	/* The fixture checks the pool, SysV segments, /dev/shm and hugetlbfs files. */
}

/*
 * `hpshm bench | head`: the reader goes away, and the bench's next line of progress meets a
 * closed pipe.  It stops as on Ctrl-C, through the path that reaps the workers and gives the
 * pool back, instead of dying of SIGPIPE with the pool still raised.
 */
Test(bench, a_reader_that_goes_away_stops_it_cleanly)
{
	char err[8192];
	int rfd, st = 0;
	pid_t pid;

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	pid = bench_in_rounds(&rfd, err, sizeof err);
	close(rfd);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the bench died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_expect_eq(WEXITSTATUS(st), 130, "exit %d after its reader went, want 130 (stopped)", WEXITSTATUS(st));
	cr_expect_eq(bench_workers_alive(pid), 0, "bench workers outlived the bench");
}

/* The resize entry for what ("grow", "shrink", "sync") in the JSON's "resize" list, as a row. */
static int resize_entry(const char *out, const char *what, struct hpt_row *row)
{
	const char *list = strstr(out, "\"resize\": ["), *end, *p;
	char key[48];

	if (!list || !(end = strchr(list, ']')))
		return 0;
	snprintf(key, sizeof key, "\"what\": \"%s\"", what);
	p = strstr(list, key);
	if (!p || p > end)
		return 0;
	row->start = p;
	row->len = (size_t)(end - p);
	if ((p = strstr(p + 1, "\"what\"")) != NULL && p < end)
		row->len = (size_t)(p - row->start);
	return 1;
}

/*
 * The resize rows: grow and shrink with the raw calls' time and hpshm / raw taken per cycle,
 * grow with the new segment + copy, sync in ns per call; without a huge provider in the run
 * they fall back to 4 KiB pages and say so.  Sane figures only: the ratios are shown, never
 * asserted, since the machine is shared.
 */
Test(bench, resize_rows_grow_shrink_and_sync_against_the_raw_calls)
{
	struct hpt_run *r;
	struct hpt_row row;
	double v, from, to, ps;
	char unit[32];

	HPT_SKIP_UNDER_EMULATOR(BENCH_EXEC_SELF);
	r = bench("--size", "16MiB", "--providers", "plain,raw", SMALL, NULL);
	cr_assert_eq(r->status, 0, "bench failed: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_assert(strstr(r->out, "\"resize_note\": \"no huge page provider that resizes: at 4 KiB pages (plain)\""),
		  "the fallback to 4 KiB pages is not said:\n%s", r->out);
	for (int k = 0; k < 3; k++) {
		static const char *const what[] = { "grow", "shrink", "sync" };

		cr_assert(resize_entry(r->out, what[k], &row), "no %s row in:\n%s", what[k], r->out);
		cr_assert(hpt_row_num(&row, "median", &v) && v > 0, "%s: median %f", what[k], v);
		cr_assert(hpt_row_num(&row, "page_size", &ps));
		cr_expect_eq((long)ps, sysconf(_SC_PAGESIZE), "%s: page size %.0f", what[k], ps);
		cr_assert(hpt_row_num(&row, "from", &from) && hpt_row_num(&row, "to", &to));
		cr_assert(hpt_row_str(&row, "unit", unit, sizeof unit));
		cr_expect_str_eq(unit, k == 2 ? "ns/call" : "ms");
		cr_expect(k == 0 ? to > from : k == 1 ? to < from : to == from, "%s: from %.0f to %.0f", what[k], from,
			  to);
		cr_expect(hpt_row_num(&row, "samples", &v) && v >= 7, "%s: %.0f samples", what[k], v);
		if (k == 2) {
			cr_expect(hpt_row_null(&row, "hpshm_over_raw"), "sync has no raw peer");
			continue;
		}
		cr_expect(hpt_row_num(&row, "raw_median", &v) && v > 0, "%s: no raw time", what[k]);
		cr_expect(hpt_row_num(&row, "hpshm_over_raw", &v) && v > 0, "%s: no hpshm/raw ratio", what[k]);
		cr_expect(hpt_row_num(&row, "hpshm_over_raw_min", &v) && hpt_row_num(&row, "hpshm_over_raw_max", &v));
		cr_expect(k == 0 ? hpt_row_num(&row, "hpshm_over_copy", &v) && v > 0 : hpt_row_null(&row, "hpshm_over_copy"),
			  "%s: the copy ratio belongs to grow only", what[k]);
	}
}
