/*
 * backends/hugetlbfs.c -- a file on a mounted hugetlbfs, mapped MAP_SHARED.
 *
 * Mechanism: open("<dir>/hpshm.<...>", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC), ftruncate() to
 * the size, mmap(MAP_SHARED).  The page size is the mount's (pagesize= option), so the
 * mapping needs no MAP_HUGETLB: on a file the kernel answers that flag with EINVAL.
 *
 * Operator setup: a hugetlbfs mount for the requested page size that this user may write
 * (mount -t hugetlbfs -o pagesize=2M,uid=,gid=,mode= none <dir>), and pages in that size's
 * pool.  The directory is rq->hugetlbfs_path when set (checked to be hugetlbfs with the
 * requested page size), otherwise the first writable mount of that page size found in
 * /proc/self/mountinfo.  No capability is needed.
 *
 * Kernel quirks, and what we do about them:
 *   - ftruncate() must be a multiple of the page size (else EINVAL); the core guarantees it.
 *   - The reservation is taken at mmap(); ENOMEM there means the pool, a hugetlb cgroup's
 *     rsvd limit or the mount's size= quota is short.  It is "unavailable", with the pool
 *     hint, so the core moves on.
 *   - The kernel zeroes a page only the first time an offset of the file is mapped, and a
 *     file keeps its pages until it is unlinked: a reused file would leak old contents and
 *     pin pages.  O_EXCL means we never reuse one; a name taken is HPSHM_EEXIST.
 *   - The descriptor stays open until destroy(): the core populates through it with
 *     fallocate(), which reports ENOSPC instead of a later SIGBUS.
 *
 * Files:
 *   - unnamed segments use "<dir>/hpshm.<pid>.<counter>" and unlink it right after open(),
 *     before the mapping is even made: the descriptor keeps the file alive, and a crash at
 *     any later point leaves nothing in the directory.  A name left over from a dead process
 *     with the same pid is skipped (O_EXCL, next counter);
 *   - named segments use "<dir>/hpshm.<name>" and keep it, so other processes can open it
 *     by path.  The creator owns it: destroy() unlinks it.  A crash leaves it behind, with
 *     its pages, for `hpshm gc` or the next create() of the same name.
 *
 * Liveness of named files (DPDK marks its hugepage files the same way): the creator and
 * every process that attaches by path hold flock(LOCK_SH) on their descriptor while they map
 * the file; a child that inherited the creator's descriptor shares its lock.  A file on
 * which LOCK_EX | LOCK_NB succeeds is mapped by nobody: dead.  So:
 *   - create() of a name that exists takes LOCK_EX | LOCK_NB on the old file; dead, it is
 *     unlinked (which frees its pages) and creation retried; alive, the error names the
 *     creator from the header at the file's tail;
 *   - a new file is unlocked for a moment between open(O_EXCL) and flock(), when another
 *     creator may take it for dead and unlink it.  So after locking, the creator checks that
 *     the path still names its file (same inode) and starts again if not;
 *   - remove() unlinks only while holding LOCK_EX, and destroy() unlinks before closing.
 * Locks are taken with LOCK_NB and a short retry: a checker holds LOCK_EX for microseconds,
 * and a foreign process holding it must not hang us.  Unnamed files take no lock: they are
 * unlinked at once, and a scan() that sees one in that moment may remove it first, which
 * create() tolerates (ENOENT from its own unlink).
 *
 * Capabilities: HUGE, REATTACH, NAMED, FD.
 *
 * Re-attach: identify() gives "path=<file>" for a named segment whose path can sit in a
 * token (no ':' or white space), else "fd=<n>" for the descriptor, which the spawn helper
 * keeps open across exec.  attach() opens the path (taking LOCK_SH) or checks the inherited
 * descriptor, insists on hugetlbfs with the token's page size and a file at least the
 * segment's length, then maps with MAP_SHARED | MAP_FIXED_NOREPLACE at the creator's
 * address and compares the address (kernels before 4.17 take the flag as a hint).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"

#define HUGETLBFS_DEFAULT_MODE 0600
#define HUGETLBFS_NAME_MAX     200 /* leaves room for the directory within HPSHM_PATH_MAX */
#define HUGETLBFS_TRIES        8   /* unnamed files: names to try before giving up */
#define HUGETLBFS_CREATE_TRIES 4   /* named files: rounds of "exists, dead, unlinked, try again" */
#define HUGETLBFS_LOCK_TRIES   200 /* 1 ms apart: a checker holds LOCK_EX for microseconds */
#define HUGETLBFS_PREFIX       "hpshm."

/* Where a segment's file goes, or why there is no such place. */
struct hugetlbfs_dir {
	char path[256];                /* the directory */
	int  sys_errno;                /* errno behind the failure, 0 if none */
	char reason[HPSHM_TEXT_MAX];   /* what is wrong */
	char hint[HPSHM_TEXT_MAX];     /* what to do about it */
};

/* Counter for unnamed files, so two threads never race for one name. */
static atomic_ulong hugetlbfs_counter;

/* snprintf() for reasons and hints: a path too long for the text is cut, which is fine there. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void hugetlbfs_text(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* A page size as mount's pagesize= option takes it: "2M", "1G", "64K". */
static char *hugetlbfs_mount_size(size_t page_size, char *buf, size_t len)
{
	if (page_size % (1UL << 30) == 0)
		snprintf(buf, len, "%zuG", page_size >> 30);
	else if (page_size % (1UL << 20) == 0)
		snprintf(buf, len, "%zuM", page_size >> 20);
	else
		snprintf(buf, len, "%zuK", page_size >> 10);
	return buf;
}

/* Find the directory for rq.  0, or HPSHM_EUNAVAILABLE with d->reason and d->hint set. */
static int hugetlbfs_find_dir(const struct hpshm_request *rq, struct hugetlbfs_dir *d)
{
	struct hpshm__mount mounts[HPSHM__MAX_MOUNTS];
	char psz[32], have[32], opt[32];
	size_t page_size = 0;
	int n, i, unwritable = -1;

	d->path[0] = '\0';
	d->sys_errno = 0;
	d->reason[0] = '\0';
	d->hint[0] = '\0';
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	hugetlbfs_mount_size(rq->page_size, opt, sizeof(opt));

	if (rq->hugetlbfs_path) {
		errno = 0;
		if (hpshm__hugetlbfs_dir(rq->hugetlbfs_path, &page_size) < 0) {
			d->sys_errno = errno;
			if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) {
				hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path %s %s", rq->hugetlbfs_path,
					 errno == EACCES ? "cannot be searched" : "is not a directory");
				hugetlbfs_text(d->hint, sizeof(d->hint), "create it and mount hugetlbfs on it, or fix hugetlbfs_path");
			} else {
				hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path %s is not on hugetlbfs",
					 rq->hugetlbfs_path);
				hugetlbfs_text(d->hint, sizeof(d->hint), "mount -t hugetlbfs -o pagesize=%s none %s",
					 opt, rq->hugetlbfs_path);
			}
			return HPSHM_EUNAVAILABLE;
		}
		if (page_size != rq->page_size) {
			hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path %s has %s pages, not %s",
				 rq->hugetlbfs_path, hpshm_size_format(page_size, have, sizeof(have)), psz);
			hugetlbfs_text(d->hint, sizeof(d->hint), "point hugetlbfs_path at a mount with -o pagesize=%s", opt);
			return HPSHM_EUNAVAILABLE;
		}
		if (strlen(rq->hugetlbfs_path) >= sizeof(d->path)) {
			d->sys_errno = ENAMETOOLONG;
			hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path is longer than %zu bytes",
				 sizeof(d->path) - 1);
			hugetlbfs_text(d->hint, sizeof(d->hint), "mount hugetlbfs on a shorter path");
			return HPSHM_EUNAVAILABLE;
		}
		strcpy(d->path, rq->hugetlbfs_path);
		return 0;
	}

	n = hpshm__hugetlbfs_mounts(mounts, HPSHM__MAX_MOUNTS);
	if (n > HPSHM__MAX_MOUNTS)
		n = HPSHM__MAX_MOUNTS;
	for (i = 0; i < n; i++) {
		if (mounts[i].page_size != rq->page_size)
			continue;
		if (!mounts[i].writable) {
			if (unwritable < 0)
				unwritable = i;
			continue;
		}
		memcpy(d->path, mounts[i].path, sizeof(d->path));
		d->path[sizeof(d->path) - 1] = '\0';
		return 0;
	}
	if (unwritable >= 0) {
		d->sys_errno = EACCES;
		hugetlbfs_text(d->reason, sizeof(d->reason), "the hugetlbfs mount %s for %s pages is not writable by this user",
			 mounts[unwritable].path, psz);
		hugetlbfs_text(d->hint, sizeof(d->hint), "remount it with uid=, gid= or mode= for this user, or set hugetlbfs_path");
		return HPSHM_EUNAVAILABLE;
	}
	hugetlbfs_text(d->reason, sizeof(d->reason), "no hugetlbfs mount for %s pages", psz);
	hugetlbfs_text(d->hint, sizeof(d->hint), "mount -t hugetlbfs -o pagesize=%s none <dir> or set hugetlbfs_path", opt);
	return HPSHM_EUNAVAILABLE;
}

/* A name becomes one path component: no '/', not empty, not "." or "..", not too long. */
static int hugetlbfs_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= HUGETLBFS_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int hugetlbfs_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hugetlbfs_dir d;
	int rc;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	rc = hpshm__hugetlb_probe(rq, out);
	if (rc < 0)
		return rc;
	rc = hugetlbfs_find_dir(rq, &d);
	if (rc < 0) {
		out->sys_errno = d.sys_errno;
		hugetlbfs_text(out->reason, sizeof(out->reason), "%s: %s", d.reason, d.hint);
	}
	return rc;
}

/* flock(op | LOCK_NB), retried for a moment: 0, or -1 with errno (EWOULDBLOCK: still held). */
static int hugetlbfs_lock(int fd, int op)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < HUGETLBFS_LOCK_TRIES; i++) {
		if (hpshm__sys.flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		(void)nanosleep(&ms, NULL);
	}
	errno = EWOULDBLOCK;
	return -1;
}

/* Does path still name the file open on fd?  1 yes, 0 no (or gone). */
static int hugetlbfs_same(int fd, const char *path)
{
	struct stat a, b;
	int fd2, same;

	fd2 = hpshm__sys.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd2 < 0)
		return 0;
	same = hpshm__sys.fstat(fd, &a) == 0 && hpshm__sys.fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	(void)hpshm__sys.close(fd2);
	return same;
}

/* Read the header from the last HPSHM_HEADER_REGION bytes (hugetlbfs reads, never writes): 1 if hpshm's. */
static int hugetlbfs_read_header(int fd, off_t size, struct hpshm_header *h)
{
	memset(h, 0, sizeof(*h));
	if (size < HPSHM_HEADER_REGION ||
	    hpshm__sys.pread(fd, h, sizeof(*h), size - HPSHM_HEADER_REGION) != (ssize_t)sizeof(*h))
		return 0;
	if (memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic)) != 0)
		return 0;
	h->boot_id[sizeof(h->boot_id) - 1] = '\0';
	h->provider[sizeof(h->provider) - 1] = '\0';
	h->name[sizeof(h->name) - 1] = '\0';
	return 1;
}

/* Is path one of our files: absolute, its last component "hpshm.<something>"? */
static int hugetlbfs_path_ok(const char *path)
{
	const char *base = strrchr(path, '/');

	return path[0] == '/' && base && strncmp(base + 1, HUGETLBFS_PREFIX, strlen(HUGETLBFS_PREFIX)) == 0 &&
	       base[1 + strlen(HUGETLBFS_PREFIX)] != '\0' && strlen(path) < HPSHM_PATH_MAX && !strstr(path, "/../");
}

/* Is fd on hugetlbfs, with page_size pages if page_size != 0? */
static int hugetlbfs_fd_ok(int fd, size_t page_size)
{
	struct statfs sfs;

	if (hpshm__sys.fstatfs(fd, &sfs) < 0)
		return 0;
	return (uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC && sfs.f_bsize > 0 &&
	       (page_size == 0 || (size_t)sfs.f_bsize == page_size);
}

/*
 * create() found path taken.  Dead (nobody holds LOCK_SH): unlink it, freeing its pages, and
 * return 0 so the caller tries again.  Alive: HPSHM_EEXIST naming the creator from the header.
 */
static int hugetlbfs_recycle(const struct hpshm_request *rq, const char *path, hpshm_error *err)
{
	struct hpshm_header h;
	struct stat st;
	char owner[96];
	int fd, saved;

	fd = hpshm__sys.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* removed meanwhile: try again */
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "open",
				       "choose another name= or ask the file's owner to remove it",
				       "segment %s already exists and this user cannot open it", path);
	}
	if (!hugetlbfs_fd_ok(fd, 0)) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "open", "choose another name=",
				       "%s exists and is not a hugetlbfs file", path);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
		/* Dead: nobody maps it.  Unlink under the lock, and only if the path is still this file. */
		if (hugetlbfs_same(fd, path))
			(void)hpshm__sys.unlink(path);
		(void)hpshm__sys.close(fd);
		return 0;
	}
	saved = errno;
	if (saved != EWOULDBLOCK) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL,
				       "could not tell whether segment %s is in use", path);
	}
	if (hpshm__sys.fstat(fd, &st) == 0 && hugetlbfs_read_header(fd, st.st_size, &h))
		snprintf(owner, sizeof(owner), "created by pid %lld per its header", (long long)h.creator_pid);
	else
		snprintf(owner, sizeof(owner), "no hpshm header yet: it is being created");
	(void)hpshm__sys.close(fd);
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "open", "choose another name= or stop the process using it",
			       "segment %s is in use (%s)", rq->name, owner);
}

/* open() failed with saved: say why, per errno. */
static int hugetlbfs_open_error(int saved, const char *path, hpshm_error *err)
{
	switch (saved) {
	case EEXIST:
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "open",
				       "another process owns it, or a dead one left it: remove it (hpshm gc) or choose another name",
				       "segment %s already exists", path);
	case EACCES:
	case EPERM:
	case EROFS:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "open",
				       "mount hugetlbfs with uid=, gid= or mode= for this user, or set hugetlbfs_path",
				       "this user may not create %s", path);
	case ENOENT:
	case ENOTDIR:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "open", "check hugetlbfs_path",
				       "the directory of %s is gone", path);
	case ENOSPC:
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "open", "raise the mount's nr_inodes= option",
				       "the hugetlbfs mount has no free inode for %s", path);
	default:
		return hpshm_error_set(err, HPSHM_ESYS, saved, "open", NULL, "could not create %s", path);
	}
}

/* Create the named file path, locked shared, recycling a dead one (see the top comment). */
static int hugetlbfs_open_named(const struct hpshm_request *rq, const char *path, unsigned mode, hpshm_error *err)
{
	int fd, saved, rc, tries;

	for (tries = 0; tries < HUGETLBFS_CREATE_TRIES; tries++) {
		fd = hpshm__sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd < 0) {
			if (errno != EEXIST)
				return hugetlbfs_open_error(errno, path, err);
			rc = hugetlbfs_recycle(rq, path, err);
			if (rc < 0)
				return rc;
			continue;
		}
		if (hugetlbfs_lock(fd, LOCK_SH) < 0) {
			saved = errno;
			if (hugetlbfs_same(fd, path))
				(void)hpshm__sys.unlink(path);
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       "another process holds an exclusive lock on it: stop it",
					       "could not lock new file %s", path);
		}
		if (hugetlbfs_same(fd, path))
			return fd;
		(void)hpshm__sys.close(fd); /* taken for dead and unlinked before we locked it: again */
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "open", "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}

static int hugetlbfs_create(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	struct hugetlbfs_dir d;
	char path[HPSHM_PATH_MAX];
	char hint[HPSHM_TEXT_MAX];
	char sz[32], psz[32];
	unsigned mode = rq->mode ? rq->mode & 0777 : HUGETLBFS_DEFAULT_MODE;
	int flags = MAP_SHARED;
	int fd = -1, saved, rc, tries, n;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (rq->name && !hugetlbfs_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use 1 to 200 characters without '/', other than \".\" and \"..\"",
				       "segment name \"%.64s\" cannot be a file name", rq->name);
	if ((off_t)rq->size < 0 || (size_t)(off_t)rq->size != rq->size)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);
	if (rq->address) {
		if ((uintptr_t)rq->address % rq->page_size != 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "give a base_address that is a multiple of the page size",
					       "base_address %p is not aligned to %s pages", rq->address, psz);
		flags |= MAP_FIXED_NOREPLACE;
	}

	rc = hugetlbfs_find_dir(rq, &d);
	if (rc < 0)
		return hpshm_error_set(err, rc, d.sys_errno, NULL, d.hint, "%s", d.reason);

	if (rq->name) {
		n = snprintf(path, sizeof(path), "%s/hpshm.%s", d.path, rq->name);
		if (n < 0 || (size_t)n >= sizeof(path))
			return hpshm_error_set(err, HPSHM_EINVAL, ENAMETOOLONG, NULL,
					       "use a shorter name or mount hugetlbfs on a shorter path",
					       "%s/hpshm.%s is longer than %d bytes", d.path, rq->name, HPSHM_PATH_MAX - 1);
		fd = hugetlbfs_open_named(rq, path, mode, err);
		if (fd < 0)
			return fd;
	} else {
		for (tries = 0; fd < 0 && tries < HUGETLBFS_TRIES; tries++) {
			n = snprintf(path, sizeof(path), "%s/hpshm.%ld.%lu", d.path, (long)getpid(),
				     atomic_fetch_add(&hugetlbfs_counter, 1UL));
			if (n < 0 || (size_t)n >= sizeof(path))
				return hpshm_error_set(err, HPSHM_EINVAL, ENAMETOOLONG, NULL,
						       "mount hugetlbfs on a shorter path",
						       "hugetlbfs directory %s is too long for a file name", d.path);
			fd = hpshm__sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
			if (fd < 0 && errno != EEXIST)
				return hugetlbfs_open_error(errno, path, err);
		}
		if (fd < 0)
			return hugetlbfs_open_error(EEXIST, path, err);
		/*
		 * The descriptor keeps it alive; unlinked now, a crash leaves no file behind.  ENOENT:
		 * a scan took the unlocked file for dead and removed it first, which is just as good.
		 */
		if (hpshm__sys.unlink(path) < 0 && errno != ENOENT) {
			saved = errno;
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "unlink", NULL, "could not unlink %s", path);
		}
	}

	if (hpshm__sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno;
		if (rq->name)
			(void)hpshm__sys.unlink(path); /* still locked: nobody replaced it */
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "ftruncate", NULL,
				       "could not size %s to %s (not a multiple of its %s pages?)", path, sz, psz);
	}

	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED || (rq->address && p != rq->address)) {
		char line[HPSHM_TEXT_MAX - 80];

		saved = p == MAP_FAILED ? errno : EEXIST;   /* close() below may clobber errno */
		if (p != MAP_FAILED)
			(void)hpshm__sys.munmap(p, rq->size); /* pre-4.17 kernel: NOREPLACE was a hint */
		if (rq->name)
			(void)hpshm__sys.unlink(path); /* still locked: nobody replaced it */
		(void)hpshm__sys.close(fd);
		switch (saved) {
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
					       hpshm__hugetlb_hint(rq->size, rq->page_size, hint, sizeof(hint)),
					       "could not reserve %s of %s huge pages (pool, hugetlb cgroup or the mount's size= short)",
					       sz, psz);
		case EEXIST:
			if (hpshm__maps_line(rq->address, line, sizeof(line)) == 0)
				return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap", "choose another base_address",
						       "base_address %p is taken by: %s", rq->address, line);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap", "choose another base_address",
					       "another mapping overlaps %s at base_address %p", sz, rq->address);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL, "could not map %s of %s", sz, path);
		}
	}

	m->addr = p;
	m->size = rq->size;
	m->fd = fd;
	m->id = -1;
	if (rq->name)
		memcpy(m->path, path, sizeof(m->path));
	else
		m->path[0] = '\0';
	m->priv = NULL;
	return 0;
}

static int hugetlbfs_destroy(struct hpshm_mapping *m)
{
	int rc = 0;

	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	/*
	 * A named file belongs to its creator.  Unlinked before the descriptor (and with it the
	 * lock) goes, so nobody can meanwhile take it for dead and put a new file under the name
	 * that this unlink would then remove.
	 */
	if (m->path[0] != '\0' && hpshm__sys.unlink(m->path) < 0 && errno != ENOENT)
		rc = HPSHM_ESYS;
	if (m->fd >= 0 && hpshm__sys.close(m->fd) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->fd = -1;
	m->path[0] = '\0';
	return rc;
}

static int hugetlbfs_identify(const struct hpshm_mapping *m, char *id, size_t len)
{
	int n;

	/* Tokens are split at ':' and end at white space: such a path goes by descriptor. */
	if (m->path[0] != '\0' && !strpbrk(m->path, ": \t\n\r\v\f"))
		n = snprintf(id, len, "path=%s", m->path);
	else if (m->fd >= 0)
		n = snprintf(id, len, "fd=%d", m->fd);
	else
		return HPSHM_EINVAL;
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

/* "fd=<n>": n decimal, no sign, no trailing text.  0, or -1. */
static int hugetlbfs_parse_fd(const char *id, int *fd)
{
	char *end;
	long v;

	if (strncmp(id, "fd=", 3) != 0 || id[3] < '0' || id[3] > '9')
		return -1;
	errno = 0;
	v = strtol(id + 3, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX)
		return -1;
	*fd = (int)v;
	return 0;
}

static int hugetlbfs_attach(struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	const char *spawn_hint = "start the child with hpshm_spawn(), which keeps the descriptor open across exec";
	char what[HPSHM_PATH_MAX + 16];
	char sz[32], psz[32], have[32];
	struct stat st;
	int fd = -1, named = 0, saved;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (strncmp(id, "path=", 5) == 0) {
		if (!hugetlbfs_path_ok(id + 5))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the path of an hpshm hugetlbfs file", id + 5);
		named = 1;
		snprintf(what, sizeof(what), "%s", id + 5);
	} else if (hugetlbfs_parse_fd(id, &fd) == 0) {
		snprintf(what, sizeof(what), "descriptor %d", fd);
	} else {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither fd=<descriptor> nor path=<file>", id);
	}
	if (!rq->address || (uintptr_t)rq->address % rq->page_size != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "address %p is not a multiple of the %s page size", rq->address, psz);

	if (named) {
		fd = hpshm__sys.open(id + 5, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
		if (fd < 0) {
			saved = errno;
			if (saved == ENOENT)
				return hpshm_error_set(err, HPSHM_EINVAL, saved, "open",
						       "start the child while the creator still holds the segment",
						       "%s does not exist (its creator removed it)", what);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "open",
					       saved == EACCES ? "run the child as the creator's user, or create with a wider mode=" : NULL,
					       "could not open %s", what);
		}
	} else if (hpshm__sys.fcntl(fd, F_GETFD, 0) < 0) {
		return hpshm_error_set(err, HPSHM_EINVAL, errno, "fcntl", spawn_hint, "%s is not open in this process", what);
	}

	if (!hugetlbfs_fd_ok(fd, rq->page_size)) {
		if (named)
			(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, named ? "pass the creator's token unchanged" : spawn_hint,
				       "%s is not the segment's file (not hugetlbfs with %s pages)", what, psz);
	}
	if (hpshm__sys.fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size < (uint64_t)rq->size) {
		if (named)
			(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, named ? "pass the creator's token unchanged" : spawn_hint,
				       "%s is not the segment's file (%s long, the segment is %s)", what,
				       hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have)), sz);
	}
	/* Our mark of liveness for scan() and the next create(); an inherited descriptor shares the creator's. */
	if (named && hugetlbfs_lock(fd, LOCK_SH) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
				       saved == EWOULDBLOCK ? "another process is removing it: create the segment again" : NULL,
				       "could not lock %s", what);
	}

	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED || p != rq->address) {
		char line[HPSHM_TEXT_MAX - 80];

		saved = p == MAP_FAILED ? errno : EEXIST;
		if (p != MAP_FAILED)
			(void)hpshm__sys.munmap(p, rq->size); /* pre-4.17 kernel: NOREPLACE was a hint */
		if (named)
			(void)hpshm__sys.close(fd);
		if (saved == EEXIST) {
			if (hpshm__maps_line(rq->address, line, sizeof(line)) == 0)
				return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap",
						       "attach earlier in the child's start-up, or set base_address to a free range",
						       "the segment's address %p is taken in this process by: %s", rq->address, line);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap",
					       "attach earlier in the child's start-up, or set base_address to a free range",
					       "another mapping overlaps the %s segment's range at %p in this process", sz,
					       rq->address);
		}
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "mmap",
				       saved == ENOMEM ? "check ulimit -v" : NULL, "could not map %s of %s at %p", sz, what,
				       rq->address);
	}

	/* An inherited descriptor is the child's own now: keep it out of what the child execs. */
	if (!named)
		(void)hpshm__sys.fcntl(fd, F_SETFD, FD_CLOEXEC);
	m->addr = p;
	m->size = rq->size;
	m->fd = fd;
	m->id = -1;
	m->path[0] = '\0'; /* never unlinked by this process: the creator owns the file */
	m->priv = NULL;
	return 0;
}

/* Undo attach(): unmap and close (dropping our lock); the file stays, its creator owns it. */
static int hugetlbfs_detach(struct hpshm_mapping *m)
{
	int rc = 0;

	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	if (m->fd >= 0 && hpshm__sys.close(m->fd) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->fd = -1;
	return rc;
}

/* Report the files "hpshm.*" of one mount directory.  Returns fn's non-zero answer, or 0. */
static int hugetlbfs_scan_dir(const char *dir, hpshm_found_fn fn, void *user)
{
	struct hpshm_found f;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, n, stop = 0;

	d = opendir(dir);
	if (!d)
		return 0; /* not ours to read: nothing we could remove either */
	while (!stop && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, HUGETLBFS_PREFIX, strlen(HUGETLBFS_PREFIX)) != 0 ||
		    de->d_name[strlen(HUGETLBFS_PREFIX)] == '\0')
			continue;
		memset(&f, 0, sizeof(f));
		n = snprintf(f.id, sizeof(f.id), "%s/%s", dir, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(f.id))
			continue;
		fd = hpshm__sys.open(f.id, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
		if (fd < 0)
			continue; /* gone meanwhile, or not ours to see */
		if (hpshm__sys.fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			(void)hpshm__sys.close(fd);
			continue;
		}
		snprintf(f.name, sizeof(f.name), "%.127s", de->d_name + strlen(HUGETLBFS_PREFIX));
		f.size = (size_t)st.st_size;
		if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
			f.alive = 0;
			(void)hpshm__sys.flock(fd, LOCK_UN);
		} else {
			f.alive = errno == EWOULDBLOCK ? 1 : -1;
		}
		f.has_header = hugetlbfs_read_header(fd, st.st_size, &f.header);
		(void)hpshm__sys.close(fd);
		stop = fn(user, &f);
	}
	closedir(d);
	return stop;
}

static int hugetlbfs_scan(hpshm_found_fn fn, void *user)
{
	struct hpshm__mount mounts[HPSHM__MAX_MOUNTS];
	dev_t seen[HPSHM__MAX_MOUNTS];
	struct stat st;
	int n, i, j, nseen = 0, dup;

	n = hpshm__hugetlbfs_mounts(mounts, HPSHM__MAX_MOUNTS);
	if (n > HPSHM__MAX_MOUNTS)
		n = HPSHM__MAX_MOUNTS;
	for (i = 0; i < n; i++) {
		/* A file system mounted twice (bind mounts, containers) is listed once. */
		if (stat(mounts[i].path, &st) < 0)
			continue;
		for (dup = 0, j = 0; j < nseen; j++)
			dup |= seen[j] == st.st_dev;
		if (dup)
			continue;
		seen[nseen++] = st.st_dev;
		if (hugetlbfs_scan_dir(mounts[i].path, fn, user) != 0)
			break;
	}
	return 0;
}

static int hugetlbfs_remove(const struct hpshm_found *f, hpshm_error *err)
{
	int fd, saved;

	if (!hugetlbfs_path_ok(f->id))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "\"%.64s\" is not the path of an hpshm hugetlbfs file",
				       f->id);
	fd = hpshm__sys.open(f->id, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, "open",
				       saved == EACCES ? "run hpshm gc as the file's owner or root" : NULL, "could not open %s",
				       f->id);
	}
	/* Never unlink anything but a hugetlbfs file, whatever f says. */
	if (!hugetlbfs_fd_ok(fd, 0)) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s is not on hugetlbfs", f->id);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		if (saved == EWOULDBLOCK)
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "flock", "stop the process using it first",
					       "segment %s is alive: a process still holds it", f->id);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL, "could not lock %s", f->id);
	}
	/* Unlinked under the lock, and only if the path still names this file. */
	if (hugetlbfs_same(fd, f->id) && hpshm__sys.unlink(f->id) < 0 && errno != ENOENT) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "unlink",
				       saved == EACCES || saved == EPERM ? "run hpshm gc as the file's owner or root" : NULL,
				       "could not remove %s", f->id);
	}
	(void)hpshm__sys.close(fd);
	return 0;
}

const struct hpshm_provider hpshm__provider_hugetlbfs = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "hugetlbfs",
	.summary     = "file on a hugetlbfs mount, re-attachable by path or descriptor",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD,
	.probe       = hugetlbfs_probe,
	.create      = hugetlbfs_create,
	.destroy     = hugetlbfs_destroy,
	.identify    = hugetlbfs_identify,
	.attach      = hugetlbfs_attach,
	.detach      = hugetlbfs_detach,
	.scan        = hugetlbfs_scan,
	.remove      = hugetlbfs_remove,
};
