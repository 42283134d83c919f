/* SPDX-License-Identifier: MIT */
/*
 * tests/test_populate_paths.c -- the failure paths of issue 23's threaded populate
 * (ports/linux/populate.c) and of the cgroup CPU quota that sizes it (ports/linux/cgroup.c):
 * a part whose madvise fails with each kind of errno, an EINTR retried, the other parts
 * stopping at their next chunk once one failed, the probe that finds a kernel without
 * MADV_POPULATE_WRITE and falls back to one thread; cpu.max and cpu.cfs_* files that are
 * malformed or missing, ancestors with a tighter quota, and cgroup paths too long to read.
 *
 * madvise is replaced through hpshm__linux_sys and never touches the mapping, which is
 * reserved PROT_NONE: what is asked is recorded, from the populate's threads, with atomics.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/port.h"
#include "ports/posix/posix.h"

#ifndef EHWPOISON
#define EHWPOISON 133
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MIB HPT_MIB
#define AREA (128 * MIB) /* 2 parts of 64 MiB: two 32 MiB chunks each */

static char *area;

/* What the fake madvise answers, and what it saw. */
static struct {
	int         probe_errno;  /* every call fails with this */
	atomic_int  probe_eintr;  /* the probe fails with EINTR this many times */
	int         fail_errno;   /* the chunk at fail_at fails with this */
	size_t      fail_at;
	atomic_int  part_eintr;   /* a chunk call fails with EINTR this many times */
	int         hold_at;      /* the chunk at hold waits until the failure was answered */
	size_t      hold;
	atomic_int  failed;       /* the failure was answered */
	atomic_int  asked_last;   /* the last chunk of the segment was asked for */
	atomic_size_t asked;      /* bytes the parts asked for, the probe's empty range not counted */
} fm;

static int fake_madvise(void *addr, size_t len, int advice)
{
	size_t off = (size_t)((char *)addr - area);

	if (advice != MADV_POPULATE_WRITE)
		return 0;
	if (fm.probe_errno) {
		errno = fm.probe_errno;
		return -1;
	}
	/* The probe asks for an empty range; the parts ask for whole chunks. */
	if (len == 0) {
		if (atomic_fetch_sub(&fm.probe_eintr, 1) > 0) {
			errno = EINTR;
			return -1;
		}
		return 0;
	}
	if (atomic_fetch_sub(&fm.part_eintr, 1) > 0) {
		errno = EINTR;
		return -1;
	}
	if (off == AREA - 32 * MIB)
		atomic_store(&fm.asked_last, 1);
	if (fm.hold_at && off == fm.hold) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		for (int i = 0; i < 1000 && !atomic_load(&fm.failed); i++)
			nanosleep(&ts, NULL);
		/* The failing part sets stop a few instructions after its call returns; nothing it
		 * does then can be seen from here, so this part gives it 2 s, room for a busy
		 * machine to run that thread (CI runs a second lane of suites beside this one). */
		ts.tv_sec = 2;
		ts.tv_nsec = 0;
		nanosleep(&ts, NULL);
	}
	if (fm.fail_errno && off == fm.fail_at) {
		atomic_store(&fm.failed, 1);
		errno = fm.fail_errno;
		return -1;
	}
	atomic_fetch_add(&fm.asked, len);
	return 0;
}

static void pop_init(void)
{
	hpt_fixture_init();
	hpshm__linux_sys_reset();
	memset(&fm, 0, sizeof fm);
	area = mmap(NULL, AREA, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert(area != MAP_FAILED);
	hpshm__linux_sys.madvise = fake_madvise;
}

static void pop_fini(void)
{
	hpshm__linux_sys_reset();
	munmap(area, AREA);
	hpt_fixture_fini();
}

TestSuite(populate_paths, .init = pop_init, .fini = pop_fini);

static int populate(unsigned threads, unsigned *methods, hpshm_error *err)
{
	struct hpshm__populate_how how = { threads, NULL };

	return hpshm__port_populate(area, AREA, (size_t)sysconf(_SC_PAGESIZE), hpshm__port_handle_of(-1, 0), &how,
				    methods, err);
}

Test(populate_paths, eintr_is_retried_in_the_probe_and_in_the_parts)
{
	unsigned methods;
	hpshm_error err;

	atomic_store(&fm.probe_eintr, 2);
	atomic_store(&fm.part_eintr, 2);
	cr_assert_eq(populate(2, &methods, &err), 0);
	cr_assert_eq(methods, HPSHM_POPULATE_MADVISE);
	cr_assert(atomic_load(&fm.asked_last), "every chunk was asked for");
}

/*
 * The probe for MADV_POPULATE_WRITE faults nothing in: every byte is asked for once, by the
 * parts.  A probe that faulted the first page in cleared it in the calling thread before the
 * other threads started, a whole page in series (1 GiB with gigantic pages).
 */
Test(populate_paths, the_probe_faults_nothing_in_and_the_parts_ask_for_each_byte_once)
{
	unsigned methods;
	hpshm_error err;

	cr_assert_eq(populate(2, &methods, &err), 0);
	cr_assert_eq(methods, HPSHM_POPULATE_MADVISE);
	cr_assert_eq(atomic_load(&fm.asked), (size_t)AREA, "asked for %zu bytes of a %zu-byte segment",
		     atomic_load(&fm.asked), (size_t)AREA);
}

Test(populate_paths, a_part_out_of_memory_is_epopulate_naming_where_and_how_many_threads)
{
	unsigned methods;
	hpshm_error err;

	fm.fail_errno = ENOMEM;
	fm.fail_at = 96 * MIB;
	cr_assert_eq(populate(2, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert(strstr(err.message, "near offset 100663296, 2 threads") != NULL, "%s", err.message);
	cr_assert(err.hint[0] != '\0');
}

Test(populate_paths, a_part_on_a_poisoned_page_says_so)
{
	unsigned methods;
	hpshm_error err;

	fm.fail_errno = EHWPOISON;
	fm.fail_at = 64 * MIB;
	cr_assert_eq(populate(2, &methods, &err), HPSHM_EPOPULATE);
	cr_assert(strstr(err.message, "hardware-poisoned") != NULL, "%s", err.message);
}

Test(populate_paths, another_errno_of_a_part_is_named_with_its_offset)
{
	unsigned methods;
	hpshm_error err;

	fm.fail_errno = EIO;
	fm.fail_at = 32 * MIB;
	cr_assert_eq(populate(2, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(strstr(err.message, "failed at offset 33554432") != NULL, "%s", err.message);
	cr_assert_eq(err.hint[0], '\0');
}

Test(populate_paths, the_other_parts_stop_at_their_next_chunk_once_one_failed)
{
	unsigned methods;
	hpshm_error err;

	/* Part 0 fails at its first chunk; part 1 waits in its first until then: it asks no more. */
	fm.fail_errno = EIO;
	fm.fail_at = 0;
	fm.hold_at = 1;
	fm.hold = 64 * MIB;
	fm.probe_errno = 0;
	cr_assert_eq(populate(2, &methods, &err), HPSHM_EPOPULATE);
	cr_assert(strstr(err.message, "failed at offset 0:") != NULL, "%s", err.message);
	cr_assert(!atomic_load(&fm.asked_last), "part 1 went on after part 0 failed");
}

Test(populate_paths, a_kernel_without_populate_write_gets_the_one_thread_touch)
{
	struct hpshm__populate_how how = { 2, NULL };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned methods;
	hpshm_error err;
	char *mem = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(mem != MAP_FAILED);
	area = mem; /* the probe is the call at offset 0 */
	fm.probe_errno = EINVAL;
	cr_assert_eq(hpshm__port_populate(mem, 8 * page, page, hpshm__port_handle_of(-1, 0), &how, &methods, &err), 0);
	cr_assert_eq(methods, HPSHM_POPULATE_TOUCH);
	munmap(mem, 8 * page);
	area = mmap(NULL, AREA, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert(area != MAP_FAILED);
}

/* ---- the CPU quota of the cgroup ---- */

static void cg_init(void)
{
	hpt_fixture_init();
	hpt_fakeroot_create(0, 0);
}

static void cg_fini(void)
{
	hpt_fakeroot_destroy();
	hpt_fixture_fini();
}

TestSuite(cgroup_cpus, .init = cg_init, .fini = cg_fini);

/* The process in path of a v2 (or v1 "cpu") hierarchy mounted at /cg showing root. */
static void in_cgroup(int version, const char *path, const char *root)
{
	char line[9000];

	if (version == 2) {
		snprintf(line, sizeof line, "0::%s\n", path);
		hpt_fakeroot_write("proc/self/cgroup", line);
		snprintf(line, sizeof line, "30 1 0:26 %s /cg rw,nosuid - cgroup2 cgroup2 rw\n", root);
	} else {
		snprintf(line, sizeof line, "4:cpu,cpuacct:%s\n0::/\n", path);
		hpt_fakeroot_write("proc/self/cgroup", line);
		snprintf(line, sizeof line, "30 1 0:26 %s /cg rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n", root);
	}
	hpt_fakeroot_write("proc/self/mountinfo", line);
}

Test(cgroup_cpus, no_cgroup_line_or_no_mount_is_no_quota)
{
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "an empty /proc/self/cgroup");
	hpt_fakeroot_write("proc/self/cgroup", "0::/box\n");
	hpt_fakeroot_write("proc/self/mountinfo", "30 1 0:26 / /x rw - ext4 /dev/sda rw\n");
	hpt_fakeroot_write("cg/box/cpu.max", "100000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "no cgroup2 mount");
}

Test(cgroup_cpus, malformed_v2_files_are_no_quota)
{
	static const char *const bad[] = { "garbage\n", "50000\n", "0 100000\n", "50000 0\n", "-5 100000\n" };

	in_cgroup(2, "/box", "/");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		hpt_fakeroot_write("cg/box/cpu.max", bad[i]);
		cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "cpu.max \"%s\"", bad[i]);
	}
}

Test(cgroup_cpus, v1_needs_a_readable_quota_and_period)
{
	in_cgroup(1, "/box", "/");
	hpt_fakeroot_write("cg/box/cpu.cfs_quota_us", "250000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "no period file");
	hpt_fakeroot_write("cg/box/cpu.cfs_period_us", "none\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "a period that is no number");
	hpt_fakeroot_write("cg/box/cpu.cfs_quota_us", "x\n");
	hpt_fakeroot_write("cg/box/cpu.cfs_period_us", "100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u, "a quota that is no number");
	hpt_fakeroot_write("cg/box/cpu.cfs_quota_us", "250000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 3u, "2.5 CPUs round up");
}

Test(cgroup_cpus, the_tightest_quota_of_any_ancestor_binds)
{
	in_cgroup(2, "/a/b/c", "/");
	hpt_fakeroot_write("cg/a/b/c/cpu.max", "400000 100000\n");
	hpt_fakeroot_write("cg/a/b/cpu.max", "max 100000\n");
	hpt_fakeroot_write("cg/a/cpu.max", "200000 100000\n");
	hpt_fakeroot_write("cg/cpu.max", "300000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 2u);
	hpt_fakeroot_write("cg/a/b/c/cpu.max", "100000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 1u);
}

Test(cgroup_cpus, a_mount_of_a_subtree_is_walked_from_its_own_root)
{
	/* The mount shows /box, the process is in /box/inner: /cg is /box. */
	in_cgroup(2, "/box/inner", "/box");
	hpt_fakeroot_write("cg/inner/cpu.max", "300000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 3u);
	/* The process at the mount's root itself. */
	in_cgroup(2, "/box", "/box");
	hpt_fakeroot_write("cg/cpu.max", "200000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 2u);
	/* A mount of another subtree: the path is the best guess under it. */
	in_cgroup(2, "/inner", "/elsewhere");
	hpt_fakeroot_write("cg/inner/cpu.max", "100000 100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 1u);
}

/* A cgroup path of len characters: "/" and 99 letters, over and over. */
static void long_path(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = i % 100 == 0 ? '/' : 'a';
	buf[len] = '\0';
}

Test(cgroup_cpus, a_path_too_long_to_read_is_no_quota_and_its_readable_ancestors_still_count)
{
	char path[PATH_MAX + 8];

	hpt_fakeroot_write("cg/cpu.max", "200000 100000\n");
	/* "/cg" and the path do not fit in PATH_MAX: nothing to read. */
	long_path(path, PATH_MAX - 2);
	in_cgroup(2, path, "/");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 0u);
	/* They fit, its cpu.max does not: the levels above are read. */
	long_path(path, PATH_MAX - 8);
	in_cgroup(2, path, "/");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 2u);
	in_cgroup(1, path, "/");
	hpt_fakeroot_write("cg/cpu.cfs_quota_us", "100000\n");
	hpt_fakeroot_write("cg/cpu.cfs_period_us", "100000\n");
	cr_assert_eq(hpshm__linux_cgroup_cpus(), 1u);
}

/* ---- the guarded touch's stop flag ---- */

Test(populate_paths, a_touch_range_stops_after_its_page_once_stop_is_set)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bad = 99;
	atomic_int stop;
	char *mem = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char vec[4];
	int resident = 0;

	cr_assert(mem != MAP_FAILED);
	atomic_init(&stop, 1);
	cr_assert_eq(hpshm__posix_touch_begin(), 0);
	cr_assert_eq(hpshm__posix_touch_range(mem, 4 * page, page, &stop, &bad), 0);
	cr_assert_eq(bad, 0u, "stopped at the first page");
	cr_assert_eq(mincore(mem, 4 * page, vec), 0);
	for (int i = 0; i < 4; i++)
		resident += vec[i] & 1;
	cr_assert_eq(resident, 1, "only the first page was touched");
	atomic_store(&stop, 0);
	cr_assert_eq(hpshm__posix_touch_range(mem, 4 * page, page, &stop, &bad), 0);
	cr_assert_eq(bad, 4 * page);
	hpshm__posix_touch_end();
	munmap(mem, 4 * page);
}

/* ---- the hugetlb limit files of the same cgroup reader ---- */

TestSuite(cgroup_limits, .init = cg_init, .fini = cg_fini);

Test(cgroup_limits, a_limit_file_that_is_no_number_is_no_limit)
{
	static const char *const bad[] = { "maxi\n", "-1\n", "12abc\n", "99999999999999999999999\n", "\n" };
	struct hpshm__limit lim;

	in_cgroup(2, "/box", "/");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		hpt_fakeroot_write("cg/box/hugetlb.2MB.max", bad[i]);
		cr_assert_eq(hpshm__linux_cgroup_get((size_t)2 << 20, &lim), 0);
		cr_assert_eq(lim.version, 0, "hugetlb.2MB.max \"%s\" read as a limit", bad[i]);
		cr_assert_eq(lim.limit, HPSHM__UNLIMITED);
	}
	hpt_fakeroot_write("cg/box/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get((size_t)2 << 20, &lim), 0);
	cr_assert(lim.version == 2 && lim.limit == 4194304u);
}
