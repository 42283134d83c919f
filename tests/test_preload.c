/* SPDX-License-Identifier: MIT */
/*
 * tests/test_preload.c -- `hpshm exec` and libhpshm_preload.so, around a program that knows
 * nothing of hpshm (preload_child.c).
 *
 * The program maps its shared memory as servers do, forks workers that check each other's
 * writes, and reads back from the kernel what it got; these tests run it under `hpshm exec`
 * with a configuration and a report file, and check its exit code, what it read from smaps,
 * the report's lines, and what it said on stderr.  Cases that need huge pages skip (or fail
 * under HPSHM_TEST_REQUIRE) without enough free pages; the fallback and failure cases make
 * the pool too small on purpose (a request four pages beyond what it has), so they run with
 * any pool, or none.  The pool-leak fixture checks after every case that no page, SysV id or
 * file is left behind, also when the program was killed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "toolrun.h"

#if !defined(HPSHM_TOOL_PATH) || !defined(HPSHM_PRELOAD_CHILD) || !defined(HPSHM_PRELOAD_LIB)
#error "HPSHM_TOOL_PATH, HPSHM_PRELOAD_CHILD and HPSHM_PRELOAD_LIB must name the built programs"
#endif

static char report_path[64];

static void preload_init(void)
{
	hpt_fixture_init();
	snprintf(report_path, sizeof report_path, "/tmp/hpshm-test-preload.%ld.json", (long)getpid());
	unlink(report_path);
}

static void preload_fini(void)
{
	unlink(report_path);
	hpt_fixture_fini();
}

TestSuite(preload, .init = preload_init, .fini = preload_fini, .timeout = 120);

/* ---- running the program ---- */

/*
 * `hpshm exec [--config kv] [--min-size min] --report FILE -- preload_child mode size [n]`.
 * kv, min and n may be NULL.
 */
static struct hpt_run *run_child(const char *kv, const char *min, const char *mode, const char *size, const char *n)
{
	const char *argv[16];
	int a = 0;

	argv[a++] = "exec";
	if (kv) {
		argv[a++] = "--config";
		argv[a++] = kv;
	}
	if (min) {
		argv[a++] = "--min-size";
		argv[a++] = min;
	}
	argv[a++] = "--report";
	argv[a++] = report_path;
	argv[a++] = "--";
	argv[a++] = HPSHM_PRELOAD_CHILD;
	argv[a++] = mode;
	argv[a++] = size;
	if (n)
		argv[a++] = n;
	argv[a] = NULL;
	return hpt_tool_argv(HPSHM_TOOL_PATH, (char *const *)(void *)argv, NULL);
}

/* One "region page_size=N hugetlb=H backing=NAME" line of the program's output. */
struct region_line {
	size_t page_size;
	int    hugetlb;
	char   backing[256];
};

/* The index-th region line (0-based); 0, or -1 if there is none. */
static int region_of(const char *out, int index, struct region_line *r)
{
	const char *p = out;

	memset(r, 0, sizeof *r);
	for (int i = 0; (p = strstr(p, "region page_size=")) != NULL; i++, p++) {
		if (i < index)
			continue;
		if (sscanf(p, "region page_size=%zu hugetlb=%d backing=%255[^\n]", &r->page_size, &r->hugetlb,
			   r->backing) != 3)
			return -1;
		return 0;
	}
	return -1;
}

/* Did the C library make the region (shared anonymous memory is /dev/zero in smaps)? */
static int by_libc(const struct region_line *r)
{
	return strstr(r->backing, "/dev/zero") != NULL;
}

/* The report's lines, each checked to be one JSON object; returns how many. */
static int report_lines(char lines[][8192], int max)
{
	FILE *f = fopen(report_path, "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(lines[n], 8192, f)) {
		cr_assert(hpt_json_ok(lines[n]), "report line %d is not JSON: %s", n + 1, lines[n]);
		n++;
	}
	fclose(f);
	return n;
}

static size_t count_of(const char *haystack, const char *needle)
{
	size_t n = 0;

	for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* ---- the pool ---- */

static size_t huge_size(void)
{
	return hpt_default_huge_page_size();
}

static unsigned long pool_available(void)
{
	struct hpt_pool p;
	size_t ps = huge_size();

	if (ps == 0 || hpt_pool_read(ps, &p) < 0)
		return 0;
	return hpt_pool_available(&p);
}

/* Skip (or fail, where required) unless `pages` default-size pages are free. */
static void need_pages(unsigned long pages)
{
	char psz[32];
	size_t ps = huge_size();

	if (ps == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge pages");
	hpt_size_text(ps, psz, sizeof psz);
	if (pool_available() < pages)
		HPT_UNAVAILABLE_PAGES("pool", psz, pages, "needs %lu free %s pages, the pool has %lu", pages, psz,
				      pool_available());
}

/*
 * A size the pool cannot hold whatever else runs on the machine: four pages beyond the whole
 * pool (its overcommit room included), and at least the threshold.
 */
static const char *short_pool_size(char *buf, size_t len)
{
	size_t ps = huge_size() ? huge_size() : ((size_t)2 << 20);
	struct hpt_pool p;
	size_t size;

	if (hpt_pool_read(ps, &p) < 0)
		memset(&p, 0, sizeof p);
	size = (p.total + p.overcommit + 4) * ps;

	if (size < ((size_t)32 << 20))
		size = (size_t)32 << 20;
	snprintf(buf, len, "%zuk", size / 1024);
	return buf;
}

/* ---- mmap ---- */

Test(preload, mmap_region_on_huge_pages_is_shared_by_forked_workers)
{
	char lines[4][8192], want[64];
	struct region_line r;
	struct hpt_run *run;

	need_pages(32);
	run = run_child("huge_pages=on", NULL, "share", "64M", "4");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect_eq(r.page_size, huge_size(), "smaps says %zu-byte pages", r.page_size);
	cr_expect(r.hugetlb, "smaps VmFlags has no ht: %s", r.backing);
	cr_assert_eq(report_lines(lines, 4), 1, "one report line expected");
	cr_expect(strstr(lines[0], "\"call\":\"mmap\"") && strstr(lines[0], "\"ok\":true"), "%s", lines[0]);
	cr_expect(strstr(lines[0], "\"huge\":true") && strstr(lines[0], "\"verified\":true"), "%s", lines[0]);
	snprintf(want, sizeof want, "\"page_size\":%zu,", huge_size());
	cr_expect(strstr(lines[0], want), "report page size is not %zu: %s", huge_size(), lines[0]);
	cr_expect(strstr(lines[0], "\"size\":67108864,"), "%s", lines[0]);
}

Test(preload, mmap_falls_back_to_base_pages_when_the_pool_is_short)
{
	char lines[4][8192], size[32];
	struct region_line r;
	struct hpt_run *run = run_child("huge_pages=try", NULL, "share", short_pool_size(size, sizeof size), "2");

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(!by_libc(&r), "not taken by the interposer: %s", r.backing);
	cr_expect_eq(r.page_size, hpshm_base_page_size(), "smaps says %zu-byte pages", r.page_size);
	cr_expect(strstr(run->err, "fell back"), "the fallback was not said on stderr: %s", run->err);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect(strstr(lines[0], "\"ok\":true") && strstr(lines[0], "\"huge\":false") &&
		  strstr(lines[0], "\"fallback\":true"), "%s", lines[0]);
}

Test(preload, on_without_the_pages_fails_with_enomem_and_says_why)
{
	char lines[4][8192], size[32];
	struct hpt_run *run = run_child("huge_pages=on", NULL, "fail", short_pool_size(size, sizeof size), NULL);

	cr_assert_eq(run->status, 0, "mmap and shmget did not both fail with ENOMEM (%d): %s", run->status, run->err);
	cr_expect(strstr(run->err, "mmap of") && strstr(run->err, "shmget of"), "no reason on stderr: %s", run->err);
	cr_expect_eq(count_of(run->err, "fails with ENOMEM"), 2, "%s", run->err);
	cr_assert_eq(report_lines(lines, 4), 2);
	cr_expect(strstr(lines[0], "\"ok\":false") && strstr(lines[0], "\"error\":\"HPSHM_ENOHUGE\""), "%s", lines[0]);
	cr_expect(strstr(lines[1], "\"call\":\"shmget\"") && strstr(lines[1], "\"ok\":false"), "%s", lines[1]);
}

Test(preload, requests_below_the_threshold_go_to_the_c_library)
{
	char lines[4][8192];
	struct region_line r;
	struct hpt_run *run = run_child(NULL, "64MiB", "small", "48M", NULL);

	cr_assert_eq(run->status, 0, "%s", run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(by_libc(&r), "a 48MiB request under a 64MiB threshold was taken: %s", r.backing);
	cr_expect_eq(report_lines(lines, 4), 0, "a request not taken has no report line");

	run = run_child(NULL, "64MiB", "small", "64M", NULL);
	cr_assert_eq(run->status, 0, "%s", run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(!by_libc(&r), "a request at the threshold was not taken: %s", r.backing);
	cr_expect_eq(report_lines(lines, 4), 1);
}

Test(preload, partial_unmap_and_fixed_mappings_onto_a_region_are_refused)
{
	struct region_line r;
	struct hpt_run *run = run_child(NULL, NULL, "edges", "64M", NULL);

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(!by_libc(&r), "not taken by the interposer: %s", r.backing);
	cr_expect(strstr(run->err, "refused with EINVAL"), "no reason on stderr: %s", run->err);
}

Test(preload, threads_and_forks_map_and_unmap_at_once)
{
	struct hpt_run *run = run_child(NULL, NULL, "threads", "32M", "4");

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
}

/* ---- SysV ---- */

Test(preload, sysv_segment_is_huge_and_keeps_nattch_with_forked_workers)
{
	char lines[4][8192];
	struct region_line r;
	struct hpt_run *run;

	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", "sysv_hugetlb", "SHM_HUGETLB needs CAP_IPC_LOCK or vm.hugetlb_shm_group");
	need_pages(32);
	run = run_child("huge_pages=on", NULL, "shm", "64M", "3");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect_eq(r.page_size, huge_size(), "smaps says %zu-byte pages", r.page_size);
	cr_expect(r.hugetlb && strstr(r.backing, "SYSV"), "%s", r.backing);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect(strstr(lines[0], "\"provider\":\"sysv_hugetlb\"") && strstr(lines[0], "\"verified\":true") &&
		  strstr(lines[0], "\"huge\":true"), "%s", lines[0]);
}

Test(preload, sysv_key_excl_and_rmid_behave_as_the_kernel_says)
{
	struct region_line r;
	struct hpt_run *run = run_child(NULL, NULL, "shmkey", "64M", NULL);

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(strstr(r.backing, "SYSV"), "%s", r.backing);
}

Test(preload, sysv_falls_back_to_base_pages_when_the_pool_is_short)
{
	char size[32];
	struct region_line r;
	struct hpt_run *run = run_child("huge_pages=try", NULL, "shm", short_pool_size(size, sizeof size), "2");

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect_eq(r.page_size, hpshm_base_page_size(), "smaps says %zu-byte pages", r.page_size);
	cr_expect(strstr(run->err, "fell back to base pages"), "the fallback was not said: %s", run->err);
}

/* ---- leaks ---- */

Test(preload, a_program_ending_without_unmapping_leaves_nothing)
{
	struct hpt_run *run;

	if (pool_available() >= 64)
		need_pages(64); /* huge if it can be; the fixture checks either way */
	run = run_child(NULL, NULL, "hold", "64M", "0");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_expect(strstr(run->out, "ready"), "%s", run->out);
}

Test(preload, a_killed_program_leaves_no_pages_ids_or_files)
{
	long before = 0;
	static char tool[] = HPSHM_TOOL_PATH, exec[] = "exec", dashes[] = "--", child[] = HPSHM_PRELOAD_CHILD,
		    hold[] = "hold", size[] = "64M", seconds[] = "60", path[] = "PATH=/usr/bin:/bin";
	char line[8192] = "", *argv[] = { tool, exec, dashes, child, hold, size, seconds, NULL };
	char *envp[] = { path, NULL };
	size_t ps = huge_size();
	int out[2], st = 0;
	ssize_t n = 0;
	struct pollfd pfd;
	pid_t pid;

	cr_assert_eq(pipe(out), 0);
	if (ps)
		before = hpt_pages_held(ps);
	pid = hpt_fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(out[1], 2); /* its notes too, for the failure message: the buffer holds a fallback note and "ready" */
		close(out[0]);
		close(out[1]);
		execve(HPSHM_TOOL_PATH, argv, envp);
		_exit(127);
	}
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	close(out[1]);
	pfd.fd = out[0];
	pfd.events = POLLIN;
	while (!strstr(line, "ready") && (size_t)n < sizeof line - 1 && poll(&pfd, 1, 30000) > 0) {
		ssize_t got = read(out[0], line + n, sizeof line - 1 - (size_t)n);

		if (got <= 0)
			break;
		n += got;
		line[n] = '\0';
	}
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	close(out[0]);
	cr_assert(strstr(line, "ready"), "the program did not get ready: %s", line);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
	if (ps)
		cr_expect_eq(hpt_pages_held(ps), before, "huge pages held: %ld after the kill, %ld before",
			     hpt_pages_held(ps), before);
}

/* ---- configuration ---- */

Test(preload, a_malformed_configuration_turns_interposition_off_with_one_message)
{
	static char small[] = "small", size[] = "64M", bad[] = "HPSHM_HUGE_PAGES=sometimes";
	char preload[512], *argv[] = { small, size, NULL };
	char *env[] = { preload, bad, NULL };
	struct region_line r;
	struct hpt_run *run;

	snprintf(preload, sizeof preload, "LD_PRELOAD=%s", HPSHM_PRELOAD_LIB);
	run = hpt_tool_argv(HPSHM_PRELOAD_CHILD, argv, env);
	cr_assert_eq(run->status, 0, "%s", run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(by_libc(&r), "taken despite the bad configuration: %s", r.backing);
	cr_expect_eq(count_of(run->err, "interposition is off"), 1, "%s", run->err);
	cr_expect(strstr(run->err, "HPSHM_HUGE_PAGES") && strstr(run->err, "sometimes"), "%s", run->err);
}

Test(preload, exec_refuses_what_it_cannot_apply)
{
	static const char *const bad[][2] = {
		{ "name=db", "name" },
		{ "reattach=exec", "reattach" },
		{ "huge_pages=sometimes", "huge_pages" },
		{ "preload_min_size=lots", "preload_min_size" },
	};
	struct hpt_run *run;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--config", bad[i][0], "--", "true", NULL);
		cr_expect_eq(run->status, 2, "--config %s: exit %d", bad[i][0], run->status);
		cr_expect(strstr(run->err, bad[i][1]), "--config %s: stderr does not name %s: %s", bad[i][0], bad[i][1],
			  run->err);
	}
	run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--min-size", "0", "--", "true", NULL);
	cr_expect_eq(run->status, 2, "--min-size 0: exit %d", run->status);
	run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--config", "huge_pages=on", NULL);
	cr_expect_eq(run->status, 2, "no command: exit %d", run->status);
	run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--", "/nonexistent/program", NULL);
	cr_expect_eq(run->status, 127, "a missing program: exit %d", run->status);
}
