/* SPDX-License-Identifier: MIT */
/*
 * tests/test_faults.c -- system call failures injected through the system call tables (hpshm__posix_sys,
 * hpshm__linux_sys): no root, no pool.
 *
 * The library sees a fake /proc and /sys (fakes.h) with 64 free 2 MiB pages, so the hugetlb
 * probes pass on any machine and create() is reached; then one call fails the way the kernel
 * fails it.  Each test checks the code, the errno and call recorded in the attempt, that
 * huge_pages=try falls back to plain and huge_pages=on fails, and that nothing leaked: every
 * mapping, SysV segment and descriptor the library made through the table was released, the
 * descriptor count is unchanged, and (fixture) no pool page or SysV id was left behind.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#include "backends/hugetlb_common.h"
#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

#define MIB HPT_MIB

/* ---- the injecting system call table ---- */

static struct hpt_fake *fake_huge; /* registered by the tests that need create() to succeed */

static struct hpshm__syscalls real;
static struct hpshm__linux_syscalls real_linux;

static struct injection {
	int mmap_huge_errno;   /* fail mmap(MAP_HUGETLB) with this */
	int pool_taken;        /* ... and empty the fake pool first, as another process would */
	int shmget_errno;      /* fail shmget(SHM_HUGETLB) */
	int memfd_errno;       /* fail memfd_create(MFD_HUGETLB) ... */
	int memfd_pass;        /* ... after letting this many through */
	int memfd_plain_errno; /* fail memfd_create without MFD_HUGETLB (plain's) with this */
	int madvise_errno;     /* fail madvise(MADV_POPULATE_WRITE) ... */
	int madvise_fake_only; /* ... only for the fake HUGE provider's mapping */
	int fallocate_errno;   /* fail fallocate */
	int reserve_errno;     /* fail mmap(PROT_NONE, MAP_NORESERVE): the address pick for re-attach */
	int sysvipc_errno;     /* fail the fopen of /proc/sysvipc/shm */
	char stat_watch[256];  /* count stat() calls on this path ... */
	unsigned stat_watch_calls; /* ... here */

	unsigned mmap_huge_calls, shmget_calls, memfd_calls, populate_madvise_calls, fallocate_calls;
} inj;

/* What the library holds through the table: mappings, attached segments, ids, descriptors. */
#define TRACK_MAX 64
static struct {
	uintptr_t addr[TRACK_MAX];
	size_t    len[TRACK_MAX];
	unsigned  nmaps;
	long      ids[TRACK_MAX];
	unsigned  nids;
	int       fds[TRACK_MAX];
	unsigned  nfds;
} track;

static void track_map(void *p, size_t len)
{
	cr_assert_lt(track.nmaps, TRACK_MAX);
	track.addr[track.nmaps] = (uintptr_t)p;
	track.len[track.nmaps++] = len;
}

static void track_unmap(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	unsigned i;

	for (i = 0; i < track.nmaps; i++) {
		if (track.addr[i] == a && (len == 0 || track.len[i] == len)) {
			track.addr[i] = track.addr[--track.nmaps];
			track.len[i] = track.len[track.nmaps];
			return;
		}
	}
}

static void track_fd(int fd)
{
	cr_assert_lt(track.nfds, TRACK_MAX);
	track.fds[track.nfds++] = fd;
}

static void track_close(int fd)
{
	unsigned i;

	for (i = 0; i < track.nfds; i++)
		if (track.fds[i] == fd) {
			track.fds[i] = track.fds[--track.nfds];
			return;
		}
}

static void *inj_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (prot == PROT_NONE && (flags & MAP_NORESERVE) && inj.reserve_errno) {
		errno = inj.reserve_errno;
		return MAP_FAILED;
	}
	if (flags & MAP_HUGETLB) {
		inj.mmap_huge_calls++;
		if (inj.mmap_huge_errno) {
			if (inj.pool_taken)
				hpt_fakeroot_set_pool(64, 0);
			errno = inj.mmap_huge_errno;
			return MAP_FAILED;
		}
	}
	p = real.mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		track_map(p, len);
	return p;
}

static int inj_munmap(void *addr, size_t len)
{
	int rc = real.munmap(addr, len);

	if (rc == 0)
		track_unmap(addr, len);
	return rc;
}

/* addr is in the fake HUGE provider's mapping (its populate calls start inside, tail first). */
static int in_fake_huge(const void *addr)
{
	const char *a = addr, *base = fake_huge->addr;

	return base != NULL && a >= base && a < base + fake_huge->len;
}

static int inj_madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_POPULATE_WRITE) {
		inj.populate_madvise_calls++;
		if (inj.madvise_errno && (!inj.madvise_fake_only || (fake_huge && in_fake_huge(addr)))) {
			errno = inj.madvise_errno;
			return -1;
		}
	}
	return real_linux.madvise(addr, len, advice);
}

static int inj_shmget(key_t key, size_t size, int flags)
{
	int id;

	if (flags & SHM_HUGETLB) {
		inj.shmget_calls++;
		if (inj.shmget_errno) {
			errno = inj.shmget_errno;
			return -1;
		}
	}
	id = real.shmget(key, size, flags);
	if (id >= 0) {
		cr_assert_lt(track.nids, TRACK_MAX);
		track.ids[track.nids++] = id;
	}
	return id;
}

static void *inj_shmat(int id, const void *addr, int flags)
{
	void *p = real.shmat(id, addr, flags);

	if (p != (void *)-1)
		track_map(p, 0);
	return p;
}

static int inj_shmdt(const void *addr)
{
	int rc = real.shmdt(addr);

	if (rc == 0)
		track_unmap(addr, 0);
	return rc;
}

static int inj_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int rc = real.shmctl(id, cmd, buf);
	unsigned i;

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

	if (flags & MFD_HUGETLB) {
		inj.memfd_calls++;
		if (inj.memfd_errno && inj.memfd_calls > (unsigned)inj.memfd_pass) {
			errno = inj.memfd_errno;
			return -1;
		}
	} else if (inj.memfd_plain_errno) {
		errno = inj.memfd_plain_errno;
		return -1;
	}
	fd = real_linux.memfd_create(name, flags);
	if (fd >= 0)
		track_fd(fd);
	return fd;
}

static int inj_open(const char *path, int flags, mode_t mode)
{
	int fd = real.open(path, flags, mode);

	if (fd >= 0)
		track_fd(fd);
	return fd;
}

static int inj_close(int fd)
{
	track_close(fd);
	return real.close(fd);
}

static int inj_fallocate(int fd, int mode, off_t off, off_t len)
{
	inj.fallocate_calls++;
	if (inj.fallocate_errno) {
		errno = inj.fallocate_errno;
		return -1;
	}
	return real_linux.fallocate(fd, mode, off, len);
}

static FILE *inj_fopen(const char *path, const char *mode)
{
	const char *tail = "/proc/sysvipc/shm";
	size_t n = strlen(path), t = strlen(tail);

	if (inj.sysvipc_errno && n >= t && strcmp(path + n - t, tail) == 0) {
		errno = inj.sysvipc_errno;
		return NULL;
	}
	return real.fopen(path, mode);
}

static int inj_stat(const char *path, struct stat *st)
{
	if (inj.stat_watch[0] && strcmp(path, inj.stat_watch) == 0)
		inj.stat_watch_calls++;
	return real.stat(path, st);
}

/* ---- suite ---- */

static hpshm_config *cfg;
static int fds_before;

static void faults_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	real = hpshm__posix_sys;
	real_linux = hpshm__linux_sys;
	memset(&inj, 0, sizeof inj);
	memset(&track, 0, sizeof track);
	hpt_fakeroot_create(64, 64);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	fake_huge = NULL;
	fds_before = hpt_fd_count();

	hpshm__posix_sys.mmap = inj_mmap;
	hpshm__posix_sys.munmap = inj_munmap;
	hpshm__linux_sys.madvise = inj_madvise;
	hpshm__posix_sys.shmget = inj_shmget;
	hpshm__posix_sys.shmat = inj_shmat;
	hpshm__posix_sys.shmdt = inj_shmdt;
	hpshm__posix_sys.shmctl = inj_shmctl;
	hpshm__linux_sys.memfd_create = inj_memfd_create;
	hpshm__posix_sys.open = inj_open;
	hpshm__posix_sys.close = inj_close;
	hpshm__linux_sys.fallocate = inj_fallocate;
	hpshm__posix_sys.fopen = inj_fopen;
	hpshm__posix_sys.stat = inj_stat;
}

static void faults_fini(void)
{
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	if (fake_huge)
		(void)hpt_fake_unregister(fake_huge);
	hpshm_config_free(cfg);
	hpt_fakeroot_destroy();
	hpt_fixture_fini();
}

TestSuite(faults, .init = faults_init, .fini = faults_fini);

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

/* Everything the library made through the table is gone, and no descriptor was left open. */
static void assert_nothing_leaked(void)
{
	unsigned i;

	for (i = 0; i < track.nmaps; i++)
		cr_assert_fail("mapping %#lx (+%zu) made through hpshm__posix_sys is still mapped",
			       (unsigned long)track.addr[i], track.len[i]);
	for (i = 0; i < track.nids; i++)
		cr_assert_fail("SysV segment %ld was not removed", track.ids[i]);
	for (i = 0; i < track.nfds; i++)
		cr_assert_fail("descriptor %d was not closed", track.fds[i]);
	cr_assert_eq(hpt_fd_count(), fds_before, "descriptors: %d before, %d after", fds_before, hpt_fd_count());
}

/* Create under huge_pages=on (must fail) and under try with plain after (must fall back). */
static void on_fails_try_falls_back(const char *provider, int want_errno, const char *want_call)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char kv[128];
	int rc;

	snprintf(kv, sizeof kv, "provider=%s,huge_pages=on", provider);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "%s under on: got %s", provider, hpshm_errname(rc));
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].provider, provider);
	cr_assert_lt(r.attempts[0].result, 0);
	cr_assert_eq(r.attempts[0].sys_errno, want_errno, "errno %d recorded, want %d", r.attempts[0].sys_errno,
		     want_errno);
	cr_assert_str_eq(r.attempts[0].call, want_call);
	cr_assert(strstr(err.message, provider), "%s", err.message);
	assert_nothing_leaked();

	snprintf(kv, sizeof kv, "provider=%s,plain,huge_pages=try", provider);
	set(kv);
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s under try: %s: %s", provider, hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.huge, 0);
	cr_assert_eq(r.mapped_size, 3 * MIB);
	cr_assert_eq(r.nattempts, 2u);
	cr_assert_eq(r.attempts[0].sys_errno, want_errno);
	cr_assert_str_eq(r.attempts[0].call, want_call);
	cr_assert_eq(r.attempts[1].result, 0);
	memset(hpshm_segment_address(seg), 0x5a, hpshm_segment_size(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, mmap_hugetlb_enomem_fails_on_and_falls_back_under_try)
{
	inj.mmap_huge_errno = ENOMEM;
	on_fails_try_falls_back("mmap_hugetlb", ENOMEM, "mmap");
	cr_assert_eq(inj.mmap_huge_calls, 2u);
}

/* The pool was taken between probe and create: ENOMEM, and the hint names the pool's knob. */
Test(faults, mmap_hugetlb_enomem_hint_names_the_pool_sysctl)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	inj.mmap_huge_errno = ENOMEM;
	inj.pool_taken = 1;
	set("provider=mmap_hugetlb,huge_pages=on");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, 3 * MIB, cfg, &err), HPSHM_ENOHUGE);
	cr_assert(strstr(err.hint, "nr_hugepages"), "hint: %s", err.hint);
	cr_assert(!strstr(err.hint, "overcommit"), "the fake pool has no overcommit; hint: %s", err.hint);
}

/*
 * ENOMEM while the pool still has the pages: not the pool's doing (a 32-bit process without a
 * free range on the 1 GiB grid, a hugetlb cgroup), so the error must not send the operator
 * to nr_hugepages, and must say how many pages were free.
 */
Test(faults, mmap_hugetlb_enomem_with_the_pool_free_blames_the_address_space_not_the_pool)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	inj.mmap_huge_errno = ENOMEM;
	set("provider=mmap_hugetlb,huge_pages=on");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, 3 * MIB, cfg, &err), HPSHM_ENOHUGE);
	cr_assert(!strstr(err.hint, "nr_hugepages"), "the pool has the pages, yet the hint names it: %s", err.hint);
	cr_assert(strstr(err.message, "the pool has 64 free") != NULL, "%s", err.message);
	cr_assert(strstr(err.message, "range aligned to") != NULL, "%s", err.message);
	assert_nothing_leaked();
}

Test(faults, mmap_hugetlb_einval_fails_on_and_falls_back_under_try)
{
	inj.mmap_huge_errno = EINVAL;
	on_fails_try_falls_back("mmap_hugetlb", EINVAL, "mmap");
}

Test(faults, mmap_hugetlb_eperm_fails_on_and_falls_back_under_try)
{
	inj.mmap_huge_errno = EPERM;
	on_fails_try_falls_back("mmap_hugetlb", EPERM, "mmap");
}

Test(faults, sysv_shmget_eperm_fails_on_and_falls_back_under_try)
{
	inj.shmget_errno = EPERM;
	on_fails_try_falls_back("sysv_hugetlb", EPERM, "shmget");
	cr_assert_eq(inj.shmget_calls, 2u);
}

Test(faults, sysv_shmget_enomem_fails_on_and_falls_back_under_try)
{
	inj.shmget_errno = ENOMEM;
	on_fails_try_falls_back("sysv_hugetlb", ENOMEM, "shmget");
}

Test(faults, memfd_create_enodev_at_create_fails_on_and_falls_back_under_try)
{
	/* let probe's memfd_create through each time, fail the one create() makes */
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	inj.memfd_errno = ENODEV;
	inj.memfd_pass = 1;
	set("provider=memfd_hugetlb,huge_pages=on");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "got %s", hpshm_errname(rc));
	cr_assert_eq(inj.memfd_calls, 2u, "probe then create should each call memfd_create");
	cr_assert_eq(r.attempts[0].sys_errno, ENODEV);
	cr_assert_str_eq(r.attempts[0].call, "memfd_create");
	assert_nothing_leaked();

	inj.memfd_calls = 0;
	set("provider=memfd_hugetlb,plain,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.attempts[0].sys_errno, ENODEV);
	cr_assert_str_eq(r.attempts[0].call, "memfd_create");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, memfd_create_enodev_at_probe_is_recorded_as_probe)
{
	inj.memfd_errno = ENODEV;
	on_fails_try_falls_back("memfd_hugetlb", ENODEV, "probe");
}

/*
 * Without memfd_create (ENOSYS: an old kernel, a seccomp filter) plain maps MAP_ANONYMOUS
 * memory, which fork() children share but a child started by exec cannot map.  That is fine
 * for reattach=off, and must be refused, not handed over without a token, for reattach=exec.
 */
Test(faults, plain_without_memfd_serves_fork_children_and_is_refused_for_reattach_exec)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char tok[HPSHM_TOKEN_MAX];
	int rc;

	inj.memfd_plain_errno = ENOSYS;
	set("provider=plain,huge_pages=off,reattach=off");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	memset(hpshm_segment_address(seg), 0x5a, hpshm_segment_size(seg));
	cr_assert_lt(hpshm_segment_token(seg, tok, sizeof tok, &err), 0, "anonymous memory has no token");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();

	seg = NULL;
	set("provider=plain,huge_pages=off,reattach=exec");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_lt(rc, 0, "reattach=exec on memory no child can map succeeded");
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_eq(r.attempts[0].result, HPSHM_EUNAVAILABLE, "%s", hpshm_errname(r.attempts[0].result));
	cr_assert(strstr(r.attempts[0].reason, "re-attached") != NULL, "%s", r.attempts[0].reason);
	cr_assert(strstr(err.message, "reattach") != NULL, "the error does not name the key: %s", err.message);
	assert_nothing_leaked();
}

/* ---- calls outside create() go through the tables too ---- */

Test(faults, address_pick_for_reattach_goes_through_the_table)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	/* The range a re-attachable segment will take is found with a PROT_NONE reservation. */
	inj.reserve_errno = ENOMEM;
	set("provider=plain,reattach=exec");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_lt(rc, 0, "the injected mmap failure never reached the address pick");
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].call, "mmap");
	cr_assert(strstr(r.attempts[0].reason, "address"), "reason: %s", r.attempts[0].reason);
	assert_nothing_leaked();
}

static int count_object(void *user, const hpshm_object *obj)
{
	(void)obj;
	(*(int *)user)++;
	return 0;
}

Test(faults, sysv_scan_reads_its_list_through_the_table)
{
	hpshm_error err;
	int n = 0, rc;

	inj.sysvipc_errno = EACCES;
	memset(&err, 0, sizeof err);
	rc = hpshm_objects_list(count_object, &n, &err);
	cr_assert_eq(rc, HPSHM_EIO, "the injected fopen failure never reached the SysV scan: got %s",
		     hpshm_errname(rc));
	cr_assert(strstr(err.message, "sysv_hugetlb"), "%s", err.message);
}

Test(faults, hugetlbfs_scan_stats_its_mounts_through_the_table)
{
	char line[512];
	hpshm_error err;
	int n = 0, rc;

	/* A hugetlbfs mount at the fake tree's own directory: the scan stats it to skip a
	 * file system it has seen under another mount point. */
	snprintf(inj.stat_watch, sizeof inj.stat_watch, "%s", hpt_fakeroot_dir());
	snprintf(line, sizeof line, "900 1 0:99 / %s rw,relatime - hugetlbfs none rw,pagesize=2M\n",
		 hpt_fakeroot_dir());
	hpt_fakeroot_write("proc/self/mountinfo", line);
	memset(&err, 0, sizeof err);
	rc = hpshm_objects_list(count_object, &n, &err);
	cr_assert_geq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(inj.stat_watch_calls, 1u, "the hugetlbfs scan's stat() of %s bypassed the table",
		     inj.stat_watch);
}

/*
 * A reason must name the problem before the path: with the path first (and the fix appended)
 * a long hugetlbfs_path cut the reason off before it said what was wrong.
 */
Test(faults, hugetlbfs_reason_with_a_long_path_says_what_is_wrong_whole)
{
	char dir[256], reason[HPSHM_TEXT_MAX], kv[320];
	size_t ps = 0;
	int n, rc;

	n = snprintf(dir, sizeof dir, "%s/", hpt_fakeroot_dir());
	while (n < 200)
		dir[n++] = 'd';
	dir[n] = '\0';
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s: %s", dir, strerror(errno));
	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s", dir);
	set(kv);
	memset(reason, 0, sizeof reason);
	rc = hpshm_provider_probe("hugetlbfs", 4 * MIB, cfg, &ps, reason, sizeof reason);
	(void)rmdir(dir);
	cr_assert_eq(rc, HPSHM_EUNAVAILABLE, "probe of a directory not on hugetlbfs: %s", hpshm_errname(rc));
	cr_assert(strstr(reason, "is not on hugetlbfs") != NULL, "the reason does not say what is wrong: %s", reason);
	cr_assert(strstr(reason, dir) != NULL, "the reason lost the path: %s", reason);
	cr_assert_lt(strlen(reason), sizeof reason - 1, "the reason was cut: %s", reason);
}

/*
 * A host of containers can show dozens of hugetlbfs mounts; the one this process may write to
 * must be found wherever it is in the table (the list once stopped at 16).
 */
Test(faults, hugetlbfs_finds_a_writable_mount_after_twenty_it_cannot_use)
{
	char line[512], *table;
	size_t ps = 0, used = 0, cap = 64 * 512;
	int rc;

	table = calloc(1, cap);
	cr_assert_not_null(table);
	for (int i = 0; i < 20; i++)
		used += (size_t)snprintf(table + used, cap - used,
					 "%d 1 0:%d / /nonexistent/hpt-mount-%d rw - hugetlbfs none rw,pagesize=2M\n",
					 900 + i, 90 + i, i);
	snprintf(line, sizeof line, "999 1 0:89 / %s rw - hugetlbfs none rw,pagesize=2M\n", hpt_fakeroot_dir());
	snprintf(table + used, cap - used, "%s", line);
	hpt_fakeroot_write("proc/self/mountinfo", table);
	free(table);
	set("provider=hugetlbfs,huge_pages=on");
	rc = hpshm_provider_probe("hugetlbfs", 4 * MIB, cfg, &ps, line, sizeof line);
	cr_assert_eq(rc, 0, "the 21st mount, the one writable, was not found: %s: %s", hpshm_errname(rc), line);
	cr_assert_eq(ps, 2 * MIB);
}

/* ---- populate ---- */

Test(faults, plain_populate_madvise_efault_is_epopulate_and_undone)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	inj.madvise_errno = EFAULT;
	set("provider=plain,populate=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE, "got %s", hpshm_errname(rc));
	cr_assert_null(seg);
	cr_assert_eq(inj.populate_madvise_calls, 1u);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, EFAULT);
	cr_assert_str_eq(r.attempts[0].call, "madvise");
	assert_nothing_leaked();
}

Test(faults, plain_populate_fallocate_enospc_is_epopulate)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	const char *name;
	unsigned caps = 0, i;
	int rc;

	for (i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if (!strcmp(name, "plain"))
			break;
	if (!(caps & HPSHM_CAP_FD)) {
		hpshm__posix_sys_reset();
		hpshm__linux_sys_reset();
		hpt_fakeroot_destroy(); /* no .fini after a skip */
		HPT_SKIP("plain has no descriptor (no HPSHM_CAP_FD): fallocate is not its populate method");
	}
	inj.fallocate_errno = ENOSPC;
	set("provider=plain,populate=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE, "got %s", hpshm_errname(rc));
	cr_assert_eq(inj.fallocate_calls, 1u);
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, ENOSPC);
	cr_assert_str_eq(r.attempts[0].call, "fallocate");
	assert_nothing_leaked();
}

/*
 * memfd_hugetlb's populate makes no fallocate (huge pages are faulted in tail first, see
 * ports/linux/populate.c), and a page the kernel refuses to its madvise is EPOPULATE with the
 * pool's hint; plain's populate of base pages still starts with fallocate.
 */
Test(faults, memfd_hugetlb_populate_efault_is_epopulate_without_fallocate)
{
	struct hpt_pool pool;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	if (hpt_pool_read(2 * MIB, &pool) < 0 || hpt_pool_available(&pool) < 2) {
		HPT_UNAVAILABLE("pool", "memfd_hugetlb",
				"needs 2 free 2MiB pages in the real pool to reach memfd_hugetlb's populate "
				"(vm.nr_hugepages)");
	}
	inj.fallocate_errno = ENOSPC;   /* would fail any fallocate */
	inj.madvise_errno = EFAULT;
	set("provider=memfd_hugetlb,huge_pages=on,populate=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert(rc == HPSHM_ENOHUGE || rc == HPSHM_EPOPULATE, "got %s", hpshm_errname(rc));
	/* Populate comes after the mapping; an emulator may refuse the mapping itself. */
	if (inj.populate_madvise_calls == 0 && hpt_emulator() && r.nattempts &&
	    r.attempts[0].result != HPSHM_EPOPULATE) {
		hpshm__posix_sys_reset();
		hpshm__linux_sys_reset();
		hpt_fakeroot_destroy();
		hpt_skip_emulated_refusal(rc, &err);
	}
	cr_assert_eq(inj.fallocate_calls, 0u, "huge pages are faulted in by madvise alone");
	cr_assert_eq(inj.populate_madvise_calls, 1u, "the first page's call failed and ended the populate");
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, EFAULT);
	cr_assert_str_eq(r.attempts[0].call, "madvise");
	cr_assert(strstr(err.hint, "nr_hugepages") || strstr(err.hint, "hugetlb."), "hint: %s", err.hint);
	assert_nothing_leaked();

	set("provider=memfd_hugetlb,plain,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_EPOPULATE, "got %s", hpshm_errname(rc));
	cr_assert_eq(r.nattempts, 2u);
	cr_assert_str_eq(r.attempts[1].call, "fallocate", "plain's populate of base pages starts with fallocate");
	cr_assert_eq(r.attempts[1].sys_errno, ENOSPC);
	assert_nothing_leaked();
}

/* A HUGE fake whose mapping the library sees as hugetlb, so create() succeeds and populate runs. */
static struct hpt_fake *register_fake_huge(void)
{
	hpshm_error err;
	int rc;

	fake_huge = hpt_fake_init(0, "fake_huge", HPSHM_CAP_HUGE);
	fake_huge->smaps_huge = 1;
	rc = hpt_fake_register(fake_huge, &err);
	cr_assert_eq(rc, 0, "%s", err.message);
	return fake_huge;
}

Test(faults, huge_populate_efault_under_on_fails_and_destroys_the_mapping)
{
	struct hpt_fake *f = register_fake_huge();
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	inj.madvise_errno = EFAULT;
	set("provider=fake_huge,huge_pages=on,populate=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert(rc == HPSHM_ENOHUGE || rc == HPSHM_EPOPULATE, "got %s", hpshm_errname(rc));
	cr_assert_null(seg);
	cr_assert_eq(f->creates, 1u);
	cr_assert_eq(f->destroys, 1u, "the mapping that could not be populated was not destroyed");
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, EFAULT);
	cr_assert_str_eq(r.attempts[0].call, "madvise");
	assert_nothing_leaked();
}

Test(faults, huge_populate_efault_under_try_falls_back_recording_epopulate)
{
	struct hpt_fake *f = register_fake_huge();
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	/* fail the populate of the fake's mapping only: plain's must work */
	inj.madvise_errno = EFAULT;
	inj.madvise_fake_only = 1;
	set("provider=fake_huge,plain,huge_pages=try,populate=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(f->destroys, 1u);
	cr_assert_eq(r.nattempts, 2u);
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, EFAULT);
	cr_assert_eq(r.attempts[1].result, 0);
	cr_assert_eq(r.mapped_size, 3 * MIB, "the fallback must use the original size");
	cr_assert_neq(r.populate, (unsigned)HPSHM_POPULATE_NONE, "populate=on: plain was not populated");
	cr_assert_eq(inj.populate_madvise_calls, 2u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, huge_populate_succeeds_and_is_reported)
{
	struct hpt_fake *f = register_fake_huge();
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	set("provider=fake_huge,huge_pages=on,populate=on");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(r.huge, 1);
	cr_assert(r.populate & HPSHM_POPULATE_MADVISE, "populate=%s", hpshm_populate_name(r.populate));
	/* 3 MiB is two 2 MiB pages: one call at each page's tail, then one over the whole range */
	cr_assert_eq(inj.populate_madvise_calls, 3u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(f->destroys, 1u);
}

/* A v1 hugetlb cgroup with a fault-time limit and no reservation limit: the SIGBUS risk. */
static void fake_cgroup_fault_risk(void)
{
	hpt_fakeroot_write("proc/self/cgroup", "12:hugetlb:/box\n0::/\n");
	hpt_fakeroot_write("proc/self/mountinfo",
			   "30 25 0:27 / /sys/fs/cgroup/hugetlb rw,nosuid,nodev,noexec,relatime shared:11 - cgroup "
			   "cgroup rw,hugetlb\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/box/hugetlb.2MB.limit_in_bytes", "1073741824\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/box/hugetlb.2MB.usage_in_bytes", "0\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/box/hugetlb.2MB.rsvd.limit_in_bytes", "9223372036854771712\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/box/hugetlb.2MB.rsvd.usage_in_bytes", "0\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/hugetlb.2MB.limit_in_bytes", "9223372036854771712\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/hugetlb.2MB.usage_in_bytes", "0\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/hugetlb.2MB.rsvd.limit_in_bytes", "9223372036854771712\n");
	hpt_fakeroot_write("sys/fs/cgroup/hugetlb/hugetlb.2MB.rsvd.usage_in_bytes", "0\n");
}

Test(faults, populate_auto_populates_huge_pages_under_a_fault_time_cgroup_limit)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	register_fake_huge();
	fake_cgroup_fault_risk();
	set("provider=fake_huge,huge_pages=on,populate=auto");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_geq(inj.populate_madvise_calls, 1u, "a fault-time cgroup limit must make auto populate");
	cr_assert_neq(r.populate, (unsigned)HPSHM_POPULATE_NONE);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* The advice comes from the hugetlb providers' shared probe, which reads the cgroup. */
Test(faults, hugetlb_probe_advises_populate_under_a_fault_time_cgroup_limit)
{
	struct hpshm_request rq, at;
	struct hpshm_probe pr;

	hpt_fakeroot_set_pool(64, 64);
	memset(&rq, 0, sizeof rq);
	rq.size = 3 * MIB;
	rq.page_size = HPSHM_PAGE_SIZE_DEFAULT;
	memset(&pr, 0, sizeof pr);
	cr_assert_eq(hpshm__hugetlb_probe(&rq, &pr, &at), 0, "%s", pr.reason);
	cr_assert_eq(pr.advice & HPSHM_ADVISE_POPULATE, 0u, "no cgroup limit, no advice");
	cr_assert_eq(pr.page_size, 2 * MIB);
	cr_assert_eq(at.size, 4 * MIB, "the backend checks whole pages");

	fake_cgroup_fault_risk();
	memset(&pr, 0, sizeof pr);
	cr_assert_eq(hpshm__hugetlb_probe(&rq, &pr, &at), 0, "%s", pr.reason);
	cr_assert_neq(pr.advice & HPSHM_ADVISE_POPULATE, 0u, "a fault-time limit without a reservation limit");
}

Test(faults, populate_auto_under_a_cgroup_limit_turns_efault_into_an_error)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	register_fake_huge();
	fake_cgroup_fault_risk();
	inj.madvise_errno = EFAULT;
	inj.madvise_fake_only = 1;
	set("provider=fake_huge,plain,huge_pages=try,populate=auto");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.attempts[0].result, HPSHM_EPOPULATE);
	cr_assert_eq(r.attempts[0].sys_errno, EFAULT);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, populate_auto_leaves_huge_pages_alone_without_a_cgroup_limit)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	register_fake_huge();
	set("provider=fake_huge,huge_pages=on,populate=auto");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(inj.populate_madvise_calls + inj.fallocate_calls, 0u);
	cr_assert_eq(r.populate, (unsigned)HPSHM_POPULATE_NONE);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(faults, populate_off_never_populates_even_under_a_cgroup_limit)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	register_fake_huge();
	fake_cgroup_fault_risk();
	set("provider=fake_huge,huge_pages=on,populate=off");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(inj.populate_madvise_calls + inj.fallocate_calls, 0u);
	cr_assert_eq(r.populate, (unsigned)HPSHM_POPULATE_NONE);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(faults, populate_auto_leaves_plain_alone)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	fake_cgroup_fault_risk();
	set("provider=plain,populate=auto");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(inj.populate_madvise_calls + inj.fallocate_calls, 0u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, populate_on_populates_plain)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	set("provider=plain,populate=on");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_gt(inj.populate_madvise_calls + inj.fallocate_calls, 0u);
	cr_assert_neq(r.populate, (unsigned)HPSHM_POPULATE_NONE);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}

Test(faults, populate_without_madvise_support_falls_back_to_a_guarded_touch)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	/* a kernel before 5.14 answers EINVAL to MADV_POPULATE_WRITE */
	inj.madvise_errno = EINVAL;
	set("provider=plain,populate=on");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(r.populate & HPSHM_POPULATE_TOUCH, "populate=%s", hpshm_populate_name(r.populate));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	assert_nothing_leaked();
}
