/* SPDX-License-Identifier: MIT */
/*
 * tests/test_reattach.c -- re-attach after a real exec: same address, same bytes, same pages.
 *
 * For each provider that says HPSHM_CAP_REATTACH (hpshm_provider_name) and each page size it
 * can use here (the kernel's huge sizes for huge providers, the base size for plain), the
 * parent creates with reattach=exec, writes a pattern over the usable size, and starts
 * reattach_child through hpshm_child_spawn(), which execs it for real.  The child attaches as its
 * first act, checks the address, the pattern, the page size from its own /proc/self/smaps
 * and from the report, writes back in its slot, detaches and exits 0; the parent waits and
 * checks the write-back.  Once with one child, once with 8 at a time, once at a
 * base_address the test chose.  The segment spans three pages (two and a bit, plus the header
 * region at its tail), but only one where pages are 1 GiB or larger: a run may have only one
 * or two of those.
 *
 * The clash tests start a child that maps something inside the segment's range first: the
 * attach must fail with HPSHM_EEXIST naming that mapping, and leave nothing behind.
 *
 * A provider whose probe says it cannot work here is skipped with its reason, unless
 * HPSHM_TEST_REQUIRE names the provider or the page size (test_conformance's rule).
 * hugetlbfs uses HPSHM_TEST_HUGETLBFS as hugetlbfs_path when that mount has the case's page
 * size, else mount discovery.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "reattach_child.h"

#ifndef HPSHM_REATTACH_CHILD
#error "HPSHM_REATTACH_CHILD must name the built reattach_child program"
#endif

#define NCHILDREN 8

struct case_ {
	char     provider[HPSHM_NAME_MAX];
	unsigned caps;
	size_t   page_size; /* the page size to use: a huge size, or the base size for plain */
	int      no_sizes;  /* a huge provider on a kernel that offers no huge page size */
};

#define MAX_CASES 32
static struct case_ cases[MAX_CASES];

static size_t collect_cases(void)
{
	size_t sizes[16];
	int nsizes = hpshm_huge_page_sizes(sizes, 16), j;
	const char *name;
	unsigned caps, i;
	size_t n = 0;

	if (nsizes > 16)
		nsizes = 16;
	for (i = 0; (name = hpshm_provider_name(i, &caps)) != NULL && n < MAX_CASES; i++) {
		if (!(caps & HPSHM_CAP_REATTACH))
			continue;
		if (!(caps & HPSHM_CAP_HUGE) || nsizes <= 0) {
			memset(&cases[n], 0, sizeof cases[n]);
			snprintf(cases[n].provider, sizeof cases[n].provider, "%s", name);
			cases[n].caps = caps;
			cases[n].page_size = hpshm_base_page_size();
			cases[n].no_sizes = (caps & HPSHM_CAP_HUGE) != 0;
			n++;
			continue;
		}
		for (j = 0; j < nsizes && n < MAX_CASES; j++) {
			memset(&cases[n], 0, sizeof cases[n]);
			snprintf(cases[n].provider, sizeof cases[n].provider, "%s", name);
			cases[n].caps = caps;
			cases[n].page_size = sizes[j];
			n++;
		}
	}
	return n;
}

TestSuite(reattach, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

/*
 * The size to create: two pages and a bit, so the segment spans pages; half a page and a bit
 * where pages are large (HPT_LARGE_PAGE), so that with the header region at the tail it still
 * takes one page, since a run may have only one or two of those.
 */
static size_t case_size(const struct case_ *c)
{
	return c->page_size >= HPT_LARGE_PAGE ? c->page_size / 2 + 1 : 2 * c->page_size + 1;
}

/*
 * A configuration for case c with reattach=exec, probed: skips (or fails under
 * HPSHM_TEST_REQUIRE) when the provider cannot work here.  extra is appended ("" for none).
 */
static hpshm_config *case_config(const struct case_ *c, size_t size, const char *extra)
{
	int huge = (c->caps & HPSHM_CAP_HUGE) != 0;
	const char *mnt = hpt_test_hugetlbfs(c->page_size);
	char kv[512], psz[32], reason[HPSHM_TEXT_MAX];
	size_t probed = 0;
	hpshm_config *cfg;
	hpshm_error err;
	int rc;

	hpt_size_text(c->page_size, psz, sizeof psz);
	cr_log_info("provider %s, page size %s", c->provider, psz);
	if (c->no_sizes)
		HPT_UNAVAILABLE(c->provider, NULL, "%s: the kernel offers no huge page size", c->provider);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	if (huge)
		snprintf(kv, sizeof kv, "provider=%s,reattach=exec,huge_pages=on,huge_page_size=%s%s%s", c->provider,
			 psz, *extra ? "," : "", extra);
	else
		snprintf(kv, sizeof kv, "provider=%s,reattach=exec,huge_pages=off%s%s", c->provider, *extra ? "," : "",
			 extra);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s", kv, err.message);
	if (!strcmp(c->provider, "hugetlbfs") && mnt && *mnt) {
		rc = hpshm_config_set(cfg, "hugetlbfs_path", mnt, &err);
		cr_assert_eq(rc, 0, "HPSHM_TEST_HUGETLBFS=%s: %s", mnt, err.message);
	}
	rc = hpshm_provider_probe(c->provider, size, cfg, &probed, reason, sizeof reason);
	if (rc == HPSHM_EUNAVAILABLE) {
		hpshm_config_free(cfg);
		HPT_UNAVAILABLE_PAGES(c->provider, huge ? psz : NULL, hpt_pages(size + HPSHM_HEADER_REGION, c->page_size),
				      "%s (%s pages): %s", c->provider, psz, reason);
	}
	cr_assert_eq(rc, 0, "probe %s: %s (%s)", c->provider, hpshm_errname(rc), reason);
	cr_assert_eq(probed, c->page_size, "probe would use %zu-byte pages, want %zu", probed, c->page_size);
	return cfg;
}

/* Create the case's segment and write the pattern over its usable size. */
static hpshm_segment *case_create(const struct case_ *c, const hpshm_config *cfg, size_t size)
{
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	hpshm_error err;
	uint64_t *w;
	size_t words, i, kps;
	int rc, ht = 0;

	rc = hpshm_segment_create(&seg, size, cfg, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "create %s (%zu-byte pages) with reattach=exec after a good probe: %s: %s (hint: %s)",
		     c->provider, c->page_size, hpshm_errname(rc), err.message, err.hint);
	r = hpshm_segment_report(seg);
	cr_assert_str_eq(r->provider, c->provider);
	cr_assert_eq(hpshm_segment_is_owner(seg), 1);
	cr_assert_eq(r->page_size, c->page_size);
	cr_assert_geq(hpshm_segment_size(seg), size);
	cr_assert_eq((uintptr_t)hpshm_segment_address(seg) % c->page_size, 0u);
	kps = hpt_smaps_page_size(hpshm_segment_address(seg), &ht);
	cr_assert_eq(kps, c->page_size, "parent: smaps KernelPageSize %zu, want %zu", kps, c->page_size);
	w = hpshm_segment_address(seg);
	words = hpshm_segment_size(seg) / sizeof *w;
	for (i = 0; i < words; i++)
		w[i] = reattach_pattern(i);
	return seg;
}

/* The token's address field (the 6th), as a number. */
static uintptr_t token_address(const char *tok)
{
	const char *p = tok;
	int field;

	for (field = 0; field < 5 && p; field++) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	cr_assert_not_null(p, "token \"%s\" has too few fields", tok);
	return (uintptr_t)strtoull(p, NULL, 16);
}

static const char *child_error(int status)
{
	switch (status) {
	case 0: return "ok";
	case CHILD_EATTACH: return "the attach failed";
	case CHILD_EADDRESS: return "attached at another address";
	case CHILD_EPATTERN: return "the parent's pattern is not there";
	case CHILD_EKERNELPS: return "smaps KernelPageSize differs from the parent's page size";
	case CHILD_EREPORTPS: return "the report's page size differs from the parent's";
	case CHILD_EDETACH: return "detach failed or left the range mapped";
	case CHILD_EOWNER: return "the child believes it owns the segment";
	case CHILD_EREPORTV: return "the attached segment's report lacks HPSHM_REPORT_VERSION or zeroed reserved space";
	case CHILD_ECLASH: return "attach over a taken range did not fail with HPSHM_EEXIST";
	case CHILD_EHOLDER: return "the clash error does not name the holder's maps line";
	case CHILD_ELEAK: return "the failed attach left a mapping or a descriptor";
	case CHILD_EUSAGE: return "the child's own setup failed";
	default: return status > 128 ? "killed by a signal" : "unexpected exit status";
	}
}

/* Spawn n children in check mode at once, wait for all, check every write-back. */
static void run_children(const struct case_ *c, hpshm_segment *seg, int n)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "check";
	char addr[32], ps[32], slot[NCHILDREN][16], nslots[16], value[NCHILDREN][32];
	char *argv[NCHILDREN][8];
	hpshm_child kids[NCHILDREN];
	hpshm_error err;
	uint64_t *w = hpshm_segment_address(seg);
	size_t words = hpshm_segment_size(seg) / sizeof *w;
	int i, rc, status;

	cr_assert_leq(n, NCHILDREN);
	snprintf(addr, sizeof addr, "%#" PRIxPTR, (uintptr_t)w);
	snprintf(ps, sizeof ps, "%zu", c->page_size);
	snprintf(nslots, sizeof nslots, "%d", NCHILDREN);
	for (i = 0; i < n; i++) {
		uint64_t v = 0xc41d000000000000ULL | (uint64_t)(i + 1) << 32 | (uint64_t)getpid();

		snprintf(slot[i], sizeof slot[i], "%d", i);
		snprintf(value[i], sizeof value[i], "%#" PRIx64, v);
		argv[i][0] = path;
		argv[i][1] = mode;
		argv[i][2] = addr;
		argv[i][3] = ps;
		argv[i][4] = slot[i];
		argv[i][5] = nslots;
		argv[i][6] = value[i];
		argv[i][7] = NULL;
	}
	fflush(NULL);
	for (i = 0; i < n; i++) {
		rc = hpshm_child_spawn(seg, path, argv[i], NULL, &kids[i], &err);
		cr_assert_eq(rc, 0, "hpshm_child_spawn %s: %s: %s", path, hpshm_errname(rc), err.message);
		cr_assert_gt(kids[i].pid, 0);
	}
	for (i = 0; i < n; i++) {
		rc = hpshm_child_wait(&kids[i], &status, &err);
		cr_assert_eq(rc, 0, "hpshm_child_wait: %s", err.message);
		cr_expect_eq(status, 0, "child %d (%s, %zu-byte pages) exited %d: %s", i, c->provider, c->page_size, status,
			     child_error(status));
	}
	for (i = 0; i < n; i++) {
		uint64_t want = strtoull(value[i], NULL, 16);
		size_t at = reattach_slot_word((size_t)i, words, NCHILDREN);

		cr_expect_eq(w[at], want, "child %d's write-back at word %zu: %#" PRIx64 ", want %#" PRIx64, i, at, w[at],
			     want);
	}
	/* The children only detached: the parent's pattern is still there, outside the slots. */
	for (size_t k = 0; k < words; k++)
		if (!reattach_is_slot(k, words, NCHILDREN) && w[k] != reattach_pattern(k))
			cr_assert_fail("word %zu changed after the children detached", k);
}

static void destroy_unmapped(hpshm_segment *seg)
{
	void *a = hpshm_segment_address(seg);
	size_t len = hpshm_segment_report(seg)->mapped_size;

	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(hpt_is_mapped(a, len), 0, "still mapped after destroy");
}

static void run_case(const struct case_ *c, int nchildren)
{
	size_t size = case_size(c);
	hpshm_config *cfg = case_config(c, size, "");
	hpshm_segment *seg = case_create(c, cfg, size);
	char tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int n;

	n = hpshm_segment_token(seg, tok, sizeof tok, &err);
	cr_assert_gt(n, 0, "token of a reattach=exec %s segment: %s: %s", c->provider, hpshm_errname(n), err.message);
	cr_assert_eq((size_t)n, strlen(tok));
	cr_assert_eq(token_address(tok), (uintptr_t)hpshm_segment_address(seg), "token %s", tok);
	cr_log_info("token %s", tok);
	run_children(c, seg, nchildren);
	destroy_unmapped(seg);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(reattach, one_child_sees_the_segment)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, one_child_sees_the_segment)
{
	run_case(c, 1);
}

ParameterizedTestParameters(reattach, eight_children_at_once)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, eight_children_at_once, .timeout = 120)
{
	run_case(c, NCHILDREN);
}

/*
 * A named segment is one another process opens by its token, so it must sit where that
 * process can map it too: on the 64 KiB grid, at an address hpshm chose, as with
 * reattach=exec.  It used to keep the kernel's address, which its own token refused.
 */
Test(reattach, a_named_segment_without_reattach_exec_reaches_a_child_at_its_address)
{
	struct case_ c = { .provider = "plain", .page_size = hpshm_base_page_size() };
	size_t size = 2 * c.page_size + 1;
	char kv[128], tok[HPSHM_TOKEN_MAX];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	uint64_t *w;
	int n;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=hpt-named-token-%ld", (long)getpid());
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s: %s", kv, err.message);
	cr_assert_eq(hpshm_segment_create(&seg, size, cfg, &err), 0, "%s: %s", kv, err.message);
	cr_assert_eq((uintptr_t)hpshm_segment_address(seg) % 65536, 0u, "a named segment at %p, off the grid",
		     hpshm_segment_address(seg));
	n = hpshm_segment_token(seg, tok, sizeof tok, &err);
	cr_assert_gt(n, 0, "token of a named segment: %s: %s", hpshm_errname(n), err.message);
	cr_assert_eq(token_address(tok), (uintptr_t)hpshm_segment_address(seg), "token %s", tok);
	w = hpshm_segment_address(seg);
	for (size_t i = 0; i < hpshm_segment_size(seg) / sizeof *w; i++)
		w[i] = reattach_pattern(i);
	run_children(&c, seg, 1);
	destroy_unmapped(seg);
	hpshm_config_free(cfg);
}

/*
 * A free range of len bytes aligned to align, well away from the automatic choice.  A 32-bit
 * process may have no such range (1 GiB pages want 3 GiB and more): the test then skips,
 * saying so, before it has made anything.
 */
static uintptr_t free_aligned(size_t len, size_t align)
{
	uintptr_t hint = sizeof(void *) >= 8 ? (uintptr_t)0x3a0000000000ULL : 0;
	void *p = len <= SIZE_MAX - align
			  ? mmap((void *)hint, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			  : MAP_FAILED;
	uintptr_t a;

	if (p == MAP_FAILED && sizeof(void *) < 8)
		HPT_SKIP("this 32-bit process has no free range of %zu bytes aligned to %zu to give base_address",
			 len, align);
	cr_assert_neq(p, MAP_FAILED);
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	munmap(p, len + align);
	return a;
}

ParameterizedTestParameters(reattach, base_address_is_honoured)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, base_address_is_honoured)
{
	size_t size = case_size(c);
	size_t align = c->page_size > ((size_t)1 << 30) ? c->page_size : ((size_t)1 << 30);
	uintptr_t at = free_aligned(size + 2 * c->page_size + 4096, align);
	char extra[64], tok[HPSHM_TOKEN_MAX];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;

	snprintf(extra, sizeof extra, "base_address=%#" PRIxPTR, at);
	cfg = case_config(c, size, extra);
	seg = case_create(c, cfg, size);
	cr_assert_eq((uintptr_t)hpshm_segment_address(seg), at, "base_address=%#" PRIxPTR " but the segment is at %p",
		     at, hpshm_segment_address(seg));
	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	cr_assert_eq(token_address(tok), at, "token %s", tok);
	run_children(c, seg, 1);
	destroy_unmapped(seg);
	hpshm_config_free(cfg);
}

/* A child that took part of the range first: HPSHM_EEXIST naming the holder, nothing left. */
static void run_clash(const struct case_ *c, int inside)
{
	size_t size;
	hpshm_config *cfg;

	/* Before anything is made: a skip runs no .fini, so nothing may be left to undo. */
	HPT_SKIP_UNDER_EMULATOR("qemu-user runs with a 2MiB host page (-p 2097152, so hugetlb mappings land on "
				"their grid), and the child's 4KiB holder page can be neither placed inside the "
				"range nor named in /proc/self/maps as the kernel would");
	size = case_size(c);
	cfg = case_config(c, size, "");
	hpshm_segment *seg = case_create(c, cfg, size);
	size_t mapped = hpshm_segment_report(seg)->mapped_size;
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "clash", addr[32], off[32];
	char *argv[] = {path, mode, addr, off, NULL};
	hpshm_child kid;
	hpshm_error err;
	int rc, status = -1;

	snprintf(addr, sizeof addr, "%#" PRIxPTR, (uintptr_t)hpshm_segment_address(seg));
	/* inside: a base page in the middle of the range, not at its start */
	snprintf(off, sizeof off, "%#zx", inside ? (mapped / 2) & ~(hpshm_base_page_size() - 1) : (size_t)0);
	fflush(NULL);
	rc = hpshm_child_spawn(seg, path, argv, NULL, &kid, &err);
	cr_assert_eq(rc, 0, "hpshm_child_spawn: %s", err.message);
	cr_assert_eq(hpshm_child_wait(&kid, &status, &err), 0, "%s", err.message);
	cr_expect_eq(status, 0, "clash child (%s, holder at offset %s) exited %d: %s", c->provider, off, status,
		     child_error(status));
	destroy_unmapped(seg);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(reattach, clash_at_the_start_names_the_holder)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, clash_at_the_start_names_the_holder)
{
	run_clash(c, 0);
}

ParameterizedTestParameters(reattach, clash_inside_the_range_names_the_holder)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, clash_inside_the_range_names_the_holder)
{
	run_clash(c, 1);
}

ParameterizedTestParameters(reattach, destroyed_segment_token_no_longer_attaches)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

ParameterizedTest(struct case_ *c, reattach, destroyed_segment_token_no_longer_attaches)
{
	size_t size = case_size(c);
	hpshm_config *cfg = case_config(c, size, "");
	hpshm_segment *seg = case_create(c, cfg, size), *again = NULL;
	char tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int rc, maps0, fds0;

	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	destroy_unmapped(seg);
	maps0 = hpt_maps_count();
	fds0 = hpt_fd_count();
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach(&again, tok, NULL, &err);
	cr_assert_lt(rc, 0, "the token of a destroyed %s segment attached", c->provider);
	cr_assert_null(again);
	cr_assert_eq(err.code, rc);
	cr_assert_neq(err.message[0], '\0', "no message for %s", hpshm_errname(rc));
	cr_log_info("%s: %s: %s", c->provider, hpshm_errname(rc), err.message);
	cr_assert_eq(hpt_maps_count(), maps0, "a mapping was left behind");
	cr_assert_eq(hpt_fd_count(), fds0, "a descriptor was left behind");
	cr_assert_eq(hpt_is_mapped((void *)token_address(tok), size), 0);
	hpshm_config_free(cfg);
}

Test(reattach, reattach_off_has_no_token)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	char tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "huge_pages=off,reattach=off", &err), 0, "%s", err.message);
	rc = hpshm_segment_create(&seg, 65536, cfg, &err);
	cr_assert_eq(rc, 0, "%s", err.message);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_token(seg, tok, sizeof tok, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "token of a reattach=off segment: %s", hpshm_errname(rc));
	cr_assert_eq(err.code, HPSHM_ENOTSUP);
	cr_assert_neq(err.message[0], '\0');
	cr_assert(hpt_contains(err.message, "reattach"), "message does not say why: %s", err.message);
	{
		char path[] = HPSHM_REATTACH_CHILD, mode[] = "hold", s[] = "0", slot[] = "0";
		char *argv[] = {path, mode, s, slot, NULL};
		hpshm_child kid;

		rc = hpshm_child_spawn(seg, path, argv, NULL, &kid, &err);
		cr_assert_eq(rc, HPSHM_ENOTSUP, "hpshm_child_spawn of a reattach=off segment: %s", hpshm_errname(rc));
	}
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

static int has_provider(const char *want)
{
	const char *name;

	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++)
		if (!strcmp(name, want))
			return 1;
	return 0;
}

Test(reattach, mmap_hugetlb_named_with_reattach_exec_is_a_config_error)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	if (!has_provider("mmap_hugetlb"))
		HPT_UNAVAILABLE("mmap_hugetlb", NULL, "mmap_hugetlb is not built in");
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "provider=mmap_hugetlb,reattach=exec,huge_pages=on", &err), 0, "%s",
		     err.message);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create(&seg, 1 << 21, cfg, &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "create: %s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_str_eq(err.key, "reattach", "err.key is \"%s\": %s", err.key, err.message);
	cr_assert(hpt_contains(err.message, "mmap_hugetlb"), "%s", err.message);
	hpshm_config_free(cfg);
}

/* auto with reattach=exec: whatever the pool, never mmap_hugetlb, and the token works. */
static void auto_never_mmap_hugetlb(const char *policy)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[128], tok[HPSHM_TOKEN_MAX], psz[32];
	const char *name;
	unsigned caps = 0;
	int rc;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(kv, sizeof kv, "provider=auto,reattach=exec,huge_pages=%s", policy);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	memset(&r, 0, sizeof r);
	rc = hpshm_segment_create_ex(&seg, 1 << 20, cfg, &r, &err);
	if (rc < 0 && !strcmp(policy, "on")) {
		for (unsigned i = 0; i < r.nattempts; i++)
			cr_assert(strcmp(r.attempts[i].provider, "mmap_hugetlb") || r.attempts[i].result < 0,
				  "mmap_hugetlb succeeded in a failed walk");
		hpshm_config_free(cfg);
		/* CI reserves a pool of the default size: then this must work */
		HPT_UNAVAILABLE("memfd_hugetlb", hpt_size_text(hpt_default_huge_page_size(), psz, sizeof psz),
				"huge_pages=on with reattach=exec: %s", err.message);
	}
	cr_assert_eq(rc, 0, "%s: %s", kv, err.message);
	cr_assert_str_neq(r.provider, "mmap_hugetlb", "auto with reattach=exec picked mmap_hugetlb");
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if (!strcmp(name, r.provider))
			cr_assert(caps & HPSHM_CAP_REATTACH, "picked %s, which cannot re-attach", r.provider);
	for (unsigned i = 0; i < r.nattempts; i++)
		if (!strcmp(r.attempts[i].provider, "mmap_hugetlb"))
			cr_assert_lt(r.attempts[i].result, 0, "mmap_hugetlb recorded as a success");
	cr_log_info("huge_pages=%s, reattach=exec: %s", policy, r.provider);
	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(reattach, auto_with_reattach_exec_never_picks_mmap_hugetlb_try)
{
	auto_never_mmap_hugetlb("try");
}

Test(reattach, auto_with_reattach_exec_never_picks_mmap_hugetlb_on)
{
	auto_never_mmap_hugetlb("on");
}

Test(reattach, attach_env_without_token_is_einval)
{
	hpshm_segment *seg = (hpshm_segment *)&seg;
	hpshm_error err;
	char *saved = getenv("HPSHM_TOKEN") ? strdup(getenv("HPSHM_TOKEN")) : NULL;
	int rc;

	unsetenv("HPSHM_TOKEN");
	rc = hpshm_segment_attach_env(&seg, NULL, &err);
	cr_assert_eq(rc, HPSHM_EINVAL);
	cr_assert_null(seg);
	cr_assert(hpt_contains(err.message, "HPSHM_TOKEN"), "%s", err.message);
	if (saved) {
		setenv("HPSHM_TOKEN", saved, 1);
		free(saved);
	}
}

/* ---- hpshm_child_spawn: finding the program ---- */

/*
 * Two directories for PATH: the first holds a file named like the program that is not
 * executable, the second the program itself, a script that exits 7.
 */
struct spawn_dirs {
	char noexec[64];  /* holds a non-executable "hpshm-spawn-probe" */
	char exec[64];    /* holds the runnable "hpshm-spawn-probe" */
	char path[160];   /* "noexec:exec" */
	char *saved_path; /* PATH before the test */
};

static void spawn_file(const char *dir, const char *text, mode_t mode)
{
	char file[128];
	FILE *f;

	snprintf(file, sizeof file, "%s/hpshm-spawn-probe", dir);
	f = fopen(file, "w");
	cr_assert_not_null(f, "%s", file);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(file, mode), 0);
}

static void spawn_dirs_make(struct spawn_dirs *d)
{
	snprintf(d->noexec, sizeof d->noexec, "/tmp/hpshm-spawn-a.XXXXXX");
	snprintf(d->exec, sizeof d->exec, "/tmp/hpshm-spawn-b.XXXXXX");
	cr_assert_not_null(mkdtemp(d->noexec));
	cr_assert_not_null(mkdtemp(d->exec));
	spawn_file(d->noexec, "#!/bin/sh\nexit 9\n", 0644);
	spawn_file(d->exec, "#!/bin/sh\nexit 7\n", 0755);
	snprintf(d->path, sizeof d->path, "%s:%s", d->noexec, d->exec);
	d->saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
}

static void spawn_dirs_remove(struct spawn_dirs *d)
{
	char file[128];

	snprintf(file, sizeof file, "%s/hpshm-spawn-probe", d->noexec);
	(void)unlink(file);
	(void)rmdir(d->noexec);
	snprintf(file, sizeof file, "%s/hpshm-spawn-probe", d->exec);
	(void)unlink(file);
	(void)rmdir(d->exec);
	if (d->saved_path) {
		setenv("PATH", d->saved_path, 1);
		free(d->saved_path);
	} else {
		unsetenv("PATH");
	}
}

/* A plain segment that can be handed to hpshm_child_spawn(). */
static hpshm_segment *spawn_segment(hpshm_config **cfg)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(cfg), 0);
	cr_assert_eq(hpshm_config_parse(*cfg, "provider=plain,huge_pages=off,reattach=exec", &err), 0, "%s",
		     err.message);
	cr_assert_eq(hpshm_segment_create(&seg, 65536, *cfg, &err), 0, "%s", err.message);
	return seg;
}

Test(reattach, spawn_finds_a_bare_name_in_path_past_a_file_it_cannot_run)
{
	struct spawn_dirs d;
	hpshm_config *cfg;
	hpshm_segment *seg = spawn_segment(&cfg);
	char name[] = "hpshm-spawn-probe";
	char *argv[] = {name, NULL};
	hpshm_child kid;
	hpshm_error err;
	int rc, status = -1;

	spawn_dirs_make(&d);
	setenv("PATH", d.path, 1);
	memset(&err, 0, sizeof err);
	rc = hpshm_child_spawn(seg, name, argv, NULL, &kid, &err);
	if (rc == 0)
		cr_expect_eq(hpshm_child_wait(&kid, &status, &err), 0, "%s", err.message);
	spawn_dirs_remove(&d);
	cr_assert_eq(rc, 0, "hpshm_child_spawn of a name in PATH: %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(status, 7, "ran the wrong file, or none: exit status %d", status);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(reattach, spawn_of_a_program_that_cannot_run_is_an_error_not_exit_127)
{
	struct spawn_dirs d;
	hpshm_config *cfg;
	hpshm_segment *seg = spawn_segment(&cfg);
	char name[] = "hpshm-spawn-probe", missing[] = "hpshm-no-such-program", gone[] = "/nonexistent-hpshm/prog";
	char *argv[] = {name, NULL};
	hpshm_child kid;
	hpshm_error e_noexec, e_missing, e_gone;
	int r_noexec, r_missing, r_gone;

	spawn_dirs_make(&d);
	setenv("PATH", d.noexec, 1);
	memset(&e_noexec, 0, sizeof e_noexec);
	memset(&e_missing, 0, sizeof e_missing);
	memset(&e_gone, 0, sizeof e_gone);
	r_noexec = hpshm_child_spawn(seg, name, argv, NULL, &kid, &e_noexec);
	r_missing = hpshm_child_spawn(seg, missing, argv, NULL, &kid, &e_missing);
	r_gone = hpshm_child_spawn(seg, gone, argv, NULL, &kid, &e_gone);
	spawn_dirs_remove(&d);

	cr_assert_eq(r_noexec, HPSHM_ESYS, "a non-executable file in PATH: %s", hpshm_errname(r_noexec));
	cr_assert_eq(e_noexec.sys_errno, EACCES, "errno %d", e_noexec.sys_errno);
	cr_assert_eq(r_missing, HPSHM_ESYS, "a name found nowhere in PATH: %s", hpshm_errname(r_missing));
	cr_assert_eq(e_missing.sys_errno, ENOENT, "errno %d", e_missing.sys_errno);
	cr_assert(hpt_contains(e_missing.message, missing), "%s", e_missing.message);
	cr_assert_eq(r_gone, HPSHM_ESYS, "a path that does not exist: %s", hpshm_errname(r_gone));
	cr_assert_eq(e_gone.sys_errno, ENOENT, "errno %d", e_gone.sys_errno);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/* ---- the header where it costs no huge page ---- */

/* The token's header field (the 8th): "tail" or the companion's identifier. */
static void token_header(const char *tok, char *out, size_t len)
{
	const char *p = tok, *e;

	for (int field = 0; field < 7 && p; field++) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	cr_assert_not_null(p, "token \"%s\" has too few fields", tok);
	e = strchr(p, ':');
	cr_assert_not_null(e, "token \"%s\" has no check after its header field", tok);
	snprintf(out, len, "%.*s", (int)(e - p), p);
}

ParameterizedTestParameters(reattach, a_size_that_fills_its_huge_pages_takes_no_page_for_the_header)
{
	return cr_make_param_array(struct case_, cases, collect_cases());
}

/*
 * An unnamed re-attachable segment whose size is a whole number of huge pages (one page
 * here: a 1 GiB request on 1 GiB pages) maps exactly those pages, all usable.  A provider that
 * labels its object (HPSHM_CAP_TAG) needs nothing more: the token says "tag" and nothing is
 * mapped after the segment.  For the others the header is in a companion of base pages after
 * the segment, named in the token.  Either way the children attach and see the segment, and
 * destroy leaves nothing mapped.
 */
ParameterizedTest(struct case_ *c, reattach, a_size_that_fills_its_huge_pages_takes_no_page_for_the_header)
{
	size_t size = c->page_size;
	hpshm_config *cfg;
	hpshm_segment *seg;
	const hpshm_report *r;
	char tok[HPSHM_TOKEN_MAX], hdr[HPSHM_TOKEN_MAX];
	hpshm_error err;
	char *a;

	if (!(c->caps & HPSHM_CAP_HUGE) || c->no_sizes)
		HPT_SKIP("%s is on base pages: its header at the tail costs a base page", c->provider);
	cfg = case_config(c, size, "");
	seg = case_create(c, cfg, size);
	r = hpshm_segment_report(seg);
	cr_assert_eq(r->mapped_size, size, "%s mapped %zu bytes for a %zu-byte request on %zu-byte pages", c->provider,
		     r->mapped_size, size, c->page_size);
	cr_assert_eq(hpshm_segment_size(seg), size, "usable %zu, want all %zu", hpshm_segment_size(seg), size);
	cr_assert_eq(r->usable_size, size);
	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	token_header(tok, hdr, sizeof hdr);
	cr_assert_str_neq(hdr, "tail", "token %s keeps the header at the tail", tok);
	a = hpshm_segment_address(seg);
	if (c->caps & HPSHM_CAP_TAG) {
		cr_assert_str_eq(hdr, "tag", "token %s: %s labels its objects, yet the header is elsewhere", tok,
				 c->provider);
		cr_assert_eq(hpt_is_mapped(a + size, hpshm_base_page_size()), 0,
			     "something is mapped after a labelled segment, which needs no companion");
	} else {
		cr_assert_eq(hpt_is_mapped(a + size, hpshm_base_page_size()), 1, "no companion mapped after the segment");
	}
	run_children(c, seg, 2);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(hpt_is_mapped(a, size), 0, "the segment is still mapped after destroy");
	cr_assert_eq(hpt_is_mapped(a + size, hpshm_base_page_size()), 0, "the companion is still mapped after destroy");
	hpshm_config_free(cfg);
}

/*
 * At a base_address whose following granule is taken (here by a mapping of ours), there is
 * no room for a companion, nor for a header at the tail, which would need that range too:
 * for sysv_hugetlb, which keeps its header in a companion, the create fails and leaves
 * nothing mapped in the range.  memfd_hugetlb labels its memfd instead, needs nothing after
 * the segment, and succeeds there; its child checks the label.
 */
static void taken_granule_case(const char *provider, int fits)
{
	struct case_ c = {"", HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH, (size_t)2 << 20, 0};
	size_t size = 2 * c.page_size;
	uintptr_t base = free_aligned(4 * c.page_size, c.page_size);
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	char extra[64];
	hpshm_error err;
	void *blocker;
	int rc;

	if (!has_provider(provider))
		HPT_SKIP("this build has no %s", provider);
	snprintf(c.provider, sizeof c.provider, "%s", provider);
	snprintf(extra, sizeof extra, "base_address=%#" PRIxPTR, base);
	cfg = case_config(&c, size, extra);
	blocker = mmap((void *)(base + size), hpshm_base_page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		       -1, 0);
	cr_assert_neq(blocker, MAP_FAILED, "mmap the blocker: %s", strerror(errno));
	if (fits) {
		seg = case_create(&c, cfg, size);
		cr_assert_eq((uintptr_t)hpshm_segment_address(seg), base);
		cr_assert_eq(hpshm_segment_report(seg)->mapped_size, size, "%s took more than its two pages", provider);
		run_children(&c, seg, 1);
		cr_assert_eq(hpshm_segment_destroy(seg), 0);
	} else {
		memset(&err, 0, sizeof err);
		rc = hpshm_segment_create(&seg, size, cfg, &err);
		cr_assert_lt(rc, 0, "%s created over a taken range", provider);
		cr_assert_null(seg);
	}
	cr_assert_eq(hpt_is_mapped((void *)base, size), 0, "a mapping is left at the base address");
	cr_assert_eq(munmap(blocker, hpshm_base_page_size()), 0);
	hpshm_config_free(cfg);
}

Test(reattach, a_taken_companion_granule_at_base_address_fails_cleanly)
{
	taken_granule_case("sysv_hugetlb", 0);
}

Test(reattach, a_labelled_segment_needs_no_granule_after_it)
{
	taken_granule_case("memfd_hugetlb", 1);
}

/* The descriptor of a token's "fd=N" field (the 3rd or the 8th), or -1. */
static int token_fd(const char *tok, int field)
{
	const char *p = tok;

	for (int i = 0; i < field && p; i++) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	return p && !strncmp(p, "fd=", 3) ? atoi(p + 3) : -1;
}

/*
 * A server with its own process manager keeps a segment across its own fork and exec:
 * hpshm_segment_inherit() leaves open across exec every descriptor the token names (the
 * memfd's; or a SysV segment's header companion) and gives the token; a program exec'd by
 * hand with HPSHM_TOKEN in its environment attaches at the creator's address and sees the
 * segment.  Without the call the descriptors are close-on-exec.
 */
static void inherit_case(const char *provider, int companion)
{
	struct case_ c = {"", HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH, (size_t)2 << 20, 0};
	size_t size = c.page_size;
	char tok[HPSHM_TOKEN_MAX], tokvar[HPSHM_TOKEN_MAX + 16], addr[32], ps[32], value[32], hdr[HPSHM_TOKEN_MAX];
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "check", slot[] = "0", nslots[] = "1";
	char *argv[] = {path, mode, addr, ps, slot, nslots, value, NULL};
	char *envp[] = {tokvar, NULL};
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	uint64_t *w;
	int fds[2], status;
	pid_t pid;

	if (!has_provider(provider))
		HPT_SKIP("this build has no %s", provider);
	snprintf(c.provider, sizeof c.provider, "%s", provider);
	cfg = case_config(&c, size, "");
	seg = case_create(&c, cfg, size);
	cr_assert_gt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	fds[0] = token_fd(tok, 2); /* -1 for a SysV id */
	fds[1] = token_fd(tok, 7); /* -1 for a header at the tail or in the memfd's label */
	token_header(tok, hdr, sizeof hdr);
	if (companion)
		cr_assert_geq(fds[1], 0, "token %s: a 2 MiB segment on 2 MiB pages keeps its header in a companion", tok);
	else
		cr_assert_str_eq(hdr, "tag", "token %s: %s labels its memfd, so no companion", tok, provider);
	cr_assert(fds[0] >= 0 || fds[1] >= 0, "token %s names no descriptor to inherit", tok);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			cr_assert(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, "descriptor %d is inheritable before the call", fds[i]);

	cr_assert_gt(hpshm_segment_inherit(seg, tok, sizeof tok, &err), 0, "%s: %s", hpshm_errname(err.code),
		     err.message);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			cr_assert_eq(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, 0, "descriptor %d is still close-on-exec", fds[i]);

	w = hpshm_segment_address(seg);
	snprintf(tokvar, sizeof tokvar, "HPSHM_TOKEN=%s", tok);
	snprintf(addr, sizeof addr, "%#" PRIxPTR, (uintptr_t)w);
	snprintf(ps, sizeof ps, "%zu", c.page_size);
	snprintf(value, sizeof value, "%#" PRIx64, (uint64_t)0x1e4e000000000000ULL | (uint64_t)getpid());
	fflush(NULL);
	pid = hpt_fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		execve(path, argv, envp);
		_exit(126);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the exec'd child died of signal %d", WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "the exec'd child exited %d: %s", WEXITSTATUS(status),
		     child_error(WEXITSTATUS(status)));
	cr_assert_eq(w[reattach_slot_word(0, hpshm_segment_size(seg) / sizeof *w, 1)], strtoull(value, NULL, 16),
		     "the child's write-back is not in the segment");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(reattach, inherit_keeps_a_segment_across_the_callers_own_exec)
{
	inherit_case("memfd_hugetlb", 0);
}

Test(reattach, inherit_keeps_a_sysv_segment_and_its_companion_across_exec)
{
	inherit_case("sysv_hugetlb", 1);
}

/* ---- a stale token whose SysV id a new segment got ----
 *
 * An unnamed SysV segment that fills its huge pages keeps its header in a companion, which a
 * child inherits as a descriptor and so keeps after the segment is gone.  Linux gives the id
 * of a removed segment to a new one when its slot's sequence wraps, or at once when
 * kernel.shm_next_id asks for it: the test asks, as root, in an IPC namespace of its own, so
 * no other program's segment can take the id and no other program sees the test's.  The
 * child, started by a real exec while the segment lived, waits, then attaches with its token:
 * it must be refused (reattach_child refuse), whether the creator destroyed the segment (its
 * companion then says so) or was killed (the companion is whole, and only the object it
 * records tells the new segment from the old).  The work runs in a forked process that makes
 * no cr_* call; it reports through its exit status and a line of text.
 */
#ifdef __linux__
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>

enum { STALE_OK = 0, STALE_SKIP = 77, STALE_FAIL = 78 };

static int stale_msgfd = -1; /* where the forked process writes its one line */

static int stale_say(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int stale_say(int code, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n = write(stale_msgfd, line, strlen(line));
	(void)n;
	return code;
}

/* Create the segment under cfg and start reattach_child refuse GO in it: 0, or a STALE_ code. */
static int stale_create(const hpshm_config *cfg, size_t size, int go, hpshm_segment **seg, int *id,
			unsigned long *segsz, pid_t *kid)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "refuse", gofd[16], tok[HPSHM_TOKEN_MAX];
	char *argv[] = {path, mode, gofd, NULL};
	struct shmid_ds ds;
	hpshm_child child;
	hpshm_error err;
	const char *p;
	int rc;

	rc = hpshm_segment_create(seg, size, cfg, &err);
	/* Under an emulator a refusal is the emulator's (hpt_skip_emulated_refusal()): the
	 * huge pages it cannot verify, the addresses it keeps for itself. */
	if (rc < 0)
		return stale_say(hpt_emulator() ? STALE_SKIP : STALE_FAIL, "create: %s: %s", hpshm_errname(rc),
				 err.message);
	if (hpshm_segment_token(*seg, tok, sizeof tok, &err) < 0)
		return stale_say(STALE_FAIL, "token: %s", err.message);
	p = strstr(tok, ":shm=");
	if (!p || strstr(tok, ":tail:"))
		return stale_say(STALE_FAIL, "token %s: not a SysV segment with its header in a companion", tok);
	*id = atoi(p + 5);
	if (shmctl(*id, IPC_STAT, &ds) < 0)
		return stale_say(STALE_FAIL, "shmctl(IPC_STAT) of segment %d: %s", *id, strerror(errno));
	*segsz = (unsigned long)ds.shm_segsz;
	snprintf(gofd, sizeof gofd, "%d", go);
	rc = hpshm_child_spawn(*seg, path, argv, NULL, &child, &err);
	if (rc < 0)
		return stale_say(STALE_FAIL, "spawn: %s", err.message);
	*kid = (pid_t)child.pid;
	return 0;
}

/*
 * In the forked process: the segment A, its child waiting, A gone (destroyed by its creator,
 * or its creator killed), a new segment B with A's id and size, then the child let go.
 * Returns STALE_OK when the child refused, else a code with the line said.
 */
static int stale_run(int killed, size_t page_size)
{
	char kv[128], psz[32], idtext[32];
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	unsigned long segsz = 0;
	int go[2], ready[2], id = -1, b, fd, status, rc;
	pid_t kid = -1, creator = -1;
	hpshm_error err;
	void *bat;

	if (unshare(CLONE_NEWIPC) < 0)
		return stale_say(STALE_SKIP, "unshare(CLONE_NEWIPC): %s (needs root)", strerror(errno));
	if (killed && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return stale_say(STALE_SKIP, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	snprintf(kv, sizeof kv, "provider=sysv_hugetlb,reattach=exec,huge_pages=on,huge_page_size=%s",
		 hpt_size_text(page_size, psz, sizeof psz));
	if (hpshm_config_new(&cfg) < 0 || hpshm_config_parse(cfg, kv, &err) < 0)
		return stale_say(STALE_FAIL, "config %s", kv);
	if (pipe(go) < 0 || pipe(ready) < 0)
		return stale_say(STALE_FAIL, "pipe: %s", strerror(errno));
	/* Only the child's read end crosses its exec: with us gone it reads EOF and ends. */
	(void)fcntl(go[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(ready[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(ready[1], F_SETFD, FD_CLOEXEC);
	if (!killed) {
		rc = stale_create(cfg, page_size, go[0], &seg, &id, &segsz, &kid);
		if (rc != 0)
			return rc;
		if (hpshm_segment_destroy(seg) < 0)
			return stale_say(STALE_FAIL, "destroy of segment %d failed", id);
	} else {
		long got[3];

		creator = fork();
		if (creator < 0)
			return stale_say(STALE_FAIL, "fork: %s", strerror(errno));
		if (creator == 0) {
			long mine[3];

			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			rc = stale_create(cfg, page_size, go[0], &seg, &id, &segsz, &kid);
			if (rc != 0)
				_exit(rc);
			mine[0] = id;
			mine[1] = (long)segsz;
			mine[2] = (long)kid;
			if (write(ready[1], mine, sizeof mine) != (ssize_t)sizeof mine)
				_exit(1);
			pause();
			_exit(0);
		}
		close(ready[1]);
		if (read(ready[0], got, sizeof got) != (ssize_t)sizeof got) {
			/* It said why, and its exit status says what that means. */
			if (waitpid(creator, &status, 0) == creator && WIFEXITED(status) && WEXITSTATUS(status) != 0)
				return WEXITSTATUS(status);
			return stale_say(STALE_FAIL, "the creator could not make its segment and child");
		}
		id = (int)got[0];
		segsz = (unsigned long)got[1];
		kid = (pid_t)got[2];
		/* Killed, as a crash: its companion's header stays whole in the child. */
		(void)kill(creator, SIGKILL);
		(void)waitpid(creator, NULL, 0);
	}
	close(go[0]);
	{
		struct shmid_ds ds;

		if (shmctl(id, IPC_STAT, &ds) == 0)
			return stale_say(STALE_FAIL, "segment %d outlived its creator's end", id);
	}
	fd = open("/proc/sys/kernel/shm_next_id", O_WRONLY | O_CLOEXEC);
	snprintf(idtext, sizeof idtext, "%d", id);
	if (fd < 0 || write(fd, idtext, strlen(idtext)) != (ssize_t)strlen(idtext)) {
		rc = stale_say(STALE_SKIP, "cannot write kernel.shm_next_id: %s", strerror(errno));
		close(go[1]);
		(void)waitpid(kid, NULL, 0);
		return rc;
	}
	close(fd);
	b = shmget(IPC_PRIVATE, segsz, IPC_CREAT | SHM_HUGETLB | 0600);
	bat = b >= 0 ? shmat(b, NULL, 0) : (void *)-1;
	if (b >= 0)
		(void)shmctl(b, IPC_RMID, NULL); /* gone with our detach, or our end */
	if (b != id || bat == (void *)-1) {
		rc = stale_say(STALE_FAIL, "the new segment got id %d (attach %s), not %d", b,
			       bat == (void *)-1 ? strerror(errno) : "ok", id);
		close(go[1]);
		(void)waitpid(kid, NULL, 0);
		return rc;
	}
	memset(bat, 0x5b, segsz);
	if (write(go[1], "g", 1) != 1)
		return stale_say(STALE_FAIL, "cannot let the child go: %s", strerror(errno));
	close(go[1]);
	if (waitpid(kid, &status, 0) != kid)
		return stale_say(STALE_FAIL, "waitpid(%ld): %s", (long)kid, strerror(errno));
	(void)shmdt(bat);
	hpshm_config_free(cfg);
	if (!WIFEXITED(status))
		return stale_say(STALE_FAIL, "the child died of signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		return stale_say(STALE_FAIL, "the child exited %d: %s", WEXITSTATUS(status),
				 WEXITSTATUS(status) == CHILD_EACCEPTED ? "the stale token attached the new segment"
									: child_error(WEXITSTATUS(status)));
	return STALE_OK;
}

static void stale_case(int killed)
{
	size_t page_size = hpt_default_huge_page_size();
	struct case_ c = {"sysv_hugetlb", HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH, page_size, page_size == 0};
	char line[512] = "";
	hpshm_config *cfg;
	int msg[2], status;
	ssize_t n;
	pid_t pid;

	if (!has_provider("sysv_hugetlb"))
		HPT_SKIP("this build has no sysv_hugetlb");
	cfg = case_config(&c, page_size, ""); /* skips without a pool or the privilege */
	hpshm_config_free(cfg);
	if (geteuid() != 0)
		HPT_SKIP("only root can give a new segment a chosen id (kernel.shm_next_id)");
	cr_assert_eq(pipe(msg), 0);
	pid = hpt_fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(msg[0]);
		stale_msgfd = msg[1];
		_exit(stale_run(killed, page_size));
	}
	close(msg[1]);
	n = read(msg[0], line, sizeof line - 1);
	line[n > 0 ? n : 0] = '\0';
	close(msg[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the test's process died of signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) == STALE_SKIP) {
		HPT_SKIP_UNDER_EMULATOR(line);
		HPT_SKIP("%s", line);
	}
	cr_assert_eq(WEXITSTATUS(status), STALE_OK, "%s", line);
}

Test(reattach, a_stale_token_refuses_the_segment_that_got_its_id_after_a_destroy)
{
	stale_case(0);
}

Test(reattach, a_stale_token_refuses_the_segment_that_got_its_id_after_its_creator_was_killed)
{
	stale_case(1);
}
#endif

/* ---- hpshm_child_spawn_ex: extra descriptors, ending with the parent ---- */

Test(reattach, spawn_ex_passes_an_extra_descriptor_to_that_child_only)
{
	hpshm_config *cfg;
	hpshm_segment *seg = spawn_segment(&cfg);
	char sh[] = "/bin/sh", dash_c[] = "-c", script[64], got[32] = "";
	char *argv[] = {sh, dash_c, script, NULL};
	hpshm_spawn_options opt;
	intptr_t extra;
	hpshm_child kid;
	hpshm_error err;
	int fd[2], status = -1;
	ssize_t n;

	cr_assert_eq(pipe2(fd, O_CLOEXEC), 0);
	snprintf(script, sizeof script, "printf through > /proc/self/fd/%d", fd[1]); /* dash: no fd > 9 */
	memset(&opt, 0, sizeof opt);
	opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
	extra = fd[1];
	opt.handles = &extra;
	opt.nhandles = 1;
	cr_assert_eq(hpshm_child_spawn_ex(seg, sh, argv, NULL, &opt, &kid, &err), 0, "%s", err.message);
	/* Ours keeps its close-on-exec flag: no other program this process starts gets it. */
	cr_assert(fcntl(fd[1], F_GETFD) & FD_CLOEXEC, "the descriptor lost FD_CLOEXEC in the parent");
	close(fd[1]);
	cr_assert_eq(hpshm_child_wait(&kid, &status, &err), 0, "%s", err.message);
	n = read(fd[0], got, sizeof got - 1);
	close(fd[0]);
	cr_assert_eq(status, 0, "the child could not write to descriptor %d (status %d)", fd[1], status);
	cr_assert_eq(n, 7, "read %zd bytes", n);
	cr_assert_str_eq(got, "through");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/*
 * A server (a process of hpt_fork()) starts a worker that must end with it, tells us its pid and
 * exits.  This test is the child subreaper, so the orphaned worker becomes ours to wait for:
 * it must end, killed (or ended at its start if the server was gone first), within seconds,
 * where it would otherwise sleep for a minute.
 */
Test(reattach, spawn_ex_worker_ends_when_its_server_exits)
{
	int fd[2], status = -1, ended = 0;
	pid_t server, worker = 0;
	ssize_t n;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		cr_assert(hpt_emulator(), "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
		HPT_SKIP("under %s: prctl(PR_SET_CHILD_SUBREAPER): %s: the emulator does not pass it to the "
			 "kernel, so the orphaned worker could not be waited for here",
			 hpt_emulator(), strerror(errno));
	}
	cr_assert_eq(pipe(fd), 0);
	server = hpt_fork();
	if (server == 0) {
		char sleep_prog[] = "/bin/sleep", secs[] = "60";
		char *argv[] = {sleep_prog, secs, NULL};
		hpshm_spawn_options opt;
		hpshm_config *cfg = NULL;
		hpshm_segment *seg = NULL;
		hpshm_child kid;
		pid_t pid = 0;

		memset(&opt, 0, sizeof opt);
		opt.version = HPSHM_SPAWN_OPTIONS_VERSION;
		opt.flags = HPSHM_SPAWN_KILL_WITH_PARENT;
		if (hpshm_config_new(&cfg) == 0 &&
		    hpshm_config_parse(cfg, "provider=plain,huge_pages=off,reattach=exec", NULL) == 0 &&
		    hpshm_segment_create(&seg, 65536, cfg, NULL) == 0 &&
		    hpshm_child_spawn_ex(seg, sleep_prog, argv, NULL, &opt, &kid, NULL) == 0)
			pid = (pid_t)kid.pid;
		n = write(fd[1], &pid, sizeof pid);
		_exit(n == (ssize_t)sizeof pid ? 0 : 1); /* the segment goes with us; the worker must too */
	}
	close(fd[1]);
	n = read(fd[0], &worker, sizeof worker);
	close(fd[0]);
	cr_assert_eq(waitpid(server, &status, 0), server);
	cr_assert_eq(n, (ssize_t)sizeof worker);
	cr_assert_gt(worker, 0, "the server could not start its worker");
	for (int i = 0; i < 300 && !ended; i++) {
		ended = waitpid(worker, &status, WNOHANG) == worker;
		if (!ended)
			usleep(100000);
	}
	if (!ended) {
		kill(worker, SIGKILL); /* ours: the test started it */
		waitpid(worker, &status, 0);
	}
	cr_assert(ended, "the worker outlived its server by 30 s");
	cr_assert((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) || (WIFEXITED(status) && WEXITSTATUS(status) == 127),
		  "the worker ended otherwise: status 0x%x", status);
}

Test(reattach, child_prepare_is_for_windows_and_names_what_to_use_instead)
{
	hpshm_config *cfg;
	hpshm_segment *seg = spawn_segment(&cfg);
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int process = 0;

	cr_assert_eq(hpshm_child_prepare(seg, &process, token, sizeof token, &err), HPSHM_ENOTSUP);
	cr_assert(hpt_contains(err.hint, "hpshm_segment_inherit"), "%s", err.hint);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}
