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
 * any pool, or none; the SHM_NORESERVE case empties the pool for the program by mapping every
 * free page itself.  The pool-leak fixture checks after every case that no page, SysV id or
 * file is left behind, also when the program was killed.
 *
 * The report's lines are told apart by their call: "mmap" and "shmget" lines record a segment
 * made (or refused), "munmap", "shmctl" and "exit" lines its end ("event":"destroy" or
 * "handover").  Files the cases make besides the report (links, FIFOs) go in a directory of
 * their own under /tmp, removed at the end of the case.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/*
 * The report's lines that hold needle (NULL: every line), each checked to be one JSON object;
 * up to max of them in lines, and how many there are.
 */
static int report_grep(char lines[][8192], int max, const char *needle, const char *or_needle)
{
	FILE *f = fopen(report_path, "r");
	char line[8192];
	int n = 0, all = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		all++;
		cr_assert(hpt_json_ok(line), "report line %d is not JSON: %s", all, line);
		if (needle && !strstr(line, needle) && !(or_needle && strstr(line, or_needle)))
			continue;
		if (n < max)
			snprintf(lines[n], 8192, "%s", line);
		n++;
	}
	fclose(f);
	return n;
}

/* The lines that record a segment made (or refused): the calls that make them. */
static int report_lines(char lines[][8192], int max)
{
	return report_grep(lines, max, "\"call\":\"mmap\"", "\"call\":\"shmget\"");
}

/* The lines of one event of a segment's end: "destroy" or "handover". */
static int report_lines_of(char lines[][8192], int max, const char *event)
{
	char want[64];

	snprintf(want, sizeof want, "\"event\":\"%s\"", event);
	return report_grep(lines, max, want, NULL);
}

/* The number after "name": in a JSON line, or -1. */
static long json_long(const char *line, const char *name)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof want, "\"%s\":", name);
	p = strstr(line, want);
	return p ? strtol(p + strlen(want), NULL, 10) : -1;
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

static void *take_the_pool(size_t *len);

/* The per-size overcommit knob of the default huge page size: its path, in buf. */
static const char *overcommit_path(char *buf, size_t len)
{
	snprintf(buf, len, "/sys/kernel/mm/hugepages/hugepages-%zukB/nr_overcommit_hugepages", huge_size() / 1024);
	return buf;
}

static int overcommit_read(unsigned long *out)
{
	char path[128];
	FILE *f = fopen(overcommit_path(path, sizeof path), "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%lu", out) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int overcommit_write(unsigned long pages)
{
	char path[128];
	FILE *f = fopen(overcommit_path(path, sizeof path), "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%lu\n", pages) > 0;
	ok = fclose(f) == 0 && ok;
	return ok ? 0 : -1;
}

/*
 * The figure after "pages has " in a refusal's reason ("the pool of 2MiB pages has N
 * available"), or -1.
 */
static long pool_figure(const char *line)
{
	const char *p = strstr(line, "pages has ");

	return p ? strtol(p + strlen("pages has "), NULL, 10) : -1;
}

/*
 * A SHM_HUGETLB refusal names the pages the pool could still give as the library counts them,
 * overcommit room included (the interposer used to count free - resv alone, and told an
 * operator with an overcommit room a smaller figure than `hpshm probe` did).  The pool is made
 * short for the program (its cgroup refuses huge pages, or it is taken), and an overcommit room
 * of 8 pages added for the time of the run (root, under hpt_pool_knobs_lock()), too small for the
 * request; the figure must count the room.  Other programs take and return pages meanwhile (CI
 * runs the suite beside a churner holding 8 for a moment every 50 ms: the count once read 437
 * against 445 before and after), so a figure that matches neither reading is taken again, up
 * to five times; one that never matches is the library's miscount.
 */
Test(preload, sysv_refusal_counts_the_pool_as_the_library_does)
{
	unsigned long was, room = 8;
	struct hpt_pool before, after;
	char lines[4][8192];
	struct region_line r;
	struct hpt_run *run;
	size_t len = 0;
	void *pool;
	long n;
	int restored, knobs;

	if (huge_size() == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge pages, so no SHM_HUGETLB to refuse");
	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", "sysv_hugetlb", "setting an overcommit room needs root");
	knobs = hpt_pool_knobs_lock();
	cr_assert_eq(overcommit_read(&was), 0, "cannot read the overcommit knob: %s", strerror(errno));
	pool = take_the_pool(&len);
	cr_assert_eq(overcommit_write(was + room), 0, "cannot set the overcommit room: %s", strerror(errno));
	for (int attempt = 0; attempt < 5; attempt++) {
		unlink(report_path);
		cr_expect_eq(hpt_pool_read(huge_size(), &before), 0);
		run = run_child("huge_pages=try", NULL, "shm", "64M", "2");
		cr_expect_eq(hpt_pool_read(huge_size(), &after), 0);
		if (run->status != 0 || report_lines(lines, 4) != 1)
			break;
		n = pool_figure(lines[0]);
		if (n == (long)hpt_pool_available(&before) || n == (long)hpt_pool_available(&after))
			break;
	}
	restored = overcommit_write(was);
	hpt_pool_knobs_unlock(knobs);
	if (pool)
		munmap(pool, len);
	cr_assert_eq(restored, 0, "could not put nr_overcommit_hugepages back to %lu: %s", was, strerror(errno));

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect_eq(r.page_size, hpshm_base_page_size(), "smaps says %zu-byte pages: the pool was not short",
		     r.page_size);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect_eq(json_long(lines[0], "errno"), ENOMEM, "%s", lines[0]);
	n = pool_figure(lines[0]);
	cr_expect_geq(n, (long)room, "the refusal counts %ld pages, less than the %lu of the overcommit room: %s", n,
		      room, lines[0]);
	cr_expect(n == (long)hpt_pool_available(&before) || n == (long)hpt_pool_available(&after),
		  "the refusal counts %ld pages, the pool has %lu (free %lu - resv %lu + room %lu - surplus %lu): %s", n,
		  hpt_pool_available(&before), before.free, before.resv, before.overcommit, before.surplus, lines[0]);
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

/* ---- SHM_NORESERVE, EPERM (issue 19, defects 1 and 12) ---- */

/*
 * Make the pool empty for the program under test: where the test has a cgroup of its own, its
 * limits refuse every huge page (tests/fixture.h), whatever a neighbour takes or returns
 * meanwhile, and NULL is returned; else every huge page a new mapping could reserve is taken,
 * and the mapping to give back is returned (NULL if there was none).
 */
static void *take_the_pool(size_t *len)
{
	unsigned long avail;
	void *p;

	*len = 0;
	if (hpt_refuse_huge_pages(huge_size()) == 0)
		return NULL;
	avail = pool_available();
	*len = avail * huge_size();
	if (avail == 0)
		return NULL;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	cr_assert_neq(p, MAP_FAILED, "could not take the %lu free huge pages: %s", avail, strerror(errno));
	cr_assert_eq(pool_available(), 0, "%lu huge pages are still free after taking them", pool_available());
	return p;
}

Test(preload, sysv_noreserve_is_left_alone_and_never_dies_of_sigbus)
{
	static const char *const policies[] = { "huge_pages=try", "huge_pages=on" };
	struct region_line r;
	struct hpt_run *run;
	size_t len = 0;
	void *pool;

	if (huge_size() == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge pages, so no SHM_HUGETLB to add");
	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", "sysv_hugetlb", "SHM_HUGETLB needs CAP_IPC_LOCK or vm.hugetlb_shm_group");
	pool = take_the_pool(&len);
	for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
		run = run_child(policies[i], "1", "noreserve", "4M", NULL);
		cr_expect_eq(run->status, 0, "%s, no free huge page: the SHM_NORESERVE program failed (%d%s): %s",
			     policies[i], run->status, run->status == 128 + SIGBUS ? ", SIGBUS" : "", run->err);
		if (region_of(run->out, 0, &r) == 0)
			cr_expect_eq(r.page_size, hpshm_base_page_size(), "%s: a SHM_NORESERVE segment on %zu-byte pages",
				     policies[i], r.page_size);
	}
	if (pool)
		munmap(pool, len);
}

Test(preload, sysv_on_without_the_right_to_huge_pages_fails_with_eperm)
{
	char lines[4][8192];
	struct hpt_run *run;

	if (huge_size() == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge pages, so no SHM_HUGETLB to refuse");
	if (geteuid() != 0)
		HPT_UNAVAILABLE("root", "sysv_hugetlb", "the program must be root to give up the right to huge pages");
	run = run_child("huge_pages=on", NULL, "eperm", "64M", NULL);
	cr_expect_eq(run->status, 0, "shmget did not fail with EPERM (%d): %s", run->status, run->err);
	cr_expect(strstr(run->err, "fails with EPERM"), "stderr does not say EPERM: %s", run->err);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect_eq(json_long(lines[0], "errno"), EPERM, "%s", lines[0]);
}

/* ---- exec with an environment of the program's making (defect 10) ---- */

/* preload_child's reexec mode execs its own binary, which only the kernel can start: qemu-user
 * runs a foreign program exec'd by another only through binfmt_misc (ENOEXEC here). */
#define REEXEC_UNDER_EMULATOR "the program execs itself, and a foreign binary exec'd without binfmt_misc is ENOEXEC"

Test(preload, exec_with_an_emptied_environment_keeps_the_interposer)
{
	static const char *const hows[] = { "execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp",
					    "fexecve", "posix_spawn", "posix_spawnp" };
	char lines[8][8192];
	struct region_line r;
	struct hpt_run *run;

	HPT_SKIP_UNDER_EMULATOR(REEXEC_UNDER_EMULATOR);
	for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++) {
		long pid = -1;
		int n, found = 0;
		const char *p;

		unlink(report_path);
		run = run_child(NULL, NULL, "reexec", hows[i], "64M");
		cr_expect_eq(run->status, 0, "%s: the program failed (%d): %s", hows[i], run->status, run->err);
		p = strstr(run->out, "pid ");
		if (p)
			pid = strtol(p + 4, NULL, 10);
		if (region_of(run->out, 0, &r) < 0 || pid <= 0) {
			cr_expect_fail("%s: the new program did not map its region: %s", hows[i], run->out);
			continue;
		}
		cr_expect(!by_libc(&r), "%s with an empty environment: the new program ran without the interposer (%s)",
			  hows[i], r.backing);
		n = report_lines(lines, 8);
		for (int k = 0; k < n && k < 8; k++)
			found |= json_long(lines[k], "pid") == pid;
		cr_expect(found, "%s: the report has no line for the new program (pid %ld)", hows[i], pid);
	}
}

Test(preload, exec_that_sets_ld_preload_itself_is_left_as_it_chose)
{
	char lines[4][8192];
	struct region_line r;
	struct hpt_run *run;

	HPT_SKIP_UNDER_EMULATOR(REEXEC_UNDER_EMULATOR);
	run = run_child(NULL, NULL, "reexec", "optout", "64M");

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(region_of(run->out, 0, &r), 0, "no region line: %s", run->out);
	cr_expect(by_libc(&r), "LD_PRELOAD= in the new environment, yet the interposer took the region: %s", r.backing);
	cr_expect_eq(report_lines(lines, 4), 0);
}

/* ---- report files (defect 8) ---- */

/* A directory of this test's own under /tmp, and paths in it. */
static char scratch[64];

static const char *scratch_path(const char *name)
{
	static char path[128];

	if (!scratch[0]) {
		snprintf(scratch, sizeof scratch, "/tmp/hpshm-test-preload-dir.XXXXXX");
		cr_assert_not_null(mkdtemp(scratch), "mkdtemp: %s", strerror(errno));
	}
	snprintf(path, sizeof path, "%s/%s", scratch, name);
	return path;
}

static void scratch_remove(void)
{
	static const char *const names[] = { "target", "link", "fifo", "--", "--min-size", "dir" };
	char path[128];

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", scratch, names[i]);
		if (unlink(path) < 0)
			rmdir(path);
	}
	rmdir(scratch);
	scratch[0] = '\0';
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

Test(preload, exec_refuses_a_report_that_is_not_a_regular_file)
{
	char target[128], link_path[128], fifo[128], dir[128];
	const char *refused[4];
	struct hpt_run *run;
	int reader;

	snprintf(target, sizeof target, "%s", scratch_path("target"));
	snprintf(link_path, sizeof link_path, "%s", scratch_path("link"));
	snprintf(fifo, sizeof fifo, "%s", scratch_path("fifo"));
	snprintf(dir, sizeof dir, "%s", scratch_path("dir"));
	cr_assert_eq(symlink(target, link_path), 0, "symlink: %s", strerror(errno));
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir: %s", strerror(errno));
	/* A reader on the FIFO, so an open that should not happen does not hang the test. */
	reader = open(fifo, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(reader, 0, "open the FIFO: %s", strerror(errno));
	refused[0] = link_path;
	refused[1] = fifo;
	refused[2] = dir;
	refused[3] = "/dev/null";
	for (size_t i = 0; i < 4; i++) {
		run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--report", refused[i], "--", "true", NULL);
		cr_expect_eq(run->status, 1, "--report %s: exit %d, expected 1 (refused)", refused[i], run->status);
		cr_expect(strstr(run->err, refused[i]), "--report %s: the error does not name the path: %s", refused[i],
			  run->err);
	}
	cr_expect_eq(file_size(target), -1, "the link's target was created through the link");
	close(reader);
	scratch_remove();
}

Test(preload, the_interposer_refuses_a_report_that_is_a_symbolic_link)
{
	static char small[] = "small", size[] = "64M";
	char preload[512], report[192], target[128], *argv[] = { small, size, NULL };
	char *env[] = { preload, report, NULL };
	struct region_line r;
	struct hpt_run *run;
	int fd;

	snprintf(target, sizeof target, "%s", scratch_path("target"));
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0, "create %s: %s", target, strerror(errno));
	close(fd);
	cr_assert_eq(symlink(target, scratch_path("link")), 0, "symlink: %s", strerror(errno));
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s", HPSHM_PRELOAD_LIB);
	snprintf(report, sizeof report, "HPSHM_PRELOAD_REPORT=%s", scratch_path("link"));
	run = hpt_tool_argv(HPSHM_PRELOAD_CHILD, argv, env);
	cr_expect_eq(run->status, 0, "%s", run->err);
	cr_expect(region_of(run->out, 0, &r) == 0 && !by_libc(&r), "the region was not taken: %s", run->out);
	cr_expect_eq(file_size(target), 0, "the report went through the symbolic link into its target");
	cr_expect(strstr(run->err, "symbolic link"), "stderr does not say why the report is refused: %s", run->err);
	scratch_remove();
}

/* ---- option values (defect 11) ---- */

Test(preload, exec_refuses_an_option_whose_value_is_missing)
{
	static const char *const options[] = { "--report", "--config", "--min-size" };
	char cwd[4096];
	struct hpt_run *run;

	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	cr_assert_eq(chdir(scratch_path("")), 0, "chdir: %s", strerror(errno));
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
		run = hpt_tool(HPSHM_TOOL_PATH, "exec", options[i], "--", "true", NULL);
		cr_expect_eq(run->status, 2, "exec %s -- true: exit %d, expected 2", options[i], run->status);
		cr_expect(strstr(run->err, options[i]), "the error does not name %s: %s", options[i], run->err);
	}
	run = hpt_tool(HPSHM_TOOL_PATH, "exec", "--report", "--min-size", "1", "--", "true", NULL);
	cr_expect_eq(run->status, 2, "exec --report --min-size 1 -- true: exit %d, expected 2", run->status);
	cr_expect_eq(file_size("--"), -1, "a report file named -- was made");
	cr_expect_eq(file_size("--min-size"), -1, "a report file named --min-size was made");
	cr_assert_eq(chdir(cwd), 0);
	scratch_remove();
}

/* ---- what the report records (defect 13) ---- */

Test(preload, the_report_records_each_destroy_in_the_process_that_holds_the_segment)
{
	char made[4][8192], ended[4][8192];
	struct hpt_run *run = run_child(NULL, NULL, "share", "64M", "3");

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(report_lines(made, 4), 1);
	/* Three workers unmapped their copies too: only the process that holds it says so. */
	cr_assert_eq(report_lines_of(ended, 4, "destroy"), 1, "one destroy line expected");
	cr_expect(strstr(ended[0], "\"call\":\"munmap\""), "%s", ended[0]);
	cr_expect_eq(json_long(ended[0], "pid"), json_long(made[0], "pid"), "%s", ended[0]);
	cr_expect_eq(json_long(ended[0], "created_by"), json_long(made[0], "pid"), "%s", ended[0]);

	unlink(report_path);
	run = run_child(NULL, NULL, "shm", "64M", "2");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(report_lines(made, 4), 1);
	cr_assert_eq(report_lines_of(ended, 4, "destroy"), 1, "one destroy line expected for IPC_RMID");
	cr_expect(strstr(ended[0], "\"call\":\"shmctl\""), "%s", ended[0]);
	cr_expect_eq(json_long(ended[0], "shmid"), json_long(made[0], "shmid"), "%s", ended[0]);
}

Test(preload, a_daemon_s_report_names_the_child_that_holds_its_region)
{
	char made[4][8192], handed[4][8192], ended[4][8192], want[64];
	struct hpt_run *run;
	const char *p;
	long holder, maker;

	snprintf(want, sizeof want, "/proc/self/task/%ld/children", (long)getpid());
	if (access(want, R_OK) != 0)
		HPT_UNAVAILABLE("proc-children", NULL, "%s cannot be read (a kernel without CONFIG_PROC_CHILDREN): the "
				"interposer cannot name the children that hold a region", want);
	run = run_child(NULL, NULL, "daemon", "64M", NULL);
	p = strstr(run->out, "holder ");
	holder = p ? strtol(p + 7, NULL, 10) : -1;

	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_gt(holder, 0, "the child did not say its pid: %s", run->out);
	cr_assert_eq(report_lines(made, 4), 1);
	maker = json_long(made[0], "pid");
	cr_assert_eq(report_lines_of(handed, 4, "handover"), 1, "the exiting parent did not hand the region over");
	cr_expect_eq(json_long(handed[0], "pid"), maker, "%s", handed[0]);
	snprintf(want, sizeof want, "\"held_by\":[%ld]", holder);
	cr_expect(strstr(handed[0], want), "the handover does not name the child %ld: %s", holder, handed[0]);
	cr_assert_eq(report_lines_of(ended, 4, "destroy"), 1, "the child's exit was not recorded");
	cr_expect_eq(json_long(ended[0], "pid"), holder, "%s", ended[0]);
	cr_expect_eq(json_long(ended[0], "created_by"), maker, "%s", ended[0]);
}

Test(preload, huge_pages_off_is_no_fallback)
{
	char lines[4][8192];
	struct hpt_run *run = run_child("huge_pages=off", NULL, "small", "64M", NULL);

	cr_assert_eq(run->status, 0, "%s", run->err);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect(strstr(lines[0], "\"provider\":\"plain\""), "%s", lines[0]);
	cr_expect(strstr(lines[0], "\"fallback\":false"), "huge_pages=off is not a fallback: %s", lines[0]);
}

Test(preload, a_refusal_says_each_reason_once_with_sizes_in_mib_or_gib)
{
	char size[32], line[2048] = "";
	size_t ps = huge_size() ? huge_size() : ((size_t)2 << 20);
	const char *p, *nl;
	struct hpt_run *run;

	size_t bytes;

	/*
	 * Refused by the test's own cgroup where it has one (tests/fixture.h), so the pages that a
	 * neighbour returns between a look at the pool and the mmap cannot make it succeed; else
	 * more than the pool has free.
	 */
	bytes = hpt_refuse_huge_pages(ps) == 0 ? 0 : (pool_available() + 4) * ps;
	/* At least the threshold, and not a whole number of MiB: the old line wrote "1095400KiB". */
	if (bytes < ((size_t)32 << 20))
		bytes = (size_t)32 << 20;
	snprintf(size, sizeof size, "%zuk", (bytes + ((size_t)100 << 10)) / 1024);
	run = run_child("huge_pages=on", NULL, "fail", size, NULL);
	cr_assert_eq(run->status, 0, "the requests did not fail with ENOMEM (%d): %s", run->status, run->err);
	p = strstr(run->err, "mmap of ");
	cr_assert_not_null(p, "no refusal on stderr: %s", run->err);
	nl = strchr(p, '\n');
	snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
	cr_expect(!strstr(line, "KiB"), "a size in KiB: %s", line);
	cr_expect(strstr(line, "MiB") || strstr(line, "GiB"), "no size in MiB or GiB: %s", line);
	/* Each "; "-separated part's text after its first ": " (a reason) appears once in the line. */
	for (const char *part = line; part; part = strstr(part, "; ") ? strstr(part, "; ") + 2 : NULL) {
		const char *colon = strstr(part, ": "), *end = strstr(part, "; ");
		char reason[512];

		if (!colon || (end && colon > end))
			continue;
		snprintf(reason, sizeof reason, "%.*s", (int)((end ? end : part + strlen(part)) - colon - 2), colon + 2);
		if (strlen(reason) >= 20)
			cr_expect_eq(count_of(line, reason), 1, "a reason said %zu times: \"%s\" in %s",
				     count_of(line, reason), reason, line);
	}
	cr_expect_lt(strlen(line), 400, "a %zu-character refusal: %s", strlen(line), line);
}

Test(preload, exec_populates_over_the_threads_the_configuration_asks_for)
{
	char lines[4][8192];
	struct hpt_run *run;

	need_pages(64);
	run = run_child("huge_pages=on,populate=on,populate_threads=2", NULL, "share", "128M", "2");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(report_lines(lines, 4), 1, "one report line expected");
	cr_expect(strstr(lines[0], "\"populate\":\"madvise\""), "not populated by MADV_POPULATE_WRITE: %s", lines[0]);
	cr_expect_eq(json_long(lines[0], "populate_threads"), 2, "%s", lines[0]);

	/* Without populate=on the interposer leaves the pages to fault in, and says no threads. */
	unlink(report_path);
	run = run_child("huge_pages=on,populate=off,populate_threads=2", NULL, "share", "128M", "2");
	cr_assert_eq(run->status, 0, "the program failed (%d): %s", run->status, run->err);
	cr_assert_eq(report_lines(lines, 4), 1);
	cr_expect_eq(json_long(lines[0], "populate_threads"), 0, "%s", lines[0]);
}
