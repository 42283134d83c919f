/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_sysinfo.c -- the machine facts the operator's hints are built from, read from
 * a fake sysroot (fakes.h): the huge page pools of every size, the setting an operator raises,
 * the hint after a failed reservation, transparent huge pages, and the readers under them.
 *
 * A hint that names the wrong sysctl or the wrong number of pages sends an operator the wrong
 * way, so each test checks the numbers and names the hint is built from.  The fake tree links
 * some files to the real ones (the SysV limits, transparent_hugepage): a test that writes such
 * a file first removes the link from the tree, never writing through it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/admin.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "ports/port.h"

#define MIB HPT_MIB
#define GIB ((size_t)1 << 30)

/* The VMAs the fake PROCMAP_QUERY describes, sorted, and the errno it fails with instead. */
static const struct fake_vma {
	uint64_t start, end, page;
} *fq_vmas;
static size_t fq_n;
static int fq_errno;

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void sysinfo_fini_work(void)
{
	hpshm__linux_sys_reset();
	hpt_fakeroot_destroy();
}

static void sysinfo_init(void)
{
	hpt_fixture_init();
	hpt_fakeroot_create(10, 4);
	hpt_fixture_undo_on_skip(sysinfo_fini_work);
	fq_vmas = NULL;
	fq_n = 0;
	fq_errno = 0;
}

static void sysinfo_fini(void)
{
	sysinfo_fini_work();
	hpt_fixture_fini();
}

TestSuite(paths_sysinfo, .init = sysinfo_init, .fini = sysinfo_fini);

/* Add a pool of 1 GiB pages to the fake tree. */
static void giant_pool(const char *nr, const char *free_pages, const char *resv, const char *over, const char *surplus)
{
	const char *d = "sys/kernel/mm/hugepages/hugepages-1048576kB/";
	char rel[128];

	snprintf(rel, sizeof rel, "%snr_hugepages", d);
	hpt_fakeroot_write(rel, nr);
	snprintf(rel, sizeof rel, "%sfree_hugepages", d);
	hpt_fakeroot_write(rel, free_pages);
	snprintf(rel, sizeof rel, "%sresv_hugepages", d);
	hpt_fakeroot_write(rel, resv);
	snprintf(rel, sizeof rel, "%snr_overcommit_hugepages", d);
	hpt_fakeroot_write(rel, over);
	snprintf(rel, sizeof rel, "%ssurplus_hugepages", d);
	hpt_fakeroot_write(rel, surplus);
}

/* Write a file the fake tree may hold as a link to the real one: the link goes first. */
static void replace(const char *rel, const char *content)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", hpt_fakeroot_dir(), rel);
	(void)unlink(path);
	hpt_fakeroot_write(rel, content);
}

Test(paths_sysinfo, pools_of_every_size_are_listed_smallest_first_with_their_counters)
{
	struct hpshm__pool p[4];
	int n;

	giant_pool("3\n", "2\n", "1\n", "5\n", "1\n");
	n = hpshm__linux_pools(p, 4);
	cr_assert_eq(n, 2);
	cr_assert_eq(p[0].page_size, 2 * MIB);
	cr_assert_eq(p[0].total, 10ul);
	cr_assert_eq(p[0].free, 4ul);
	cr_assert_eq(p[1].page_size, GIB);
	cr_assert_eq(p[1].total, 3ul);
	cr_assert_eq(p[1].resv, 1ul);
	/* free 2 - resv 1 + (overcommit 5 - surplus 1) */
	cr_assert_eq(hpshm__linux_pool_available(&p[1]), 5ul);
	cr_assert_eq(hpshm__linux_pools(p, 1), 1, "room for one pool: one listed");
}

Test(paths_sysinfo, directories_that_are_not_pools_are_not_listed)
{
	struct hpshm__pool p[4];

	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-abckB/nr_hugepages", "1\n");
	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-4096MB/nr_hugepages", "1\n");
	hpt_fakeroot_write("sys/kernel/mm/hugepages/other/nr_hugepages", "1\n");
	cr_assert_eq(hpshm__linux_pools(p, 4), 1);
	cr_assert_eq(p[0].page_size, 2 * MIB);
}

Test(paths_sysinfo, a_size_without_a_pool_is_unavailable)
{
	struct hpshm__pool p;

	cr_assert_eq(hpshm__linux_pool_get(GIB, &p), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__linux_pool_get(1000, &p), HPSHM_EUNAVAILABLE, "not a whole number of KiB");
	cr_assert_eq(hpshm__linux_pool_get(2 * MIB, NULL), HPSHM_EINVAL);
}

Test(paths_sysinfo, the_default_size_is_raised_by_sysctl_and_others_by_their_sysfs_file)
{
	char buf[128];

	cr_assert_str_eq(hpshm__linux_pool_knob(2 * MIB, buf, sizeof buf), "vm.nr_hugepages");
	cr_assert_str_eq(hpshm__linux_pool_knob(GIB, buf, sizeof buf),
			 "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages");
}

Test(paths_sysinfo, a_short_pool_hint_names_the_sysctl_and_the_total_to_reach)
{
	char buf[HPSHM_TEXT_MAX];

	/* 10 pages, 4 free: 16 MiB needs 8, so 4 more: at least 14 */
	hpshm__linux_hugetlb_hint(16 * MIB, 2 * MIB, buf, sizeof buf);
	cr_assert(strstr(buf, "raise vm.nr_hugepages to at least 14"), "%s", buf);
	cr_assert(strstr(buf, "needs 4 more 2MiB pages"), "%s", buf);
}

Test(paths_sysinfo, a_hint_for_a_pool_that_looks_big_enough_counts_the_whole_segment_on_top)
{
	char buf[HPSHM_TEXT_MAX];

	hpshm__linux_hugetlb_hint(4 * MIB, 2 * MIB, buf, sizeof buf);
	cr_assert(strstr(buf, "at least 12"), "10 pages plus the 2 needed: %s", buf);
	cr_assert(strstr(buf, "taken meanwhile"), "%s", buf);
}

Test(paths_sysinfo, a_hint_for_an_unoffered_size_lists_the_sizes_offered)
{
	char buf[HPSHM_TEXT_MAX];

	hpshm__linux_hugetlb_hint(4 * MIB, 16 * MIB, buf, sizeof buf);
	cr_assert(strstr(buf, "huge_page_size"), "%s", buf);
	cr_assert(strstr(buf, "2MiB"), "the size offered is not named: %s", buf);
}

Test(paths_sysinfo, a_hint_for_a_non_default_size_names_its_sysfs_file)
{
	char buf[HPSHM_TEXT_MAX];

	giant_pool("0\n", "0\n", "0\n", "0\n", "0\n");
	hpshm__linux_hugetlb_hint(2 * GIB, GIB, buf, sizeof buf);
	cr_assert(strstr(buf, "hugepages-1048576kB/nr_hugepages to at least 2"), "%s", buf);
}

Test(paths_sysinfo, the_default_huge_page_size_comes_from_meminfo)
{
	cr_assert_eq(hpshm__port_default_huge_page_size(), 2 * MIB);
	replace("proc/meminfo", "MemTotal: 100 kB\n");
	cr_assert_eq(hpshm__port_default_huge_page_size(), 0u, "no Hugepagesize line: no default");
}

Test(paths_sysinfo, transparent_huge_pages_settings_are_the_bracketed_words)
{
	struct hpshm__thp t;

	{
		char path[512];

		/* the tree's link to the real directory goes: never write through it */
		snprintf(path, sizeof path, "%s/sys/kernel/mm/transparent_hugepage", hpt_fakeroot_dir());
		cr_assert_eq(unlink(path), 0, "%s: %s", path, strerror(errno));
	}
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/defrag", "[always] defer madvise never\n");
	cr_assert_eq(hpshm__linux_thp(&t), 0);
	cr_assert_str_eq(t.enabled, "madvise");
	cr_assert_str_eq(t.defrag, "always");
	cr_assert_str_eq(t.shmem_enabled, "", "a missing file is empty");
}

Test(paths_sysinfo, the_hugetlb_shm_group_that_is_not_a_number_is_unreadable)
{
	replace("proc/sys/vm/hugetlb_shm_group", "staff\n");
	cr_assert_eq(hpshm__linux_hugetlb_shm_group(), -1L);
	replace("proc/sys/vm/hugetlb_shm_group", "1234\n");
	cr_assert_eq(hpshm__linux_hugetlb_shm_group(), 1234L);
}

Test(paths_sysinfo, a_field_is_read_in_the_base_asked_for)
{
	unsigned long long v = 0;

	replace("proc/test_status", "Name:\tx\nCapEff:\t0000000000004000\nVmRSS:\t  123 kB\n");
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "CapEff", 16, &v), 0);
	cr_assert_eq(v, 0x4000ull);
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "VmRSS", 10, &v), 0);
	cr_assert_eq(v, 123ull);
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "Missing", 10, &v), HPSHM_EIO);
	cr_assert_eq(hpshm__linux_read_field("/proc/nonexistent", "X", 10, &v), HPSHM_EIO);
}

Test(paths_sysinfo, a_line_longer_than_the_buffer_is_cut_marked_and_read_past)
{
	char big[300], buf[16];
	FILE *f;
	int cut = 0;

	memset(big, 'a', sizeof big - 2);
	big[sizeof big - 2] = '\n';
	big[sizeof big - 1] = '\0';
	{
		char text[400];

		snprintf(text, sizeof text, "%snext\n", big);
		replace("proc/test_lines", text);
	}
	f = hpshm__linux_sysfile_open("/proc/test_lines");
	cr_assert_not_null(f);
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, &cut), 1);
	cr_assert_eq(cut, 1, "the long line was not marked as cut");
	cr_assert_eq(strlen(buf), sizeof buf - 1);
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, &cut), 1);
	cr_assert_eq(cut, 0);
	cr_assert_str_eq(buf, "next", "the rest of the long line was not read past");
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, &cut), 0);
	fclose(f);
}

Test(paths_sysinfo, hugetlb_cgroup_file_names_use_the_kernels_units)
{
	char buf[16];

	cr_assert_str_eq(hpshm__linux_hugetlb_cgroup_size(64 * 1024, buf, sizeof buf), "64KB");
	cr_assert_str_eq(hpshm__linux_hugetlb_cgroup_size(2 * MIB, buf, sizeof buf), "2MB");
	cr_assert_str_eq(hpshm__linux_hugetlb_cgroup_size(32 * MIB, buf, sizeof buf), "32MB");
	cr_assert_str_eq(hpshm__linux_hugetlb_cgroup_size(GIB, buf, sizeof buf), "1GB");
	if (sizeof(size_t) >= 8) /* 16 GiB is 0 in a 32-bit size_t */
		cr_assert_str_eq(hpshm__linux_hugetlb_cgroup_size(16 * GIB, buf, sizeof buf), "16GB");
}

/* ---- what backs a range: /proc/self/smaps as the kernel writes it ---- */

#define VMA(range, kps, flags)                                                                    \
	range " rw-s 00000000 00:10 42                         /x\n"                               \
	"Size:               2048 kB\nKernelPageSize:  " kps " kB\nMMUPageSize:     " kps " kB\n"  \
	"Rss:                   0 kB\nVmFlags: " flags "\n"

Test(paths_sysinfo, a_range_split_into_vmas_reports_the_smallest_page_and_huge_only_if_all_are)
{
	struct hpshm__backing b;

	replace("proc/self/smaps",
		VMA("60000000-60200000", "2048", "rd wr sh mr mw me ms de ht sd")
		VMA("60200000-60400000", "4", "rd wr sh mr mw me ms sd")
		VMA("60400000-60600000", "2048", "rd wr sh mr mw me ms de ht sd"));
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 6 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, (size_t)4096);
	cr_assert_eq(b.huge, 0);
	cr_assert_str_eq(b.source, "smaps");
	/* the first VMA alone is huge */
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, 2 * MIB);
	cr_assert_eq(b.huge, 1);
	/* the last VMA of the file, reached at its end */
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60400000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, 1);
}

Test(paths_sysinfo, a_range_no_vma_holds_is_unverified)
{
	struct hpshm__backing b;

	replace("proc/self/smaps", VMA("60000000-60200000", "2048", "rd wr ht"));
	cr_assert_eq(hpshm__port_verify_backing((void *)0x500000000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(b.source, "unverified");
	cr_assert_eq(hpshm__port_verify_backing(NULL, 0, HPSHM__PORT_NO_HANDLE, &b), HPSHM_EUNAVAILABLE);
}

Test(paths_sysinfo, a_vma_without_kernel_page_size_is_unverified)
{
	struct hpshm__backing b;

	replace("proc/self/smaps", "60000000-60200000 rw-s 00000000 00:10 42 /x\nVmFlags: rd wr ht\n");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), HPSHM_EUNAVAILABLE);
}

/* ---- what backs a range: PROCMAP_QUERY, the kernel's answer without smaps ---- */

static int fake_query(int fd, struct hpshm__procmap_query *q)
{
	(void)fd;
	if (fq_errno) {
		errno = fq_errno;
		return -1;
	}
	if (q->size != sizeof(*q) || q->query_flags != HPSHM__PROCMAP_COVERING_OR_NEXT || q->vma_name_size ||
	    q->build_id_size) {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < fq_n; i++)
		if (fq_vmas[i].end > q->query_addr) {
			q->vma_start = fq_vmas[i].start;
			q->vma_end = fq_vmas[i].end;
			q->vma_page_size = fq_vmas[i].page;
			return 0;
		}
	errno = ENOENT;   /* no VMA at or after the address */
	return -1;
}

Test(paths_sysinfo, the_kernels_query_describes_a_range_split_into_vmas_and_wins_over_smaps)
{
	static const struct fake_vma vmas[] = {
		{ 0x60000000, 0x60200000, 2 * MIB },
		{ 0x60200000, 0x60400000, 4096 },
		{ 0x60400000, 0x60600000, 2 * MIB },
	};
	struct hpshm__backing b;

	/* smaps says base pages everywhere: what the query says must be what is reported */
	replace("proc/self/smaps", VMA("60000000-60600000", "4", "rd wr sh mr mw me ms sd"));
	fq_vmas = vmas;
	fq_n = 3;
	hpshm__linux_sys.procmap_query = fake_query;
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 6 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_str_eq(b.source, "PROCMAP_QUERY");
	cr_assert_eq(b.page_size, (size_t)4096);
	cr_assert_eq(b.huge, 0);
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, 2 * MIB);
	cr_assert_eq(b.huge, 1);
	/* a range that starts inside a VMA, and the last VMA there is */
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60500000, MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, 2 * MIB);
	cr_assert_eq(b.huge, 1);
	/* a page size of the base page is no huge page, whatever its size */
	fq_n = 2;
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60200000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, hpshm__port_base_page_size() < 4096);
}

Test(paths_sysinfo, a_kernel_without_the_query_is_read_from_smaps)
{
	struct hpshm__backing b;

	replace("proc/self/smaps", VMA("60000000-60200000", "2048", "rd wr sh mr mw me ms de ht sd"));
	fq_n = 0;
	hpshm__linux_sys.procmap_query = fake_query;
	fq_errno = ENOTTY;   /* before Linux 6.11 */
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_str_eq(b.source, "smaps");
	cr_assert_eq(b.page_size, 2 * MIB);
	cr_assert_eq(b.huge, 1);
	/* a query that finds no VMA there is asked no more, and smaps says the same */
	fq_errno = 0;
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_str_eq(b.source, "smaps");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x500000000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b),
		     HPSHM_EUNAVAILABLE);
}

/*
 * On this kernel: the query and smaps agree on a real mapping split into three VMAs (an
 * mprotect in the middle), and on a hugetlb one where the pool has a page.
 */
Test(paths_sysinfo, the_query_and_smaps_agree_on_real_mappings)
{
	size_t base = hpshm__port_base_page_size();
	struct hpshm__backing q, sm;
	char *p;

	hpshm__linux_set_sysroot(NULL);   /* the real /proc; .fini removes the fake tree */
	p = mmap(NULL, 3 * base, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(p != MAP_FAILED);
	cr_assert_eq(mprotect(p + base, base, PROT_READ), 0);
	cr_assert_eq(hpshm__port_verify_backing(p, 3 * base, HPSHM__PORT_NO_HANDLE, &q), 0);
	fq_errno = ENOTTY;
	hpshm__linux_sys.procmap_query = fake_query;
	cr_assert_eq(hpshm__port_verify_backing(p, 3 * base, HPSHM__PORT_NO_HANDLE, &sm), 0);
	hpshm__linux_sys_reset();
	cr_assert_str_eq(sm.source, "smaps");
	if (strcmp(q.source, "PROCMAP_QUERY") != 0) {
		munmap(p, 3 * base);
		HPT_SKIP("no PROCMAP_QUERY here (Linux 6.11; an emulator's maps has none): verified by %s", q.source);
	}
	cr_assert_eq(q.page_size, sm.page_size);
	cr_assert_eq(q.page_size, base);
	cr_assert_eq(q.huge, 0);
	cr_assert_eq(sm.huge, 0);
	munmap(p, 3 * base);

	p = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		HPT_UNAVAILABLE("mmap_hugetlb", "2MiB", "no 2MiB page for MAP_HUGETLB: %s (vm.nr_hugepages)",
				strerror(errno));
	cr_assert_eq(hpshm__port_verify_backing(p, 2 * MIB, HPSHM__PORT_NO_HANDLE, &q), 0);
	hpshm__linux_sys.procmap_query = fake_query;
	cr_assert_eq(hpshm__port_verify_backing(p, 2 * MIB, HPSHM__PORT_NO_HANDLE, &sm), 0);
	hpshm__linux_sys_reset();
	munmap(p, 2 * MIB);
	cr_assert_str_eq(q.source, "PROCMAP_QUERY");
	cr_assert_str_eq(sm.source, "smaps");
	cr_assert_eq(q.page_size, 2 * MIB);
	cr_assert_eq(sm.page_size, 2 * MIB);
	cr_assert_eq(q.huge, 1);
	cr_assert_eq(sm.huge, 1);
}

Test(paths_sysinfo, maps_line_names_the_first_mapping_overlapping_a_range)
{
	char buf[256];

	replace("proc/self/maps", "60000000-60200000 rw-s 00000000 00:10 42 /first\n"
				  "60400000-60600000 rw-s 00000000 00:10 43 /second\n");
	cr_assert_eq(hpshm__port_maps_line((void *)0x60300000, 4 * MIB, buf, sizeof buf), 0);
	cr_assert(strstr(buf, "/second"), "%s", buf);
	cr_assert_eq(hpshm__port_maps_line((void *)0x60100000, 0, buf, sizeof buf), 0);
	cr_assert(strstr(buf, "/first"), "%s", buf);
	cr_assert_eq(hpshm__port_maps_line((void *)0x60200000, 2 * MIB, buf, sizeof buf), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__port_maps_line((void *)0x60200000, 2 * MIB, NULL, 0), HPSHM_EINVAL);
}

/* ---- the introspection the tool and the bench read (ports/facts.h) ---- */

Test(paths_sysinfo, pool_resize_writes_the_pool_file_under_the_sysroot)
{
	char why[256] = "", buf[64];
	uint64_t v = 0;

	cr_assert_eq(hpshm__os_pool_resize(2 * MIB, 42, why, sizeof why), 0, "%s", why);
	cr_assert_eq(hpshm__linux_read_u64("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", &v), 0);
	cr_assert_eq(v, 42u);
	/* a size without a pool has no file to write: the reason names it */
	cr_assert_eq(hpshm__os_pool_resize(16 * MIB, 1, why, sizeof why), -1);
	cr_assert(strstr(why, "hugepages-16384kB"), "%s", why);
	(void)buf;
}

Test(paths_sysinfo, thp_pages_of_a_mapping_add_anonymous_and_shmem_pmd_pages)
{
	replace("proc/self/smaps",
		"60000000-60400000 rw-p 00000000 00:00 0\nAnonHugePages:      2048 kB\nShmemPmdMapped:     2048 kB\n"
		"60400000-60600000 rw-p 00000000 00:00 0\nAnonHugePages:      8192 kB\n");
	cr_assert_eq(hpshm__os_thp_kib((void *)0x60100000), 4096L);
	cr_assert_eq(hpshm__os_thp_kib((void *)0x60500000), 8192L);
	cr_assert_eq(hpshm__os_thp_kib((void *)0x70000000), -1L, "no VMA there");
}

Test(paths_sysinfo, thp_page_size_is_the_pmd_size_the_kernel_states)
{
	char path[512];

	snprintf(path, sizeof path, "%s/sys/kernel/mm/transparent_hugepage", hpt_fakeroot_dir());
	cr_assert_eq(unlink(path), 0, "%s: %s", path, strerror(errno));   /* never write through the link */
	cr_assert_eq(hpshm__os_thp_page_size(), 0u, "no file: no THP size");
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
	cr_assert_eq(hpshm__os_thp_page_size(), 2 * MIB);
}

Test(paths_sysinfo, mapping_len_is_the_length_of_the_vma_holding_the_address)
{
	replace("proc/self/maps", "60000000-60300000 rw-s 00000000 00:10 42 /x\n");
	cr_assert_eq(hpshm__os_mapping_len((void *)0x60100000), 3 * MIB);
	cr_assert_eq(hpshm__os_mapping_len((void *)0x60300000), 0u);
}

Test(paths_sysinfo, mem_available_comes_from_meminfo_in_bytes)
{
	replace("proc/meminfo", "MemTotal: 100 kB\nMemAvailable:   2048 kB\n");
	cr_assert_eq(hpshm__os_mem_available(), (uint64_t)2 * MIB);
	replace("proc/meminfo", "MemTotal: 100 kB\n");
	cr_assert_eq(hpshm__os_mem_available(), 0u);
}

Test(paths_sysinfo, page_table_size_comes_from_vmpte)
{
	replace("proc/self/status", "Name:\tx\nVmPTE:\t     56 kB\n");
	cr_assert_eq(hpshm__os_page_table_kib(), 56L);
	replace("proc/self/status", "Name:\tx\n");
	cr_assert_eq(hpshm__os_page_table_kib(), -1L);
}

Test(paths_sysinfo, program_path_refuses_a_buffer_it_would_cut)
{
	char buf[4096], tiny[4];

	cr_assert_eq(hpshm__os_program_path(buf, sizeof buf), 0);
	if (strstr(buf, "/ld-linux"))
		HPT_SKIP("started through the dynamic loader, which the kernel names as the program: %s", buf);
	cr_assert(strstr(buf, "test_paths_sysinfo"), "%s", buf);
	cr_assert_eq(hpshm__os_program_path(tiny, sizeof tiny), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__os_program_path(tiny, 1), HPSHM_EINVAL);
}

/* ---- nonces without getrandom() ---- */

static ssize_t no_getrandom(void *buf, size_t len, unsigned flags)
{
	(void)buf;
	(void)len;
	(void)flags;
	errno = ENOSYS;
	return -1;
}

Test(paths_sysinfo, nonces_still_differ_when_getrandom_is_missing)
{
	uint64_t a, b;

	hpshm__linux_sys.getrandom = no_getrandom;
	a = hpshm__port_random64();
	b = hpshm__port_random64();
	hpshm__linux_sys_reset();
	cr_assert_neq(a, b, "two nonces from /dev/urandom are the same");
	cr_assert(a != 0 || b != 0);
}

/* ---- what SysV hugetlb needs: the privilege and the limits ---- */

/* Probe sysv_hugetlb for size bytes: the code, with the reason in reason. */
static int sysv_probe(size_t size, char *reason, size_t len)
{
	size_t ps = 0;

	reason[0] = '\0';
	return hpshm_provider_probe("sysv_hugetlb", size, NULL, &ps, reason, len);
}

Test(paths_sysinfo, sysv_probe_names_a_kernel_shmmax_below_the_segment)
{
	char reason[HPSHM_TEXT_MAX];

	replace("proc/sys/kernel/shmmax", "1048576\n");
	cr_assert_eq(sysv_probe(4 * MIB, reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(strstr(reason, "kernel.shmmax is 1MiB"), "%s", reason);
}

Test(paths_sysinfo, sysv_probe_names_a_kernel_shmall_below_the_segment)
{
	char reason[HPSHM_TEXT_MAX];

	replace("proc/sys/kernel/shmmax", "18446744073692774399\n");
	replace("proc/sys/kernel/shmall", "16\n");
	cr_assert_eq(sysv_probe(4 * MIB, reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(strstr(reason, "kernel.shmall allows 16 pages"), "%s", reason);
}

struct needs {
	int  sysv_limits_short;   /* a sysv_limits need that is not met */
	int  privilege_met;       /* the sysv_privilege need, as reported */
	char now[HPSHM_REQUIREMENT_TEXT]; /* its first command */
};

static int needs_keep(void *user, const char *provider, const hpshm_requirement *r)
{
	struct needs *n = user;

	if (strcmp(provider, "sysv_hugetlb") != 0)
		return 0;
	if (strcmp(r->what, "sysv_limits") == 0 && !r->met) {
		n->sysv_limits_short++;
		snprintf(n->now, sizeof n->now, "%s", r->now[0]);
	}
	if (strcmp(r->what, "sysv_privilege") == 0)
		n->privilege_met = r->met;
	return 0;
}

Test(paths_sysinfo, sysv_requirements_give_the_sysctl_for_each_limit_that_is_short)
{
	struct needs n;
	hpshm_error err;

	memset(&n, 0, sizeof n);
	replace("proc/sys/kernel/shmmax", "1048576\n");
	replace("proc/sys/kernel/shmall", "16\n");
	cr_assert_geq(hpshm_requirements(4 * MIB, 2 * MIB, NULL, needs_keep, &n, &err), 1, "%s", err.message);
	cr_assert_eq(n.sysv_limits_short, 2, "shmmax and shmall are both short");
	cr_assert(strstr(n.now, "sysctl -w kernel.shmall="), "%s", n.now);
}

/* In a child that became nobody (no CAP_IPC_LOCK): probe sysv_hugetlb; 0 if the reason says want. */
static void sysv_probe_as_nobody(const char *group_file, const char *want)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		HPT_SKIP("needs root to become another user");
	replace("proc/sys/vm/hugetlb_shm_group", group_file);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		char reason[HPSHM_TEXT_MAX];
		struct needs n;
		hpshm_error err;

		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		if (sysv_probe(4 * MIB, reason, sizeof reason) != HPSHM_EUNAVAILABLE)
			_exit(11);
		if (!strstr(reason, want))
			_exit(12);
		memset(&n, 0, sizeof n);
		n.privilege_met = -1;
		if (hpshm_requirements(4 * MIB, 2 * MIB, NULL, needs_keep, &n, &err) < 1 || n.privilege_met != 0)
			_exit(13);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed (10 setuid, 11 probe passed, 12 reason, 13 requirement)",
		     WEXITSTATUS(status));
}

Test(paths_sysinfo, sysv_probe_without_the_privilege_names_the_group_to_join, .timeout = 30)
{
	sysv_probe_as_nobody("0\n", "not in vm.hugetlb_shm_group (gid 0)");
}

Test(paths_sysinfo, sysv_probe_without_the_privilege_and_no_group_asks_for_cap_ipc_lock, .timeout = 30)
{
	sysv_probe_as_nobody("staff\n", "cannot read vm.hugetlb_shm_group");
}

/*
 * The children of this process that map a segment (ports/linux/children.c), read from a fake
 * /proc: a thread's children list with a pid 0, a pid without maps and a word that ends it; a
 * maps file whose first line is longer than the reader's buffer; a task that is no thread.
 */
Test(paths_sysinfo, children_mapping_reads_each_threads_children_and_their_maps)
{
	char maps[6000 + 128];
	long out[4];

	memset(maps, 'x', 6000);
	snprintf(maps + 6000, sizeof maps - 6000,
		 "\n70000000-70200000 rw-s 00000000 00:10 5 /dev/hugepages/a\n70400000-70600000 r--p");
	hpt_fakeroot_write("proc/self/task/100/children", "4242 0 4343 4444 stop 4545\n");
	hpt_fakeroot_write("proc/self/task/101/children", "");
	hpt_fakeroot_write("proc/self/task/info/children", "4444\n");
	hpt_fakeroot_write("proc/4242/maps", maps);
	hpt_fakeroot_write("proc/4444/maps", "70400000-70600000 r--p\n70000000-70200000 rw-s\n");
	hpt_fakeroot_write("proc/4545/maps", "70000000-70200000 rw-s\n");
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70000000, out, 4), 2);
	cr_assert(out[0] == 4242 && out[1] == 4444, "%ld %ld", out[0], out[1]);
	/* 4242's line of it has no newline (the kernel always ends one): only 4444's counts. */
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70400000, out, 4), 1);
	cr_assert_eq(out[0], 4444);
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70000000, out, 1), 1);
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70000000, out, 0), 0);
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70000000, NULL, 4), 0);
	cr_assert_eq(hpshm__os_children_mapping((void *)0x70800000, out, 4), 0);
}
