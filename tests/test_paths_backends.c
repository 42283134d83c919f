/* SPDX-License-Identifier: MIT */
/*
 * tests/test_paths_backends.c -- the descriptor backends (plain, memfd_hugetlb, mmap_hugetlb,
 * hugetlbfs and what they share in backends/fixmap.c and named*.c) when a call fails half way: at create,
 * at re-attach, at destroy, and while ls and gc look at a named object.
 *
 * The library sees a fake sysroot (fakes.h) with 64 free 2 MiB pages, so every hugetlb probe
 * passes on any machine; hugetlbfs is pointed at a temporary directory that statfs() and
 * fstatfs() report as a 2 MiB hugetlbfs mount (as in test_paths_create.c), and the probe's
 * pools, default size and plan are read from the fake tree.  Named plain
 * segments are real objects in /dev/shm.  One call is then failed, or made to answer as it
 * would in a race, through the system call tables.  Each test checks the code, the call and
 * errno the library reports, and that nothing is left: descriptors as before, no object under
 * the name unless the test says whose it is, and (the fixture) the pools, SysV ids, hugetlbfs
 * mounts and /dev/shm as before.  Only the two memfd_hugetlb destroys at the end need a huge
 * page (from the real pool); they skip, with the reason, without one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "harness.h"

#include "base/header.h"
#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "ports/linux/linux.h"
#include "ports/posix/sys.h"

#define MIB HPT_MIB

static struct hpshm__syscalls real;
static struct hpshm__linux_syscalls real_linux;

/* What the hooks do; all zero: pass every call through. */
static struct {
	const char *path;        /* the object the counters and "after" injections watch, NULL: any */
	unsigned opens;          /* open/shm_open calls of path seen */
	unsigned arm_after;      /* the injections marked (armed) act only after this many opens of path */

	int shm_open_errno;      /* (armed) shm_open/open of path fails with this */
	int fstat_errno;         /* (armed) fstat fails with this ... */
	unsigned fstat_skip;     /* ... after letting this many armed calls through */
	mode_t fstat_type;       /* (armed) fstat reports this file type */
	off_t fstat_size;        /* (armed) fstat reports this size */
	int lock_ex_errno;       /* (armed) flock(LOCK_EX) fails with this */
	int lock_sh_errno;       /* flock(LOCK_SH) fails with this */
	int unlink_errno;        /* shm_unlink/unlink fails with this */
	int munmap_errno;        /* munmap of a PROT_READ|WRITE mapping fails with this, once */
	int close_errno;         /* close closes, then says this, once */
	int linkat_errno;        /* linkat fails with this */
	int linkat_fifo;         /* linkat: put a FIFO under the new name first, then EEXIST */
	int tmpfile_errno;       /* open(O_TMPFILE) fails with this */
	int creat_errno;         /* open(O_CREAT) fails with this */
	int fd_mmap_errno;       /* mmap(MAP_SHARED) of a descriptor fails with this */
	int anon_huge_errno;     /* mmap(MAP_HUGETLB) without a descriptor fails with this */
	int noreplace_hint;      /* mmap treats MAP_FIXED_NOREPLACE as a hint (a kernel before 4.17) */
	int memfd_huge_errno;    /* memfd_create(MFD_HUGETLB) fails with this ... */
	unsigned memfd_huge_skip; /* ... after letting this many through (the probe's) */
	int fstatfs_errno;       /* fstatfs of a descriptor on the fake mount fails with this */
	unsigned fstat_type_skip; /* fstat_type acts only after this many armed fstat calls */
	int any_fstatfs_errno;   /* fstatfs of a regular file anywhere fails with this */
	int memfd_plain_errno;   /* memfd_create without MFD_HUGETLB fails with this */
	int anon_mmap_errno;     /* mmap(MAP_ANONYMOUS) of base pages fails with this */
	int ftruncate_errno;     /* ftruncate fails with this */
	int fchmod_errno;        /* fchmod fails with this */
} inj;

static int watched(const char *path)
{
	return inj.path == NULL || strcmp(path, inj.path) == 0;
}

static int armed(void)
{
	return inj.opens > inj.arm_after;
}

static int h_shm_open(const char *name, int flags, mode_t mode)
{
	if (watched(name)) {
		inj.opens++;
		if (armed() && inj.shm_open_errno) {
			errno = inj.shm_open_errno;
			return -1;
		}
	}
	return real.shm_open(name, flags, mode);
}

static int h_open(const char *path, int flags, mode_t mode)
{
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
	if (inj.path && watched(path)) {
		inj.opens++;
		if (armed() && inj.shm_open_errno) {
			errno = inj.shm_open_errno;
			return -1;
		}
	}
	return real.open(path, flags, mode);
}

static int h_fstat(int fd, struct stat *st)
{
	int rc;

	if (armed() && inj.fstat_errno) {
		if (inj.fstat_skip == 0) {
			errno = inj.fstat_errno;
			return -1;
		}
		inj.fstat_skip--;
	}
	rc = real.fstat(fd, st);
	if (rc == 0 && armed() && inj.fstat_type && inj.fstat_type_skip > 0)
		inj.fstat_type_skip--;
	else if (rc == 0 && armed() && inj.fstat_type)
		st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | inj.fstat_type;
	if (rc == 0 && armed() && inj.fstat_size)
		st->st_size = inj.fstat_size;
	return rc;
}

static int h_flock(int fd, int op)
{
	if ((op & LOCK_EX) && armed() && inj.lock_ex_errno) {
		errno = inj.lock_ex_errno;
		return -1;
	}
	if ((op & LOCK_SH) && inj.lock_sh_errno) {
		errno = inj.lock_sh_errno;
		return -1;
	}
	return real.flock(fd, op);
}

static int h_shm_unlink(const char *name)
{
	if (inj.unlink_errno) {
		errno = inj.unlink_errno;
		return -1;
	}
	return real.shm_unlink(name);
}

static int h_unlink(const char *path)
{
	if (inj.unlink_errno) {
		errno = inj.unlink_errno;
		return -1;
	}
	return real.unlink(path);
}

static int h_close(int fd)
{
	int rc = real.close(fd);

	if (rc == 0 && inj.close_errno) {
		errno = inj.close_errno;
		inj.close_errno = 0;
		return -1;
	}
	return rc;
}

static int h_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	if (inj.linkat_fifo) {
		inj.linkat_fifo = 0;
		(void)mkfifo(newpath, 0600);
		errno = EEXIST;
		return -1;
	}
	if (inj.linkat_errno) {
		errno = inj.linkat_errno;
		return -1;
	}
	return real.linkat(olddirfd, oldpath, newdirfd, newpath, flags);
}

static void *h_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd >= 0 && (flags & MAP_SHARED) && prot != PROT_NONE && inj.fd_mmap_errno) {
		errno = inj.fd_mmap_errno;
		return MAP_FAILED;
	}
	if (fd < 0 && (flags & MAP_ANONYMOUS) && !(flags & MAP_HUGETLB) && prot != PROT_NONE && inj.anon_mmap_errno) {
		errno = inj.anon_mmap_errno;
		return MAP_FAILED;
	}
	if (fd < 0 && (flags & MAP_HUGETLB) && inj.anon_huge_errno) {
		errno = inj.anon_huge_errno;
		return MAP_FAILED;
	}
	if (inj.noreplace_hint && addr && (flags & MAP_FIXED_NOREPLACE)) {
		/* Linux before 4.17 does not know the flag: the address is a hint, and the kernel
		 * picks another place when the hint does not suit it.  Make it pick another. */
		void *p = real.mmap(NULL, len, prot, flags & ~MAP_FIXED_NOREPLACE, fd, off);

		if (p == addr) {
			void *q = real.mmap(NULL, len, prot, flags & ~MAP_FIXED_NOREPLACE, fd, off);

			(void)real.munmap(p, len);
			p = q;
		}
		return p;
	}
	return real.mmap(addr, len, prot, flags, fd, off);
}

static int h_munmap(void *addr, size_t len)
{
	if (inj.munmap_errno) {
		errno = inj.munmap_errno;
		inj.munmap_errno = 0;
		return -1;
	}
	return real.munmap(addr, len);
}

static int h_memfd_create(const char *name, unsigned flags)
{
	if ((flags & MFD_HUGETLB) && inj.memfd_huge_errno) {
		if (inj.memfd_huge_skip == 0) {
			errno = inj.memfd_huge_errno;
			return -1;
		}
		inj.memfd_huge_skip--;
	}
	if (!(flags & MFD_HUGETLB) && inj.memfd_plain_errno) {
		errno = inj.memfd_plain_errno;
		return -1;
	}
	return real_linux.memfd_create(name, flags);
}

static int h_ftruncate(int fd, off_t len)
{
	if (inj.ftruncate_errno) {
		errno = inj.ftruncate_errno;
		return -1;
	}
	return real.ftruncate(fd, len);
}

static int h_fchmod(int fd, mode_t mode)
{
	if (inj.fchmod_errno) {
		errno = inj.fchmod_errno;
		return -1;
	}
	return real.fchmod(fd, mode);
}

/* A directory that statfs() and fstatfs() report as a 2 MiB hugetlbfs mount. */
static const char *fake_mount = "";

static int h_statfs(const char *path, struct statfs *buf)
{
	int rc = real_linux.statfs(path, buf);

	if (rc == 0 && fake_mount[0] && strcmp(path, fake_mount) == 0)
		hpt_as_hugetlbfs(buf, 2 * MIB);
	return rc;
}

static int h_fstatfs(int fd, struct statfs *buf)
{
	int rc;

	if (inj.any_fstatfs_errno) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			errno = inj.any_fstatfs_errno;
			return -1;
		}
	}
	if (inj.fstatfs_errno && hpt_on_fake_mount(fake_mount, fd)) {
		struct stat st;

		/* The mount's directory still answers: only its files fail. */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			errno = inj.fstatfs_errno;
			return -1;
		}
	}
	rc = real_linux.fstatfs(fd, buf);
	if (rc == 0 && hpt_on_fake_mount(fake_mount, fd))
		hpt_as_hugetlbfs(buf, 2 * MIB);
	return rc;
}

/* ---- suite ---- */

static hpshm_config *cfg;
static int fds_before;
static char name[64];      /* this test's segment name */
static char shm_path[96];  /* "/hpshm.<name>", as shm_open() takes it */
static char dev_path[128]; /* "/dev/shm/hpshm.<name>" */
static char mnt_path[160]; /* "<fake mount>/hpshm.<name>" */

static void hooks_on(void)
{
	hpshm__posix_sys.shm_open = h_shm_open;
	hpshm__posix_sys.open = h_open;
	hpshm__posix_sys.fstat = h_fstat;
	hpshm__posix_sys.flock = h_flock;
	hpshm__posix_sys.shm_unlink = h_shm_unlink;
	hpshm__posix_sys.unlink = h_unlink;
	hpshm__posix_sys.close = h_close;
	hpshm__posix_sys.linkat = h_linkat;
	hpshm__posix_sys.mmap = h_mmap;
	hpshm__posix_sys.munmap = h_munmap;
	hpshm__posix_sys.ftruncate = h_ftruncate;
	hpshm__posix_sys.fchmod = h_fchmod;
	hpshm__linux_sys.memfd_create = h_memfd_create;
	hpshm__linux_sys.statfs = h_statfs;
	hpshm__linux_sys.fstatfs = h_fstatfs;
}

/* What .fini undoes, and a skip (hpt_fixture_undo_on_skip()): what is still there. */
static void backends_undo(void)
{
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	hpshm_config_free(cfg);
	cfg = NULL;
	if (dev_path[0])
		(void)unlink(dev_path);
	if (mnt_path[0])
		(void)unlink(mnt_path);
	dev_path[0] = mnt_path[0] = '\0';
	hpt_fake_mount_remove();
	hpt_fakeroot_destroy();
}

static void backends_init(void)
{
	hpt_fixture_init();
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	real = hpshm__posix_sys;
	real_linux = hpshm__linux_sys;
	memset(&inj, 0, sizeof inj);
	hpt_fakeroot_create(64, 64);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	snprintf(name, sizeof name, "hpt-paths-backends-%ld", (long)getpid());
	snprintf(shm_path, sizeof shm_path, "/hpshm.%s", name);
	snprintf(dev_path, sizeof dev_path, "/dev/shm/hpshm.%s", name);
	fake_mount = hpt_fake_mount_make();
	snprintf(mnt_path, sizeof mnt_path, "%s/hpshm.%s", fake_mount, name);
	hooks_on();
	fds_before = hpt_fd_count();
	hpt_fixture_undo_on_skip(backends_undo);
}

static void backends_fini(void)
{
	backends_undo();
	hpt_fixture_fini();
}

TestSuite(paths_backends, .init = backends_init, .fini = backends_fini, .timeout = 60);

#define set(...) hpt_config_parsef(cfg, __VA_ARGS__)

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
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

static void assert_fds_as_before(void)
{
	cr_assert_eq(hpt_fd_count(), fds_before, "descriptors: %d before, %d after", fds_before, hpt_fd_count());
}

/* A failed create: its error, with the report's first attempt in *a. */
static hpshm_error create_fails(size_t size, hpshm_attempt *a)
{
	hpshm_report r;
	hpshm_error err = hpt_create_fails(cfg, size, &r);

	if (a)
		*a = r.attempts[0];
	assert_fds_as_before();
	return err;
}

/* A regular file of len bytes under the plain name, its last 4 KiB filled with fill. */
static void put_file(off_t len, int fill)
{
	char tail[4096];
	int fd = shm_open(shm_path, O_RDWR | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0, "%s: %s", shm_path, strerror(errno));
	cr_assert_eq(ftruncate(fd, len), 0);
	if (len >= (off_t)sizeof tail && fill) {
		memset(tail, fill, sizeof tail);
		cr_assert_eq(pwrite(fd, tail, sizeof tail, len - (off_t)sizeof tail), (ssize_t)sizeof tail);
	}
	close(fd);
}

/* A dead named plain segment under the name: its creator was killed (hooks off meanwhile). */
static void put_dead_segment(void)
{
	set("provider=plain,name=%s", name);
	hpshm__posix_sys_reset();
	hpshm__linux_sys_reset();
	hpt_crashed_creator(cfg, 4 * MIB, "named plain segment");
	hooks_on();
	cr_assert(exists(dev_path), "the dead creator left nothing under %s", dev_path);
	fds_before = hpt_fd_count();
}

/* ---- create over what sits under the name (named_create.c named_recycle) ---- */

Test(paths_backends, create_over_an_object_whose_look_fails_keeps_it_and_names_its_owner)
{
	hpshm_error err;

	put_file(4 * MIB, 0);
	set("provider=plain,name=%s", name);
	inj.path = shm_path;
	inj.fstat_errno = EIO;   /* the fstat() right after the open, in the look */
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(hpt_contains(err.message, "uid 0"), "%s", err.message);
	cr_assert(exists(dev_path), "the object was removed");
}

Test(paths_backends, create_over_a_name_swapped_for_a_fifo_after_its_lstat_keeps_it)
{
	hpshm_error err;

	put_file(4 * MIB, 0);
	set("provider=plain,name=%s", name);
	inj.path = shm_path;
	inj.fstat_type = S_IFIFO;   /* lstat() saw a file, the descriptor is a FIFO */
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert(hpt_contains(err.message, "a FIFO"), "%s", err.message);
	cr_assert(exists(dev_path), "the object was removed");
}

Test(paths_backends, create_that_cannot_fstat_the_old_object_is_esys_fstat_and_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	set("provider=plain,name=%s", name);
	inj.path = shm_path;
	inj.fstat_errno = EIO;
	inj.fstat_skip = 1;   /* the look's own fstat() passes, the recycle's fails */
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "fstat");
	cr_assert_eq(err.sys_errno, EIO);
	cr_assert(exists(dev_path), "the dead segment was removed without a look");
}

Test(paths_backends, create_that_cannot_tell_whether_the_old_object_is_in_use_is_esys_flock)
{
	hpshm_error err;

	put_dead_segment();
	set("provider=plain,name=%s", name);
	inj.lock_ex_errno = ENOLCK;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "flock");
	cr_assert_eq(err.sys_errno, ENOLCK);
	cr_assert(exists(dev_path), "a segment that may be in use was removed");
}

Test(paths_backends, create_over_a_dead_segment_it_may_not_unlink_is_eexist_with_the_gc_hint)
{
	hpshm_error err;

	put_dead_segment();
	set("provider=plain,name=%s", name);
	inj.unlink_errno = EPERM;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "shm_unlink");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(hpt_contains(err.hint, "hpshm gc"), "hint: %s", err.hint);
	cr_assert(hpt_contains(err.message, "uid 0"), "%s", err.message);
}

Test(paths_backends, create_over_a_dead_segment_whose_unlink_fails_otherwise_is_esys)
{
	hpshm_error err;

	put_dead_segment();
	set("provider=plain,name=%s", name);
	inj.unlink_errno = EIO;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "shm_unlink");
	cr_assert_eq(err.sys_errno, EIO);
}

Test(paths_backends, create_over_an_unopenable_object_of_an_unknown_uid_names_the_uid)
{
	hpshm_error err;

	put_file(4 * MIB, 0);
	cr_assert_eq(chown(dev_path, 54321, 54321), 0, "%s", strerror(errno));
	set("provider=plain,name=%s", name);
	inj.path = shm_path;
	inj.shm_open_errno = EACCES;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.message, "uid 54321"), "%s", err.message);
	cr_assert(hpt_contains(err.hint, "uid 54321"), "hint: %s", err.hint);
	cr_assert(exists(dev_path), "another user's object was removed");
}

Test(paths_backends, create_recycles_a_dead_segment_whose_header_was_torn_before_its_magic)
{
	struct hpshm_header h;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int fd;

	/* What a creator killed while writing its header leaves: every field but the magic. */
	put_file(4 * MIB, 0);
	memset(&h, 0, sizeof h);
	h.version = HPSHM_HEADER_VERSION;
	h.header_size = (uint32_t)sizeof h;
	snprintf(h.provider, sizeof h.provider, "plain");
	memcpy(h.magic, "HPSH", 4);   /* partly there */
	fd = shm_open(shm_path, O_RDWR, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, &h, sizeof h, 4 * (off_t)MIB - HPSHM_HEADER_REGION), (ssize_t)sizeof h);
	close(fd);
	set("provider=plain,name=%s", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(dev_path));
	assert_fds_as_before();
}

Test(paths_backends, create_over_a_file_with_another_providers_torn_header_keeps_it)
{
	struct hpshm_header h;
	hpshm_error err;
	int fd;

	put_file(4 * MIB, 0);
	memset(&h, 0, sizeof h);
	h.version = HPSHM_HEADER_VERSION;
	h.header_size = (uint32_t)sizeof h;
	snprintf(h.provider, sizeof h.provider, "hugetlbfs");   /* not plain's */
	fd = shm_open(shm_path, O_RDWR, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, &h, sizeof h, 4 * (off_t)MIB - HPSHM_HEADER_REGION), (ssize_t)sizeof h);
	close(fd);
	set("provider=plain,name=%s", name);
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert(hpt_contains(err.message, "not hpshm's header"), "%s", err.message);
	cr_assert(exists(dev_path));
}

/* ---- re-attach by name (named.c hpshm__named_attach) ---- */

/* A token of a named plain segment that is then destroyed, so that what the test puts under
 * the name is what attach finds. */
static void token_of_a_gone_segment(char *token)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	set("provider=plain,name=%s,reattach=exec", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, HPSHM_TOKEN_MAX, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(dev_path));
}

static hpshm_error attach_fails(const char *token, int want)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_segment_attach(&seg, token, NULL, &err);
	cr_assert_eq(rc, want, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(seg);
	assert_fds_as_before();
	return err;
}

Test(paths_backends, attach_to_a_fifo_put_under_the_name_is_einval_and_opens_nothing)
{
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_gone_segment(token);
	cr_assert_eq(mkfifo(dev_path, 0600), 0, "%s", strerror(errno));
	err = attach_fails(token, HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "a FIFO"), "%s", err.message);
	cr_assert(exists(dev_path), "the FIFO was removed");
}

Test(paths_backends, attach_to_a_symbolic_link_put_under_the_name_is_einval_and_never_follows_it)
{
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_gone_segment(token);
	cr_assert_eq(symlink("/etc/passwd", dev_path), 0, "%s", strerror(errno));
	err = attach_fails(token, HPSHM_EINVAL);
	cr_assert_eq(err.sys_errno, ELOOP);
	cr_assert(hpt_contains(err.message, "symbolic link"), "%s", err.message);
}

Test(paths_backends, attach_that_may_not_open_the_segment_is_eacces_with_the_user_hint)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	set("provider=plain,name=%s,reattach=exec", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0);
	fds_before = hpt_fd_count();
	inj.path = shm_path;
	inj.shm_open_errno = EACCES;
	err = attach_fails(token, HPSHM_EACCES);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.hint, "creator's user"), "hint: %s", err.hint);
	inj.shm_open_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_backends, attach_that_cannot_lock_the_segment_is_esys_flock_and_closes_it)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	set("provider=plain,name=%s,reattach=exec", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0);
	fds_before = hpt_fd_count();
	inj.lock_sh_errno = EWOULDBLOCK;   /* a gc holds LOCK_EX while it removes the segment */
	err = attach_fails(token, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "flock");
	cr_assert(hpt_contains(err.hint, "removing it"), "hint: %s", err.hint);
	inj.lock_sh_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- destroy that fails (named.c hpshm__named_destroy, fixmap.c hpshm__fd_unmap) ---- */

Test(paths_backends, destroy_of_a_named_segment_that_cannot_unmap_still_unlinks_and_closes)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	void *addr;
	size_t len;

	set("provider=plain,name=%s", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	inj.munmap_errno = EINVAL;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert(!exists(dev_path), "the name was left");
	assert_fds_as_before();
	cr_assert_eq(munmap(addr, len), 0);   /* what the failed munmap left */
}

Test(paths_backends, destroy_of_a_named_segment_whose_unlink_fails_is_esys_and_closes)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	void *addr;
	size_t len;

	set("provider=plain,name=%s", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	inj.unlink_errno = EIO;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert_eq(hpt_is_mapped(addr, len), 0, "the mapping was left");
	assert_fds_as_before();
	cr_assert(exists(dev_path));   /* what the failed unlink left; .fini removes it */
}

Test(paths_backends, destroy_of_a_named_segment_whose_close_fails_is_esys)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	set("provider=plain,name=%s", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	inj.close_errno = EIO;   /* Linux frees the descriptor all the same */
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert(!exists(dev_path));
	assert_fds_as_before();
}

Test(paths_backends, destroy_of_an_unnamed_segment_that_cannot_unmap_still_closes_its_memfd)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	void *addr;
	size_t len;

	set("provider=%s", "plain");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	inj.munmap_errno = EINVAL;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	assert_fds_as_before();
	cr_assert_eq(munmap(addr, len), 0);
}

Test(paths_backends, destroy_of_an_unnamed_segment_whose_close_fails_is_esys)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	void *addr;
	size_t len;

	set("provider=%s", "plain");
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	inj.close_errno = EIO;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert_eq(hpt_is_mapped(addr, len), 0);
	assert_fds_as_before();
}

/* ---- plain's own calls failing at create and attach (backends/plain_posix.c) ---- */

Test(paths_backends, plain_create_whose_shm_open_is_refused_is_esys_with_the_dev_shm_hint)
{
	hpshm_error err;

	set("provider=plain,name=%s", name);
	inj.tmpfile_errno = EOPNOTSUPP;   /* the shm_open(O_CREAT | O_EXCL) path */
	inj.path = shm_path;
	inj.arm_after = 1;   /* the look for an old object finds none; the create's own open fails */
	inj.shm_open_errno = EACCES;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert_eq(err.sys_errno, EACCES);
	cr_assert(hpt_contains(err.hint, "/dev/shm"), "hint: %s", err.hint);
	cr_assert(!exists(dev_path), "something was left under the name");
}

Test(paths_backends, plain_create_whose_shm_open_fails_otherwise_is_esys_without_a_hint)
{
	hpshm_error err;

	set("provider=plain,name=%s", name);
	inj.tmpfile_errno = EOPNOTSUPP;
	inj.path = shm_path;
	inj.arm_after = 1;   /* the look for an old object finds none; the create's own open fails */
	inj.shm_open_errno = ENOSPC;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "shm_open");
	cr_assert_eq(err.sys_errno, ENOSPC);
	cr_assert(!hpt_contains(err.hint, "/dev/shm"), "hint: %s", err.hint);
	cr_assert(!exists(dev_path), "something was left under the name");
}

Test(paths_backends, plain_create_that_cannot_set_the_mode_of_its_named_object_removes_it)
{
	hpshm_error err;

	set("provider=plain,name=%s,mode=0640", name);
	inj.tmpfile_errno = EOPNOTSUPP;   /* named at once, so the failure must unlink it */
	inj.fchmod_errno = EPERM;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "fchmod");
	cr_assert_eq(err.sys_errno, EPERM);
	cr_assert(!exists(dev_path), "the new object was left under the name");
}

Test(paths_backends, plain_create_that_cannot_lock_its_named_object_removes_it)
{
	hpshm_error err;

	set("provider=plain,name=%s", name);
	inj.tmpfile_errno = EOPNOTSUPP;
	inj.lock_sh_errno = ENOLCK;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "flock");
	cr_assert_eq(err.sys_errno, ENOLCK);
	cr_assert(!exists(dev_path), "the new object was left under the name");
}

Test(paths_backends, plain_create_whose_named_object_cannot_be_sized_is_enomem_and_removes_it)
{
	hpshm_error err;

	set("provider=plain,name=%s", name);
	inj.tmpfile_errno = EOPNOTSUPP;
	inj.ftruncate_errno = ENOSPC;   /* /dev/shm is full */
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ENOMEM, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "ftruncate");
	cr_assert_eq(err.sys_errno, ENOSPC);
	cr_assert(!exists(dev_path), "the new object was left under the name");
}

Test(paths_backends, plain_create_whose_memfd_cannot_be_sized_otherwise_is_esys)
{
	hpshm_error err;

	set("provider=%s", "plain");
	inj.ftruncate_errno = EIO;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "ftruncate");
	cr_assert_eq(err.sys_errno, EIO);
}

Test(paths_backends, plain_create_out_of_descriptors_for_its_memfd_is_esys_with_the_ulimit_hint)
{
	hpshm_error err;

	set("provider=%s", "plain");
	inj.memfd_plain_errno = EMFILE;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "memfd_create");
	cr_assert_eq(err.sys_errno, EMFILE);
	cr_assert(hpt_contains(err.hint, "ulimit -n"), "hint: %s", err.hint);
	inj.memfd_plain_errno = ENFILE;   /* the system's table, not the process's */
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_eq(err.sys_errno, ENFILE);
	cr_assert(hpt_contains(err.hint, "ulimit -n"), "hint: %s", err.hint);
}

Test(paths_backends, plain_create_whose_memfd_fails_otherwise_is_esys_without_the_ulimit_hint)
{
	hpshm_error err;

	set("provider=%s", "plain");
	inj.memfd_plain_errno = ENOMEM;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ESYS, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "memfd_create");
	cr_assert_eq(err.sys_errno, ENOMEM);
	cr_assert(!hpt_contains(err.hint, "ulimit -n"), "hint: %s", err.hint);
}

Test(paths_backends, plain_without_memfd_maps_anonymous_memory_that_cannot_be_reattached)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;
	size_t len;
	void *addr;

	set("provider=%s", "plain");
	inj.memfd_plain_errno = ENOSYS;   /* a kernel before 3.17 */
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	cr_assert_eq(hpt_is_mapped(addr, len), 1);
	cr_assert_eq(hpt_fd_count(), fds_before, "the anonymous segment holds a descriptor");
	memset(addr, 0x5a, 4 * MIB);
	cr_assert_eq(hpshm_segment_token(seg, token, sizeof token, &err), HPSHM_ENOTSUP);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(hpt_is_mapped(addr, len), 0, "the mapping was left");
}

Test(paths_backends, plain_without_memfd_that_cannot_map_anonymous_memory_is_enomem)
{
	hpshm_error err;

	set("provider=%s", "plain");
	inj.memfd_plain_errno = ENOSYS;
	inj.anon_mmap_errno = ENOMEM;
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_ENOMEM, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert_str_eq(err.call, "mmap");
	cr_assert_eq(err.sys_errno, ENOMEM);
}

/* A token of a live named plain segment; the caller destroys *seg. */
static void token_of_a_named_segment(hpshm_segment **seg, char *token)
{
	hpshm_error err;

	set("provider=plain,name=%s,reattach=exec", name);
	cr_assert_eq(hpshm_segment_create(seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(*seg, token, HPSHM_TOKEN_MAX, &err), 0, "%s", err.message);
	fds_before = hpt_fd_count();
	inj.path = shm_path;   /* what follows acts once attach opened the name */
}

Test(paths_backends, plain_attach_that_cannot_fstat_the_opened_object_is_esys_and_closes_it)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_named_segment(&seg, token);
	inj.fstat_errno = EIO;
	inj.fstat_skip = 1;   /* the open's own check passes, plain's look fails */
	err = attach_fails(token, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "fstat");
	cr_assert_eq(err.sys_errno, EIO);
	inj.fstat_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(dev_path));
}

Test(paths_backends, plain_attach_whose_object_is_closed_under_it_is_einval_and_closes_it)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_named_segment(&seg, token);
	inj.fstat_errno = EBADF;
	inj.fstat_skip = 1;
	err = attach_fails(token, HPSHM_EINVAL);
	cr_assert_str_eq(err.call, "fstat");
	cr_assert_eq(err.sys_errno, EBADF);
	inj.fstat_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(paths_backends, plain_attach_to_an_object_that_turns_into_a_fifo_after_its_open_is_einval)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_named_segment(&seg, token);
	inj.fstat_type = S_IFIFO;
	inj.fstat_type_skip = 1;   /* the open's own check sees the file, plain's look a FIFO */
	err = attach_fails(token, HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "not a regular file"), "%s", err.message);
	cr_assert(hpt_contains(err.hint, "token unchanged"), "hint: %s", err.hint);
	inj.fstat_type = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(dev_path));
}

Test(paths_backends, plain_attach_that_cannot_tell_the_objects_file_system_is_esys_fstatfs)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	token_of_a_named_segment(&seg, token);
	inj.any_fstatfs_errno = EIO;
	err = attach_fails(token, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "fstatfs");
	cr_assert_eq(err.sys_errno, EIO);
	inj.any_fstatfs_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!exists(dev_path));
}

/* ---- ls and gc of named plain objects (named.c hpshm__named_inspect, named_remove.c hpshm__named_remove) ---- */

struct seen {
	hpshm_object obj;   /* the object listed under dev_path */
	int          hits;
};

static int see_one(void *user, const hpshm_object *o)
{
	struct seen *s = user;

	if (strcmp(o->id, dev_path) == 0 || strcmp(o->id, shm_path) == 0) {
		s->obj = *o;
		s->hits++;
	}
	return 0;
}

static struct seen list_ours(void)
{
	struct seen s;
	hpshm_error err;

	memset(&s, 0, sizeof s);
	cr_assert_geq(hpshm_objects_list(see_one, &s, &err), 0, "%s", err.message);
	return s;
}

Test(paths_backends, ls_skips_an_object_it_may_not_open)
{
	struct seen s;

	put_dead_segment();
	cr_assert_eq(list_ours().hits, 1, "the dead segment is not listed");
	inj.path = shm_path;
	inj.shm_open_errno = EACCES;
	s = list_ours();
	cr_assert_eq(s.hits, 0, "an object ls could not open was listed");
	assert_fds_as_before();
}

Test(paths_backends, ls_skips_an_object_it_cannot_fstat_and_closes_it)
{
	put_dead_segment();
	inj.path = shm_path;
	inj.fstat_errno = EIO;
	inj.fstat_skip = 1;   /* past the open's own check */
	cr_assert_eq(list_ours().hits, 0, "an object ls could not inspect was listed");
	assert_fds_as_before();
}

Test(paths_backends, ls_lists_a_name_that_turned_into_a_link_before_its_open_as_foreign)
{
	struct seen s;

	put_dead_segment();
	inj.path = shm_path;
	inj.shm_open_errno = ELOOP;   /* replaced by a link after readdir, before the open */
	s = list_ours();
	cr_assert_eq(s.hits, 1);
	cr_assert_eq(s.obj.state, HPSHM_OBJECT_FOREIGN, "state %d: %s", s.obj.state, s.obj.note);
	cr_assert_eq(s.obj.alive, -1);
}

/* gc removes what ls listed, but an object that changes between gc's own look and its removal. */
static hpshm_error remove_fails(int want)
{
	__typeof__(inj) armed_later = inj;   /* what the test set, for the remove only */
	hpshm_error err;
	struct seen s;
	int rc;

	memset(&inj, 0, sizeof inj);
	s = list_ours();
	inj = armed_later;
	cr_assert_eq(s.hits, 1);
	cr_assert_eq(s.obj.state, HPSHM_OBJECT_DEAD, "state %d: %s", s.obj.state, s.obj.note);
	/* hpshm_objects_remove() looks again (one open) and then the provider opens it to remove it. */
	inj.path = shm_path;
	inj.opens = 0;
	inj.arm_after = 1;
	memset(&err, 0, sizeof err);
	rc = hpshm_objects_remove(&s.obj, 0, &err);
	cr_assert_eq(rc, want, "got %s: %s", hpshm_errname(rc), err.message);
	cr_assert(exists(dev_path), "the segment was removed");
	assert_fds_as_before();
	return err;
}

Test(paths_backends, gc_of_a_segment_replaced_by_a_link_after_its_look_is_einval_and_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	inj.shm_open_errno = ELOOP;
	err = remove_fails(HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "symbolic link"), "%s", err.message);
}

Test(paths_backends, gc_of_a_segment_replaced_by_a_fifo_after_its_look_is_einval_and_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	inj.fstat_type = S_IFIFO;
	err = remove_fails(HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "a FIFO"), "%s", err.message);
}

Test(paths_backends, gc_that_cannot_fstat_the_segment_is_esys_fstat_and_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	inj.fstat_errno = EIO;
	inj.fstat_skip = 1;
	err = remove_fails(HPSHM_ESYS);
	cr_assert_str_eq(err.call, "fstat");
	cr_assert_eq(err.sys_errno, EIO);
}

Test(paths_backends, gc_that_cannot_lock_the_segment_is_esys_flock_and_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	inj.lock_ex_errno = ENOLCK;
	err = remove_fails(HPSHM_ESYS);
	cr_assert_str_eq(err.call, "flock");
	cr_assert_eq(err.sys_errno, ENOLCK);
}

Test(paths_backends, gc_of_a_segment_that_became_a_file_of_another_size_keeps_it)
{
	hpshm_error err;

	put_dead_segment();
	inj.fstat_size = 12345;   /* a size hpshm never makes */
	err = remove_fails(HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "not an hpshm segment"), "%s", err.message);
}

/* ---- mapping at base_address (fixmap.c hpshm__map_at, hpshm__map_taken) ---- */

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

Test(paths_backends, a_kernel_that_takes_noreplace_as_a_hint_gets_its_mapping_undone_and_eexist)
{
	hpshm_attempt a;
	hpshm_error err;
	char addr[32];
	uintptr_t at = free_range(8 * MIB, 2 * MIB);
	int maps = hpt_maps_count();

	snprintf(addr, sizeof addr, "%#lx", (unsigned long)at);
	set("provider=plain,base_address=%s", addr);
	inj.noreplace_hint = 1;
	err = create_fails(4 * MIB, &a);
	hpt_skip_emulated_refusal(err.code, &err);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(err.message, "another mapping overlaps"), "%s", err.message);
	cr_assert_eq(hpt_maps_count(), maps, "the mapping the kernel put elsewhere was left");
	cr_assert_eq(hpt_is_mapped((void *)at, 4 * MIB), 0);
}

/* ---- memfd_hugetlb and mmap_hugetlb ---- */

Test(paths_backends, memfd_hugetlb_whose_create_finds_memfd_gone_after_the_probe_is_unavailable)
{
	hpshm_attempt a;

	set("provider=%s,huge_pages=on", "memfd_hugetlb");
	inj.memfd_huge_errno = ENOSYS;   /* a seccomp filter installed between probe and create */
	inj.memfd_huge_skip = 1;         /* the probe's */
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "memfd_create");
	cr_assert_eq(a.sys_errno, ENOSYS);
	cr_assert(hpt_contains(a.reason, "seccomp"), "%s", a.reason);
}

Test(paths_backends, memfd_hugetlb_that_rejects_the_page_size_at_create_is_unavailable)
{
	hpshm_attempt a;

	set("provider=%s,huge_pages=on", "memfd_hugetlb");
	inj.memfd_huge_errno = EINVAL;
	inj.memfd_huge_skip = 1;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert_eq(a.sys_errno, EINVAL);
	cr_assert(hpt_contains(a.reason, "page size"), "%s", a.reason);
}

Test(paths_backends, memfd_hugetlb_out_of_descriptors_at_create_is_esys_with_the_ulimit_hint)
{
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;

	set("provider=%s,huge_pages=on", "memfd_hugetlb");
	inj.memfd_huge_errno = EMFILE;
	inj.memfd_huge_skip = 1;
	cr_assert_lt(hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err), 0);
	cr_assert_eq(r.attempts[0].result, HPSHM_ESYS, "%s", r.attempts[0].reason);
	cr_assert_str_eq(r.attempts[0].call, "memfd_create");
	cr_assert_eq(r.attempts[0].sys_errno, EMFILE);
	cr_assert(hpt_contains(err.hint, "ulimit -n"), "hint: %s", err.hint);
	assert_fds_as_before();
}

Test(paths_backends, memfd_hugetlb_probe_failing_with_an_unexpected_errno_names_it)
{
	hpshm_attempt a;

	set("provider=%s,huge_pages=on", "memfd_hugetlb");
	inj.memfd_huge_errno = EPERM;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(a.call, "probe");
	cr_assert_eq(a.sys_errno, EPERM);
	cr_assert(hpt_contains(a.reason, "errno"), "%s", a.reason);
}

Test(paths_backends, mmap_hugetlb_at_an_occupied_base_address_is_eexist_and_maps_nothing)
{
	hpshm_attempt a;
	hpshm_error err;
	char addr[32];
	uintptr_t at = free_range(8 * MIB, 2 * MIB);
	void *occupant;

	occupant = mmap((void *)(at + 2 * MIB), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	cr_assert_eq(occupant, (void *)(at + 2 * MIB));
	snprintf(addr, sizeof addr, "%#lx", (unsigned long)at);
	set("provider=mmap_hugetlb,huge_pages=on,base_address=%s", addr);
	err = create_fails(4 * MIB, &a);
	hpt_skip_emulated_refusal(err.code, &err);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(err.hint, "base_address"), "hint: %s", err.hint);
	cr_assert_eq(hpt_is_mapped((void *)at, 2 * MIB), 0);
	cr_assert_eq(hpt_is_mapped(occupant, 4096), 1);
	cr_assert_eq(munmap(occupant, 4096), 0);
}

Test(paths_backends, mmap_hugetlb_failing_with_an_unexpected_errno_is_esys)
{
	hpshm_attempt a;

	set("provider=%s,huge_pages=on", "mmap_hugetlb");
	inj.anon_huge_errno = EOVERFLOW;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_ESYS, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "mmap");
	cr_assert_eq(a.sys_errno, EOVERFLOW);
}

/* ---- hugetlbfs on the fake mount ---- */

static void set_hugetlbfs(const char *extra)
{
	char kv[256];

	snprintf(kv, sizeof kv, "provider=hugetlbfs,huge_pages=on,hugetlbfs_path=%s%s", fake_mount, extra);
	set("%s", kv);
}

Test(paths_backends, hugetlbfs_that_cannot_unlink_its_new_file_is_esys_and_closes_it)
{
	hpshm_attempt a;

	set_hugetlbfs("");
	inj.tmpfile_errno = EOPNOTSUPP;   /* the named-then-unlinked path */
	inj.unlink_errno = EPERM;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_ESYS, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "unlink");
	cr_assert_eq(a.sys_errno, EPERM);
	/* the file it could not unlink is the one left; it holds nothing */
	cr_assert_eq(dir_entries(fake_mount), 1);
	inj.unlink_errno = 0;
	{
		DIR *d = opendir(fake_mount);
		struct dirent *e;
		char path[512];

		cr_assert_not_null(d);
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, "hpshm.", 6) == 0) {
				snprintf(path, sizeof path, "%s/%s", fake_mount, e->d_name);
				cr_assert_eq(unlink(path), 0);
			}
		closedir(d);
	}
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_whose_file_names_are_always_taken_gives_up_with_eexist)
{
	hpshm_attempt a;

	set_hugetlbfs("");
	inj.tmpfile_errno = EOPNOTSUPP;
	inj.creat_errno = EEXIST;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "open");
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_at_an_occupied_base_address_is_eexist_and_removes_its_file)
{
	hpshm_attempt a;
	hpshm_error err;
	char extra[64];
	uintptr_t at = free_range(8 * MIB, 2 * MIB);
	void *occupant;

	occupant = mmap((void *)(at + 2 * MIB), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	cr_assert_eq(occupant, (void *)(at + 2 * MIB));
	snprintf(extra, sizeof extra, ",base_address=%#lx", (unsigned long)at);
	set_hugetlbfs(extra);
	err = create_fails(4 * MIB, &a);
	hpt_skip_emulated_refusal(err.code, &err);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_eq(hpt_is_mapped((void *)at, 2 * MIB), 0);
	cr_assert_eq(munmap(occupant, 4096), 0);
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_mapping_refused_as_such_is_unavailable_so_try_moves_on)
{
	hpshm_attempt a;

	set_hugetlbfs("");
	set("name=%s", name);
	inj.fd_mmap_errno = EINVAL;   /* qemu-user's answer for hugetlb files */
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "mmap");
	cr_assert_eq(a.sys_errno, EINVAL);
	cr_assert_eq(dir_entries(fake_mount), 0, "the named file was left");
}

Test(paths_backends, hugetlbfs_mapping_failing_otherwise_is_esys_and_removes_its_file)
{
	hpshm_attempt a;

	set_hugetlbfs("");
	inj.fd_mmap_errno = EACCES;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_ESYS, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "mmap");
	cr_assert_eq(a.sys_errno, EACCES);
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_that_cannot_name_its_new_file_unmaps_and_closes_it)
{
	hpshm_attempt a;
	int maps = hpt_maps_count();

	set_hugetlbfs("");
	set("name=%s", name);
	inj.linkat_errno = EIO;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_ESYS, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "linkat");
	cr_assert_eq(a.sys_errno, EIO);
	cr_assert_eq(hpt_maps_count(), maps, "the mapping was left");
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_whose_name_is_taken_by_a_fifo_before_its_link_keeps_the_fifo)
{
	hpshm_attempt a;
	struct stat st;
	int maps = hpt_maps_count();

	set_hugetlbfs("");
	set("name=%s", name);
	inj.linkat_fifo = 1;   /* someone puts a FIFO under the name as we link */
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(a.reason, "a FIFO"), "%s", a.reason);
	cr_assert_eq(hpt_maps_count(), maps, "the mapping was left");
	cr_assert_eq(lstat(mnt_path, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
}

Test(paths_backends, hugetlbfs_whose_name_keeps_being_taken_gives_up_with_eexist)
{
	hpshm_attempt a;

	set_hugetlbfs("");
	set("name=%s", name);
	inj.linkat_errno = EEXIST;   /* and nothing there when it looks */
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "linkat");
	cr_assert(hpt_contains(a.reason, "keeps being re-created"), "%s", a.reason);
	cr_assert_eq(dir_entries(fake_mount), 0);
}

Test(paths_backends, hugetlbfs_create_over_a_file_whose_file_system_cannot_be_read_keeps_it)
{
	hpshm_attempt a;
	int fd;

	fd = open(mnt_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4 * (off_t)MIB), 0);
	close(fd);
	set_hugetlbfs("");
	set("name=%s", name);
	inj.fstatfs_errno = EIO;
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EEXIST, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert(hpt_contains(a.reason, "not a hugetlbfs file"), "%s", a.reason);
	cr_assert(exists(mnt_path), "the file was removed");
}

/* ---- more of what sits under a name, and more re-attach ---- */

Test(paths_backends, attach_whose_lock_fails_otherwise_gives_up_at_once_with_esys_flock)
{
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;

	set("provider=plain,name=%s,reattach=exec", name);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MIB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof token, &err), 0);
	fds_before = hpt_fd_count();
	inj.lock_sh_errno = ENOLCK;   /* no retry can help: not a busy lock */
	err = attach_fails(token, HPSHM_ESYS);
	cr_assert_str_eq(err.call, "flock");
	cr_assert_eq(err.sys_errno, ENOLCK);
	inj.lock_sh_errno = 0;
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* Create over a node of type (mknod) under the name: EEXIST naming it as word, node kept. */
static void create_over_a_node(mode_t type, const char *word)
{
	hpshm_error err;
	struct stat st;

	cr_assert_eq(mknod(dev_path, type | 0600, makedev(1, 3)), 0, "mknod %s: %s", dev_path, strerror(errno));
	set("provider=plain,name=%s", name);
	err = create_fails(4 * MIB, NULL);
	cr_assert_eq(err.code, HPSHM_EEXIST, "%s: %s", hpshm_errname(err.code), err.message);
	cr_assert(hpt_contains(err.message, word), "%s", err.message);
	cr_assert_eq(lstat(dev_path, &st), 0, "the node was removed");
	cr_assert_eq(st.st_mode & S_IFMT, type, "the node was replaced");
}

Test(paths_backends, create_over_a_character_device_names_it_and_never_opens_it)
{
	create_over_a_node(S_IFCHR, "a character device");
}

Test(paths_backends, create_over_a_block_device_names_it_and_never_opens_it)
{
	create_over_a_node(S_IFBLK, "a block device");
}

Test(paths_backends, create_over_a_socket_names_it)
{
	create_over_a_node(S_IFSOCK, "a socket");
}

Test(paths_backends, a_named_hugetlbfs_create_without_o_tmpfile_removes_its_file_when_refused)
{
	hpshm_attempt a;

	/* The fake mount's files are base pages, as smaps says: verification refuses them. */
	set_hugetlbfs("");
	set("name=%s", name);
	inj.tmpfile_errno = EOPNOTSUPP;   /* the named-then-published path of older kernels */
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_ENOHUGE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_eq(dir_entries(fake_mount), 0, "the named file was left");
}

/* ---- ls of hugetlbfs mounts ---- */

static int h_stat_ok(const char *path, struct stat *st)
{
	/* Says a vanished mount point is there, so that only opendir() finds out. */
	if (strcmp(path, "/nonexistent/hpt-mnt") == 0)
		return real.stat("/proc", st);   /* a device of its own */
	return real.stat(path, st);
}

static int count_mnt(void *user, const hpshm_object *o)
{
	size_t n = strlen(fake_mount);

	/* the file under either mount point */
	if (strncmp(o->id, fake_mount, n) == 0 && strstr(o->id, name) != NULL)
		(*(int *)user)++;
	return 0;
}

Test(paths_backends, ls_lists_a_file_system_mounted_twice_once_and_skips_mounts_that_are_gone)
{
	hpshm_error err;
	char mi[640];
	int fd, hits = 0;

	fd = open(mnt_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(mi, sizeof mi,
		 "36 25 0:40 / /nonexistent/hpt-gone rw - hugetlbfs none rw,pagesize=2M\n"
		 "37 25 0:41 / /nonexistent/hpt-mnt rw - hugetlbfs none rw,pagesize=2M\n"
		 "38 25 0:42 / %s rw - hugetlbfs none rw,pagesize=2M\n"
		 "39 25 0:42 / %s/. rw - hugetlbfs none rw,pagesize=2M\n",   /* a bind mount of it */
		 fake_mount, fake_mount);
	hpt_fakeroot_write("proc/self/mountinfo", mi);
	hpshm__posix_sys.stat = h_stat_ok;
	cr_assert_geq(hpshm_objects_list(count_mnt, &hits, &err), 0, "%s", err.message);
	cr_assert_eq(hits, 1, "the file on the file system mounted twice was listed %d times", hits);
	assert_fds_as_before();
	cr_assert(exists(mnt_path), "ls removed something");
}

/* ---- what the hugetlb probe and plan read (backends/hugetlb_common.c) ---- */

/* Replace a file of the fake tree that may be a link to the real one: never write through it. */
static void replace(const char *rel, const char *content)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", hpt_fakeroot_dir(), rel);
	(void)unlink(path);
	hpt_fakeroot_write(rel, content);
}

/* A pool of page_size pages in the fake tree, nr of them free. */
static void fake_pool(size_t page_size, unsigned long nr)
{
	static const char *const files[] = { "nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages",
					     "nr_overcommit_hugepages" };
	char rel[256], num[32];

	for (unsigned i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(rel, sizeof rel, "sys/kernel/mm/hugepages/hugepages-%zukB/%s", page_size >> 10, files[i]);
		snprintf(num, sizeof num, "%lu\n", i < 2 ? nr : 0ul);
		replace(rel, num);
	}
}

/* Probe mmap_hugetlb for size bytes under cfg: the code, the page size and the reason. */
static int probe(size_t size, size_t *ps, char *reason, size_t len)
{
	*ps = 0;
	reason[0] = '\0';
	return hpshm_provider_probe("mmap_hugetlb", size, cfg, ps, reason, len);
}

Test(paths_backends, a_probe_of_an_empty_pool_tells_to_raise_nr_hugepages_from_zero)
{
	hpshm_attempt a;

	hpt_fakeroot_set_pool(0, 0);
	set("provider=%s,huge_pages=on", "mmap_hugetlb");
	(void)create_fails(4 * MIB, &a);
	cr_assert_eq(a.result, HPSHM_EUNAVAILABLE, "%s: %s", hpshm_errname(a.result), a.reason);
	cr_assert_str_eq(a.call, "probe");
	cr_assert(hpt_contains(a.reason, "is 0 for"), "%s", a.reason);
	cr_assert(hpt_contains(a.reason, "at least 2"), "%s", a.reason);
}

Test(paths_backends, a_probe_on_a_kernel_without_huge_pages_says_so)
{
	char dir[512], reason[HPSHM_TEXT_MAX];
	size_t ps;

	/* What a kernel without CONFIG_HUGETLBFS shows: no pool directory at all. */
	snprintf(dir, sizeof dir, "rm -rf '%s/sys/kernel/mm/hugepages'", hpt_fakeroot_dir());
	cr_assert_eq(system(dir), 0);
	cr_assert_eq(probe(4 * MIB, &ps, reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(reason, "offers no huge pages"), "%s", reason);
}

Test(paths_backends, a_probe_whose_default_size_has_no_pool_in_sysfs_cannot_read_it)
{
	char meminfo[64], reason[HPSHM_TEXT_MAX];
	size_t ps;

	/* meminfo's default size hidden from sysfs (a container's partial /sys, say) */
	snprintf(meminfo, sizeof meminfo, "Hugepagesize:    1048576 kB\n");
	replace("proc/meminfo", meminfo);
	cr_assert_eq(probe(4 * MIB, &ps, reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert(hpt_contains(reason, "cannot read the pool of 1GiB"), "%s", reason);
}

Test(paths_backends, largest_with_no_pool_that_holds_the_segment_picks_the_largest_offered)
{
	char reason[HPSHM_TEXT_MAX];
	size_t ps;

	fake_pool(1 << 30, 0);
	hpt_fakeroot_set_pool(64, 0);   /* and no free 2 MiB page either */
	set("huge_page_size=%s", "largest");
	cr_assert_eq(probe(4 * MIB, &ps, reason, sizeof reason), HPSHM_EUNAVAILABLE);
	cr_assert_eq(ps, (size_t)1 << 30, "picked %zu", ps);
}

struct pool_need {
	int  seen;
	char now[HPSHM_REQUIREMENT_TEXT];
	char persist[HPSHM_REQUIREMENT_TEXT];
	char note[HPSHM_REQUIREMENT_TEXT];
};

static int keep_pool_need(void *user, const char *provider, const hpshm_requirement *r)
{
	struct pool_need *n = user;

	if (strcmp(provider, "mmap_hugetlb") == 0 && strcmp(r->what, "pool") == 0 && !r->met) {
		n->seen++;
		snprintf(n->now, sizeof n->now, "%s", r->now[0]);
		snprintf(n->persist, sizeof n->persist, "%s", r->persist[0]);
		snprintf(n->note, sizeof n->note, "%s", r->note);
	}
	return 0;
}

Test(paths_backends, the_plan_for_gigantic_pages_of_a_non_default_size_writes_sysfs_and_prefers_boot)
{
	struct pool_need n;
	hpshm_error err;

	fake_pool(1 << 30, 0);
	memset(&n, 0, sizeof n);
	set("provider=%s", "mmap_hugetlb");
	cr_assert_geq(hpshm_requirements((size_t)2 << 30, (size_t)1 << 30, cfg, keep_pool_need, &n, &err), 1, "%s",
		      err.message);
	cr_assert_eq(n.seen, 1);
	cr_assert(hpt_contains(n.now, "echo 2 > ") && hpt_contains(n.now, "hugepages-1048576kB/nr_hugepages"), "%s",
		  n.now);
	cr_assert(hpt_contains(n.persist, "hugepagesz=1G hugepages=2"), "%s", n.persist);
	cr_assert(hpt_contains(n.note, "rarely allocate"), "%s", n.note);
}

/* ---- destroy of a real memfd_hugetlb segment (needs the pool) ---- */

static hpshm_segment *memfd_hugetlb_segment(void)
{
	hpshm_segment *seg = NULL;
	struct hpt_pool p;
	hpshm_error err;
	int rc;

	if (hpt_pool_read(2 * MIB, &p) < 0 || hpt_pool_available(&p) < 1)
		HPT_UNAVAILABLE_PAGES("memfd_hugetlb", "2MiB", 1, "needs a free 2MiB page for a memfd_hugetlb segment");
	set("provider=%s,huge_pages=on", "memfd_hugetlb");
	rc = hpshm_segment_create(&seg, 2 * MIB, cfg, &err);
	if (rc != 0)
		hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	return seg;
}

Test(paths_backends, destroy_of_a_memfd_hugetlb_segment_that_cannot_unmap_still_closes_its_memfd)
{
	hpshm_segment *seg = memfd_hugetlb_segment();
	void *addr = hpshm_segment_address(seg);
	size_t len = hpshm_segment_report(seg)->mapped_size;

	inj.munmap_errno = EINVAL;
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	assert_fds_as_before();
	cr_assert_eq(munmap(addr, len), 0);   /* what the failed munmap left: the page goes with it */
}

Test(paths_backends, destroy_of_a_memfd_hugetlb_segment_whose_close_fails_is_esys_and_unmaps)
{
	hpshm_segment *seg = memfd_hugetlb_segment();
	void *addr = hpshm_segment_address(seg);
	size_t len = hpshm_segment_report(seg)->mapped_size;

	inj.close_errno = EIO;   /* Linux frees the descriptor all the same */
	cr_assert_eq(hpshm_segment_destroy(seg), HPSHM_ESYS);
	cr_assert_eq(hpt_is_mapped(addr, len), 0);
	assert_fds_as_before();
}
