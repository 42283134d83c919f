/* SPDX-License-Identifier: MIT */
/*
 * tests/test_policy.c -- the huge_pages policy and huge_page_size against the real machine.
 *
 * Tests that need pages skip with the reason when the pool is too small (or fail when
 * HPSHM_TEST_REQUIRE names "pool", the page size, or "all").  Tests of the empty pool run
 * against a pool too small for the segment: the empty pool of a fresh machine, or a reserved
 * one asked for four pages more than it has.
 */
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "port.h"

#define MIB ((size_t)1 << 20)

static hpshm_config *cfg;

static void policy_init(void)
{
	hpt_fixture_init();
	cr_assert_eq(hpshm_config_new(&cfg), 0);
}

static void policy_fini(void)
{
	hpshm_config_free(cfg);
	hpt_fixture_fini();
}

TestSuite(policy, .init = policy_init, .fini = policy_fini);

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

static int is_huge_provider(const char *name)
{
	const char *n;
	unsigned caps, i;

	for (i = 0; (n = hpshm_provider_name(i, &caps)) != NULL; i++)
		if (!strcmp(n, name))
			return (caps & HPSHM_CAP_HUGE) != 0;
	return 0;
}

/* Skip (or fail if required) unless the real pool of page_size can give `pages` pages now. */
static void need_pages(size_t page_size, unsigned long pages)
{
	struct hpt_pool pool;
	char psz[32];

	hpt_size_text(page_size, psz, sizeof psz);
	if (page_size == 0)
		HPT_UNAVAILABLE("pool", NULL, "the kernel offers no huge pages");
	if (hpt_pool_read(page_size, &pool) < 0)
		HPT_UNAVAILABLE("pool", psz, "the kernel offers no %s pages", psz);
	if (hpt_pool_available(&pool) < pages)
		HPT_UNAVAILABLE("pool", psz, "needs %lu free %s pages, the pool has %lu (nr_hugepages %lu)", pages,
				psz, hpt_pool_available(&pool), pool.total);
}

static size_t largest_offered(void)
{
	size_t sizes[16];
	int n = hpshm_huge_page_sizes(sizes, 16);

	if (n > 16)
		n = 16;
	return n > 0 ? sizes[n - 1] : 0;
}

/* Create, then check the result against smaps as well as the report. */
static hpshm_segment *create_huge(size_t size, size_t want_ps)
{
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	hpshm_error err;
	int rc, ht = 0;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, size, cfg, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "%s: %s (hint: %s)", hpshm_errname(rc), err.message, err.hint);
	r = hpshm_segment_report(seg);
	/* Under an emulator the huge pages may be unverifiable, or refused outright (qemu-i386
	 * maps nothing of huge pages: EINVAL), and huge_pages=try then falls back. */
	if (!is_huge_provider(r->provider) && hpt_emulator() && r->nattempts > 0 &&
	    (strcmp(r->attempts[0].call, "verify") == 0 || r->attempts[0].sys_errno == EINVAL)) {
		cr_assert_eq(hpshm_segment_destroy(seg), 0);
		HPT_SKIP("under %s huge pages cannot be had or verified, and huge_pages=try fell back to %s "
			 "cleanly: %s", hpt_emulator(), r->provider, r->attempts[0].reason);
	}
	cr_assert(is_huge_provider(r->provider), "%s is not a huge page provider", r->provider);
	cr_assert_eq(r->huge, 1);
	cr_assert_eq(r->verified, 1);
	cr_assert_eq(r->page_size, want_ps, "report says %zu, want %zu", r->page_size, want_ps);
	cr_assert_eq(hpt_smaps_page_size(hpshm_segment_address(seg), &ht), want_ps);
	cr_assert_eq(ht, 1, "smaps does not flag the VMA hugetlb");
	memset(hpshm_segment_address(seg), 0x11, hpshm_segment_size(seg));
	return seg;
}

Test(policy, auto_on_gets_a_huge_provider)
{
	size_t ps = hpt_default_huge_page_size();
	hpshm_segment *seg;

	need_pages(ps, 4);
	set("provider=auto,huge_pages=on");
	seg = create_huge(4 * ps, ps);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(policy, auto_try_prefers_huge_pages_when_the_pool_has_them)
{
	size_t ps = hpt_default_huge_page_size();
	hpshm_segment *seg;

	need_pages(ps, 4);
	set("provider=auto,huge_pages=try");
	seg = create_huge(3 * ps, ps);
	cr_assert_eq(hpshm_segment_report(seg)->nattempts, 1u, "the best provider should have worked first time");
	cr_assert_str_eq(hpshm_segment_report(seg)->provider, hpshm_provider_name(0, NULL));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(policy, default_size_is_the_kernel_default)
{
	size_t ps = hpt_default_huge_page_size();
	hpshm_segment *seg;

	need_pages(ps, 2);
	set("huge_pages=on,huge_page_size=default");
	seg = create_huge(ps + 1, ps);
	cr_assert_eq(hpshm_segment_size(seg), 2 * ps);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(policy, largest_is_the_largest_offered_with_pages)
{
	size_t sizes[16], ps = 0;
	int n = hpshm_huge_page_sizes(sizes, 16), i;
	struct hpt_pool pool;
	hpshm_segment *seg;

	if (n > 16)
		n = 16;
	/* the largest size whose pool can hold the segment */
	for (i = n - 1; i >= 0 && !ps; i--)
		if (hpt_pool_read(sizes[i], &pool) == 0 && hpt_pool_available(&pool) >= 1)
			ps = sizes[i];
	if (!ps)
		need_pages(largest_offered(), 1); /* skips, or fails if required */
	set("huge_pages=on,huge_page_size=largest");
	seg = create_huge(ps, ps);
	if (ps != largest_offered()) {
		char l[32];

		cr_log_info("largest offered is %s but its pool is empty: got the largest with pages",
			    hpt_size_text(largest_offered(), l, sizeof l));
	}
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* A power of two the kernel does not offer (each fits a 32-bit size_t: 16 GiB would be 0). */
static size_t unoffered_size(void)
{
	static const size_t candidates[] = {(size_t)1 << 30, (size_t)512 << 20, (size_t)256 << 20, (size_t)64 << 10};
	size_t sizes[16];
	int n = hpshm_huge_page_sizes(sizes, 16), i;
	size_t c;

	if (n > 16)
		n = 16;
	for (c = 0; c < sizeof candidates / sizeof candidates[0]; c++) {
		int offered = 0;

		for (i = 0; i < n; i++)
			offered |= sizes[i] == candidates[c];
		if (!offered)
			return candidates[c];
	}
	return 0;
}

Test(policy, unoffered_size_under_on_fails_naming_huge_page_size)
{
	size_t bad = unoffered_size(), sizes[16];
	int n = hpshm_huge_page_sizes(sizes, 16), i;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[96], s[32], listed[32];
	int rc;

	cr_assert_neq(bad, 0u);
	snprintf(kv, sizeof kv, "huge_pages=on,huge_page_size=%s", hpt_size_text(bad, s, sizeof s));
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_lt(rc, 0);
	cr_assert(rc == HPSHM_ENOHUGE || rc == HPSHM_EVALUE, "got %s", hpshm_errname(rc));
	cr_assert_null(seg);
	cr_assert(!strcmp(err.key, "huge_page_size") || strstr(err.message, "huge_page_size"),
		  "neither key \"%s\" nor message names huge_page_size: %s", err.key, err.message);
	for (i = 0; i < n && i < 16; i++) {
		hpshm_size_format(sizes[i], listed, sizeof listed);
		cr_expect(strstr(err.message, listed) || strstr(err.hint, listed), "offered size %s not listed: %s / %s",
			  listed, err.message, err.hint);
	}
	for (i = 0; i < (int)r.nattempts; i++)
		cr_assert_lt(r.attempts[i].result, 0);
}

Test(policy, unoffered_size_under_try_falls_back_to_plain)
{
	size_t bad = unoffered_size();
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[96], s[32];
	int rc, ht = 1;

	snprintf(kv, sizeof kv, "huge_pages=try,huge_page_size=%s", hpt_size_text(bad, s, sizeof s));
	set(kv);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB + 1, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.huge, 0);
	cr_assert_eq(r.page_size, hpshm_base_page_size());
	cr_assert_eq(r.mapped_size, 4 * MIB + hpshm_base_page_size());
	cr_assert_eq(hpt_smaps_page_size(hpshm_segment_address(seg), &ht), hpshm_base_page_size());
	cr_assert_eq(ht, 0);
	cr_assert_gt(r.nattempts, 1u);
	cr_assert(strstr(r.attempts[0].reason, s) || strstr(r.attempts[0].reason, "huge_page_size"),
		  "first attempt's reason does not explain the size: %s", r.attempts[0].reason);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/*
 * The pool cannot hold the segment, whatever else runs on the machine: four pages more than
 * the whole pool (its overcommit room included), which no neighbour taking or returning pages
 * changes.  Returns the size to ask for, and in lo..hi the range the nr_hugepages the hint names
 * must fall in: the pool plus what the segment needs beyond the pages available when the
 * library looked, which is at least four (every page available) and at most the whole segment
 * (none available, all taken by others meanwhile).
 */
static size_t short_pool_size(unsigned long *lo, unsigned long *hi)
{
	size_t ps = hpshm__port_default_huge_page_size();
	struct hpt_pool pool;
	unsigned long need;

	if (ps == 0 || hpt_pool_read(ps, &pool) < 0)
		HPT_SKIP("the kernel offers no huge pages: there is no pool to be short of");
	need = pool.total + pool.overcommit + 4;
	*lo = pool.total + 4;
	*hi = pool.total + need;
	return need * ps;
}

Test(policy, short_pool_on_fails_with_enohuge_and_a_pool_hint)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	unsigned long lo, hi, target = 0;
	size_t size = short_pool_size(&lo, &hi);
	const char *at;
	int rc;

	set("huge_pages=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "got %s", hpshm_errname(rc));
	cr_assert_eq(err.code, HPSHM_ENOHUGE);
	cr_assert_null(seg);
	cr_assert(strstr(err.hint, "vm.nr_hugepages"), "hint: %s", err.hint);
	at = strstr(err.hint, "at least ");
	cr_assert(at && sscanf(at, "at least %lu", &target) == 1, "hint does not give the page count: %s", err.hint);
	cr_assert(target >= lo && target <= hi, "the hint's %lu pages are not between %lu and %lu: %s", target, lo, hi,
		  err.hint);
}

Test(policy, short_pool_try_succeeds_on_plain_listing_each_huge_provider)
{
	static const char *const huge[] = {"memfd_hugetlb", "mmap_hugetlb", "sysv_hugetlb", "hugetlbfs"};
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	unsigned long lo, hi;
	size_t size = short_pool_size(&lo, &hi), i;
	unsigned j;
	int rc;

	set("huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.huge, 0);
	for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		const hpshm_attempt *a = NULL;

		for (j = 0; j < r.nattempts; j++)
			if (!strcmp(r.attempts[j].provider, huge[i]))
				a = &r.attempts[j];
		cr_assert_not_null(a, "%s is not in the report", huge[i]);
		cr_assert_lt(a->result, 0);
		cr_assert(a->reason[0], "%s has no reason", huge[i]);
	}
	cr_assert_eq(r.attempts[r.nattempts - 1].result, 0);
	cr_assert_str_eq(r.attempts[r.nattempts - 1].provider, "plain");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(policy, off_never_uses_huge_pages)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc, ht = 1;

	set("huge_pages=off");
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.huge, 0);
	cr_assert_eq(hpt_smaps_page_size(hpshm_segment_address(seg), &ht), hpshm_base_page_size());
	cr_assert_eq(ht, 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- base_address out of range, and what destroy logs ---- */

/*
 * A base_address the process cannot map at is a configuration error naming the key, not an
 * out-of-memory one pointing at ulimit -v: in the kernel's half, and below the top of the
 * user range with the segment ending past it.  Every provider fails the same way, so the
 * result does not depend on the pool.
 */
static void expect_outside_user_range(const char *base)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[96];
	int rc;

	/* A 64-bit address: test_config checks that a 32-bit build refuses it as a value. */
	if (sizeof(void *) < 8)
		HPT_SKIP("%s is not an address of a 32-bit process (base_address refuses it as a value)", base);
	snprintf(kv, sizeof kv, "base_address=%s,reattach=exec", base);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	if (rc == 0) {
		cr_assert_eq(hpshm_segment_destroy(seg), 0);
		HPT_SKIP("this machine maps %s: its user address range is wider than 47 bits", base);
	}
	/* qemu-user keeps the guest in the address range it reserved and answers EEXIST beyond
	 * it, where the kernel answers ENOMEM or EINVAL: that answer is the emulator's. */
	if (rc == HPSHM_EEXIST || (rc == HPSHM_EVALUE && r.nattempts && r.attempts[r.nattempts - 1].result != HPSHM_EVALUE))
		HPT_SKIP_UNDER_EMULATOR("mmap beyond the guest's reserved address range answers EEXIST, not the "
					"kernel's ENOMEM or EINVAL");
	cr_assert_eq(rc, HPSHM_EVALUE, "%s: %s: %s", base, hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.key, "base_address", "%s: %s", base, err.message);
	cr_assert(hpt_contains(err.message, base), "the message does not name %s: %s", base, err.message);
	cr_assert(!hpt_contains(err.hint, "ulimit"), "hint: %s", err.hint);
	cr_assert(hpt_contains(err.hint, "auto"), "hint: %s", err.hint);
	cr_assert_eq(r.attempts[r.nattempts - 1].result, HPSHM_EVALUE);
	cr_assert_str_eq(r.attempts[r.nattempts - 1].provider, "plain");
}

Test(policy, base_address_in_the_kernel_half_is_a_base_address_error)
{
	expect_outside_user_range("0xffff800000000000");
}

Test(policy, base_address_ending_past_the_user_range_is_a_base_address_error)
{
	expect_outside_user_range("0x7ffffff00000");
}

struct policy_log {
	char lines[8][HPSHM_MESSAGE_MAX]; /* the info lines, in order */
	int  n;                           /* lines kept */
};

static void policy_log_keep(void *user, hpshm_log_level level, const char *msg)
{
	struct policy_log *log = user;

	if (level == HPSHM_LOG_INFO && log->n < 8)
		snprintf(log->lines[log->n++], sizeof(log->lines[0]), "%s", msg);
}

Test(policy, destroy_logs_the_address_the_segment_had)
{
	struct policy_log log;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char at[64];
	int rc;

	memset(&log, 0, sizeof log);
	set("huge_pages=off");
	hpshm_config_set_log(cfg, policy_log_keep, &log, HPSHM_LOG_INFO);
	rc = hpshm_segment_create(&seg, 4 * MIB, cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	snprintf(at, sizeof at, "segment at %p ", hpshm_segment_address(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_gt(log.n, 0, "nothing logged at info level");
	cr_assert(hpt_contains(log.lines[log.n - 1], "destroyed"), "last line: %s", log.lines[log.n - 1]);
	cr_assert(strstr(log.lines[log.n - 1], at), "destroy logged \"%s\", not \"%s\"", log.lines[log.n - 1], at);
}
