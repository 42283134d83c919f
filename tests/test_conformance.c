/* SPDX-License-Identifier: MIT */
/*
 * tests/test_conformance.c -- one contract, every built-in provider, every huge page size.
 *
 * For each built-in provider (hpshm_provider_name) and, for huge ones, each size the kernel
 * offers (hpshm_huge_page_sizes): create with that provider alone, write and read a pattern
 * over the whole mapping, check the report against the kernel (this test reads
 * /proc/self/smaps itself, not only the report), check that a forked child sees the writes
 * and that the parent sees the child's, and destroy.
 *
 * A provider whose probe says it cannot work here is skipped with its reason, unless
 * HPSHM_TEST_REQUIRE names the provider or the page size (or says "all"): then it fails.
 * Pages of 1 GiB and more are scarce, so there the segment takes two pages, not four, and a
 * run that guarantees fewer ("1GiB*1") does not require it.  hugetlbfs uses
 * HPSHM_TEST_HUGETLBFS as hugetlbfs_path when that mount has the case's page size, else
 * mount discovery.
 *
 * Out-of-tree providers run the same contract (doc/providers.md, "Your own provider"): the
 * suite loads the modules HPSHM_PROVIDER_MODULES names, as the hpshm tool does, and
 * HPSHM_TEST_PROVIDER=<name> keeps the cases to that provider, takes its keys from the
 * environment (HPSHM_FILE_PATH for file.path) and requires it to be registered.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"

struct case_ {
	char     provider[HPSHM_NAME_MAX];
	unsigned caps;
	size_t   page_size; /* huge page size to ask for; 0 for non-huge providers */
	int      no_sizes;  /* a huge provider on a kernel that offers no huge page size */
};

#define MAX_CASES 64
static struct case_ cases[MAX_CASES];

/* The one provider HPSHM_TEST_PROVIDER names (an out-of-tree one), or NULL for all. */
static const char *only_provider(void)
{
	const char *only = getenv("HPSHM_TEST_PROVIDER");

	return only && *only ? only : NULL;
}

/* HPSHM_PROVIDER_MODULES, loaded once per process; 0, or the failing load's code. */
static int load_modules(hpshm_error *err)
{
	static int done, rc;
	const char *list = getenv("HPSHM_PROVIDER_MODULES");
	char copy[4096], *save = NULL;

	if (done || !list || !*list)
		return rc;
	done = 1;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *path = strtok_r(copy, ":", &save); path && rc == 0; path = strtok_r(NULL, ":", &save))
		rc = hpshm_provider_load(path, err);
	return rc;
}

static size_t collect_cases(void)
{
	size_t sizes[16];
	int nsizes = hpshm_huge_page_sizes(sizes, 16), j;
	const char *name;
	unsigned caps, i;
	size_t n = 0;
	hpshm_error err;

	if (nsizes > 16)
		nsizes = 16;
	if (load_modules(&err) < 0)
		fprintf(stderr, "HPSHM_PROVIDER_MODULES: %s (%s)\n", err.message, err.hint);
	for (i = 0; (name = hpshm_provider_name(i, &caps)) != NULL && n < MAX_CASES; i++) {
		if (only_provider() && strcmp(name, only_provider()) != 0)
			continue;
		if (!(caps & HPSHM_CAP_HUGE) || nsizes <= 0) {
			memset(&cases[n], 0, sizeof cases[n]);
			snprintf(cases[n].provider, sizeof cases[n].provider, "%s", name);
			cases[n].caps = caps;
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

/* Each test runs in a process of its own: the modules are loaded there too, before it. */
static void conformance_init(void)
{
	hpshm_error err;

	hpt_fixture_init();
	memset(&err, 0, sizeof err);
	cr_assert_eq(load_modules(&err), 0, "HPSHM_PROVIDER_MODULES: %s (hint: %s)", err.message, err.hint);
}

TestSuite(conformance, .init = conformance_init, .fini = hpt_fixture_fini);

static uint64_t pattern(size_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ 0xa5a5a5a5a5a5a5a5ULL;
}

ParameterizedTestParameters(conformance, contract)
{
	size_t n = collect_cases();

	return cr_make_param_array(struct case_, cases, n);
}

ParameterizedTest(struct case_ *c, conformance, contract)
{
	int huge = (c->caps & HPSHM_CAP_HUGE) != 0;
	size_t base = hpshm_base_page_size();
	size_t want_ps = huge ? c->page_size : base;
	size_t size, probed_ps = 0, i, words, smaps_ps;
	char kv[512], psz[32], reason[HPSHM_TEXT_MAX];
	const char *mnt = hpt_test_hugetlbfs(want_ps);
	unsigned long npages;
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	hpshm_error err;
	uint64_t *w;
	int rc, status, ht = 0;
	pid_t pid;

	hpt_size_text(want_ps, psz, sizeof psz);
	cr_log_info("provider %s, page size %s", c->provider, psz);
	if (c->no_sizes)
		HPT_UNAVAILABLE(c->provider, NULL, "%s: the kernel offers no huge page size", c->provider);

	/* Three pages and a bit: rounding must give four.  One and a bit (two) for large pages,
	 * and one for large pages in a 32-bit process, whose 4 GiB seldom hold a free 2 GiB
	 * range on the 1 GiB grid. */
	npages = want_ps >= HPT_LARGE_PAGE ? (sizeof(void *) < 8 ? 1 : 2) : 4;
	size = (npages - 1) * want_ps + 1;
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	/* An out-of-tree provider's keys come from the environment (HPSHM_FILE_PATH). */
	if (only_provider())
		cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "environment: %s", err.message);
	if (huge)
		snprintf(kv, sizeof kv, "provider=%s,huge_pages=on,huge_page_size=%s", c->provider, psz);
	else
		snprintf(kv, sizeof kv, "provider=%s,huge_pages=off", c->provider);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s", kv, err.message);
	if (!strcmp(c->provider, "hugetlbfs") && mnt && *mnt) {
		rc = hpshm_config_set(cfg, "hugetlbfs_path", mnt, &err);
		cr_assert_eq(rc, 0, "HPSHM_TEST_HUGETLBFS=%s: %s", mnt, err.message);
	}

	rc = hpshm_provider_probe(c->provider, size, cfg, &probed_ps, reason, sizeof reason);
	if (rc == HPSHM_EUNAVAILABLE) {
		hpshm_config_free(cfg);
		HPT_UNAVAILABLE_PAGES(c->provider, huge ? psz : NULL, npages, "%s (%s pages): %s", c->provider, psz,
				      reason);
	}
	cr_assert_eq(rc, 0, "probe %s: %s (%s)", c->provider, hpshm_errname(rc), reason);
	cr_assert_eq(probed_ps, want_ps, "probe would use %zu-byte pages, want %zu", probed_ps, want_ps);

	rc = hpshm_segment_create(&seg, size, cfg, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "create %s (%s pages) after a good probe: %s: %s (hint: %s)", c->provider, psz,
		     hpshm_errname(rc), err.message, err.hint);
	r = hpshm_segment_report(seg);
	cr_assert_not_null(r);

	/* the report */
	cr_assert_str_eq(r->provider, c->provider);
	cr_assert_eq(r->requested_size, size);
	cr_assert_eq(r->mapped_size % want_ps, 0u, "mapped %zu is not a multiple of %zu", r->mapped_size, want_ps);
	cr_assert_geq(r->mapped_size, size);
	cr_assert_eq(r->mapped_size, npages * want_ps);
	cr_assert_eq(hpshm_segment_size(seg), r->mapped_size);
	cr_assert_eq(r->verified, 1, "page size not read back from the kernel (%s)", r->verified_by);
	cr_assert_eq(r->page_size, want_ps, "kernel says %zu-byte pages, want %zu", r->page_size, want_ps);
	cr_assert_eq(r->huge, huge);
	cr_assert_eq(r->nattempts, 1u);
	cr_assert_eq(r->attempts[0].result, 0);
	cr_assert_eq((uintptr_t)hpshm_segment_address(seg) % want_ps, 0u, "address not aligned to the page size");

	/* the kernel, read by the test itself */
	smaps_ps = hpt_smaps_page_size(hpshm_segment_address(seg), &ht);
	cr_assert_eq(smaps_ps, want_ps, "smaps KernelPageSize %zu, want %zu", smaps_ps, want_ps);
	cr_assert_eq(ht, huge, "smaps VmFlags ht=%d, want %d", ht, huge);

	/* every byte is usable */
	w = hpshm_segment_address(seg);
	words = r->mapped_size / sizeof *w;
	for (i = 0; i < words; i++)
		w[i] = pattern(i);
	for (i = 0; i < words; i++)
		if (w[i] != pattern(i))
			cr_assert_fail("word %zu reads back %#llx", i, (unsigned long long)w[i]);

	/* shared with a forked child, both ways */
	pid = hpt_fork();
	if (pid == 0) {
		int bad = 0;

		for (i = 0; i < words; i++)
			bad |= w[i] != pattern(i);
		w[0] = 0xc0ffee;
		w[words - 1] = 0xdecaf;
		_exit(bad ? 3 : 0);
	}
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), 0, "the child did not see the parent's writes");
	cr_assert_eq(w[0], 0xc0ffee, "the parent does not see the child's write");
	cr_assert_eq(w[words - 1], 0xdecaf);

	{
		void *addr = hpshm_segment_address(seg);
		size_t len = r->mapped_size;

		cr_assert_eq(hpshm_segment_destroy(seg), 0);
		cr_assert_eq(hpt_is_mapped(addr, len), 0, "still mapped after destroy");
	}
	hpshm_config_free(cfg);
}

/* HPSHM_TEST_PROVIDER names a provider that must be there: a module that did not load, or
 * registered under another name, fails here instead of leaving no case to run. */
Test(conformance, named_provider_is_registered)
{
	const char *only = only_provider();
	hpshm_error err;

	if (!only)
		HPT_SKIP("HPSHM_TEST_PROVIDER is not set: every built-in provider runs the contract");
	memset(&err, 0, sizeof err);
	cr_assert_eq(load_modules(&err), 0, "HPSHM_PROVIDER_MODULES: %s (hint: %s)", err.message, err.hint);
	cr_assert_neq(hpshm_provider_probe(only, 4096, NULL, NULL, NULL, 0), HPSHM_ENOPROVIDER,
		      "HPSHM_TEST_PROVIDER=%s is not registered (is its module in HPSHM_PROVIDER_MODULES?)", only);
}

Test(conformance, plain_is_always_available)
{
	char reason[HPSHM_TEXT_MAX];
	size_t ps = 0;

	cr_assert_eq(hpshm_provider_probe("plain", 1, NULL, &ps, reason, sizeof reason), 0, "%s", reason);
	cr_assert_eq(ps, hpshm_base_page_size());
}

Test(conformance, base_page_size_is_the_kernels)
{
	cr_assert_eq(hpshm_base_page_size(), (size_t)sysconf(_SC_PAGESIZE));
}

Test(conformance, huge_page_sizes_are_the_kernels)
{
	size_t sizes[16];
	int n = hpshm_huge_page_sizes(sizes, 16), i;
	struct hpt_pool pool;

	cr_assert_geq(n, 0);
	for (i = 0; i < n && i < 16; i++) {
		cr_assert_eq(hpt_pool_read(sizes[i], &pool), 0, "no /sys/kernel/mm/hugepages/hugepages-%zukB",
			     sizes[i] / 1024);
		if (i)
			cr_assert_gt(sizes[i], sizes[i - 1], "not ascending");
	}
	if (hpt_default_huge_page_size()) {
		int found = 0;

		for (i = 0; i < n && i < 16; i++)
			found |= sizes[i] == hpt_default_huge_page_size();
		cr_assert(found, "the default huge page size is not offered");
	}
}

/* HPSHM_TEST_REQUIRE as the fixture reads it, page counts included (fixture.h). */
Test(conformance, require_list_page_counts_bound_what_is_required)
{
	static const struct {
		const char   *list, *a, *b;
		unsigned long pages;
		int           want;
	} t[] = {
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "memfd_hugetlb", NULL, 1, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "cgroup", NULL, 1, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", NULL, 1, 0},
		/* a size without a count: any number of pages */
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", "2MiB", 1000, 1},
		/* sizes compare by value, with or without a count */
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", "2048k", 1, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", "1048576KiB", 2, 1},
		/* within the count: required; beyond it: not, even for a provider the list names */
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", "1GiB", 1, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "memfd_hugetlb", "1GiB", 2, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "memfd_hugetlb", "1GiB", 3, 0},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "1GiB", "memfd_hugetlb", 3, 0},
		/* a size the kernel offers and the run has no pages of */
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "memfd_hugetlb", "64KiB", 1, 0},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "pool", "64KiB", 1, 0},
		/* a size the list does not name: the provider decides, as without counts */
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "memfd_hugetlb", "4MiB", 9, 1},
		{"memfd_hugetlb, 2MiB ,1GiB*2,64KiB*0,cgroup", "sysv_hugetlb", "4MiB", 1, 0},
		/* "all" is bounded by a count too; the smallest count of a size wins */
		{"all,1GiB*1", "sysv_hugetlb", NULL, 5, 1},
		{"all,1GiB*1", "sysv_hugetlb", "1GiB", 1, 1},
		{"all,1GiB*1", "sysv_hugetlb", "1GiB", 2, 0},
		{"1GiB*3,1G*1", "sysv_hugetlb", "1GiB", 2, 0},
		{"", "memfd_hugetlb", "2MiB", 1, 0},
	};
	const char *saved = getenv("HPSHM_TEST_REQUIRE");
	char *keep = saved ? strdup(saved) : NULL;

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cr_assert_eq(setenv("HPSHM_TEST_REQUIRE", t[i].list, 1), 0);
		cr_expect_eq(hpt_required_pages(t[i].a, t[i].b, t[i].pages), t[i].want,
			     "HPSHM_TEST_REQUIRE=\"%s\", tokens %s and %s, %lu pages: want %d", t[i].list, t[i].a,
			     t[i].b ? t[i].b : "(none)", t[i].pages, t[i].want);
	}
	cr_assert_eq(setenv("HPSHM_TEST_REQUIRE", "memfd_hugetlb,1GiB*0", 1), 0);
	cr_expect_eq(hpt_required("memfd_hugetlb", "1GiB"), 0, "one page of a size with no pages is not required");
	cr_expect_eq(hpt_required("memfd_hugetlb", "2MiB"), 1);
	unsetenv("HPSHM_TEST_REQUIRE");
	cr_expect_eq(hpt_required_pages("memfd_hugetlb", "1GiB", 1), 0, "nothing is required without the variable");
	if (keep) {
		setenv("HPSHM_TEST_REQUIRE", keep, 1);
		free(keep);
	}
}

Test(conformance, unknown_provider_probe_is_enoprovider)
{
	cr_assert_eq(hpshm_provider_probe("no_such_provider", 4096, NULL, NULL, NULL, 0), HPSHM_ENOPROVIDER);
}
