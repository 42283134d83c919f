/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_mounts.c -- how the hugetlbfs provider chooses its directory, and how the
 * hugetlb cgroup limits are found, on a fake sysroot (fakes.h).
 *
 * /proc/self/mountinfo, /proc/self/cgroup and the cgroup files are the fake tree's, so every
 * layout (escaped mount points, stacked mounts, mounts without pagesize=, a cgroup namespace,
 * v1 and v2) is made on demand.  Whether a directory is on hugetlbfs is asked with statfs()
 * through hpshm__linux_sys, so a test makes a temporary directory look like a mount of the
 * page size it wants.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

/* Room for the mounts a test's table holds (the library itself has no bound). */
#define HPT_MOUNTS 16

#define MIB HPT_MIB

static struct hpshm__linux_syscalls real_linux;
static const char *fake_mount = "";  /* a directory statfs() reports as hugetlbfs */
static long fake_mount_bsize;        /* with this page size */
static int  fake_mount_on;           /* 0: statfs() tells the truth about it */
static hpshm_config *cfg;

/* fstatfs() of a file on the fake mount's file system says hugetlbfs too. */
static int inj_fstatfs(int fd, struct statfs *buf)
{
	struct stat a, b;
	int rc = real_linux.fstatfs(fd, buf);

	if (rc == 0 && fake_mount_on && fstat(fd, &a) == 0 && stat(fake_mount, &b) == 0 && a.st_dev == b.st_dev) {
		buf->f_type = (__typeof__(buf->f_type))HUGETLBFS_MAGIC;
		buf->f_bsize = (__typeof__(buf->f_bsize))fake_mount_bsize;
	}
	return rc;
}

static int inj_statfs(const char *path, struct statfs *buf)
{
	int rc = real_linux.statfs(path, buf);

	if (rc == 0 && fake_mount_on && strcmp(path, fake_mount) == 0) {
		buf->f_type = (__typeof__(buf->f_type))HUGETLBFS_MAGIC;
		buf->f_bsize = (__typeof__(buf->f_bsize))fake_mount_bsize;
	}
	return rc;
}

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void mounts_fini_work(void)
{
	hpshm__linux_sys_reset();
	hpshm_config_free(cfg);
	cfg = NULL;
	hpt_fake_mount_remove();
	hpt_fakeroot_destroy();
}

static void mounts_init(void)
{
	hpt_fixture_init();
	hpshm__linux_sys_reset();
	real_linux = hpshm__linux_sys;
	hpshm__linux_sys.statfs = inj_statfs;
	hpshm__linux_sys.fstatfs = inj_fstatfs;
	hpt_fakeroot_create(64, 64);
	fake_mount = hpt_fake_mount_make();
	fake_mount_bsize = (long)(2 * MIB);
	fake_mount_on = 1;
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	hpt_fixture_undo_on_skip(mounts_fini_work);
}

static void mounts_fini(void)
{
	mounts_fini_work();
	hpt_fixture_fini();
}

TestSuite(paths_mounts, .init = mounts_init, .fini = mounts_fini);

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

/* A create on the hugetlbfs provider alone that must fail at its probe: the attempt. */
static hpshm_attempt hugetlbfs_refusal(const char *extra)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[256];
	int rc;

	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on%s%s", extra[0] ? "," : "", extra);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "%s: got %s: %s", kv, hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].provider, "hugetlbfs");
	return r.attempts[0];
}

/* ---- the mount table ---- */

Test(paths_mounts, hugetlbfs_mount_points_with_escaped_spaces_are_unescaped)
{
	struct hpshm__mount m[HPT_MOUNTS];
	int n;

	hpt_fakeroot_write("proc/self/mountinfo",
			   "36 25 0:40 / /mnt/huge\\040pages rw,relatime shared:9 - hugetlbfs none rw,pagesize=2M\n");
	n = hpshm__linux_hugetlbfs_mounts(m, HPT_MOUNTS);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(m[0].path, "/mnt/huge pages");
	cr_assert_eq(m[0].page_size, 2 * MIB);
}

Test(paths_mounts, hugetlbfs_mount_hidden_by_a_later_mount_on_the_same_point_is_not_used)
{
	struct hpshm__mount m[HPT_MOUNTS];

	hpt_fakeroot_write("proc/self/mountinfo",
			   "36 25 0:40 / /mnt/huge rw - hugetlbfs none rw,pagesize=2M\n"
			   "37 36 0:41 / /mnt/huge rw - tmpfs tmpfs rw\n"
			   "38 25 0:42 / /mnt/giant rw - hugetlbfs none rw,pagesize=1024M\n");
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, HPT_MOUNTS), 1);
	cr_assert_str_eq(m[0].path, "/mnt/giant");
	cr_assert_eq(m[0].page_size, (size_t)1 << 30, "pagesize=1024M is 1 GiB");
}

Test(paths_mounts, hugetlbfs_mount_stacked_over_another_replaces_it)
{
	struct hpshm__mount m[HPT_MOUNTS];

	hpt_fakeroot_write("proc/self/mountinfo",
			   "36 25 0:40 / /mnt/huge rw - hugetlbfs none rw,pagesize=2M\n"
			   "37 36 0:41 / /mnt/huge rw - hugetlbfs none rw,pagesize=1G\n");
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, HPT_MOUNTS), 1);
	cr_assert_eq(m[0].page_size, (size_t)1 << 30, "the upper mount's page size counts");
}

Test(paths_mounts, hugetlbfs_mount_without_pagesize_has_the_default_huge_page_size)
{
	struct hpshm__mount m[HPT_MOUNTS];

	hpt_fakeroot_write("proc/self/mountinfo", "36 25 0:40 / /dev/hugepages rw - hugetlbfs hugetlbfs rw,relatime\n");
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, HPT_MOUNTS), 1);
	cr_assert_eq(m[0].page_size, 2 * MIB, "the fake tree's Hugepagesize is 2048 kB");
}

Test(paths_mounts, hugetlbfs_mounts_beyond_the_table_are_counted_but_not_copied)
{
	struct hpshm__mount m[2];
	char text[2048] = "";
	int i;

	for (i = 0; i < 5; i++) {
		char line[128];

		snprintf(line, sizeof line, "%d 25 0:4%d / /mnt/h%d rw - hugetlbfs none rw,pagesize=2M\n", 40 + i, i, i);
		strcat(text, line);
	}
	hpt_fakeroot_write("proc/self/mountinfo", text);
	cr_assert_eq(hpshm__linux_hugetlbfs_mounts(m, 2), 5, "the count of all the mounts, not of those copied");
	cr_assert_str_eq(m[1].path, "/mnt/h1");
}

/* ---- the directory the provider picks ---- */

Test(paths_mounts, hugetlbfs_path_that_does_not_exist_is_named_with_enoent)
{
	hpshm_attempt a = hugetlbfs_refusal("hugetlbfs_path=/nonexistent/hpt-paths");

	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert_eq(a.sys_errno, ENOENT, "errno %d: %s", a.sys_errno, a.reason);
	cr_assert(hpt_contains(a.reason, "/nonexistent/hpt-paths"), "%s", a.reason);
}

Test(paths_mounts, hugetlbfs_path_that_is_not_hugetlbfs_is_refused)
{
	char kv[128];
	hpshm_attempt a;

	fake_mount_on = 0;   /* the directory is what it is: not hugetlbfs */
	snprintf(kv, sizeof kv, "hugetlbfs_path=/tmp");
	a = hugetlbfs_refusal(kv);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "not on hugetlbfs"), "%s", a.reason);
}

Test(paths_mounts, hugetlbfs_path_with_another_page_size_is_refused)
{
	char kv[128];
	hpshm_attempt a;

	fake_mount_bsize = 1L << 30;
	snprintf(kv, sizeof kv, "hugetlbfs_path=%s", fake_mount);
	a = hugetlbfs_refusal(kv);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "1GiB"), "%s", a.reason);
}

Test(paths_mounts, hugetlbfs_without_any_mount_is_unavailable)
{
	hpshm_attempt a;

	hpt_fakeroot_write("proc/self/mountinfo", "36 25 0:40 / /tmp rw - tmpfs tmpfs rw\n");
	a = hugetlbfs_refusal("");
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "no hugetlbfs mount"), "%s", a.reason);
}

Test(paths_mounts, hugetlbfs_mount_of_another_page_size_only_is_unavailable)
{
	char line[256];
	hpshm_attempt a;

	snprintf(line, sizeof line, "36 25 0:40 / %s rw - hugetlbfs none rw,pagesize=1G\n", fake_mount);
	hpt_fakeroot_write("proc/self/mountinfo", line);
	a = hugetlbfs_refusal("");
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "no hugetlbfs mount for 2MiB"), "%s", a.reason);
}

Test(paths_mounts, hugetlbfs_mount_this_user_cannot_write_is_named_with_eacces, .timeout = 60)
{
	char line[256];
	int status;
	pid_t pid;

	/* root writes everywhere: the check runs in a child that dropped to nobody */
	if (geteuid() != 0)
		HPT_SKIP("needs root to become another user");
	cr_assert_eq(chmod(fake_mount, 0755), 0);
	snprintf(line, sizeof line, "36 25 0:40 / %s rw - hugetlbfs none rw,pagesize=2M\n", fake_mount);
	hpt_fakeroot_write("proc/self/mountinfo", line);
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *seg = NULL;
		hpshm_report r;
		hpshm_error err;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		if (hpshm_config_parse(cfg, "provider=hugetlbfs,huge_pages=on", &err) != 0)
			_exit(11);
		if (hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err) != HPSHM_ENOHUGE)
			_exit(12);
		if (r.nattempts != 1 || r.attempts[0].sys_errno != EACCES)
			_exit(13);
		if (!hpt_contains(r.attempts[0].reason, "not writable"))
			_exit(14);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "the child's check %d failed (10 setuid, 12 code, 13 errno, 14 reason)",
		     WEXITSTATUS(status));
}

/* ---- the hugetlb cgroup ---- */

static void cgroup_v2(const char *self, const char *mount_root)
{
	char line[256];

	snprintf(line, sizeof line, "0::%s\n", self);
	hpt_fakeroot_write("proc/self/cgroup", line);
	snprintf(line, sizeof line, "30 1 0:26 %s /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n", mount_root);
	hpt_fakeroot_write("proc/self/mountinfo", line);
}

Test(paths_mounts, cgroup_v2_walk_keeps_the_ancestor_limit_that_leaves_least_room)
{
	struct hpshm__limit cg;

	cgroup_v2("/a/b", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/b/hugetlb.2MB.max", "max\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/b/hugetlb.2MB.current", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "8388608\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.current", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)8 * MIB);
	cr_assert_eq(cg.usage, (uint64_t)4 * MIB);
	cr_assert(strstr(cg.path, "/sys/fs/cgroup/a") && !strstr(cg.path, "/a/b"), "path %s", cg.path);
	cr_assert_eq(cg.rsvd_limit, HPSHM__UNLIMITED, "no rsvd files: no reservation limit");
}

Test(paths_mounts, cgroup_v2_max_everywhere_is_no_limit)
{
	struct hpshm__limit cg;

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "max\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.max", "max\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, HPSHM__UNLIMITED);
	cr_assert_eq(cg.rsvd_limit, HPSHM__UNLIMITED);
	cr_assert_eq(hpshm__linux_hugetlb_fault_risk(4 * MIB, 2 * MIB), 0);
}

Test(paths_mounts, cgroup_v2_value_that_is_not_a_number_is_no_limit)
{
	struct hpshm__limit cg;

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "maxi\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 0, "an unreadable limit is no limit here");
	cr_assert_eq(cg.limit, HPSHM__UNLIMITED);
}

Test(paths_mounts, cgroup_fault_limit_without_a_reservation_limit_is_a_sigbus_risk)
{
	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "8388608\n");
	cr_assert_eq(hpshm__linux_hugetlb_fault_risk(4 * MIB, 2 * MIB), 1);
}

Test(paths_mounts, cgroup_reservation_limit_is_read_and_removes_the_sigbus_risk)
{
	struct hpshm__limit cg;

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "8388608\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.max", "6291456\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.current", "2097152\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.rsvd_limit, (uint64_t)6 * MIB);
	cr_assert_eq(cg.rsvd_usage, (uint64_t)2 * MIB);
	cr_assert_eq(hpshm__linux_hugetlb_fault_risk(4 * MIB, 2 * MIB), 0);
}

Test(paths_mounts, cgroup_namespace_root_reads_the_limits_at_the_mount_point)
{
	struct hpshm__limit cg;

	/* Inside a cgroup namespace the process sees itself at "/" and the mount's root is "/". */
	cgroup_v2("/", "/");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)4 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup");
}

Test(paths_mounts, cgroup_mount_of_a_subtree_strips_its_root_from_our_path)
{
	struct hpshm__limit cg;

	/* A container that mounts only its own subtree: root /kubepods/pod1, we are in /kubepods/pod1/c */
	cgroup_v2("/kubepods/pod1/c", "/kubepods/pod1");
	hpt_fakeroot_write("sys/fs/cgroup/c/hugetlb.2MB.max", "2097152\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 2);
	cr_assert_eq(cg.limit, (uint64_t)2 * MIB);
	cr_assert_str_eq(cg.path, "/sys/fs/cgroup/c");
}

Test(paths_mounts, cgroup_v1_hugetlb_hierarchy_wins_and_its_huge_counter_is_unlimited)
{
	struct hpshm__limit cg;

	hpt_fakeroot_write("proc/self/cgroup", "0::/\n7:hugetlb:/g\n");
	hpt_fakeroot_write("proc/self/mountinfo",
			   "30 1 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
			   "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.limit_in_bytes", "9223372036854771712\n");
	cr_assert_eq(hpshm__linux_cgroup_get(2 * MIB, &cg), 0);
	cr_assert_eq(cg.version, 1);
	cr_assert_eq(cg.limit, HPSHM__UNLIMITED);
}

Test(paths_mounts, cgroup_short_of_room_gives_the_hint_naming_the_file)
{
	char buf[HPSHM_TEXT_MAX];

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304\n");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 2 * MIB, 1, buf, sizeof buf), 1);
	cr_assert(hpt_contains(buf, "hugetlb.2MB.max"), "%s", buf);
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(2 * MIB, 2 * MIB, 1, buf, sizeof buf), 0);
}

/* ---- attach: the kernel's page size against the creator's ---- */

/* In a forked child: unmap the creator's header companions (memfds named "hpshm:"), which an
 * attach maps again at the same address.  0, or -1. */
static int unmap_companions(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	int rc = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "/memfd:hpshm:") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    munmap((void *)lo, hi - lo) != 0)
			rc = -1;
	fclose(f);
	return rc;
}

Test(paths_mounts, attach_refuses_a_segment_backed_by_other_pages_than_the_creators, .timeout = 60)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[256], token[HPSHM_TOKEN_MAX];
	void *hole;
	uintptr_t a;
	int rc, status;
	pid_t pid;

	/* A free, aligned range for the segment, and the library told it is hugetlb there. */
	hole = mmap(NULL, 16 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert_neq(hole, MAP_FAILED);
	a = ((uintptr_t)hole + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1);
	cr_assert_eq(munmap(hole, 16 * MIB), 0);
	hpt_fakeroot_smaps_huge((void *)a, 8 * MIB, 2 * MIB);

	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,reattach=exec,populate=off,hugetlbfs_path=%s,"
		 "base_address=%#lx", fake_mount, (unsigned long)a);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(r.page_size, 2 * MIB, "the creator's verified page size");
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0, "%s", err.message);

	/* The child sees what the kernel really maps there: base pages. */
	hpt_fakeroot_smaps_real();
	pid = hpt_fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		hpshm_segment *child = NULL;
		hpshm_error cerr;

		if (munmap(hpshm_segment_address(seg), r.mapped_size) != 0 || unmap_companions() != 0)
			_exit(100);
		rc = hpshm_segment_attach(&child, token, NULL, &cerr);
		if (rc == 0)
			_exit(101);
		if (strcmp(cerr.call, "verify") != 0)
			_exit(102);
		_exit(-rc);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_neq(WEXITSTATUS(status), 101, "a segment on other pages than the creator's was attached");
	cr_assert_neq(WEXITSTATUS(status), 102, "the refusal was not verification's");
	cr_assert_eq(-WEXITSTATUS(status), HPSHM_ENOHUGE, "exit %d", WEXITSTATUS(status));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_mounts, cgroup_reservation_limit_that_binds_is_the_one_the_reason_names)
{
	char buf[HPSHM_TEXT_MAX];

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "16777216\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.max", "4194304\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.current", "2097152\n");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(8 * MIB, 2 * MIB, 0, buf, sizeof buf), 1);
	cr_assert(strstr(buf, "hugetlb.2MB.rsvd.max to at least 10MiB"), "%s", buf);
	cr_assert(strstr(buf, "reserved"), "%s", buf);
}

Test(paths_mounts, cgroup_v1_limit_that_binds_names_limit_in_bytes)
{
	char buf[HPSHM_TEXT_MAX];

	hpt_fakeroot_write("proc/self/cgroup", "7:hugetlb:/g\n");
	hpt_fakeroot_write("proc/self/mountinfo", "31 1 0:27 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.limit_in_bytes", "2097152\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/g/hugetlb.2MB.usage_in_bytes", "0\n");
	cr_assert_eq(hpshm__linux_hugetlb_cgroup_short(4 * MIB, 2 * MIB, 1, buf, sizeof buf), 1);
	cr_assert(strstr(buf, "hugetlb.2MB.limit_in_bytes to at least 4MiB"), "%s", buf);
}

/* ---- what the plan tells an operator to mount ---- */

struct mount_need {
	int  seen;                          /* the hugetlbfs "mount" need was reported */
	int  met;                           /* and met */
	char now[HPSHM_REQUIREMENT_TEXT];   /* its first command */
	char note[HPSHM_REQUIREMENT_TEXT];  /* its note */
};

static int mount_need_keep(void *user, const char *provider, const hpshm_requirement *r)
{
	struct mount_need *n = user;

	if (strcmp(provider, "hugetlbfs") == 0 && strcmp(r->what, "mount") == 0) {
		n->seen = 1;
		n->met = r->met;
		snprintf(n->now, sizeof n->now, "%s", r->now[0]);
		snprintf(n->note, sizeof n->note, "%s", r->note);
	}
	return 0;
}

static struct mount_need mount_need(const char *extra)
{
	struct mount_need n;
	hpshm_error err;
	char kv[256];

	memset(&n, 0, sizeof n);
	snprintf(kv, sizeof kv, "provider=hugetlbfs%s%s", extra[0] ? "," : "", extra);
	set(kv);
	cr_assert_geq(hpshm_requirements(4 * MIB, 2 * MIB, cfg, mount_need_keep, &n, &err), 1, "%s", err.message);
	cr_assert(n.seen, "no mount need was reported");
	return n;
}

Test(paths_mounts, plan_mounts_hugetlbfs_on_a_configured_directory_that_is_not_one)
{
	struct mount_need n;

	fake_mount_on = 0;
	n = mount_need("hugetlbfs_path=/tmp");
	cr_assert_eq(n.met, 0);
	cr_assert(strstr(n.now, "mount -t hugetlbfs -o pagesize=2M") && strstr(n.now, " /tmp"), "%s", n.now);
}

Test(paths_mounts, plan_points_a_configured_mount_of_another_size_at_the_fix)
{
	struct mount_need n;
	char kv[128];

	fake_mount_bsize = 1L << 30;
	snprintf(kv, sizeof kv, "hugetlbfs_path=%s", fake_mount);
	n = mount_need(kv);
	cr_assert_eq(n.met, 0);
	cr_assert(strstr(n.note, "pagesize=2M"), "note: %s", n.note);
}

Test(paths_mounts, plan_gives_an_unwritable_mount_to_this_group)
{
	struct mount_need n;
	char line[256];

	snprintf(line, sizeof line, "36 25 0:40 / /proc/hpt-unwritable rw - hugetlbfs none rw,pagesize=2M\n");
	hpt_fakeroot_write("proc/self/mountinfo", line);
	n = mount_need("");
	cr_assert_eq(n.met, 0);
	cr_assert(strstr(n.now, "chgrp") && strstr(n.now, "/proc/hpt-unwritable"), "%s", n.now);
}

Test(paths_mounts, plan_without_a_mount_mounts_the_default_size_at_dev_hugepages)
{
	struct mount_need n = mount_need("");

	cr_assert_eq(n.met, 0);
	cr_assert(strstr(n.now, "/dev/hugepages") && strstr(n.now, "pagesize=2M"), "%s", n.now);
}

Test(paths_mounts, plan_is_content_with_a_writable_mount_of_the_size)
{
	struct mount_need n;
	char line[256];

	snprintf(line, sizeof line, "36 25 0:40 / %s rw - hugetlbfs none rw,pagesize=2M\n", fake_mount);
	hpt_fakeroot_write("proc/self/mountinfo", line);
	n = mount_need("");
	cr_assert_eq(n.met, 1, "%s", n.now);
}

Test(paths_mounts, hugetlbfs_path_longer_than_a_path_is_refused)
{
	char kv[HPSHM_PATH_MAX + 64], path[HPSHM_PATH_MAX + 16];
	hpshm_attempt a;

	memset(path, 'x', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	snprintf(kv, sizeof kv, "hugetlbfs_path=%s", path);
	{
		hpshm_error err;

		memset(&err, 0, sizeof err);
		if (hpshm_config_parse(cfg, kv, &err) != 0) {
			/* the key itself refuses it: the same protection, one layer up */
			cr_assert_str_eq(err.key, "hugetlbfs_path");
			return;
		}
	}
	a = hugetlbfs_refusal("");
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
}

/* ---- what the plan says about the hugetlb cgroup ---- */

struct cg_needs {
	int  n;                                /* "cgroup" needs reported for mmap_hugetlb */
	int  short_n;                          /* of them not met */
	char now[2][HPSHM_REQUIREMENT_TEXT];   /* the first command of each */
	char note[HPSHM_REQUIREMENT_TEXT];     /* the note of the first */
};

static int cg_keep(void *user, const char *provider, const hpshm_requirement *r)
{
	struct cg_needs *c = user;

	if (strcmp(provider, "mmap_hugetlb") != 0 || strcmp(r->what, "cgroup") != 0)
		return 0;
	if (c->n < 2) {
		snprintf(c->now[c->n], sizeof c->now[0], "%s", r->now[0]);
		if (c->n == 0)
			snprintf(c->note, sizeof c->note, "%s", r->note);
	}
	c->n++;
	c->short_n += !r->met;
	return 0;
}

static struct cg_needs cg_needs(void)
{
	struct cg_needs c;
	hpshm_error err;

	memset(&c, 0, sizeof c);
	set("provider=mmap_hugetlb");
	cr_assert_geq(hpshm_requirements(8 * MIB, 2 * MIB, cfg, cg_keep, &c, &err), 1, "%s", err.message);
	return c;
}

Test(paths_mounts, plan_raises_a_fault_time_limit_and_warns_of_sigbus_without_a_reservation_limit)
{
	struct cg_needs c;

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "4194304\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.current", "2097152\n");
	c = cg_needs();
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.short_n, 1);
	/* 2 MiB used + 8 MiB needed */
	cr_assert(strstr(c.now[0], "echo 10485760 > /sys/fs/cgroup/a/hugetlb.2MB.max"), "%s", c.now[0]);
	cr_assert(strstr(c.note, "SIGBUS"), "note: %s", c.note);
}

Test(paths_mounts, plan_raises_a_reservation_limit_that_is_short)
{
	struct cg_needs c;

	cgroup_v2("/a", "/");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.max", "max\n");
	hpt_fakeroot_write("sys/fs/cgroup/a/hugetlb.2MB.rsvd.max", "2097152\n");
	c = cg_needs();
	cr_assert_eq(c.n, 2, "the fault limit is met and the reservation one is not: two needs");
	cr_assert_eq(c.short_n, 1);
	cr_assert(strstr(c.now[1], "hugetlb.2MB.rsvd.max"), "%s", c.now[1]);
}

Test(paths_mounts, plan_has_no_cgroup_need_without_a_hugetlb_cgroup)
{
	struct cg_needs c = cg_needs();

	cr_assert_eq(c.n, 0);
}
