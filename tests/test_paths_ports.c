/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_ports.c -- the port's readers and system call paths when what they read or call
 * is not what a healthy machine gives: malformed, missing or overlong /proc and /sys files, a
 * mount table or cgroup file out of format, knobs that cannot be written, a random source that
 * fails, a spawn without descriptors or processes, and address hints that are taken.
 *
 * Every file is the fake sysroot's (fakes.h), so no test writes /sys.  The fake tree links some
 * files to the real ones (the SysV limits, smaps, maps, status, transparent_hugepage): a test
 * that changes such a file first removes the link from the tree, never writing through it.
 * System calls fail through hpshm__posix_sys and hpshm__linux_sys, or through a resource limit the
 * test lowers in its own process (Criterion and the built-in harness run each test in one).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* setresuid, setgroups */
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/admin.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "ports/linux/linux.h"
#include "ports/port.h"
#include "ports/posix/posix.h"
#include "ports/posix/sys.h"

/* A populate in the calling thread alone, as every populate was before populate_threads. */
#define HPT_ONE_THREAD ((struct hpshm__populate_how){ 1, NULL })

/* A descriptor handed to the port as the file of a mapping's pages (port.h). */
#define FILE_HANDLE(fd) ((struct hpshm__port_handle){ (fd), HPSHM__PORT_FILE })

#ifdef HPSHM_COVERAGE
void __gcov_dump(void); /* a forked child that _exit()s keeps what it ran (scripts/coverage.sh) */
#define PORTS_CHILD_EXIT(code) (__gcov_dump(), _exit(code))
#else
#define PORTS_CHILD_EXIT(code) _exit(code)
#endif

#define MIB HPT_MIB
#define GIB ((size_t)1 << 30)

static struct hpshm__linux_syscalls real_linux;
static struct hpshm__syscalls real_sys;
static char saved_cwd[PATH_MAX];
static char *saved_path;          /* PATH before a test changed it */
static char scratch[64];          /* a temporary directory a test made, "" if none */

static int remove_tree(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd);
}

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void ports_fini_work(void)
{
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	hpt_fakeroot_destroy();
	if (saved_cwd[0])
		(void)chdir(saved_cwd);
	if (saved_path) {
		setenv("PATH", saved_path, 1);
		free(saved_path);
		saved_path = NULL;
	}
	if (scratch[0]) {
		(void)remove_tree(scratch);
		scratch[0] = '\0';
	}
}

static void ports_init(void)
{
	const char *path = getenv("PATH");

	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	real_sys = hpshm__posix_sys;
	real_linux = hpshm__linux_sys;
	hpt_fakeroot_create(10, 4);
	if (getcwd(saved_cwd, sizeof saved_cwd) == NULL)
		saved_cwd[0] = '\0';
	saved_path = path ? strdup(path) : NULL;
	scratch[0] = '\0';
	hpt_fixture_undo_on_skip(ports_fini_work);
}

static void ports_fini(void)
{
	ports_fini_work();
	hpt_fixture_fini();
}

TestSuite(paths_ports, .init = ports_init, .fini = ports_fini);

/* The fake tree's path of rel. */
static const char *tree(const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", hpt_fakeroot_dir(), rel);
	return buf;
}

/* Write a file the fake tree may hold as a link to the real one: the link goes first. */
static void replace(const char *rel, const char *content)
{
	char path[512];

	(void)unlink(tree(rel, path, sizeof path));
	hpt_fakeroot_write(rel, content);
}

/* Take a file (or a link to a real one) out of the fake tree. */
static void drop(const char *rel)
{
	char path[512];

	cr_assert_eq(unlink(tree(rel, path, sizeof path)), 0, "%s: %s", path, strerror(errno));
}

/* Make rel a link to /dev/full, which takes no byte: a write to it fails with ENOSPC. */
static void link_full(const char *rel)
{
	char path[512];

	(void)unlink(tree(rel, path, sizeof path));
	cr_assert_eq(symlink("/dev/full", path), 0, "%s: %s", path, strerror(errno));
}

/* A temporary directory for the test, removed by .fini. */
static const char *scratch_dir(void)
{
	snprintf(scratch, sizeof scratch, "/tmp/hpt-ports.XXXXXX");
	cr_assert_not_null(mkdtemp(scratch), "mkdtemp: %s", strerror(errno));
	return scratch;
}

/* s filled with n copies of c. */
static char *repeat(char *s, char c, size_t n)
{
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ==== sysinfo.c: the readers under the sysroot ==== */

Test(paths_ports, sysroot_loses_trailing_slashes_and_an_overlong_root_is_refused)
{
	char root[600], big[PATH_MAX + 16];
	uint64_t v = 0;

	snprintf(root, sizeof root, "%s//", hpt_fakeroot_dir());
	hpshm__linux_set_sysroot(root);
	cr_assert_str_eq(hpshm__linux_sysroot(), hpt_fakeroot_dir());
	cr_assert_eq(hpshm__linux_read_u64("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", &v), 0);
	cr_assert_eq(v, 10u, "the pool of the fake tree is read through the trimmed root");

	hpshm__linux_set_sysroot(repeat(big, 'r', PATH_MAX + 8));
	cr_assert_str_eq(hpshm__linux_sysroot(), "", "a root that cannot be held is not cut: the real one is used");
	hpshm__linux_set_sysroot(hpt_fakeroot_dir());
}

Test(paths_ports, sysroot_too_long_for_any_path_reads_and_writes_nothing)
{
	char big[PATH_MAX], buf[64], why[256] = "";
	struct hpshm__pool p[2];

	/* a root that fits, but leaves no room for the path under it */
	big[0] = '/';
	repeat(big + 1, 'r', PATH_MAX - 7);
	hpshm__linux_set_sysroot(big);
	cr_assert_eq(strlen(hpshm__linux_sysroot()), (size_t)PATH_MAX - 6);

	errno = 0;
	cr_assert_eq(hpshm__linux_read_file("/proc/meminfo", buf, sizeof buf), HPSHM_EIO);
	cr_assert_eq(errno, ENAMETOOLONG);
	errno = 0;
	cr_assert_null(hpshm__linux_sysfile_open("/proc/self/mountinfo"));
	cr_assert_eq(errno, ENAMETOOLONG);
	cr_assert_eq(hpshm__linux_pools(p, 2), 0, "no directory to list: no pools");
	cr_assert_eq(hpshm__os_pool_resize(2 * MIB, 1, why, sizeof why), -1);
	cr_assert(strstr(why, "too long under the sysroot") && strstr(why, "hugepages-2048kB"), "%s", why);
	why[0] = '\0';
	cr_assert_eq(hpshm__os_thp_shmem_set("advise", why, sizeof why), -1);
	cr_assert(strstr(why, "too long under the sysroot") && strstr(why, "shmem_enabled"), "%s", why);
	hpshm__linux_set_sysroot(hpt_fakeroot_dir());
}

Test(paths_ports, read_file_refuses_a_missing_path_or_buffer)
{
	char buf[8];

	cr_assert_eq(hpshm__linux_read_file(NULL, buf, sizeof buf), HPSHM_EINVAL);
	cr_assert_eq(hpshm__linux_read_file("/proc/meminfo", NULL, 8), HPSHM_EINVAL);
	cr_assert_eq(hpshm__linux_read_file("/proc/meminfo", buf, 0), HPSHM_EINVAL);
}

Test(paths_ports, read_file_of_a_directory_fails_with_the_read_errno)
{
	char buf[64], path[512];

	cr_assert_eq(mkdir(tree("proc/test_dir", path, sizeof path), 0755), 0, "%s", strerror(errno));
	errno = 0;
	cr_assert_eq(hpshm__linux_read_file("/proc/test_dir", buf, sizeof buf), HPSHM_EIO);
	cr_assert_eq(errno, EISDIR, "errno %d", errno);
}

Test(paths_ports, read_file_that_does_not_fit_is_eoverflow_and_keeps_the_prefix)
{
	char buf[5];

	replace("proc/test_file", "0123456789");
	errno = 0;
	cr_assert_eq(hpshm__linux_read_file("/proc/test_file", buf, sizeof buf), HPSHM_EOVERFLOW);
	cr_assert_eq(errno, EOVERFLOW);
	cr_assert_str_eq(buf, "0123");
	/* a file that exactly fills the buffer is whole */
	replace("proc/test_file", "0123");
	cr_assert_eq(hpshm__linux_read_file("/proc/test_file", buf, sizeof buf), 4L);
	cr_assert_str_eq(buf, "0123");
}

Test(paths_ports, u64_files_allow_blanks_and_refuse_signs_garbage_and_overflow)
{
	uint64_t v = 7;

	replace("proc/test_u64", " \t42 \t\n");
	cr_assert_eq(hpshm__linux_read_u64("/proc/test_u64", &v), 0);
	cr_assert_eq(v, 42u);
	replace("proc/test_u64", "12abc\n");
	cr_assert_eq(hpshm__linux_read_u64("/proc/test_u64", &v), HPSHM_EIO, "trailing garbage");
	replace("proc/test_u64", "-1\n");
	cr_assert_eq(hpshm__linux_read_u64("/proc/test_u64", &v), HPSHM_EIO, "a sign would wrap");
	replace("proc/test_u64", "99999999999999999999999\n");
	cr_assert_eq(hpshm__linux_read_u64("/proc/test_u64", &v), HPSHM_EIO, "beyond 64 bits");
	cr_assert_eq(v, 42u, "a refused file leaves the value alone");
}

Test(paths_ports, pools_without_the_hugepages_directory_or_room_are_none)
{
	struct hpshm__pool p[2];
	char path[512];

	cr_assert_eq(hpshm__linux_pools(NULL, 2), 0);
	cr_assert_eq(hpshm__linux_pools(p, 0), 0);
	/* a kernel without hugetlb: an empty tree */
	cr_assert_eq(mkdir(tree("empty", path, sizeof path), 0755), 0);
	hpshm__linux_set_sysroot(path);
	cr_assert_eq(hpshm__linux_pools(p, 2), 0);
	cr_assert_eq(hpshm__port_default_huge_page_size(), 0u);
	hpshm__linux_set_sysroot(hpt_fakeroot_dir());
	cr_assert_eq(hpshm__linux_pools(p, 2), 1);
}

Test(paths_ports, pool_directories_without_a_number_or_a_counter_are_not_pools)
{
	struct hpshm__pool p[4];

	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-kB/nr_hugepages", "1\n");
	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-0kB/nr_hugepages", "1\n");
	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-99999999999999999999kB/nr_hugepages", "1\n");
	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-4096kB/free_hugepages", "1\n");
	cr_assert_eq(hpshm__linux_pools(p, 4), 1, "only the fake tree's 2 MiB pool");
	cr_assert_eq(p[0].page_size, 2 * MIB);
	cr_assert_eq(hpshm__linux_pool_get(4 * MIB, p), HPSHM_EUNAVAILABLE, "no nr_hugepages: no such size");
}

Test(paths_ports, pool_available_saturates_rather_than_wraps)
{
	struct hpshm__pool p = { .page_size = 2 * MIB, .free = ULONG_MAX, .overcommit = ULONG_MAX };

	cr_assert_eq(hpshm__linux_pool_available(&p), ULONG_MAX);
	p.free = 1;
	p.resv = 3;
	p.surplus = ULONG_MAX;
	cr_assert_eq(hpshm__linux_pool_available(&p), 0ul, "more reserved than free, more surplus than allowed");
}

Test(paths_ports, fields_match_their_whole_key_and_need_a_number)
{
	unsigned long long v = 0;

	replace("proc/test_status", "VmPTEx:\t9 kB\nVmPTE:\t  12 kB\nVmRSS:\tlots\nLast:\t5");
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "VmPTE", 10, &v), 0);
	cr_assert_eq(v, 12ull, "a longer key with the same start is another field");
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "VmRSS", 10, &v), HPSHM_EIO, "no number");
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "Last", 10, &v), 0, "the last line without a newline");
	cr_assert_eq(v, 5ull);
	cr_assert_eq(hpshm__linux_read_field("/proc/test_status", "Absent", 10, &v), HPSHM_EIO);
}

Test(paths_ports, pools_keep_the_smallest_sizes_when_the_kernel_offers_more_than_fit)
{
	/* created largest, then ascending, then the smallest: whatever order readdir gives, some
	 * size arrives when the table is full and larger than all, and some smaller than one */
	static const unsigned long kb[] = { 1u << 30, 64, 128, 256, 512, 1024, 4096, 8192, 16384,
					    32768, 65536, 131072, 16 };
	struct hpshm__pool p[HPSHM__MAX_PAGE_SIZES + 2];
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	char rel[128];
	int n;

	for (size_t i = 0; i < sizeof kb / sizeof kb[0]; i++) {
		snprintf(rel, sizeof rel, "sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages", kb[i]);
		hpt_fakeroot_write(rel, "1\n");
	}
	/* the 2 MiB size a second time, spelled with a leading zero */
	hpt_fakeroot_write("sys/kernel/mm/hugepages/hugepages-02048kB/nr_hugepages", "1\n");
	n = hpshm__linux_pools(p, HPSHM__MAX_PAGE_SIZES + 2);
	cr_assert_eq(n, HPSHM__MAX_PAGE_SIZES);
	{
		static const size_t want[] = { 16, 64, 128, 256, 512, 1024, 2048, 4096 };

		for (int i = 0; i < n; i++)
			cr_assert_eq(p[i].page_size, want[i] * 1024, "pool %d: %zu", i, p[i].page_size);
	}
	cr_assert_eq(p[6].total, 10ul, "the 2 MiB pool is the fake tree's, listed once");
	cr_assert_eq(hpshm__port_huge_page_sizes(sizes, 3), 3);
	cr_assert_eq(sizes[2], (size_t)128 * 1024);
}

Test(paths_ports, cap_ipc_lock_is_bit_14_of_capeff)
{
	replace("proc/self/status", "Name:\tx\nCapEff:\t0000000000004000\n");
	cr_assert_eq(hpshm__linux_has_cap_ipc_lock(), 1);
	cr_assert_eq(hpshm__os_lock_privilege(), 1);
	replace("proc/self/status", "Name:\tx\nCapEff:\t000001ffffffbfff\n");
	cr_assert_eq(hpshm__linux_has_cap_ipc_lock(), 0, "every capability but CAP_IPC_LOCK");
	replace("proc/self/status", "Name:\tx\n");
	cr_assert_eq(hpshm__linux_has_cap_ipc_lock(), 0, "no CapEff line: no capability claimed");
	cr_assert_str_eq(hpshm__os_lock_privilege_name(), "CAP_IPC_LOCK");
}

Test(paths_ports, in_group_refuses_numbers_that_are_no_gid)
{
	cr_assert_eq(hpshm__linux_in_group(-1), 0);
	if (sizeof(long) > sizeof(gid_t))
		cr_assert_eq(hpshm__linux_in_group((long)((unsigned long)(gid_t)-1) + 1), 0, "beyond gid_t");
	cr_assert_eq(hpshm__linux_in_group((long)getegid()), 1);
	cr_assert_eq(hpshm__os_in_group((long)getegid()), 1);
	replace("proc/sys/vm/hugetlb_shm_group", "4294967296000000000000\n");
	cr_assert_eq(hpshm__os_huge_group(), -1L, "a group number beyond 64 bits is unreadable");
	if (sizeof(long) == 8) {
		replace("proc/sys/vm/hugetlb_shm_group", "9223372036854775808\n");
		cr_assert_eq(hpshm__os_huge_group(), -1L, "a group number beyond a long is unreadable");
	}
}

Test(paths_ports, in_group_reads_more_supplementary_groups_than_its_stack_holds, .timeout = 30)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		HPT_SKIP("needs root to set the supplementary groups");
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		gid_t groups[80];

		for (int i = 0; i < 80; i++)
			groups[i] = (gid_t)(50000 + i);
		if (setgroups(80, groups) != 0)
			PORTS_CHILD_EXIT(10);
		if (hpshm__linux_in_group(50079) != 1 || hpshm__linux_in_group(50000) != 1)
			PORTS_CHILD_EXIT(11);
		if (hpshm__linux_in_group(50080) != 0)
			PORTS_CHILD_EXIT(12);
		if (setgroups(0, NULL) != 0 || hpshm__linux_in_group(50000) != 0)
			PORTS_CHILD_EXIT(13);
		PORTS_CHILD_EXIT(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_eq(WEXITSTATUS(status), 0,
		     "check %d failed (10 setgroups, 11 a member not found, 12 a stranger found, 13 no groups)",
		     WEXITSTATUS(status));
}

Test(paths_ports, sysv_limits_none_readable_is_eio_and_one_is_enough)
{
	struct hpshm__sysv_limits l;
	struct hpshm__sysv_limits o;

	cr_assert_eq(hpshm__linux_sysv_limits(NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__os_sysv_limits(NULL), HPSHM_EINVAL);
	drop("proc/sys/kernel/shmmax");
	drop("proc/sys/kernel/shmall");
	drop("proc/sys/kernel/shmmni");
	cr_assert_eq(hpshm__linux_sysv_limits(&l), HPSHM_EIO);
	cr_assert_eq(hpshm__os_sysv_limits(&o), HPSHM_EIO);
	hpt_fakeroot_write("proc/sys/kernel/shmmni", "4096\n");
	cr_assert_eq(hpshm__os_sysv_limits(&o), 0);
	cr_assert_eq(o.shmmni, 4096u);
	cr_assert_eq(o.shmmax, 0u, "an unreadable limit is 0");
}

Test(paths_ports, thp_settings_without_a_whole_bracketed_word_are_empty)
{
	struct hpshm__thp t;
	struct hpshm__thp o;
	char word[64], text[128];

	drop("sys/kernel/mm/transparent_hugepage");
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
	snprintf(text, sizeof text, "always [%s] never\n", repeat(word, 'w', 40));
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/defrag", text);
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/shmem_enabled", "always [advise never\n");
	cr_assert_eq(hpshm__linux_thp(NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__os_thp(NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__linux_thp(&t), 0);
	cr_assert_str_eq(t.enabled, "", "no brackets");
	cr_assert_str_eq(t.defrag, "", "a word too long for the field is not cut");
	cr_assert_str_eq(t.shmem_enabled, "", "no closing bracket");
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/shmem_enabled", "always [within_size] advise\n");
	cr_assert_eq(hpshm__os_thp(&o), 0);
	cr_assert_str_eq(o.shmem_enabled, "within_size");
	cr_assert_str_eq(o.enabled, "");
}

Test(paths_ports, getline_gives_a_last_line_without_newline_and_a_line_that_exactly_fits)
{
	char buf[4];
	FILE *f;
	int cut = 7;

	replace("proc/test_lines", "abc\nxy");
	f = hpshm__linux_sysfile_open("/proc/test_lines");
	cr_assert_not_null(f);
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, &cut), 1);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(cut, 0, "a line that exactly fits is not cut");
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, &cut), 1);
	cr_assert_str_eq(buf, "xy");
	cr_assert_eq(cut, 0);
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, NULL), 0);
	fclose(f);
}

/* ==== mounts.c: the hugetlbfs mount table ==== */

#define MI(point, super) "36 35 0:40 / " point " rw,relatime shared:5 - hugetlbfs none " super "\n"

/* The page size of the listed mount at point; 0 if it is not listed. */
static size_t mount_size(const struct hpshm__mount *m, int n, const char *point)
{
	for (int i = 0; i < n; i++)
		if (strcmp(m[i].path, point) == 0)
			return m[i].page_size;
	return 0;
}

Test(paths_ports, getline_reads_past_an_overlong_line_without_a_cut_flag)
{
	char buf[8];
	FILE *f;

	replace("proc/test_lines", "0123456789abcdef\nnext\n");
	f = hpshm__linux_sysfile_open("/proc/test_lines");
	cr_assert_not_null(f);
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, NULL), 1);
	cr_assert_str_eq(buf, "0123456");
	cr_assert_eq(hpshm__linux_getline(f, buf, sizeof buf, NULL), 1);
	cr_assert_str_eq(buf, "next");
	fclose(f);
}

Test(paths_ports, hugetlbfs_pagesize_options_in_every_spelling)
{
	struct hpshm__mount *m;
	int n;

	hpt_fakeroot_write("proc/self/mountinfo",
			   MI("/mnt/k", "rw,pagesize=64K") MI("/mnt/kb", "rw,pagesize=64kB")
			   MI("/mnt/bytes", "rw,pagesize=2097152") MI("/mnt/g", "rw,pagesize=1G")
			   MI("/mnt/mb", "rw,pagesize=2MB,size=4M") MI("/mnt/comma", "rw,size=4M,") MI("/mnt/m", "rw,pagesize=1024m")
			   MI("/mnt/zero", "rw,pagesize=0") MI("/mnt/word", "rw,pagesize=x")
			   MI("/mnt/junk", "rw,pagesize=2Mx") MI("/mnt/big", "rw,pagesize=99999999999999999G"));
	m = hpshm__linux_hugetlbfs_mount_list(&n);
	cr_assert_not_null(m);
	cr_assert_eq(n, 11, "every hugetlbfs line is a mount, beyond the first allocation of 8");
	cr_assert_eq(mount_size(m, n, "/mnt/comma"), 2 * MIB, "options that end in a comma, no pagesize=");
	cr_assert_eq(mount_size(m, n, "/mnt/k"), (size_t)64 * 1024);
	cr_assert_eq(mount_size(m, n, "/mnt/kb"), (size_t)64 * 1024);
	cr_assert_eq(mount_size(m, n, "/mnt/bytes"), 2 * MIB, "a size without a unit is in bytes");
	cr_assert_eq(mount_size(m, n, "/mnt/g"), GIB);
	cr_assert_eq(mount_size(m, n, "/mnt/mb"), 2 * MIB);
	cr_assert_eq(mount_size(m, n, "/mnt/m"), GIB, "the kernel's own spelling of 1 GiB");
	/* what is not a size is no pagesize= at all: the default huge page size */
	cr_assert_eq(mount_size(m, n, "/mnt/zero"), 2 * MIB);
	cr_assert_eq(mount_size(m, n, "/mnt/word"), 2 * MIB);
	cr_assert_eq(mount_size(m, n, "/mnt/junk"), 2 * MIB);
	cr_assert_eq(mount_size(m, n, "/mnt/big"), 2 * MIB, "a size beyond size_t");
	cr_assert_eq(m[0].writable, 0, "a mount point that does not exist is not writable");
	free(m);
}

Test(paths_ports, mountinfo_lines_out_of_format_are_passed_over)
{
	char text[16384], longline[9000], point[300];
	struct hpshm__mount m[8];
	int n;

	repeat(longline, 'x', sizeof longline - 1);
	longline[0] = '3';
	repeat(point, 'p', 299);
	point[0] = '/';
	snprintf(text, sizeof text,
		 "36 35 0:40\n"                                        /* too few fields */
		 "36 35 0:40 / /mnt/a\n"                               /* no mount options */
		 "36 35 0:40 / /mnt/b rw shared:1\n"                   /* no separator */
		 "36 35 0:40 / /mnt/c rw - hugetlbfs\n"                /* no source */
		 "%s\n"                                                /* too long to read */
		 "36 35 0:40 / %s rw - hugetlbfs none rw,pagesize=2M\n" /* a point too long to hold */
		 "36 35 0:40 / /mnt/d rw - hugetlbfs none\n"           /* no super options: the default */
		 "36 35 0:40 / /mnt/f\\999\\04 rw - hugetlbfs none rw,pagesize=2M\n" /* not escapes */
		 "36 35 0:40 / /mnt/e rw - hugetlbfs none rw,pagesize=1G\n",
		 longline, point);
	hpt_fakeroot_write("proc/self/mountinfo", text);
	n = hpshm__linux_hugetlbfs_mounts(m, 8);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(m[0].path, "/mnt/d");
	cr_assert_eq(m[0].page_size, 2 * MIB);
	cr_assert_str_eq(m[1].path, "/mnt/f\\999\\04", "a backslash without three octal digits stays");
	cr_assert_str_eq(m[2].path, "/mnt/e");
	cr_assert_eq(m[2].page_size, GIB, "the line after the overlong one is read");
}

Test(paths_ports, mounts_without_a_mountinfo_or_a_default_size_are_none)
{
	struct hpshm__mount m[2];
	struct hpshm__mount o[2];
	int n = 5;

	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(NULL, 2), 0);
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, 0), 0);
	cr_assert_eq(hpshm__os_mounts(NULL, 2), 0);
	cr_assert_eq(hpshm__os_mounts(o, 0), 0);
	/* no pagesize= and no Hugepagesize to fall back on: no size, no mount */
	hpt_fakeroot_write("proc/self/mountinfo", MI("/mnt/d", "rw"));
	replace("proc/meminfo", "MemTotal: 100 kB\n");
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, 2), 0);
	drop("proc/self/mountinfo");
	cr_assert_null(hpshm__linux_hugetlbfs_mount_list(&n));
	cr_assert_eq(n, 0);
	cr_assert_eq(hpshm__os_mounts(o, 2), 0);
}

static long statfs_bsize;     /* what inj_statfs reports as hugetlbfs' page size */

static int inj_statfs(const char *path, struct statfs *buf)
{
	int rc = real_linux.statfs(path, buf);

	if (rc == 0) {
		buf->f_type = (__typeof__(buf->f_type))HUGETLBFS_MAGIC;
		buf->f_bsize = (__typeof__(buf->f_bsize))statfs_bsize;
	}
	return rc;
}

Test(paths_ports, os_mounts_copies_what_fits_and_counts_them_all)
{
	struct hpshm__mount o[2];

	memset(o, 0, sizeof o);
	hpt_fakeroot_write("proc/self/mountinfo", MI("/mnt/a", "rw,pagesize=2M") MI("/mnt/b", "rw,pagesize=1G")
						  MI("/mnt/c", "rw,pagesize=2M"));
	cr_assert_eq(hpshm__os_mounts(o, 1), 3);
	cr_assert_str_eq(o[0].path, "/mnt/a");
	cr_assert_eq(o[0].page_size, 2 * MIB);
	cr_assert_str_eq(o[1].path, "", "nothing beyond max is written");
}

Test(paths_ports, hugetlbfs_dir_refuses_nothing_to_ask_and_names_other_file_systems)
{
	size_t ps = 0;

	errno = 0;
	cr_assert_eq(hpshm__linux_hugetlbfs_dir(NULL, &ps), HPSHM_EINVAL);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(hpshm__linux_hugetlbfs_dir("/", NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__linux_hugetlbfs_dir("/nonexistent/hpt", &ps), HPSHM_EUNAVAILABLE);
	cr_assert_eq(errno, ENOENT);
	hpshm__linux_sys.statfs = inj_statfs;
	statfs_bsize = 0;
	errno = 0;
	cr_assert_eq(hpshm__linux_hugetlbfs_dir("/", &ps), HPSHM_EUNAVAILABLE, "hugetlbfs without a page size");
	cr_assert_eq(errno, ENOTSUP);
	statfs_bsize = (long)(2 * MIB);
	cr_assert_eq(hpshm__linux_hugetlbfs_dir("/", &ps), 0);
	cr_assert_eq(ps, 2 * MIB);
}

/* ==== cgroup.c: the hugetlb cgroup ==== */

static void cgroup_v2_at(const char *self, const char *mountinfo)
{
	char line[8192];

	snprintf(line, sizeof line, "0::%s\n", self);
	hpt_fakeroot_write("proc/self/cgroup", line);
	hpt_fakeroot_write("proc/self/mountinfo", mountinfo);
}

#define CG2(root, point) "30 1 0:26 " root " " point " rw,nosuid - cgroup2 cgroup2 rw\n"

Test(paths_ports, cgroup_get_refuses_nothing_to_fill_and_page_size_zero)
{
	struct hpshm__limit cg;
	struct hpshm__limit l;

	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__linux_cgroup_get(0, &cg), HPSHM_EINVAL);
	cr_assert_eq(cg.version, 0);
	cr_assert_eq(cg.limit, HPSHM__UNLIMITED, "even refused, the record says no limit");
	cr_assert_eq(hpshm__os_limit(2 * MIB, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__os_limit(0, &l), HPSHM_EINVAL);
}

Test(paths_ports, cgroup_mount_point_with_escapes_is_unescaped)
{
	struct hpshm__limit cg;

	cgroup_v2_at("/a", CG2("/", "/sys/fs/cgroup\\040x"));
	hpt_fakeroot_write("sys/fs/cgroup x/a/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)4 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup x/a");
}

Test(paths_ports, cgroup_mountinfo_lines_out_of_format_are_passed_over)
{
	static char text[20000];
	char longline[9000], point[PATH_MAX + 100];
	struct hpshm__limit cg;

	repeat(longline, 'x', sizeof longline - 1);
	repeat(point, 'p', sizeof point - 1);
	point[0] = '/';
	snprintf(text, sizeof text,
		 "30 1 0:26\n"                                  /* no root */
		 "30 1 0:26 / /x\n"                             /* no options */
		 "30 1 0:26 / /x rw shared:1\n"                 /* no separator */
		 "30 1 0:26 / /x rw - cgroup2\n"                /* no source */
		 "36 35 0:40 / /dev/hugepages rw - hugetlbfs none rw,pagesize=2M\n"
		 "%s\n"                                         /* too long to read */
		 "30 1 0:26 / %s rw - cgroup2 cgroup2 rw\n"     /* a point too long for a path */
		 CG2("/", "/sys/fs/cgroup"),
		 longline, point);
	cgroup_v2_at("/a", text);
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2, "the one good line is found");
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/a");
}

Test(paths_ports, cgroup_of_several_v2_mounts_the_first_showing_our_cgroup_wins)
{
	struct hpshm__limit cg;

	cgroup_v2_at("/a", CG2("/other", "/mnt/other") CG2("/", "/sys/fs/cgroup") CG2("/", "/mnt/third"));
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304\n");
	hpt_fakeroot_write("mnt/third/a/hugetlb.2MB.max", "2097152\n");
	hpt_fakeroot_write("mnt/other/a/hugetlb.2MB.max", "2097152\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.limit, (uint64_t)4 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/a");
}

Test(paths_ports, cgroup_mount_line_too_long_to_hold_leaves_the_mount_found_before_it)
{
	static char text[PATH_MAX + 400];
	char root[PATH_MAX + 100];
	struct hpshm__limit cg;

	/* the second line's point fits, its root does not: the first mount must stay whole */
	repeat(root, 'p', sizeof root - 1);
	root[0] = '/';
	snprintf(text, sizeof text, CG2("/other", "/mnt/other") "30 1 0:26 %s /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		 root);
	cgroup_v2_at("/a", text);
	hpt_fakeroot_write("mnt/other/a/hugetlb.2MB.max", "6291456\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "2097152\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_str_eq(cg.path, "/mnt/other/a", "the point of one line with the root of another");
	cr_assert_eq(cg.limit, (uint64_t)6 * MIB);
}

Test(paths_ports, cgroup_mount_of_another_subtree_is_read_at_our_path_below_it)
{
	struct hpshm__limit cg;

	/* only a mount of a subtree we are not in: our whole path under its point is the guess */
	cgroup_v2_at("/a", CG2("/other", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "6291456\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)6 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/a");
}

Test(paths_ports, cgroup_self_file_missing_or_out_of_format_is_no_cgroup)
{
	char text[9200], longline[9000];
	struct hpshm__limit cg;

	hpt_fakeroot_write("proc/self/mountinfo", CG2("/", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb.2MB.max", "4194304\n");
	drop("proc/self/cgroup");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "no /proc/self/cgroup: no limit seen");

	repeat(longline, 'x', sizeof longline - 1);
	snprintf(text, sizeof text, "garbage\n%s\n3:hugetlb:relative\n0::relative\n0:cpu:/\n", longline);
	hpt_fakeroot_write("proc/self/cgroup", text);
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0);
	cr_assert_eq(cg.limit, HPSHM__UNLIMITED);
}

Test(paths_ports, cgroup_without_its_hierarchy_mounted_is_no_cgroup)
{
	struct hpshm__limit cg;

	cgroup_v2_at("/a", "36 35 0:40 / /dev/hugepages rw - hugetlbfs none rw\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "a v2 path but no cgroup2 mount");
	drop("proc/self/mountinfo");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "no mount table");
	hpt_fakeroot_write("proc/self/cgroup", "5:hugetlb:/g\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "a v1 hierarchy we cannot see");
}

Test(paths_ports, cgroup_values_with_garbage_or_beyond_64_bits_are_no_limit)
{
	struct hpshm__limit cg;

	cgroup_v2_at("/a", CG2("/", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304abc\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0);
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "18446744073709551616\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0);
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304");  /* no newline: still a number */
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.current", "junk\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)4 * MIB);
	cr_assert_eq(cg.usage, 0u, "an unreadable usage counts as none");
}

/* A cgroup path of n components of 200 bytes. */
static char *long_cgroup(char *buf, size_t len, int n)
{
	char comp[202];

	buf[0] = '\0';
	comp[0] = '/';
	repeat(comp + 1, 'c', 200);
	for (int i = 0; i < n && strlen(buf) + strlen(comp) < len; i++)
		strcat(buf, comp);
	return buf;
}

Test(paths_ports, cgroup_path_too_long_for_its_files_walks_up_to_a_level_that_fits)
{
	char self[PATH_MAX];
	struct hpshm__limit cg;

	/* 4075 bytes: a directory name that fits PATH_MAX under the mount point, its files do not */
	long_cgroup(self, sizeof self, 20);
	strcat(self, "/");
	repeat(self + strlen(self), 'e', 54);
	cr_assert_eq(strlen(self), 4075u);
	cgroup_v2_at(self, CG2("/", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)4 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup");
}

Test(paths_ports, cgroup_path_too_long_for_a_directory_is_no_cgroup)
{
	char self[PATH_MAX];
	struct hpshm__limit cg;

	long_cgroup(self, sizeof self, 20);
	strcat(self, "/");
	repeat(self + strlen(self), 'd', (size_t)PATH_MAX - 2 - strlen(self));
	cgroup_v2_at(self, CG2("/", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "a directory name beyond PATH_MAX is not read at all");
}

Test(paths_ports, cgroup_deep_path_is_shown_by_its_end)
{
	char self[512], rel[600];
	struct hpshm__limit cg;
	size_t n;

	long_cgroup(self, sizeof self, 2);
	cgroup_v2_at(self, CG2("/", "/sys/fs/cgroup"));
	snprintf(rel, sizeof rel, "sys/fs/cgroup%s/hugetlb.2MB.max", self);
	hpt_fakeroot_write(rel, "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	n = strlen(cg.path);
	cr_assert_eq(n, sizeof cg.path - 1);
	cr_assert_eq(strncmp(cg.path, "...", 3), 0, "%s", cg.path);
	cr_assert_eq(strcmp(cg.path + n - 201, self + strlen(self) - 201), 0, "the end is kept: %s", cg.path);
}

Test(paths_ports, cgroup_root_that_only_starts_like_our_path_does_not_hold_it)
{
	struct hpshm__limit cg;

	/* root /a is not an ancestor of /ab: the whole path is read under the point */
	cgroup_v2_at("/ab", CG2("/a", "/sys/fs/cgroup"));
	hpt_fakeroot_write("sys/fs/cgroup/ab/hugetlb.2MB.max", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/b/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/ab");
	cr_assert_eq(cg.limit, (uint64_t)2 * MIB);
}

Test(paths_ports, cgroup_v1_mounts_without_the_hugetlb_controller_are_passed_over)
{
	struct hpshm__limit cg;

	hpt_fakeroot_write("proc/self/cgroup", "4:hugetlb:/g\n");
	hpt_fakeroot_write("proc/self/mountinfo",
			   "31 1 0:27 / /sys/fs/cgroup/none rw - cgroup cgroup\n"
			   "31 1 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,hugetlbx\n"
			   "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/none/g/hugetlb.2MB.limit_in_bytes", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/cpu/g/hugetlb.2MB.limit_in_bytes", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.limit_in_bytes", "8388608\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 1);
	cr_assert_eq(cg.limit, (uint64_t)8 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/hugetlb/g");
}

Test(paths_ports, cgroup_v1_reservation_limit_that_binds_is_the_file_named)
{
	char buf[HPSHM_TEXT_MAX];

	hpt_fakeroot_write("proc/self/cgroup", "4:hugetlb:/g\n");
	hpt_fakeroot_write("proc/self/mountinfo", "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.limit_in_bytes", "16777216\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.rsvd.limit_in_bytes", "4194304\n");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 2 * MIB, 1, buf, sizeof buf), 1);
	cr_assert_str_eq(buf, "raise hugetlb.2MB.rsvd.limit_in_bytes to at least 8MiB in cgroup /sys/fs/cgroup/hugetlb/g");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 0, 1, buf, sizeof buf), 0, "no page size: no cgroup");
}

Test(paths_ports, cgroup_v1_reads_its_four_files)
{
	struct hpshm__limit cg;
	struct hpshm__limit l;

	hpt_fakeroot_write("proc/self/cgroup", "4:cpu,hugetlb:/g\n");
	hpt_fakeroot_write("proc/self/mountinfo",
			   "31 1 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
			   "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,cpu,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.limit_in_bytes", "16777216\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.usage_in_bytes", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.rsvd.limit_in_bytes", "8388608\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.rsvd.usage_in_bytes", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 1);
	cr_assert_eq(cg.limit, (uint64_t)16 * MIB);
	cr_assert_eq(cg.usage, (uint64_t)2 * MIB);
	cr_assert_eq(cg.rsvd_limit, (uint64_t)8 * MIB);
	cr_assert_eq(cg.rsvd_usage, (uint64_t)4 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/hugetlb/g");
	cr_assert_eq(hpshm__os_limit(2 * MIB, &l), 0);
	cr_assert_eq(l.version, 1);
	cr_assert_eq(l.rsvd_limit, (uint64_t)8 * MIB);
	cr_assert_str_eq(l.path, cg.path);
	cr_assert_eq(hpshm__os_fault_risk(4 * MIB, 2 * MIB), 0, "a reservation limit protects faults");
}

/* ==== advice.c and populate.c: the hints ==== */

static void cgroup_limit(const char *self, const char *limit)
{
	char rel[600];

	cgroup_v2_at(self, CG2("/", "/sys/fs/cgroup"));
	snprintf(rel, sizeof rel, "sys/fs/cgroup%s/hugetlb.2MB.max", self);
	hpt_fakeroot_write(rel, limit);
}

Test(paths_ports, pool_hint_for_no_bytes_still_counts_one_page)
{
	char buf[HPSHM_TEXT_MAX];

	cr_assert_null(hpshm__linux_hugetlb_hint(4 * MIB, 2 * MIB, NULL, 8));
	cr_assert_eq(hpshm__linux_hugetlb_hint(4 * MIB, 2 * MIB, buf, 0), buf);
	hpshm__linux_hugetlb_hint(0, 2 * MIB, buf, sizeof buf);
	cr_assert(strstr(buf, "at least 11 (the 1 2MiB page needed"), "%s", buf);
}

Test(paths_ports, pool_hint_without_a_page_size_lists_the_sizes_offered)
{
	char buf[HPSHM_TEXT_MAX];

	hpshm__linux_hugetlb_hint(4 * MIB, 0, buf, sizeof buf);
	cr_assert_str_eq(buf, "set huge_page_size to a size the kernel offers (sizes: 2MiB)");
}

Test(paths_ports, pool_hint_names_the_cgroup_when_the_pool_has_room)
{
	char buf[HPSHM_TEXT_MAX];

	hpt_fakeroot_set_pool(10, 10);
	cgroup_limit("/a", "4194304\n");
	hpshm__linux_hugetlb_hint(8 * MIB, 2 * MIB, buf, sizeof buf);
	cr_assert_str_eq(buf, "raise hugetlb.2MB.max to at least 8MiB in cgroup /sys/fs/cgroup/a");
}

Test(paths_ports, cgroup_advice_that_would_not_fit_leaves_the_path_out)
{
	char self[512], buf[200];

	long_cgroup(self, sizeof self, 1);
	cgroup_limit(self, "4194304\n");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 2 * MIB, 1, buf, sizeof buf), 1);
	cr_assert_str_eq(buf, "raise hugetlb.2MB.max of this process's cgroup to at least 8MiB");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 2 * MIB, 0, buf, sizeof buf), 1);
	cr_assert(strstr(buf, "this process's hugetlb cgroup allows 4MiB of 2MiB pages"), "%s", buf);
	cr_assert(!strstr(buf, "cccc"), "no part of the path: %s", buf);
}

Test(paths_ports, fault_risk_and_cgroup_probe_of_no_page_size_are_none)
{
	char buf[HPSHM_TEXT_MAX];
	int risk = 7;

	cgroup_limit("/a", "4194304\n");
	cr_assert_eq(hpshm__linux_hugetlb_fault_risk(8 * MIB, 0), 0);
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_probe(8 * MIB, 0, &risk, buf, sizeof buf), 0);
	cr_assert_eq(risk, 0);
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_probe(8 * MIB, 2 * MIB, &risk, buf, sizeof buf), 1);
	cr_assert_eq(risk, 1, "a fault-time limit without a reservation limit");
	cr_assert(strstr(buf, "hugetlb cgroup /sys/fs/cgroup/a allows 4MiB"), "%s", buf);
}

static int inj_errno_fallocate;
static int inj_fallocate(int fd, int mode, off_t off, off_t len)
{
	(void)fd;
	(void)mode;
	(void)off;
	(void)len;
	errno = inj_errno_fallocate;
	return -1;
}

static int inj_errno_madvise;
static int inj_madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_POPULATE_WRITE) {
		errno = inj_errno_madvise;
		return -1;
	}
	return real_linux.madvise(addr, len, advice);
}

/* Huge pages on a file make no fallocate (ports/linux/populate.c): the madvise names the limit. */
Test(paths_ports, populate_enomem_under_a_cgroup_limit_names_the_cgroup_file)
{
	static char page[64];
	hpshm_error err;
	unsigned methods = 9;

	cgroup_limit("/a", "4194304\n");
	hpshm__linux_sys.fallocate = inj_fallocate;
	hpshm__linux_sys.madvise = inj_madvise;
	inj_errno_fallocate = ENOSPC;
	inj_errno_madvise = ENOMEM;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(page, 8 * MIB, 2 * MIB, FILE_HANDLE(0), &HPT_ONE_THREAD, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "madvise");
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert_eq(methods, (unsigned)HPSHM_POPULATE_NONE);
	cr_assert_str_eq(err.hint, "raise hugetlb.2MB.max (now 4MiB) by at least 8MiB in cgroup /sys/fs/cgroup/a");
}

Test(paths_ports, populate_hint_with_a_cgroup_path_too_long_names_this_processs_cgroup)
{
	static char page[64];
	char self[512];
	hpshm_error err;
	unsigned methods;

	long_cgroup(self, sizeof self, 2);
	{
		char line[600], rel[600];

		snprintf(line, sizeof line, "3:hugetlb:%s\n", self);
		hpt_fakeroot_write("proc/self/cgroup", line);
		hpt_fakeroot_write("proc/self/mountinfo", "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n");
		snprintf(rel, sizeof rel, "sys/fs/cgroup/hugetlb%s/hugetlb.2MB.limit_in_bytes", self);
		hpt_fakeroot_write(rel, "4194304\n");
		snprintf(rel, sizeof rel, "sys/fs/cgroup/hugetlb%s/hugetlb.2MB.usage_in_bytes", self);
		hpt_fakeroot_write(rel, "4194304\n");
	}
	hpshm__linux_sys.madvise = inj_madvise;
	inj_errno_madvise = ENOMEM;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(page, 2 * MIB, 2 * MIB, FILE_HANDLE(0), &HPT_ONE_THREAD, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert_str_eq(err.hint,
			 "raise hugetlb.2MB.limit_in_bytes (now 4MiB) by at least 2MiB in this process's cgroup");
}

static int eintr_fallocate, eintr_madvise;   /* calls of the hooks below that fail with EINTR first */

static int inj_fallocate_eintr(int fd, int mode, off_t off, off_t len)
{
	if (eintr_fallocate > 0) {
		eintr_fallocate--;
		errno = EINTR;
		return -1;
	}
	return inj_fallocate(fd, mode, off, len);
}

static int inj_madvise_eintr(void *addr, size_t len, int advice)
{
	if (advice == MADV_POPULATE_WRITE && eintr_madvise > 0) {
		eintr_madvise--;
		errno = EINTR;
		return -1;
	}
	return inj_madvise(addr, len, advice);
}

Test(paths_ports, populate_calls_again_when_interrupted)
{
	static char page[64];
	hpshm_error err;
	unsigned methods = 0;

	hpshm__linux_sys.fallocate = inj_fallocate_eintr;
	hpshm__linux_sys.madvise = inj_madvise_eintr;
	inj_errno_fallocate = EOPNOTSUPP;
	inj_errno_madvise = EIO;
	eintr_fallocate = 2;
	eintr_madvise = 2;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(page, sizeof page, 4096, FILE_HANDLE(0), &HPT_ONE_THREAD, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_eq(eintr_fallocate + eintr_madvise, 0, "every interruption was retried");
	cr_assert_str_eq(err.call, "madvise", "fallocate's EINTR was retried to its real answer");
	cr_assert_eq(err.sys_errno, EIO, "madvise's EINTR was retried to its real answer");
}

Test(paths_ports, populate_efault_under_a_fault_time_cgroup_limit_says_so)
{
	static char page[64];
	hpshm_error err;
	unsigned methods;

	cgroup_limit("/a", "4194304\n");
	hpshm__linux_sys.madvise = inj_madvise;
	inj_errno_madvise = EFAULT;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(page, 8 * MIB, 2 * MIB, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err), HPSHM_EPOPULATE);
	cr_assert(strstr(err.message, "(a hugetlb cgroup limit applies at fault time)"), "%s", err.message);
	cr_assert(strstr(err.hint, "hugetlb.2MB.max"), "%s", err.hint);
}

Test(paths_ports, populate_touch_past_the_end_under_a_cgroup_limit_says_so)
{
	const size_t base = hpshm__port_base_page_size(), step = 2 * base;
	char self_limit[600];
	hpshm_error err;
	char *addr, name[16];
	unsigned methods;
	int fd;

	HPT_SKIP_UNDER_EMULATOR("qemu-user maps guest memory with a 2MiB host page (-p 2097152), so a shared "
				"mapping past the end of a file raises no SIGBUS");
	/* a page size above the base page, whose pages the cgroup limits at fault time */
	hpshm__linux_hugetlb_cgroup_size(step, name, sizeof name);
	cgroup_v2_at("/a", CG2("/", "/sys/fs/cgroup"));
	snprintf(self_limit, sizeof self_limit, "sys/fs/cgroup/a/hugetlb.%s.max", name);
	hpt_fakeroot_write(self_limit, "0\n");
	fd = memfd_create("hpt-ports-past", MFD_CLOEXEC);
	cr_assert_geq(fd, 0, "%s", strerror(errno));
	cr_assert_eq(ftruncate(fd, (off_t)step), 0);
	addr = mmap(NULL, 2 * step, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(addr, MAP_FAILED);
	hpshm__linux_sys.madvise = inj_madvise;
	inj_errno_madvise = EINVAL;   /* a kernel before 5.14: the guarded touch */
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(addr, 2 * step, step, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err), HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "touch");
	cr_assert(strstr(err.message, "SIGBUS on touch); a hugetlb cgroup limit applies at fault time"), "%s",
		  err.message);
	cr_assert(strstr(err.hint, name), "the hint names the cgroup file: %s", err.hint);
	munmap(addr, 2 * step);
	close(fd);
}

Test(paths_ports, populate_of_base_pages_counts_base_pages)
{
	static char page[64];
	hpshm_error err;
	char psz[32], want[64];
	unsigned methods;

	hpshm__linux_sys.madvise = inj_madvise;
	inj_errno_madvise = EFAULT;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_populate(page, sizeof page, hpshm__port_base_page_size(), HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err),
		     HPSHM_EPOPULATE);
	cr_assert_str_eq(err.call, "madvise");
	hpshm_size_format(hpshm__port_base_page_size(), psz, sizeof psz);
	snprintf(want, sizeof want, "the %s pages", psz);
	cr_assert(strstr(err.message, want), "%s", err.message);
	cr_assert_str_eq(err.hint, "free memory, or raise the memory limit of this process's cgroup");
}

/* ==== facts.c: what the tool and the bench read ==== */

Test(paths_ports, introspection_without_room_for_an_answer_gives_none)
{
	struct hpshm__pool p;

	cr_assert_eq(hpshm__os_pools(NULL, 2), 0);
	cr_assert_eq(hpshm__os_pools(&p, 0), 0);
	cr_assert_eq(hpshm__os_pool(2 * MIB, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__os_backing(&p, sizeof p, -1, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm__os_pool(GIB, &p), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__os_program_path(NULL, 64), HPSHM_EINVAL);
}

Test(paths_ports, introspection_hands_over_what_the_port_reads)
{
	struct hpshm__pool p[2];
	char buf[128];

	cr_assert_eq(hpshm__os_pools(p, 2), 1);
	cr_assert_eq(p[0].page_size, 2 * MIB);
	cr_assert_eq(p[0].total, 10ul);
	cr_assert_eq(p[0].free, 4ul);
	cr_assert_eq(hpshm__os_pool_available(&p[0]), 4ul);
	cr_assert_eq(hpshm__os_pool(2 * MIB, &p[1]), 0);
	cr_assert_eq(p[1].total, 10ul);
	cr_assert_eq(hpshm__os_default_page_size(), 2 * MIB);
	cr_assert_str_eq(hpshm__os_pool_knob(2 * MIB, buf, sizeof buf), "vm.nr_hugepages");
	cr_assert_str_eq(hpshm__os_pool_knob(GIB, buf, sizeof buf),
			 "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages");
	cr_assert_str_eq(hpshm__os_limit_size_name(GIB, buf, sizeof buf), "1GB");
	cr_assert_str_eq(hpshm__os_pool_source(), "/sys/kernel/mm/hugepages");
	cr_assert_str_eq(hpshm__os_huge_absent(), "");
	cgroup_limit("/a", "4194304\n");
	cr_assert_eq(hpshm__os_fault_risk(4 * MIB, 2 * MIB), 1);
}

Test(paths_ports, pool_resize_that_cannot_write_names_the_file_and_the_error)
{
	char why[512] = "";

	link_full("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
	cr_assert_eq(hpshm__os_pool_resize(2 * MIB, 42, why, sizeof why), -1);
	cr_assert(strstr(why, "cannot write 42 to ") && strstr(why, "hugepages-2048kB/nr_hugepages"), "%s", why);
	cr_assert(strstr(why, strerror(ENOSPC)), "the error is named: %s", why);
}

Test(paths_ports, thp_shmem_set_writes_the_knob_and_says_why_it_could_not)
{
	char why[512] = "", buf[64];

	drop("sys/kernel/mm/transparent_hugepage"); /* never write through the link */
	cr_assert_eq(hpshm__os_thp_shmem_set("advise", why, sizeof why), -1);
	cr_assert(strstr(why, "cannot open ") && strstr(why, strerror(ENOENT)), "%s", why);
	hpt_fakeroot_write("sys/kernel/mm/transparent_hugepage/shmem_enabled", "always [never]\n");
	cr_assert_eq(hpshm__os_thp_shmem_set("advise", why, sizeof why), 0, "%s", why);
	cr_assert_eq(hpshm__linux_read_file("/sys/kernel/mm/transparent_hugepage/shmem_enabled", buf, sizeof buf), 6L);
	cr_assert_str_eq(buf, "advise");
	link_full("sys/kernel/mm/transparent_hugepage/shmem_enabled");
	cr_assert_eq(hpshm__os_thp_shmem_set("never", why, sizeof why), -1);
	cr_assert(strstr(why, "cannot write never to ") && strstr(why, strerror(ENOSPC)), "%s", why);
}

Test(paths_ports, mapping_facts_without_smaps_or_maps_are_unknown)
{
	struct hpshm__backing b;
	char buf[128];
	int x = 0;

	drop("proc/self/smaps");
	drop("proc/self/maps");
	cr_assert_eq(hpshm__os_thp_kib(&x), -1L);
	cr_assert_eq(hpshm__os_backing(&x, sizeof x, -1, &b), HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(b.source, "unverified");
	cr_assert_eq(hpshm__port_maps_line(&x, sizeof x, buf, sizeof buf), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__os_mapping_len(&x), 0u);
}

Test(paths_ports, page_table_and_available_memory_out_of_range_are_unknown)
{
	replace("proc/self/status", "Name:\tx\nVmPTE:\t9300000000000000000 kB\n");
	if (sizeof(long) == 8)
		cr_assert_eq(hpshm__os_page_table_kib(), -1L, "beyond a long");
	replace("proc/self/status", "Name:\tx\nVmPTE:\t99999999999999999999999 kB\n");
	cr_assert_eq(hpshm__os_page_table_kib(), -1L, "beyond 64 bits");
	replace("proc/meminfo", "MemAvailable: 18014398509481984 kB\n");
	cr_assert_eq(hpshm__os_mem_available(), 0u, "bytes beyond 64 bits");
	replace("proc/meminfo", "MemAvailable: 18014398509481983 kB\n");
	cr_assert_eq(hpshm__os_mem_available(), (uint64_t)18014398509481983ull * 1024);
	replace("proc/meminfo", "Hugepagesize: 0 kB\n");
	cr_assert_eq(hpshm__port_default_huge_page_size(), 0u, "a size of 0 is none");
}

/* ==== verify.c: maps and smaps lines ==== */

Test(paths_ports, maps_lines_out_of_format_are_not_ranges)
{
	uintptr_t lo = 1, hi = 2;
	char buf[128];

	cr_assert_eq(hpshm__linux_maps_range("Size:  4 kB", &lo, &hi), 0);
	cr_assert_eq(hpshm__linux_maps_range("60000000 rw-p", &lo, &hi), 0, "no dash");
	cr_assert_eq(hpshm__linux_maps_range("60000000-60200000x rw-p", &lo, &hi), 0, "no space after the end");
	cr_assert_eq(lo, 1u);
	cr_assert_eq(hpshm__linux_maps_range("60000000-60200000 rw-p", &lo, &hi), 1);
	cr_assert_eq(lo, (uintptr_t)0x60000000);
	cr_assert_eq(hi, (uintptr_t)0x60200000);
	replace("proc/self/maps", "garbage line\n60000000-60200000 rw-s 00000000 00:10 42 /x\n");
	cr_assert_eq(hpshm__port_maps_line((void *)0x60000000, 0, buf, sizeof buf), 0);
	cr_assert(strstr(buf, "/x"), "%s", buf);
}

Test(paths_ports, vmas_without_a_page_size_leave_it_to_the_others)
{
	struct hpshm__backing b;

	replace("proc/self/smaps",
		"60000000-60200000 rw-s 00000000 00:10 42 /x\nKernelPageSize: 0 kB\nVmFlags: rd ht\n"
		"60200000-60400000 rw-s 00000000 00:10 42 /x\nKernelPageSize: 4 kB\nVmFlags: rd\n");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), HPSHM_EUNAVAILABLE,
		     "a VMA of page size 0 says nothing");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 4 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, (size_t)4096, "the VMA that states its size decides");
	cr_assert_eq(b.huge, 0);
}

static long fstatfs_bsize;       /* what inj_fstatfs reports as hugetlbfs' page size */

static int inj_fstatfs(int fd, struct statfs *buf)
{
	int rc = real_linux.fstatfs(fd, buf);

	if (rc == 0) {
		buf->f_type = (__typeof__(buf->f_type))HUGETLBFS_MAGIC;
		buf->f_bsize = (__typeof__(buf->f_bsize))fstatfs_bsize;
	}
	return rc;
}

Test(paths_ports, backing_of_a_descriptor_is_its_file_systems_when_smaps_knows_nothing)
{
	struct hpshm__backing b;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), closed;

	cr_assert_geq(fd, 0);
	closed = dup(fd);
	close(closed);
	cr_assert_eq(hpshm__port_verify_backing(NULL, 0, FILE_HANDLE(fd), &b), HPSHM_EUNAVAILABLE, "not hugetlbfs: no size");
	cr_assert_eq(hpshm__port_verify_backing(NULL, 0, FILE_HANDLE(closed), &b), HPSHM_EUNAVAILABLE, "fstatfs fails");
	hpshm__linux_sys.fstatfs = inj_fstatfs;
	fstatfs_bsize = 0;
	cr_assert_eq(hpshm__port_verify_backing(NULL, 0, FILE_HANDLE(fd), &b), HPSHM_EUNAVAILABLE, "hugetlbfs without a size");
	fstatfs_bsize = (long)(2 * MIB);
	cr_assert_eq(hpshm__port_verify_backing(NULL, 0, FILE_HANDLE(fd), &b), 0);
	cr_assert_str_eq(b.source, "fstatfs");
	cr_assert_eq(b.page_size, 2 * MIB);
	cr_assert_eq(b.huge, 1);
	close(fd);
}

Test(paths_ports, maps_line_of_a_range_that_wraps_looks_at_its_first_byte)
{
	char buf[128];

	replace("proc/self/maps", "60000000-60200000 rw-s 00000000 00:10 42 /x\n");
	cr_assert_eq(hpshm__port_maps_line((void *)(UINTPTR_MAX - 10), 100, buf, sizeof buf), HPSHM_EUNAVAILABLE);
	cr_assert_eq(hpshm__port_maps_line((void *)0x601fffff, SIZE_MAX, buf, sizeof buf), 0);
	cr_assert(strstr(buf, "/x"), "%s", buf);
}

Test(paths_ports, ht_inside_another_flag_is_not_hugetlb)
{
	struct hpshm__backing b;

	replace("proc/self/smaps", "60000000-60200000 rw-s 00000000 00:10 42 /x\nKernelPageSize: 2048 kB\n"
				   "VmFlags: rd xht htx\n");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, 0, "only a flag of its own says hugetlb");
	replace("proc/self/smaps", "60000000-60200000 rw-s 00000000 00:10 42 /x\nKernelPageSize: 2048 kB\n"
				   "VmFlags: rd xht ht\n");
	cr_assert_eq(hpshm__port_verify_backing((void *)0x60000000, 2 * MIB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, 1);
}

/* ==== linux/process.c and linux/sys.c ==== */

Test(paths_ports, process_start_of_a_stat_line_out_of_format_is_unknown)
{
	char stat[512];

	/* a command name with spaces and parentheses; start time is field 22 */
	snprintf(stat, sizeof stat, "424242 (a) b) S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %s 1000 1\n",
		 "987654");
	replace("proc/424242/stat", stat);
	cr_assert_eq(hpshm__port_process_start(424242), 987654u);
	cr_assert_eq(hpshm__port_process_alive(424242, 987654), 1);
	cr_assert_eq(hpshm__port_process_alive(424242, 5), 0, "another process under a recycled pid");
	cr_assert_eq(hpshm__port_process_alive(424242, 0), -1, "no start time to compare");
	replace("proc/424242/stat", "424242 (a) S 1 1 1\n");
	cr_assert_eq(hpshm__port_process_start(424242), 0u, "too few fields");
	/* a stat that is there but cannot be read is no proof of death (a resizable segment's
	 * owner would free the process's slot and give back its pages) */
	cr_assert_eq(hpshm__port_process_alive(424242, 987654), -1, "a stat out of format is no proof of death");
	replace("proc/424242/stat", "424242 (a) S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 x 1\n");
	cr_assert_eq(hpshm__port_process_start(424242), 0u, "a start time that is not a number");
	replace("proc/424242/stat", "424242 a S 1\n");
	cr_assert_eq(hpshm__port_process_start(424242), 0u, "no command name");
	cr_assert_eq(hpshm__port_process_alive(0, 5), 0);
	/* no /proc/<pid> at all: gone */
	cr_assert_eq(hpshm__port_process_alive(424243, 987654), 0, "a pid /proc does not list");
}

/* ==== linux/sysvipc.c: the kernel's list of SysV segments, and creators' start times ==== */

/* What the walk saw, in order. */
struct shm_seen {
	struct hpshm__linux_shm e[4]; /* the entries passed to the callback */
	int                     n;    /* how many */
	int                     stop; /* stop the walk after this many (0: never) */
};

static int shm_record(void *user, const struct hpshm__linux_shm *e)
{
	struct shm_seen *w = user;

	if (w->n < 4)
		w->e[w->n] = *e;
	w->n++;
	return w->stop != 0 && w->n >= w->stop;
}

static FILE *h_fopen_shm_eacces(const char *path, const char *mode)
{
	size_t n = strlen(path), k = strlen("/proc/sysvipc/shm");

	if (n >= k && strcmp(path + n - k, "/proc/sysvipc/shm") == 0) {
		errno = EACCES;
		return NULL;
	}
	return real_sys.fopen(path, mode);
}

Test(paths_ports, sysv_list_of_the_fake_tree_gives_each_segment_and_skips_what_is_none)
{
	char list[2048], longline[700];
	struct hpshm__linux_shm e;
	struct shm_seen w;

	/* A segment's fields, then blanks past the reader's line buffer: half a line is no entry. */
	memcpy(repeat(longline, ' ', sizeof longline - 1), "5 5 600 1 2 3 4 5", strlen("5 5 600 1 2 3 4 5"));
	snprintf(list, sizeof list,
		 "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid\n"
		 "1207959552      32769   600               4194232  4242  4343      2  1000  1000  1000  1000 0 0 0\n"
		 "%s7\n"
		 "not a segment\n"
		 "         0      98310  1600               2097080 12345     0      0     0     0     0     0 0 0 0",
		 longline);
	drop("proc/sysvipc"); /* a link to the real list: the test writes its own */
	hpt_fakeroot_write("proc/sysvipc/shm", list);

	memset(&w, 0, sizeof w);
	cr_assert_eq(hpshm__linux_shm_each(shm_record, &w), 0);
	cr_assert_eq(w.n, 2, "the heading, an overlong line and a line of text are no segments");
	cr_assert_eq(w.e[0].key, 0x48000000LL);
	cr_assert_eq(w.e[0].id, 32769);
	cr_assert_eq(w.e[0].perms, 0600u, "perms are octal");
	cr_assert_eq(w.e[0].size, 4194232u);
	cr_assert_eq(w.e[0].cpid, 4242);
	cr_assert_eq(w.e[0].lpid, 4343);
	cr_assert_eq(w.e[0].nattch, 2u);
	cr_assert_eq(w.e[0].uid, 1000u);
	cr_assert_eq(w.e[1].key, 0LL);
	cr_assert_eq(w.e[1].id, 98310, "the last line needs no newline");
	cr_assert_eq(w.e[1].perms, 01600u, "SHM_DEST is in the perms");

	memset(&w, 0, sizeof w);
	w.stop = 1;
	cr_assert_eq(hpshm__linux_shm_each(shm_record, &w), 0);
	cr_assert_eq(w.n, 1, "a non-zero answer stops the walk");

	cr_assert_eq(hpshm__linux_shm_find(98310, &e), 0);
	cr_assert_eq(e.size, 2097080u);
	cr_assert_eq(e.cpid, 12345);
	cr_assert_eq(hpshm__linux_shm_find(5, &e), -1, "a segment on an overlong line is not listed");
	cr_assert_eq(hpshm__linux_shm_find(4242, &e), -1, "a pid is no id");

	hpshm__posix_sys.fopen = h_fopen_shm_eacces;
	memset(&w, 0, sizeof w);
	cr_assert_eq(hpshm__linux_shm_each(shm_record, &w), HPSHM_EIO, "an unreadable list is an error");
	cr_assert_eq(hpshm__linux_shm_find(98310, &e), -1);
	hpshm__posix_sys.fopen = real_sys.fopen;

	drop("proc/sysvipc/shm");
	memset(&w, 0, sizeof w);
	cr_assert_eq(hpshm__linux_shm_each(shm_record, &w), 0, "no list: a kernel without SysV IPC");
	cr_assert_eq(w.n, 0);
}

Test(paths_ports, process_started_adds_its_ticks_to_the_boot_time_of_the_fake_tree)
{
	char stat[512];
	long hz = sysconf(_SC_CLK_TCK);

	cr_assert_gt(hz, 0);
	snprintf(stat, sizeof stat, "424242 (a) S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %ld 1000 1\n", 90 * hz);
	replace("proc/424242/stat", stat);
	replace("proc/stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 42\n");
	cr_assert_eq(hpshm__linux_boot_time(), (time_t)1700000000);
	cr_assert_eq(hpshm__linux_process_started(424242), (time_t)1700000090);
	cr_assert_eq(hpshm__linux_process_started(424243), (time_t)0, "no such process");
	replace("proc/stat", "cpu  1 2 3 4\nprocesses 42\n");
	cr_assert_eq(hpshm__linux_boot_time(), (time_t)0, "no btime line");
	cr_assert_eq(hpshm__linux_process_started(424242), (time_t)0, "without a boot time, no time of day");
}

Test(paths_ports, pick_address_refuses_an_alignment_that_is_no_power_of_two)
{
	void *p = NULL;

	cr_assert_eq(hpshm__port_pick_address(2 * MIB, 0, &p), HPSHM_EINVAL);
	cr_assert_eq(hpshm__port_pick_address(2 * MIB, 3 * MIB, &p), HPSHM_EINVAL);
	cr_assert_eq(hpshm__port_pick_address(SIZE_MAX - MIB, 2 * MIB, &p), HPSHM_EINVAL);
	cr_assert_null(p);
}

Test(paths_ports, huge_bits_are_log2_of_a_power_of_two_only)
{
	cr_assert_eq(hpshm__linux_huge_bits(0), 0u);
	cr_assert_eq(hpshm__linux_huge_bits(3 * MIB), 0u);
	cr_assert_eq(hpshm__linux_huge_bits(2 * MIB), 21u << HPSHM__HUGE_SHIFT);
	cr_assert_eq(hpshm__linux_huge_bits(GIB), 30u << HPSHM__HUGE_SHIFT);
}

/* ==== random: getrandom, /dev/urandom, the clock ==== */

static unsigned getrandom_calls;
static int getrandom_mode;    /* 0: EINTR, 1: 4 bytes of 0xaa, 2: ENOSYS */

static ssize_t inj_getrandom(void *buf, size_t len, unsigned flags)
{
	(void)flags;
	getrandom_calls++;
	if (getrandom_mode == 1 && len >= 4) {
		memset(buf, 0xaa, 4);
		return 4;
	}
	errno = getrandom_mode == 0 ? EINTR : ENOSYS;
	return -1;
}

Test(paths_ports, nonces_come_from_urandom_when_getrandom_is_interrupted_or_short)
{
	uint64_t a, b;

	hpshm__linux_sys.getrandom = inj_getrandom;
	getrandom_mode = 0;
	a = hpshm__port_random64();
	getrandom_mode = 1;
	b = hpshm__port_random64();
	cr_assert_eq(getrandom_calls, 2u);
	cr_assert_neq(a, b);
	cr_assert_neq(b & 0xffffffffu, 0xaaaaaaaau, "the short answer's bytes are not the nonce");
}

Test(paths_ports, nonces_fall_back_to_the_clock_when_no_file_can_be_opened)
{
	struct rlimit old, none;
	uint64_t a, b, c;
	int fd;

	hpshm__linux_sys.getrandom = inj_getrandom;
	getrandom_mode = 2;
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	none = old;
	none.rlim_cur = 0;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &none), 0, "%s", strerror(errno));
	fd = open("/dev/urandom", O_RDONLY);
	a = hpshm__port_random64();
	b = hpshm__posix_random64();
	c = hpshm__port_random64();
	(void)setrlimit(RLIMIT_NOFILE, &old);
	cr_assert_eq(fd, -1, "the limit did not stop the open");
	cr_assert_neq(a, b);
	cr_assert_neq(b, c);
	cr_assert_neq(a, c);
	cr_assert_eq(getrandom_calls, 2u);
}

/* ==== posix/touch.c: one guarded touch at a time ==== */

struct long_touch {
	char      *addr;    /* 64 MiB, touched byte by byte: long enough to be caught in */
	size_t     len;
	atomic_int rc;      /* what the touch returned */
};

static void *long_touch_run(void *arg)
{
	struct long_touch *t = arg;
	size_t bad = 0;

	atomic_store(&t->rc, hpshm__posix_touch(t->addr, t->len, 1, &bad));
	return NULL;
}

Test(paths_ports, touches_in_two_threads_take_turns_and_leave_the_programs_sigbus_action, .timeout = 60)
{
	struct long_touch t = { .len = (size_t)64 << 20 };
	struct sigaction prog, cur;
	char page[64] = "kept";
	pthread_t th;
	size_t bad = 1;
	int seen = 0;

	/* the program's action: the default, or a sanitizer's handler */
	cr_assert_eq(sigaction(SIGBUS, NULL, &prog), 0);
	t.addr = mmap(NULL, t.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(t.addr, MAP_FAILED);
	atomic_store(&t.rc, -2);
	cr_assert_eq(pthread_create(&th, NULL, long_touch_run, &t), 0);
	/* wait until the other thread's touch holds the guard (its handler is installed) */
	for (int i = 0; i < 1000000 && !seen; i++) {
		if (sigaction(SIGBUS, NULL, &cur) == 0 && cur.sa_handler != prog.sa_handler)
			seen = 1;
		else
			sched_yield();
	}
	/* a touch now waits its turn: were it to start at once, it would overwrite the action
	 * the other saved with the other's handler, which the other then puts back when done */
	cr_assert_eq(hpshm__posix_touch(page, sizeof page, sizeof page, &bad), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&t.rc), 0);
	cr_assert_eq(bad, sizeof page);
	cr_assert_str_eq(page, "kept");
	cr_assert_eq(sigaction(SIGBUS, NULL, &cur), 0);
	cr_assert(cur.sa_handler == prog.sa_handler, "the program's action is back after both touches");
	cr_assert_eq(munmap(t.addr, t.len), 0);
	if (!seen)
		HPT_SKIP("the other thread's touch was over before this one started: nothing overlapped");
}

/* ==== posix/sys.c: the close-on-exec fopen ==== */

Test(paths_ports, fopen_opens_close_on_exec_in_every_mode_and_refuses_others)
{
	char path[128], line[32];
	FILE *f;

	snprintf(path, sizeof path, "%s/f", scratch_dir());
	f = hpshm__port_fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert(fcntl(fileno(f), F_GETFD) & FD_CLOEXEC);
	fputs("one\n", f);
	fclose(f);
	f = hpshm__port_fopen(path, "a");
	cr_assert_not_null(f);
	cr_assert(fcntl(fileno(f), F_GETFD) & FD_CLOEXEC);
	fputs("two\n", f);
	fclose(f);
	f = hpshm__port_fopen(path, "a+");
	cr_assert_not_null(f);
	fputs("three\n", f);
	fclose(f);
	f = hpshm__port_fopen(path, "r+");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof line, f));
	cr_assert_str_eq(line, "one\n");
	cr_assert_not_null(fgets(line, sizeof line, f));
	cr_assert_str_eq(line, "two\n", "\"a\" appended");
	cr_assert_not_null(fgets(line, sizeof line, f));
	cr_assert_str_eq(line, "three\n");
	fclose(f);
	f = hpshm__port_fopen(path, "w+");
	cr_assert_not_null(f);
	cr_assert_null(fgets(line, sizeof line, f), "\"w+\" truncated");
	fclose(f);
	errno = 0;
	cr_assert_null(hpshm__port_fopen(path, "x"));
	cr_assert_eq(errno, EINVAL);
	unlink(path);
	errno = 0;
	cr_assert_null(hpshm__port_fopen(path, "r"));
	cr_assert_eq(errno, ENOENT);
}

/* ==== posix/process.c: spawn, wait, descriptors, addresses ==== */

static char true_name[] = "true";
static char *const true_argv[] = { true_name, NULL };

/* An executable file of content in dir. */
static void write_program(const char *dir, const char *name, const char *content)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(content, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, 0755), 0);
}

Test(paths_ports, spawn_of_an_empty_or_overlong_name_is_refused_before_fork)
{
	struct hpshm__process child;
	char name[PATH_MAX + 16];
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("", true_argv, NULL, NULL, 0, NULL, 0, &child, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, ENOENT);
	cr_assert(strstr(err.message, "(searched PATH)"), "%s", err.message);
	repeat(name, 'n', sizeof name - 1);
	name[0] = '/';
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn(name, true_argv, NULL, NULL, 0, NULL, 0, &child, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, ENAMETOOLONG);
	cr_assert_str_eq(err.call, "execve");
	cr_assert_str_eq(err.hint, "check the program's path");
}

Test(paths_ports, spawn_that_finds_only_a_directory_in_path_reports_eacces)
{
	struct hpshm__process child;
	char sub[128];
	hpshm_error err;

	snprintf(sub, sizeof sub, "%s/hpt-prog", scratch_dir());
	cr_assert_eq(mkdir(sub, 0755), 0);
	setenv("PATH", scratch, 1);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("hpt-prog", true_argv, NULL, NULL, 0, NULL, 0, &child, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, EACCES, "errno %d: %s", err.sys_errno, err.message);
	cr_assert_str_eq(err.hint, "give the program's full path, or add its directory to PATH");
}

Test(paths_ports, spawn_runs_from_an_empty_path_entry_and_skips_one_too_long, .timeout = 30)
{
	struct hpshm__process child;
	char path[PATH_MAX + 64];
	hpshm_error err;
	int status = -1;

	write_program(scratch_dir(), "hpt-prog", "#!/bin/sh\nexit 7\n");
	cr_assert_eq(chdir(scratch), 0);
	path[0] = '/';
	repeat(path + 1, 'd', PATH_MAX + 10);
	strcat(path, "::/nonexistent");
	setenv("PATH", path, 1);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("hpt-prog", true_argv, NULL, NULL, 0, NULL, 0, &child, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm__port_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, 7, "the program in the current directory ran");
}

Test(paths_ports, spawn_with_path_unset_searches_the_systems_default_path, .timeout = 30)
{
	struct hpshm__process child;
	hpshm_error err;
	int status = -1;

	unsetenv("PATH");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("true", true_argv, NULL, NULL, 0, NULL, 0, &child, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm__port_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, 0);
}

Test(paths_ports, spawn_of_a_file_the_kernel_cannot_run_reports_the_exec_errno, .timeout = 30)
{
	struct hpshm__process child;
	char prog[128];
	hpshm_error err;

	static char env0[] = "HPT=1";
	char *const envp[] = { env0, NULL };
	intptr_t inherit[2];
	int closed;

	write_program(scratch_dir(), "garbage", "\x7f" "not a program\n");
	snprintf(prog, sizeof prog, "%s/garbage", scratch);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn(prog, true_argv, NULL, NULL, 0, NULL, 0, &child, &err), HPSHM_ESYS);
	cr_assert_str_eq(err.call, "execve");
	cr_assert_eq(err.sys_errno, ENOEXEC, "errno %d: %s", err.sys_errno, err.message);
	cr_assert(strstr(err.message, prog), "%s", err.message);
	/* the same with an environment and descriptors to keep, one of them closed */
	closed = dup(0);
	cr_assert_geq(closed, 0);
	close(closed);
	inherit[0] = 0;
	inherit[1] = closed;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn(prog, true_argv, envp, inherit, 2, NULL, 0, &child, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, ENOEXEC, "errno %d: %s", err.sys_errno, err.message);
	cr_assert(fcntl(0, F_GETFD) >= 0, "the parent's descriptor is untouched");
}

Test(paths_ports, spawn_without_a_free_descriptor_names_the_limit)
{
	struct hpshm__process child;
	struct rlimit old, low;
	hpshm_error err;
	int fd, rc;

	fd = dup(0);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)fd;   /* the lowest free descriptor is beyond the limit */
	memset(&err, 0, sizeof err);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0, "%s", strerror(errno));
	rc = hpshm__port_spawn("/bin/true", true_argv, NULL, NULL, 0, NULL, 0, &child, &err);
	(void)setrlimit(RLIMIT_NOFILE, &old);
	cr_assert_eq(rc, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "pipe");
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert_str_eq(err.hint, "raise the descriptor limit (ulimit -n)");
}

Test(paths_ports, spawn_when_fork_is_refused_names_the_process_limit, .timeout = 30)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		HPT_SKIP("needs root to run as another user with no processes allowed");
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		struct hpshm__process child;
		struct rlimit none = { 0, 0 };
		hpshm_error err;
		int rc;

		/* RLIMIT_NPROC binds a real user other than root; the saved uid brings root back
		 * for the coverage data */
		if (setrlimit(RLIMIT_NPROC, &none) != 0 || setresuid(65534, 65534, 0) != 0)
			PORTS_CHILD_EXIT(10);
		memset(&err, 0, sizeof err);
		rc = hpshm__port_spawn("/bin/true", true_argv, NULL, NULL, 0, NULL, 0, &child, &err);
		if (setresuid(0, 0, 0) != 0)
			PORTS_CHILD_EXIT(11);
		if (rc != HPSHM_ESYS)
			PORTS_CHILD_EXIT(12);
		if (strcmp(err.call, "fork") != 0 || err.sys_errno != EAGAIN)
			PORTS_CHILD_EXIT(13);
		if (!strstr(err.hint, "ulimit -u"))
			PORTS_CHILD_EXIT(14);
		PORTS_CHILD_EXIT(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed (10 setresuid, 11 back to root, 12 code, 13 call, 14 hint)",
		     WEXITSTATUS(status));
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

Test(paths_ports, wait_goes_on_after_a_signal_interrupts_it, .timeout = 30)
{
	static char sh[] = "sh", c[] = "-c", cmd[] = "sleep 1";
	static char *const argv[] = { sh, c, cmd, NULL };
	struct itimerval every = { { 0, 50000 }, { 0, 50000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa, old;
	struct hpshm__process child;
	hpshm_error err;
	int status = -1, rc;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;   /* no SA_RESTART: waitpid returns EINTR */
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGALRM, &sa, &old), 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("/bin/sh", argv, NULL, NULL, 0, NULL, 0, &child, &err), 0, "%s", err.message);
	cr_assert_eq(setitimer(ITIMER_REAL, &every, NULL), 0);
	rc = hpshm__port_wait(&child, &status, &err);
	(void)setitimer(ITIMER_REAL, &off, NULL);
	(void)sigaction(SIGALRM, &old, NULL);
	cr_assert_eq(rc, 0, "%s", err.message);
	cr_assert_eq(status, 0);
	cr_assert_gt(alarms, 0, "no signal came while waiting");
}

Test(paths_ports, wait_reports_a_child_killed_by_a_signal_as_128_plus_the_signal, .timeout = 30)
{
	static char sh[] = "sh", c[] = "-c", cmd[] = "kill -9 $$";
	static char *const argv[] = { sh, c, cmd, NULL };
	struct hpshm__process child;
	hpshm_error err;
	int status = -1;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_spawn("/bin/sh", argv, NULL, NULL, 0, NULL, 0, &child, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm__port_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, 128 + SIGKILL);
}

Test(paths_ports, wait_for_a_process_that_is_no_child_names_waitpid)
{
	struct hpshm__process other = { .pid = 1 };
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_wait(&other, NULL, &err), HPSHM_ESYS);
	cr_assert_str_eq(err.call, "waitpid");
	cr_assert_eq(err.sys_errno, ECHILD);
}

Test(paths_ports, handle_inheritable_refuses_a_negative_or_closed_descriptor)
{
	hpshm_error err;
	int fd;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_handle_inheritable(-1, &err), HPSHM_EINVAL);
	cr_assert(strstr(err.message, "-1 is not a descriptor"), "%s", err.message);
	if (sizeof(intptr_t) > sizeof(int)) {
		intptr_t big = INT_MAX;

		big += 1;   /* run only where an intptr_t holds more than an int */
		cr_assert_eq(hpshm__port_handle_inheritable(big, &err), HPSHM_EINVAL, "beyond an int");
	}
	fd = dup(0);
	cr_assert_geq(fd, 0);
	close(fd);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm__port_handle_inheritable(fd, &err), HPSHM_ESYS);
	cr_assert_str_eq(err.call, "fcntl");
	cr_assert_eq(err.sys_errno, EBADF);
}

/* mmap that places the first hint elsewhere and refuses the second; every address asked for. */
static void *mmap_asked[8];
static int mmap_calls, munmap_calls;

static void *inj_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (mmap_calls < 8)
		mmap_asked[mmap_calls] = addr;
	mmap_calls++;
	if (addr != NULL && mmap_calls == 1)
		return real_sys.mmap(NULL, len, prot, flags, fd, off);   /* the hint is taken */
	if (addr != NULL) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return real_sys.mmap(addr, len, prot, flags, fd, off);
}

static int inj_munmap(void *addr, size_t len)
{
	munmap_calls++;
	return real_sys.munmap(addr, len);
}

Test(paths_ports, pick_address_tries_the_next_hint_when_one_is_taken_then_lets_the_kernel_choose)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p = NULL;

	if (sizeof(uintptr_t) < 8)
		HPT_SKIP("the hints beyond 4 GiB are left out of a 32-bit address space");
	hpshm__posix_sys.mmap = inj_mmap;
	hpshm__posix_sys.munmap = inj_munmap;
	cr_assert_eq(hpshm__posix_pick_address(4 * MIB, 2 * MIB, flags, -1, NULL, &p), 0);
	cr_assert_eq(mmap_calls, 3);
	cr_assert_eq((uintptr_t)mmap_asked[0], (uintptr_t)0x600000000000ULL);
	cr_assert_eq((uintptr_t)mmap_asked[1], (uintptr_t)0x500000000000ULL, "the next hint after one taken");
	cr_assert_null(mmap_asked[2], "a refused hint ends the hints: the kernel chooses");
	cr_assert_eq(munmap_calls, 2, "the misplaced span and the reservation are given back");
	cr_assert_eq((uintptr_t)p % (2 * MIB), 0u, "aligned: %p", p);
	cr_assert_eq(hpt_is_mapped(p, 4 * MIB), 0, "the reservation was given back");
}

/* The first hint is shown taken (as /proc/self/maps shows an emulator's own reservation). */
static int first_hint_busy(uintptr_t at, size_t len)
{
	/* volatile: on a 32-bit build the 64-bit hint is never an address, and the compiler says so */
	static volatile unsigned long long far = 0x600000000000ULL, low = 0x10000000ULL;

	(void)len;
	return at != 0 && ((unsigned long long)at == far || (unsigned long long)at == low);
}

Test(paths_ports, pick_address_passes_over_a_hint_the_system_shows_taken_without_asking_mmap)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p = NULL;

	hpshm__posix_sys.mmap = inj_mmap;
	hpshm__posix_sys.munmap = inj_munmap;
	cr_assert_eq(hpshm__posix_pick_address(4 * MIB, 2 * MIB, flags, -1, first_hint_busy, &p), 0);
	cr_assert_geq(mmap_calls, 1);
	for (int i = 0; i < mmap_calls && i < (int)(sizeof mmap_asked / sizeof mmap_asked[0]); i++)
		cr_assert(!first_hint_busy((uintptr_t)mmap_asked[i], 0), "mmap was asked for the taken hint %p",
			  mmap_asked[i]);
	cr_assert(!first_hint_busy((uintptr_t)p, 0), "picked the taken hint %p", p);
	cr_assert_eq((uintptr_t)p % (2 * MIB), 0u, "aligned: %p", p);
	cr_assert_eq(hpt_is_mapped(p, 4 * MIB), 0, "the reservation was given back");
}

Test(paths_ports, pick_address_of_a_span_no_hint_can_hold_is_enomem)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p = NULL;

	hpshm__posix_sys.mmap = inj_mmap;
	hpshm__posix_sys.munmap = inj_munmap;
	cr_assert_eq(hpshm__posix_pick_address(SIZE_MAX - 8 * MIB, 2 * MIB, flags, -1, NULL, &p), HPSHM_ENOMEM);
	cr_assert_eq(mmap_calls, 1, "no hint leaves room for the span: only the kernel is asked");
	cr_assert_null(mmap_asked[0]);
	cr_assert_null(p);
}
