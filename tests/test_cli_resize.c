/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli_resize.c -- `hpshm check --resize-to`: the segment grows (or shrinks) in
 * place and back, and the tool says what it saw at each step; a provider that cannot, or a
 * size the pool cannot give, is refused with the fix.  Apart from test_cli.c, which is at
 * the size limit of a file; Linux only, where the providers that resize are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "fixture.h"
#include "toolrun.h"

#ifndef HPSHM_TOOL_PATH
#error "HPSHM_TOOL_PATH must name the built hpshm tool"
#endif

#define tool(...) hpt_tool(HPSHM_TOOL_PATH, __VA_ARGS__)

TestSuite(cli_resize, .init = hpt_fixture_init, .fini = hpt_fixture_fini, .timeout = 120);

/* How many times needle occurs in text. */
static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

Test(cli_resize, grows_in_place_on_plain_and_back_with_each_step_verified)
{
	const char *rs;
	char want[64];
	struct hpt_run *r = tool("check", "--size", "8MiB", "--resize-to", "24MiB", "--json", "--config",
				 "provider=plain", NULL);

	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	rs = strstr(r->out, "\"resize\": {");
	cr_assert(rs, "no resize object:\n%s", r->out);
	rs += strlen("\"resize\": {");
	rs += strspn(rs, " \n");
	cr_assert(strncmp(rs, "\"ok\": true", strlen("\"ok\": true")) == 0, "the resize is not ok:\n%s", r->out);
	snprintf(want, sizeof want, "\"max_size\": %zu", (size_t)24 << 20);
	cr_expect(strstr(r->out, want), "no %s in:\n%s", want, r->out);
	snprintf(want, sizeof want, "\"size\": %zu", (size_t)24 << 20);
	cr_expect(strstr(r->out, want), "the grow's size is not there:\n%s", r->out);
	cr_expect_eq(count(r->out, "\"pattern_ok\": true"), 2, "%s", r->out);
	/* No pool to count on base pages: null, not a made-up 0. */
	cr_expect(strstr(r->out, "\"pages_moved\": null"), "%s", r->out);

	r = tool("check", "--size", "24MiB", "--resize-to", "8MiB", "--config", "provider=plain", NULL);
	cr_assert_eq(r->status, 0, "a shrink and back: %s", r->err);
	cr_expect(strstr(r->out, "resize: plain"), "%s", r->out);
	cr_expect(strstr(r->out, "to 24MiB -> 8MiB") && strstr(r->out, "back 8MiB -> 24MiB"), "%s", r->out);
}

Test(cli_resize, a_provider_that_cannot_resize_is_refused_with_the_ones_that_can)
{
	struct hpt_run *r = tool("check", "--size", "4MiB", "--resize-to", "8MiB", "--config", "provider=sysv_hugetlb",
				 NULL);

	cr_assert_eq(r->status, 1, "stdout: %s\nstderr: %s", r->out, r->err);
	cr_expect(strstr(r->err, "max_size"), "%s", r->err);
	cr_expect(strstr(r->err, "provider=auto") && strstr(r->err, "memfd_hugetlb"), "the fix is not named: %s", r->err);
}

/* The default huge page size and the pool's available pages, or a skip naming why not. */
/* qemu-i386 passes its own smaps through, which shows base pages: the tool refuses huge_pages=on. */
static void skip_if_emulator_hides_pages(const struct hpt_run *r)
{
	if (hpt_emulator() && r->status != 0 && strstr(r->err, "(smaps) reports"))
		HPT_SKIP("under %s the tool cannot verify huge pages (the smaps it passes through is its own) and "
			 "refuses huge_pages=on cleanly: %.300s", hpt_emulator(), r->err);
}

static size_t pool_or_skip(unsigned long need, unsigned long *avail)
{
	size_t ps = hpt_default_huge_page_size();
	struct hpt_pool p;

	if (ps == 0 || hpt_pool_read(ps, &p) < 0)
		HPT_SKIP("the kernel offers no huge pages");
	*avail = hpt_pool_available(&p);
	if (*avail < need)
		HPT_UNAVAILABLE_PAGES("memfd_hugetlb", "2MiB", need, "needs %lu free huge pages, %lu are (reserve a pool: "
				      "echo 64 > /proc/sys/vm/nr_hugepages)", need, *avail);
	return ps;
}

Test(cli_resize, the_pool_moves_by_exactly_the_pages_of_each_step)
{
	unsigned long avail;
	size_t ps = pool_or_skip(16, &avail);
	char from[32], to[32];
	struct hpt_run *r;

	snprintf(from, sizeof from, "%zuKiB", 2 * (ps >> 10));
	snprintf(to, sizeof to, "%zuKiB", 10 * (ps >> 10));
	/* The check reads the machine's free pages around each step, which other programs move
	 * too (CI runs a second lane of suites beside this one): a run that says so is taken
	 * again, up to five times; one that never settles fails as before. */
	for (int attempt = 0; attempt < 5; attempt++) {
		r = tool("check", "--size", from, "--resize-to", to, "--json", "--config", "huge_pages=on", NULL);
		if (r->status == 0 || !strstr(r->out, "another process using the pool now?"))
			break;
		cr_log_info("attempt %d: another program moved the pool during the check: %.300s", attempt + 1, r->out);
	}
	skip_if_emulator_hides_pages(r);
	cr_assert_eq(r->status, 0, "stdout: %s\nstderr: %s", r->out, r->err);
	cr_assert(hpt_json_ok(r->out), "not one JSON value:\n%s", r->out);
	cr_expect(strstr(r->out, "\"ok\": true"), "%s", r->out);
	cr_expect_eq(count(r->out, "\"pages_expected\": 8"), 2, "%s", r->out);
	cr_expect_eq(count(r->out, "\"pages_moved\": 8"), 2, "another process used the pool meanwhile?\n%s", r->out);
	cr_expect_eq(count(r->out, "\"pattern_ok\": true"), 2, "%s", r->out);
}

Test(cli_resize, a_grow_the_pool_cannot_give_names_nr_hugepages)
{
	unsigned long avail;
	size_t ps = pool_or_skip(2, &avail);
	char to[32];
	struct hpt_run *r;

	snprintf(to, sizeof to, "%luMiB", (unsigned long)((avail + 64) * (ps >> 20)));
	r = tool("check", "--size", "2MiB", "--resize-to", to, "--config", "huge_pages=on", NULL);
	skip_if_emulator_hides_pages(r);
	cr_assert_eq(r->status, 1, "stdout: %s\nstderr: %s", r->out, r->err);
	cr_expect(strstr(r->err, "nr_hugepages"), "the fix is not named: %s", r->err);
	cr_expect(strstr(r->out, "resize check failed"), "%s", r->out);
}
