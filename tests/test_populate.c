/* SPDX-License-Identifier: MIT */
/*
 * tests/test_populate.c -- a populate split over threads (populate_threads=) and the keys of
 * where pages go (populate_threads, numa).
 *
 * What each test makes fail is either real or injected through hpshm__linux_sys:
 *   - real: a shared mapping of a memfd that reaches past the end of the file, whose last
 *     pages MADV_POPULATE_WRITE refuses with EFAULT as the kernel refuses a hugetlb page at
 *     fault time; and a hugetlb cgroup fault limit one page short of the segment, set after
 *     the mapping reserved its pages (the container case in which a plain touch dies of
 *     SIGBUS);
 *   - injected: EFAULT for the ranges of the threads in the second half of a segment.
 * Every failure must leave nothing: no mapping, no descriptor, no huge page held.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "port.h"
#include "ports/linux/linux.h"

#define MIB ((size_t)1 << 20)

static struct hpshm__linux_syscalls real_linux;

/* What the injected madvise does and saw; threads call it at once. */
static struct {
	atomic_uintptr_t base;      /* the first MADV_POPULATE_WRITE's address rounded down to page */
	size_t           page;      /* the segment's page size: a huge page's first call is at its tail */
	size_t           fail_from; /* fail calls at or past this offset from base; 0: none */
	atomic_uint      calls;     /* MADV_POPULATE_WRITE calls */
	atomic_uint      failed;    /* calls that failed, injected or real */
	pthread_t        threads[8]; /* the distinct threads that called, first 8 */
	atomic_uint      nthreads;
	pthread_mutex_t  lock;      /* guards threads[] */
	size_t           limit_ps;  /* at the first call, limit this test's faults of limit_ps pages ... */
	char             limit[32]; /* ... to this many bytes ("" for no limit) */
	int              limit_rc;  /* what setting it returned */
} inj = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void inj_note_thread(void)
{
	pthread_t self = pthread_self();
	unsigned n;

	pthread_mutex_lock(&inj.lock);
	n = atomic_load(&inj.nthreads);
	for (unsigned i = 0; i < n; i++)
		if (pthread_equal(inj.threads[i], self)) {
			pthread_mutex_unlock(&inj.lock);
			return;
		}
	if (n < 8) {
		inj.threads[n] = self;
		atomic_store(&inj.nthreads, n + 1);
	}
	pthread_mutex_unlock(&inj.lock);
}

static int inj_madvise(void *addr, size_t len, int advice)
{
	uintptr_t zero = 0, base;
	int rc;

	if (advice != MADV_POPULATE_WRITE)
		return real_linux.madvise(addr, len, advice);
	base = (uintptr_t)addr - (inj.page ? (uintptr_t)addr % inj.page : 0);   /* the segment's start */
	if (atomic_compare_exchange_strong(&inj.base, &zero, base) && inj.limit[0])
		inj.limit_rc = hpt_limit_huge_faults(inj.limit_ps, inj.limit);
	base = atomic_load(&inj.base);
	atomic_fetch_add(&inj.calls, 1);
	inj_note_thread();
	if (inj.fail_from && (uintptr_t)addr >= base + inj.fail_from) {
		atomic_fetch_add(&inj.failed, 1);
		errno = EFAULT;
		return -1;
	}
	rc = real_linux.madvise(addr, len, advice);
	if (rc < 0)
		atomic_fetch_add(&inj.failed, 1);
	return rc;
}

static void inj_reset(void)
{
	atomic_store(&inj.base, 0);
	inj.fail_from = 0;
	inj.page = 0;
	atomic_store(&inj.calls, 0);
	atomic_store(&inj.failed, 0);
	atomic_store(&inj.nthreads, 0);
	inj.limit[0] = '\0';
	inj.limit_ps = 0;
	inj.limit_rc = -1;
}

static void populate_init(void)
{
	hpt_fixture_init();
	hpshm__linux_sys_reset();
	real_linux = hpshm__linux_sys;
	inj_reset();
	hpshm__linux_sys.madvise = inj_madvise;
}

static void populate_fini(void)
{
	hpshm__linux_sys_reset();
	hpt_fakeroot_destroy();
	hpt_fixture_fini();
}

TestSuite(populate, .init = populate_init, .fini = populate_fini);

/* Skip (or fail, when the run requires pools) unless the 2 MiB pool has `pages` free. */
static void need_pool(unsigned long pages)
{
	struct hpt_pool pool;

	if (hpt_pool_read(2 * MIB, &pool) == 0 && hpt_pool_available(&pool) >= pages)
		return;
	HPT_UNAVAILABLE_PAGES("pool", "2MiB", pages, "needs %lu free 2MiB pages (vm.nr_hugepages)", pages);
}

static hpshm_config *config(const char *kv)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s: %s", kv, err.message);
	return cfg;
}

/* ---- the keys ---- */

Test(populate, populate_threads_takes_auto_and_1_to_64_and_names_the_range_otherwise)
{
	static const char *const good[][2] = { { "auto", "auto" }, { "1", "1" }, { "64", "64" }, { "8", "8" } };
	static const char *const bad[] = { "0", "65", "-1", "2x", "", "two", "1e3", "99999999999999999999" };
	hpshm_config *cfg = config("");
	hpshm_error err;
	char buf[32];

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		cr_assert_eq(hpshm_config_set(cfg, "populate_threads", good[i][0], &err), 0, "%s: %s", good[i][0],
			     err.message);
		hpshm_config_get(cfg, "populate_threads", buf, sizeof buf);
		cr_assert_str_eq(buf, good[i][1]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		cr_assert_eq(hpshm_config_set(cfg, "populate_threads", bad[i], &err), HPSHM_EVALUE, "\"%s\"", bad[i]);
		cr_assert_str_eq(err.key, "populate_threads");
		cr_assert(hpt_contains(err.message, "1 to 64"), "%s", err.message);
	}
	/* The typed setter goes through the same parser. */
	cr_assert_eq(hpshm_config_set_populate_threads(cfg, 4, &err), 0);
	hpshm_config_get(cfg, "populate_threads", buf, sizeof buf);
	cr_assert_str_eq(buf, "4");
	cr_assert_eq(hpshm_config_set_populate_threads(cfg, HPSHM_POPULATE_THREADS_AUTO, &err), 0);
	hpshm_config_get(cfg, "populate_threads", buf, sizeof buf);
	cr_assert_str_eq(buf, "auto");
	cr_assert_eq(hpshm_config_set_populate_threads(cfg, 65, &err), HPSHM_EVALUE);
	cr_assert_eq(hpshm_config_set_populate_threads(NULL, 2, &err), HPSHM_EINVAL);
	hpshm_config_free(cfg);
}

Test(populate, numa_takes_a_mode_with_its_nodes_and_names_what_is_wrong)
{
	static const char *const good[][2] = {
		{ "default", "default" },       { "local", "local" },
		{ "interleave", "interleave" }, { "interleave:0-3", "interleave:0-3" },
		{ "bind:0", "bind:0" },         { "bind:2,0,3", "bind:0,2-3" },
		{ "bind:0-1,5,7-9", "bind:0-1,5,7-9" }, { "preferred:63", "preferred:63" },
	};
	static const char *const bad[][2] = {
		{ "bind", "after a colon" },      { "preferred", "after a colon" },
		{ "preferred:0,1", "one node" },  { "bind:64", "0 to 63" },
		{ "local:0", "takes no nodes" },  { "default:1", "takes no nodes" },
		{ "bind:1-0", "0 to 63" },        { "bind:0,,1", "0 to 63" },
		{ "bind:", "0 to 63" },           { "sideways", "not default, local" },
	};
	hpshm_config *cfg = config("");
	hpshm_error err;
	char buf[64];

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		cr_assert_eq(hpshm_config_set(cfg, "numa", good[i][0], &err), 0, "%s: %s", good[i][0], err.message);
		hpshm_config_get(cfg, "numa", buf, sizeof buf);
		cr_assert_str_eq(buf, good[i][1], "numa=%s reads back as %s", good[i][0], buf);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		cr_assert_eq(hpshm_config_set(cfg, "numa", bad[i][0], &err), HPSHM_EVALUE, "numa=%s", bad[i][0]);
		cr_assert_str_eq(err.key, "numa");
		cr_assert(hpt_contains(err.message, bad[i][1]), "numa=%s: %s", bad[i][0], err.message);
	}
	hpshm_config_free(cfg);
}

/* ---- what auto means ---- */

Test(populate, auto_leaves_small_segments_to_one_thread_and_never_outnumbers_the_pages)
{
	unsigned cpus = hpshm__port_cpus_usable();
	unsigned want = cpus < 16 ? cpus : 16; /* 1 GiB: no thread below 64 MiB */
	hpshm_config *four = config("populate_threads=4");

	cr_assert_geq(cpus, 1u);
	cr_assert_eq(hpshm_populate_threads(16 * MIB, 2 * MIB, NULL), 1u);
	cr_assert_eq(hpshm_populate_threads(100 * MIB, 2 * MIB, NULL), 1u, "100 MiB holds one 64 MiB share");
	cr_assert_eq(hpshm_populate_threads(1024 * MIB, 2 * MIB, NULL), want);
	cr_assert_eq(hpshm_populate_threads(1024 * MIB, 0, NULL), want, "0: the base page size");
	cr_assert_eq(hpshm_populate_threads(1024 * MIB, 2 * MIB, four), 4u);
	cr_assert_eq(hpshm_populate_threads(4 * MIB, 2 * MIB, four), 2u, "two pages: two threads at most");
	cr_assert_eq(hpshm_populate_threads(1, 2 * MIB, four), 1u);
	hpshm_config_free(four);
}

Test(populate, auto_counts_only_the_cpus_of_the_affinity_mask)
{
	cpu_set_t old, one;
	unsigned got;

	cr_assert_eq(sched_getaffinity(0, sizeof old, &old), 0);
	if (CPU_COUNT(&old) < 2)
		HPT_SKIP("this process may run on one CPU only: no mask narrower than the machine to set");
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &old)) {
			CPU_SET(c, &one);
			break;
		}
	cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
	got = hpshm__port_cpus_usable();
	cr_assert_eq(sched_setaffinity(0, sizeof old, &old), 0);
	cr_assert_eq(got, 1u, "with one CPU in the mask");
	cr_assert_eq(hpshm__port_cpus_usable(), (unsigned)CPU_COUNT(&old), "the mask restored");
}

/* A fake /proc/self/cgroup and mountinfo with the process in "/box" of a v2 or v1 hierarchy. */
static void fake_cpu_cgroup(int version, const char *file, const char *value)
{
	char path[1400];

	/* The mount point is read under the sysroot, as every path the library reads is. */
	hpt_fakeroot_create(0, 0);
	if (version == 2) {
		hpt_fakeroot_write("proc/self/cgroup", "0::/box\n");
		hpt_fakeroot_write("proc/self/mountinfo", "30 1 0:26 / /cg rw,nosuid - cgroup2 cgroup2 rw\n");
	} else {
		hpt_fakeroot_write("proc/self/cgroup", "4:cpu,cpuacct:/box\n0::/\n");
		hpt_fakeroot_write("proc/self/mountinfo", "30 1 0:26 / /cg rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n");
	}
	snprintf(path, sizeof path, "cg/box/%s", file);
	hpt_fakeroot_write(path, value);
	if (version == 1)
		hpt_fakeroot_write("cg/box/cpu.cfs_period_us", "100000\n");
}

Test(populate, auto_counts_a_cgroup_cpu_quota_rounded_up)
{
	cpu_set_t mask;
	unsigned mine;

	cr_assert_eq(sched_getaffinity(0, sizeof mask, &mask), 0);
	mine = (unsigned)CPU_COUNT(&mask);

	fake_cpu_cgroup(2, "cpu.max", "50000 100000\n");
	cr_assert_eq(hpshm__port_cpus_usable(), 1u, "v2, half a CPU");
	hpt_fakeroot_destroy();
	fake_cpu_cgroup(2, "cpu.max", "max 100000\n");
	cr_assert_eq(hpshm__port_cpus_usable(), mine, "v2, no quota: the affinity mask");
	hpt_fakeroot_destroy();
	fake_cpu_cgroup(1, "cpu.cfs_quota_us", "50000\n");
	cr_assert_eq(hpshm__port_cpus_usable(), 1u, "v1, half a CPU");
	hpt_fakeroot_destroy();
	fake_cpu_cgroup(1, "cpu.cfs_quota_us", "-1\n");
	cr_assert_eq(hpshm__port_cpus_usable(), mine, "v1, no quota");
	hpt_fakeroot_destroy();
	if (mine >= 2) {
		fake_cpu_cgroup(2, "cpu.max", "150000 100000\n");
		cr_assert_eq(hpshm__port_cpus_usable(), 2u, "1.5 CPUs round up to 2");
	}
}

/* ---- populating over threads ---- */

static void populate_in_threads(unsigned n)
{
	char kv[128];
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	size_t size = 256 * MIB, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	int rc;

	snprintf(kv, sizeof kv, "huge_pages=off,populate=on,populate_threads=%u", n);
	cfg = config(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(r.version, (unsigned)HPSHM_REPORT_VERSION);
	cr_assert_eq(r.populate_threads, n);
	cr_assert(r.populate & HPSHM_POPULATE_MADVISE, "populate=%s", hpshm_populate_name(r.populate));
	cr_assert_eq(atomic_load(&inj.nthreads), n, "madvise called from %u threads", atomic_load(&inj.nthreads));
	/* Every page is in: the threads' ranges cover the segment, with no gap between them.
	 * qemu-user answers MADV_POPULATE_WRITE without passing it to the kernel, so under an
	 * emulator only the split is checked. */
	if (hpt_emulator()) {
		hpshm_segment_destroy(seg);
		hpshm_config_free(cfg);
		return;
	}
	vec = malloc(size / page);
	cr_assert_not_null(vec);
	cr_assert_eq(mincore(hpshm_segment_address(seg), size, vec), 0);
	for (size_t i = 0; i < size / page; i++)
		cr_assert(vec[i] & 1, "page %zu of %zu not populated", i, size / page);
	free(vec);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

Test(populate, two_threads_fault_every_page_in_and_the_report_says_two)
{
	populate_in_threads(2);
}

Test(populate, four_threads_fault_every_page_in_and_the_report_says_four)
{
	populate_in_threads(4);
}

/* A create whose populate fails in the threads of the segment's second half. */
static void failing_thread_backs_out(const char *kv_base, int code, unsigned n, size_t size)
{
	char kv[192];
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int fds = hpt_fd_count(), maps = hpt_maps_count(), rc;

	snprintf(kv, sizeof kv, "%s,populate=on,populate_threads=%u", kv_base, n);
	cfg = config(kv);
	inj.fail_from = size / 2;
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	cr_assert_eq(rc, code, "%s: got %s: %s", kv, hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_geq(atomic_load(&inj.failed), 1u);
	/* The last provider tried is the one whose populate failed (earlier ones were ruled out). */
	cr_assert_geq(r.nattempts, 1u);
	cr_assert_eq(r.attempts[r.nattempts - 1].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[r.nattempts - 1].sys_errno, EFAULT);
	cr_assert(hpt_contains(err.message, "threads"), "the message says the populate was split: %s", err.message);
	cr_assert_eq(hpt_fd_count(), fds, "descriptors: %d before, %d after", fds, hpt_fd_count());
	cr_assert_eq(hpt_maps_count(), maps, "mappings: %d before, %d after", maps, hpt_maps_count());
	cr_assert(!hpt_is_mapped((void *)atomic_load(&inj.base), size), "the segment's range is still mapped");
	hpshm_config_free(cfg);
}

Test(populate, a_thread_that_fails_backs_the_plain_create_out_with_2_and_4_threads)
{
	failing_thread_backs_out("huge_pages=off", HPSHM_EPOPULATE, 2, 256 * MIB);
	inj_reset();
	failing_thread_backs_out("huge_pages=off", HPSHM_EPOPULATE, 4, 256 * MIB);
}

/* Under an emulator a create of verified 2 MiB pages may be refused before any populate
 * (qemu-i386 shows base pages in the smaps it passes through): nothing to back out of, a skip. */
static void huge_create_or_skip(void)
{
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	if (!hpt_emulator())
		return;
	cfg = config("provider=memfd_hugetlb,huge_pages=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 2 * MIB, cfg, &r, &err);
	hpshm_config_free(cfg);
	if (rc == 0)
		hpshm_segment_destroy(seg);
	hpt_skip_emulated_refusal(rc, &err);
	inj_reset();
}

Test(populate, a_thread_that_fails_backs_the_huge_create_out_with_2_and_4_threads)
{
	long held = hpt_pages_held(2 * MIB);

	need_pool(64);
	huge_create_or_skip();
	inj.page = 2 * MIB;
	failing_thread_backs_out("provider=memfd_hugetlb,huge_pages=on", HPSHM_ENOHUGE, 2, 128 * MIB);
	cr_assert_eq(hpt_pages_held(2 * MIB), held, "2MiB pages held: %ld before, %ld after", held,
		     hpt_pages_held(2 * MIB));
	inj_reset();
	inj.page = 2 * MIB;
	failing_thread_backs_out("provider=memfd_hugetlb,huge_pages=on", HPSHM_ENOHUGE, 4, 128 * MIB);
	cr_assert_eq(hpt_pages_held(2 * MIB), held, "2MiB pages held: %ld before, %ld after", held,
		     hpt_pages_held(2 * MIB));
}

/* The kernel refuses the last pages: a mapping that reaches past the end of its memfd. */
static void real_fault_in_the_last_thread(unsigned n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 64 * page * n;
	struct hpshm__populate_how how = { n, NULL };
	unsigned methods = 0;
	hpshm_error err;
	void *addr;
	int fd = memfd_create("hpshm-test-short", MFD_CLOEXEC), rc;

	cr_assert_geq(fd, 0);
	/* The file ends one page before the last thread's range does. */
	cr_assert_eq(ftruncate(fd, (off_t)(len - page)), 0);
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(addr, MAP_FAILED);
	memset(&err, 0, sizeof err);
	rc = hpshm__port_populate(addr, len, page, HPSHM__PORT_NO_HANDLE, &how, &methods, &err);
	munmap(addr, len);
	close(fd);
	cr_assert_eq(rc, HPSHM_EPOPULATE, "%u threads: %s", n, hpshm_errname(rc));
	cr_assert_eq(err.sys_errno, EFAULT, "%u threads: %s", n, err.message);
	cr_assert_str_eq(err.call, "madvise");
	cr_assert(hpt_contains(err.message, "threads"), "%s", err.message);
}

Test(populate, a_page_the_kernel_refuses_in_one_thread_is_an_error_not_sigbus)
{
	if (hpt_emulator())
		hpshm__linux_sys_reset();
	HPT_SKIP_UNDER_EMULATOR("qemu-user maps guest memory with a 2MiB host page, so a mapping past the end "
				"of a file does not fault page by page as the kernel does");
	real_fault_in_the_last_thread(2);
	inj_reset();
	real_fault_in_the_last_thread(4);
}

/*
 * A pool one page short at fault time: the mapping reserved every page, then the test's
 * hugetlb cgroup lets it fault one page fewer than it needs (set by the first populate call,
 * after the provider's probe and the reservation), so one thread's range meets a page the
 * kernel refuses.  No SIGBUS, and every page goes back.
 */
static void one_page_short(unsigned n)
{
	size_t size = 64 * MIB;
	long held = hpt_pages_held(2 * MIB);
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[128];
	int fds = hpt_fd_count(), rc;

	snprintf(kv, sizeof kv, "provider=memfd_hugetlb,huge_pages=on,populate=on,populate_threads=%u", n);
	cfg = config(kv);
	inj.limit_ps = 2 * MIB;
	snprintf(inj.limit, sizeof inj.limit, "%zu", size - 2 * MIB);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	(void)hpt_limit_huge_faults(2 * MIB, "max");
	cr_assert_eq(inj.limit_rc, 0, "the fault limit was set when the populate began: %s", strerror(errno));
	/* The kernel refused a page: nothing was injected. */
	cr_assert_geq(atomic_load(&inj.failed), 1u, "%u threads: no populate call failed", n);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "%u threads: %s: %s", n, hpshm_errname(rc), err.message);
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE, "%u threads: %s", n, r.attempts[0].reason);
	cr_assert(hpt_contains(err.hint, "hugetlb.2MB"), "the hint names the cgroup limit: %s", err.hint);
	cr_assert_eq(hpt_fd_count(), fds);
	cr_assert_eq(hpt_pages_held(2 * MIB), held, "%u threads: 2MiB pages held: %ld before, %ld after", n, held,
		     hpt_pages_held(2 * MIB));
	hpshm_config_free(cfg);
}

Test(populate, a_pool_one_page_short_at_fault_time_backs_out_with_2_and_4_threads)
{
	if (hpt_emulator())
		hpshm__linux_sys_reset();
	HPT_SKIP_UNDER_EMULATOR("qemu-user answers MADV_POPULATE_WRITE without passing it to the kernel, so no "
				"fault limit is ever met while populating");
	if (!hpt_test_cgroup()) {
		hpshm__linux_sys_reset();
		HPT_UNAVAILABLE("cgroup", NULL, "limiting faults needs a hugetlb cgroup of the test's own (root)");
	}
	need_pool(32);
	one_page_short(2);
	inj_reset();
	one_page_short(4);
}
