/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_create.c -- what a create backs out when it fails half way, and creates at a
 * base_address that is misaligned or taken.
 *
 * The library sees a fake sysroot (fakes.h) with 64 free 2 MiB pages, so every hugetlb probe
 * passes and create() is reached on any machine.  Then either the real pool refuses the pages
 * (the pool was taken between probe and create: with no pool there is nothing to take, with a
 * pool the test holds every free page itself first), or one call after the first succeeds is
 * failed through the system call tables.  Each test checks the code, errno and call recorded,
 * and that nothing is left: every mapping, SysV id and descriptor made through the tables is
 * gone, the descriptor count is as before, and (the fixture) the pool counters, SysV ids and
 * /dev/shm are as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

#define MIB HPT_MIB

static struct hpshm__syscalls real;
static struct hpshm__linux_syscalls real_linux;

static struct {
	int fd_mmap_errno;   /* fail mmap(MAP_SHARED) of a descriptor with this */
	int shmat_errno;     /* fail shmat() of a segment for writing with this */
	int rmid_errno;      /* fail the first shmctl(IPC_RMID) with this */
	int ftruncate_errno; /* fail ftruncate with this */
	int tmpfile_errno;   /* fail open(O_TMPFILE) with this */
	int creat_errno;     /* fail open(O_CREAT) with this */
	int memfd_errno;     /* fail memfd_create() of base pages with this */
} inj;

/* What the library holds through the tables. */
#define TRACK_MAX 64
static struct {
	uintptr_t addr[TRACK_MAX]; /* live mappings and attaches */
	unsigned  nmaps;
	long      ids[TRACK_MAX];  /* SysV ids not yet removed */
	unsigned  nids;
	int       fds[TRACK_MAX];  /* open descriptors */
	unsigned  nfds;
} track;

static void track_add(uintptr_t *v, unsigned *n, uintptr_t x)
{
	cr_assert_lt(*n, TRACK_MAX);
	v[(*n)++] = x;
}

static void track_del(uintptr_t *v, unsigned *n, uintptr_t x)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (v[i] == x) {
			v[i] = v[--*n];
			return;
		}
}

static void *inj_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (fd >= 0 && (flags & MAP_SHARED) && prot != PROT_NONE && inj.fd_mmap_errno) {
		errno = inj.fd_mmap_errno;
		return MAP_FAILED;
	}
	p = real.mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && prot != PROT_NONE)
		track_add(track.addr, &track.nmaps, (uintptr_t)p);
	return p;
}

static int inj_munmap(void *addr, size_t len)
{
	int rc = real.munmap(addr, len);

	if (rc == 0)
		track_del(track.addr, &track.nmaps, (uintptr_t)addr);
	return rc;
}

static int inj_shmget(key_t key, size_t size, int flags)
{
	int id = real.shmget(key, size, flags);
	unsigned i;

	if (id >= 0) {
		for (i = 0; i < track.nids; i++)
			if (track.ids[i] == id)
				return id;
		cr_assert_lt(track.nids, TRACK_MAX);
		track.ids[track.nids++] = id;
	}
	return id;
}

static void *inj_shmat(int id, const void *addr, int flags)
{
	void *p;

	if (!(flags & SHM_RDONLY) && inj.shmat_errno) {
		errno = inj.shmat_errno;
		return (void *)-1;
	}
	p = real.shmat(id, addr, flags);
	if (p != (void *)-1)
		track_add(track.addr, &track.nmaps, (uintptr_t)p);
	return p;
}

static int inj_shmdt(const void *addr)
{
	int rc = real.shmdt(addr);

	if (rc == 0)
		track_del(track.addr, &track.nmaps, (uintptr_t)addr);
	return rc;
}

static int inj_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	unsigned i;
	int rc;

	if (cmd == IPC_RMID && inj.rmid_errno) {
		errno = inj.rmid_errno;
		inj.rmid_errno = 0;
		return -1;
	}
	rc = real.shmctl(id, cmd, buf);
	if (rc == 0 && cmd == IPC_RMID)
		for (i = 0; i < track.nids; i++)
			if (track.ids[i] == id) {
				track.ids[i] = track.ids[--track.nids];
				break;
			}
	return rc;
}

static int inj_memfd_create(const char *name, unsigned flags)
{
	int fd;

	if (inj.memfd_errno && !(flags & MFD_HUGETLB)) {
		errno = inj.memfd_errno;
		return -1;
	}
	fd = real_linux.memfd_create(name, flags);

	if (fd >= 0) {
		cr_assert_lt(track.nfds, TRACK_MAX);
		track.fds[track.nfds++] = fd;
	}
	return fd;
}

static int inj_open(const char *path, int flags, mode_t mode)
{
	int fd;

#ifdef O_TMPFILE
	if (inj.tmpfile_errno && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = inj.tmpfile_errno;
		return -1;
	}
#endif
	if (inj.creat_errno && (flags & O_CREAT)) {
		errno = inj.creat_errno;
		return -1;
	}
	fd = real.open(path, flags, mode);

	if (fd >= 0) {
		cr_assert_lt(track.nfds, TRACK_MAX);
		track.fds[track.nfds++] = fd;
	}
	return fd;
}

static int inj_shm_open(const char *name, int flags, mode_t mode)
{
	int fd = real.shm_open(name, flags, mode);

	if (fd >= 0) {
		cr_assert_lt(track.nfds, TRACK_MAX);
		track.fds[track.nfds++] = fd;
	}
	return fd;
}

static int inj_close(int fd)
{
	unsigned i;

	for (i = 0; i < track.nfds; i++)
		if (track.fds[i] == fd) {
			track.fds[i] = track.fds[--track.nfds];
			break;
		}
	return real.close(fd);
}

static int inj_ftruncate(int fd, off_t len)
{
	if (inj.ftruncate_errno) {
		errno = inj.ftruncate_errno;
		return -1;
	}
	return real.ftruncate(fd, len);
}

/* A directory that statfs() and fstatfs() report as a 2 MiB hugetlbfs mount. */
static const char *fake_mount = "";

static int inj_statfs(const char *path, struct statfs *buf)
{
	int rc = real_linux.statfs(path, buf);

	if (rc == 0 && fake_mount[0] && strcmp(path, fake_mount) == 0)
		hpt_as_hugetlbfs(buf, 2 * MIB);
	return rc;
}

static int inj_fstatfs(int fd, struct statfs *buf)
{
	int rc = real_linux.fstatfs(fd, buf);

	if (rc == 0 && hpt_on_fake_mount(fake_mount, fd))
		hpt_as_hugetlbfs(buf, 2 * MIB);
	return rc;
}

/* Entries in dir other than . and .. */
static int dir_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* ---- suite ---- */

static hpshm_config *cfg;
static int fds_before;
static void *held;          /* every free page of the real 2 MiB pool, reserved by the test */
static size_t held_len;

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void create_undo(void)
{
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	if (held)
		(void)munmap(held, held_len);
	held = NULL;
	hpshm_config_free(cfg);
	cfg = NULL;
	hpt_fake_mount_remove();
	hpt_fakeroot_destroy();
}

static void create_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	real = hpshm__posix_sys;
	real_linux = hpshm__linux_sys;
	memset(&inj, 0, sizeof inj);
	memset(&track, 0, sizeof track);
	held = NULL;
	held_len = 0;
	hpt_fakeroot_create(64, 64);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	fds_before = hpt_fd_count();

	hpshm__posix_sys.mmap = inj_mmap;
	hpshm__posix_sys.munmap = inj_munmap;
	hpshm__posix_sys.shmget = inj_shmget;
	hpshm__posix_sys.shmat = inj_shmat;
	hpshm__posix_sys.shmdt = inj_shmdt;
	hpshm__posix_sys.shmctl = inj_shmctl;
	hpshm__posix_sys.open = inj_open;
	hpshm__posix_sys.shm_open = inj_shm_open;
	hpshm__posix_sys.close = inj_close;
	hpshm__posix_sys.ftruncate = inj_ftruncate;
	hpshm__linux_sys.memfd_create = inj_memfd_create;
	hpshm__linux_sys.statfs = inj_statfs;
	hpshm__linux_sys.fstatfs = inj_fstatfs;
	fake_mount = hpt_fake_mount_make();
	hpt_fixture_undo_on_skip(create_undo);
}

static void create_fini(void)
{
	create_undo();
	hpt_fixture_fini();
}

/* Skip (or fail where required) when the real pool has fewer than `pages` free 2 MiB pages. */
#define NEED_REAL_PAGES(pages, provider)                                                            \
	do {                                                                                        \
		struct hpt_pool p_;                                                                 \
		if (hpt_pool_read(2 * MIB, &p_) < 0 || hpt_pool_available(&p_) < (pages)) {         \
			HPT_UNAVAILABLE_PAGES((provider), "2MiB", (pages),                          \
					      "needs %d free 2MiB pages for shmget to succeed", (pages)); \
		}                                                                                   \
	} while (0)

TestSuite(paths_create, .init = create_init, .fini = create_fini);

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

static void assert_nothing_leaked(void)
{
	unsigned i;

	for (i = 0; i < track.nmaps; i++)
		cr_assert_fail("mapping %#lx made through hpshm__posix_sys is still mapped", (unsigned long)track.addr[i]);
	for (i = 0; i < track.nids; i++)
		cr_assert_fail("SysV segment %ld was not removed", track.ids[i]);
	for (i = 0; i < track.nfds; i++)
		cr_assert_fail("descriptor %d was not closed", track.fds[i]);
	cr_assert_eq(hpt_fd_count(), fds_before, "descriptors: %d before, %d after", fds_before, hpt_fd_count());
}

/* Reserve every page of the real 2 MiB pool a new mapping could have, so that the library's
 * own mapping finds none although its (fake) probe saw 64. */
static void hold_the_real_pool(void)
{
	struct hpt_pool p;
	unsigned long avail;

	/* The test's own cgroup refusing its reservations is an empty pool no neighbour refills. */
	if (hpt_refuse_huge_pages(2 * MIB) == 0)
		return;
	if (hpt_pool_read(2 * MIB, &p) < 0)
		return;
	avail = hpt_pool_available(&p);
	if (avail == 0)
		return;
	held_len = avail * 2 * MIB;
	held = mmap(NULL, held_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | (21 << 26), -1, 0);
	cr_assert_neq(held, MAP_FAILED, "could not hold the %lu free pages of the real pool: %s", avail,
		      strerror(errno));
	cr_assert_eq(hpt_pool_read(2 * MIB, &p), 0);
	cr_assert_eq(hpt_pool_available(&p), 0ul, "the real pool still has pages to give");
}

/* One failed create under huge_pages=on: the code, and the attempt's call and errno. */
static void expect_failure(const char *kv, size_t size, int want_rc, const char *want_call, int want_errno)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	const char *emu = strstr(kv, "sysv_hugetlb") ? hpt_emulator_refuses_sysv_hugetlb(2 * MIB) : NULL;
	int rc;

	if (emu)
		HPT_SKIP("%s", emu);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, size, cfg, &r, &err);
	if (hpt_emulator() && rc < 0 && r.nattempts >= 1 && r.attempts[0].sys_errno == EINVAL && want_errno != EINVAL) {
		HPT_SKIP("under %s the huge mapping was refused (EINVAL) before the kernel could fail it with "
			 "errno %d: %s", hpt_emulator(), want_errno, r.attempts[0].reason);
	}
	cr_assert_eq(rc, want_rc, "%s: got %s: %s", kv, hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	cr_assert_geq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].call, want_call, "%s: %s", kv, r.attempts[0].reason);
	cr_assert_eq(r.attempts[0].sys_errno, want_errno, "%s: errno %d", kv, r.attempts[0].sys_errno);
	assert_nothing_leaked();
}

/* ---- the pool taken between probe and create: real ENOMEM ---- */

Test(paths_create, mmap_hugetlb_backs_out_when_the_pool_was_taken_between_probe_and_create)
{
	hold_the_real_pool();
	expect_failure("provider=mmap_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "mmap", ENOMEM);
}

Test(paths_create, memfd_hugetlb_closes_its_memfd_when_the_pool_was_taken_between_probe_and_create)
{
	hold_the_real_pool();
	expect_failure("provider=memfd_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "mmap", ENOMEM);
}

Test(paths_create, sysv_hugetlb_leaves_no_id_when_the_pool_was_taken_between_probe_and_create)
{
	hold_the_real_pool();
	expect_failure("provider=sysv_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "shmget", ENOMEM);
}

/* ---- a later call fails: injected ---- */

Test(paths_create, sysv_hugetlb_removes_its_segment_when_shmat_fails)
{
	/* shmget() must really succeed, so the real pool must have the pages */
	NEED_REAL_PAGES(2, "sysv_hugetlb");
	inj.shmat_errno = ENOMEM;
	expect_failure("provider=sysv_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "shmat", ENOMEM);
}

Test(paths_create, a_named_sysv_hugetlb_create_removes_its_segment_when_shmat_fails)
{
	NEED_REAL_PAGES(2, "sysv_hugetlb");
	inj.shmat_errno = EACCES;
	expect_failure("provider=sysv_hugetlb,huge_pages=on,name=hpt-paths-sysv-shmat", 4 * MIB, HPSHM_ENOHUGE,
		       "shmat", EACCES);
}

Test(paths_create, sysv_hugetlb_backs_out_when_marking_for_removal_fails)
{
	NEED_REAL_PAGES(2, "sysv_hugetlb");
	inj.rmid_errno = EPERM;
	expect_failure("provider=sysv_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "shmctl", EPERM);
}

Test(paths_create, memfd_hugetlb_closes_its_memfd_when_ftruncate_fails)
{
	inj.ftruncate_errno = EINVAL;
	expect_failure("provider=memfd_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "ftruncate", EINVAL);
}

Test(paths_create, memfd_hugetlb_closes_its_memfd_when_mmap_fails_otherwise)
{
	inj.fd_mmap_errno = EACCES;
	expect_failure("provider=memfd_hugetlb,huge_pages=on", 4 * MIB, HPSHM_ENOHUGE, "mmap", EACCES);
}

Test(paths_create, memfd_hugetlb_refused_mapping_is_unavailable_so_try_moves_on)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	inj.fd_mmap_errno = EINVAL;   /* qemu-user's answer for hugetlb files */
	set("provider=memfd_hugetlb,plain,huge_pages=try");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	/* plain maps a descriptor too when it has one; it must fail the same way then */
	if (rc == 0) {
		cr_assert_str_eq(r.provider, "plain");
		cr_assert_eq(r.attempts[0].result, HPSHM_EUNAVAILABLE);
		cr_assert_eq(hpshm_segment_destroy(seg), 0);
	} else {
		cr_assert_eq(r.attempts[0].result, HPSHM_EUNAVAILABLE, "%s", r.attempts[0].reason);
	}
	cr_assert_str_eq(r.attempts[0].call, "mmap");
	cr_assert_eq(r.attempts[0].sys_errno, EINVAL);
	assert_nothing_leaked();
}

Test(paths_create, a_named_plain_create_unlinks_its_object_when_mmap_fails)
{
	char path[128];

	inj.fd_mmap_errno = ENOMEM;
	expect_failure("provider=plain,name=hpt-paths-plain-mmap", 4 * MIB, HPSHM_ENOMEM, "mmap", ENOMEM);
	snprintf(path, sizeof path, "/dev/shm/hpt-paths-plain-mmap");
	cr_assert_neq(access(path, F_OK), 0, "%s was left behind", path);
}

Test(paths_create, hugetlbfs_closes_and_unlinks_its_file_when_mmap_fails)
{
	char kv[160];

	inj.fd_mmap_errno = ENOMEM;
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s", fake_mount);
	expect_failure(kv, 4 * MIB, HPSHM_ENOHUGE, "mmap", ENOMEM);
	cr_assert_eq(dir_entries(fake_mount), 0, "a file was left in the mount");
}

Test(paths_create, a_named_hugetlbfs_create_unlinks_its_file_when_mmap_fails)
{
	char kv[192];

	inj.fd_mmap_errno = ENOMEM;
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s,name=hpt-paths-htlb", fake_mount);
	expect_failure(kv, 4 * MIB, HPSHM_ENOHUGE, "mmap", ENOMEM);
	cr_assert_eq(dir_entries(fake_mount), 0, "the named file was left in the mount");
}

Test(paths_create, hugetlbfs_closes_and_unlinks_its_file_when_ftruncate_fails)
{
	char kv[160];

	inj.ftruncate_errno = EFBIG;
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s,name=hpt-paths-htlb-t", fake_mount);
	expect_failure(kv, 4 * MIB, HPSHM_ENOHUGE, "ftruncate", EFBIG);
	cr_assert_eq(dir_entries(fake_mount), 0, "the named file was left in the mount");
}

Test(paths_create, hugetlbfs_leaves_no_file_when_the_pool_was_taken_between_probe_and_create)
{
	const char *mnt = hpt_test_hugetlbfs(2 * MIB);
	char kv[256];
	int before;

	if (mnt == NULL)
		HPT_UNAVAILABLE("hugetlbfs", "2MiB", "HPSHM_TEST_HUGETLBFS names no 2 MiB hugetlbfs mount");
	before = dir_entries(mnt);
	hold_the_real_pool();
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s,name=hpt-paths-htlb-pool", mnt);
	expect_failure(kv, 4 * MIB, HPSHM_ENOHUGE, "mmap", ENOMEM);
	cr_assert_eq(dir_entries(mnt), before, "a file was left in %s", mnt);
}

Test(paths_create, hugetlbfs_removes_its_file_when_the_kernel_shows_no_huge_pages)
{
	char kv[160];

	/* The fake mount's files are base pages, as smaps says: verification refuses them. */
	inj.tmpfile_errno = EOPNOTSUPP;   /* the named-then-unlinked path of older kernels */
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s", fake_mount);
	set(kv);
	{
		hpshm_segment *seg = NULL;
		hpshm_report r;
		hpshm_error err;
		int rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);

		cr_assert_eq(rc, HPSHM_ENOHUGE, "%s: %s", hpshm_errname(rc), err.message);
		cr_assert_null(seg);
	}
	assert_nothing_leaked();
	cr_assert_eq(dir_entries(fake_mount), 0, "a file was left in the mount");
}

Test(paths_create, hugetlbfs_name_dot_dot_never_names_a_file_outside_the_mount)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[160];

	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s", fake_mount);
	set(kv);
	memset(&err, 0, sizeof err);
	if (hpshm_config_parse(cfg, "name=..", &err) != 0) {
		cr_assert_str_eq(err.key, "name", "the config refused it, but not as a name: %s", err.message);
		return;
	}
	cr_assert_neq(hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err), 0, "a segment named .. was made");
	cr_assert_eq(r.attempts[0].result, HPSHM_EINVAL, "%s", r.attempts[0].reason);
	cr_assert(hpt_contains(r.attempts[0].reason, "file name"), "%s", r.attempts[0].reason);
	cr_assert_eq(dir_entries(fake_mount), 0);
}

/* An unnamed hugetlbfs create whose open(O_CREAT) fails with e: the attempt. */
static hpshm_attempt hugetlbfs_open_fails(int e)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[160];

	inj.tmpfile_errno = EOPNOTSUPP;
	inj.creat_errno = e;
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s", fake_mount);
	set(kv);
	cr_assert_neq(hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err), 0);
	cr_assert_str_eq(r.attempts[0].call, "open");
	cr_assert_eq(r.attempts[0].sys_errno, e);
	assert_nothing_leaked();
	return r.attempts[0];
}

Test(paths_create, hugetlbfs_that_may_not_create_its_file_is_unavailable_with_the_mount_hint)
{
	hpshm_attempt a = hugetlbfs_open_fails(EACCES);

	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
}

Test(paths_create, hugetlbfs_out_of_inodes_is_unavailable)
{
	hpshm_attempt a = hugetlbfs_open_fails(ENOSPC);

	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "inode"), "%s", a.reason);
}

Test(paths_create, hugetlbfs_whose_directory_vanished_is_unavailable)
{
	hpshm_attempt a = hugetlbfs_open_fails(ENOENT);

	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(a.reason, "gone"), "%s", a.reason);
}

Test(paths_create, hugetlbfs_open_failing_otherwise_is_esys)
{
	hpshm_attempt a = hugetlbfs_open_fails(EIO);

	cr_assert_eq(a.result, HPSHM_ESYS);
}

/* ---- plain without a memfd ---- */

Test(paths_create, plain_without_memfd_falls_back_to_anonymous_memory_that_cannot_be_reattached)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_report r;
	hpshm_error err;
	int rc;

	inj.memfd_errno = ENOSYS;   /* a kernel before 3.17, or a sandbox */
	set("provider=plain");
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	memset(hpshm_segment_address(seg), 7, hpshm_segment_size(seg));
	cr_assert_lt(hpshm_segment_token(seg, token, sizeof token, &err), 0, "anonymous memory got a token");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(paths_create, plain_out_of_descriptors_is_esys_with_the_ulimit_hint)
{
	inj.memfd_errno = EMFILE;
	expect_failure("provider=plain", 4 * MIB, HPSHM_ESYS, "memfd_create", EMFILE);
}

Test(paths_create, plain_that_cannot_size_its_memfd_is_enomem_and_closes_it)
{
	inj.ftruncate_errno = EFBIG;
	expect_failure("provider=plain", 4 * MIB, HPSHM_ENOMEM, "ftruncate", EFBIG);
}

/* ---- base_address: misaligned, taken ---- */

/* An address range of len bytes that nothing maps now, aligned to align. */
static uintptr_t free_range(size_t len, size_t align)
{
	void *p = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	cr_assert_neq(p, MAP_FAILED);
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	cr_assert_eq(munmap(p, len + align), 0);
	return a;
}

Test(paths_create, a_base_address_off_the_address_granule_is_refused_by_the_config)
{
	hpshm_error err;
	char kv[96];
	uintptr_t a = free_range(8 * MIB, 2 * MIB) + 4096;

	snprintf(kv, sizeof kv, "base_address=%#lx", (unsigned long)a);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), HPSHM_EVALUE, "%s", err.message);
	cr_assert_str_eq(err.key, "base_address");
}

Test(paths_create, a_base_address_not_aligned_to_the_huge_page_is_a_base_address_error)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[128];
	uintptr_t a = free_range(8 * MIB, 2 * MIB) + 65536;   /* on the granule, off the 2 MiB page */
	int rc;

	snprintf(kv, sizeof kv, "provider=mmap_hugetlb,huge_pages=on,base_address=%#lx", (unsigned long)a);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_neq(rc, 0, "a base_address off the 2 MiB page was taken for 2 MiB pages");
	cr_assert_null(seg);
	cr_assert_str_eq(r.attempts[0].provider, "mmap_hugetlb");
	cr_assert(hpt_contains(r.attempts[0].reason, "not aligned"), "%s", r.attempts[0].reason);
	cr_assert_eq(hpt_is_mapped((void *)a, 4 * MIB), 0, "something was mapped at the misaligned address");
	assert_nothing_leaked();
}

static void expect_taken(const char *provider, int sysv)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[160];
	uintptr_t a = free_range(8 * MIB, 2 * MIB);
	void *occupant;
	int rc;

	/* Something of the program's own in the middle of the range. */
	occupant = mmap((void *)(a + 2 * MIB), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	cr_assert_eq(occupant, (void *)(a + 2 * MIB));
	snprintf(kv, sizeof kv, "provider=%s,huge_pages=%s,base_address=%#lx", provider, sysv ? "on" : "off",
		 (unsigned long)a);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_null(seg);
	cr_assert_eq(r.attempts[0].result, HPSHM_EEXIST, "%s: %s: %s", provider, hpshm_errname(r.attempts[0].result),
		     r.attempts[0].reason);
	cr_assert(hpt_contains(err.hint, "base_address"), "hint: %s", err.hint);
	/* the occupant is untouched, and nothing else was mapped in the range */
	cr_assert_eq(hpt_is_mapped((void *)a, 2 * MIB), 0);
	cr_assert_eq(hpt_is_mapped(occupant, 4096), 1);
	cr_assert_eq(munmap(occupant, 4096), 0);
	assert_nothing_leaked();
}

Test(paths_create, plain_at_an_occupied_base_address_is_eexist_and_maps_nothing)
{
	expect_taken("plain", 0);
}

Test(paths_create, memfd_hugetlb_at_an_occupied_base_address_is_eexist_and_closes_its_memfd)
{
	expect_taken("memfd_hugetlb", 1);
}

Test(paths_create, sysv_hugetlb_at_an_occupied_base_address_is_eexist_and_removes_its_segment)
{
	NEED_REAL_PAGES(2, "sysv_hugetlb");
	expect_taken("sysv_hugetlb", 1);
}
