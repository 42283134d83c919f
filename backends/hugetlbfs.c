/* SPDX-License-Identifier: MIT */
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
 *     hint, so the core moves on.  EINVAL there, with size and address already multiples
 *     of the page, is the mapping refused as such (qemu-user answers so for hugetlb files):
 *     unavailable too, as in mmap_hugetlb.
 *   - The kernel zeroes a page only the first time an offset of the file is mapped, and a
 *     file keeps its pages until it is unlinked: a reused file would leak old contents and
 *     pin pages.  O_EXCL means we never reuse one; a name taken is HPSHM_EEXIST.
 *   - The descriptor stays open until destroy(): the core populates through it with
 *     fallocate(), which reports ENOSPC instead of a later SIGBUS.
 *
 * Files:
 *   - unnamed segments are files without a name (O_TMPFILE in the mount's directory): the
 *     descriptor keeps the file alive, and a crash leaves nothing in the directory.  Where
 *     the kernel cannot (before Linux 4.x hugetlbfs had no O_TMPFILE), "<dir>/hpshm.<pid>.
 *     <counter>" is made and unlinked right after open(), before the mapping is even made;
 *     a name left over from a dead process with the same pid is skipped (O_EXCL, next
 *     counter);
 *   - named segments use "<dir>/hpshm.<name>" and keep it, so other processes can open it
 *     by path.  The file is made unnamed too and linked under its name only once it is
 *     locked and carries hpshm's header (backends/named.c).  The creator owns it:
 *     destroy() unlinks it.  A crash leaves it behind, with its pages, for `hpshm gc` or the
 *     next create() of the same name.
 *
 * Liveness of named files is the flock() interlock of backends/named.c (DPDK marks its
 * hugepage files the same way): creator and attachers hold LOCK_SH; create() of a taken name
 * unlinks a dead hpshm file (freeing its pages) and goes on, names the creator of a live one
 * from the header at the file's tail, and leaves anything else (a FIFO, a symbolic link, a
 * file without hpshm's header) alone, saying what it is; remove() unlinks only under
 * LOCK_EX.  Here the shared code is told only that our objects are paths (open/unlink) and
 * must be on hugetlbfs.  Unnamed files take no lock: they have no name, or are unlinked at
 * once; a forced gc that sees one in that moment may remove it first, which create()
 * tolerates (ENOENT from its own unlink).
 *
 * Capabilities: HUGE, REATTACH, NAMED, FD.
 *
 * Re-attach: identify() gives "path=<file>" for a named segment whose path can sit in a
 * token (no ':' or white space), else "fd=<n>" for the descriptor, which the spawn helper
 * keeps open across exec.  attach() opens the path (taking LOCK_SH) or checks the inherited
 * descriptor, insists on hugetlbfs with the token's page size and a file of exactly the
 * segment's length, then maps with MAP_SHARED | MAP_FIXED_NOREPLACE at the creator's
 * address and compares the address (kernels before 4.17 take the flag as a hint).  The
 * mapping's object is the file's st_dev and st_ino, recorded at create and read again at
 * attach: the header of an unnamed segment that fills its pages lives in a companion
 * (core/header.c), and it is bound to this file by them, not by the descriptor number.
 *
 * Open by name (hpshm_segment_open(), in any process): lookup() looks for "hpshm.<name>" in
 * hugetlbfs_path, else in every hugetlbfs mount, and hands the core the header read from the
 * file's tail; attach() then maps it by path, where the system chooses when no address is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "backends/hugetlb_common.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "backends/named.h"

#define HUGETLBFS_DEFAULT_MODE 0600
#define HUGETLBFS_NAME_MAX     200 /* leaves room for the directory within HPSHM_PATH_MAX */
#define HUGETLBFS_TRIES        8   /* unnamed files: names to try before giving up */
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

/*
 * The directory this registration must use, or NULL to discover one: the user pointer of a
 * registration made for one directory (hpshm_provider_register(p, "hugetlbfs_db", "/mnt/db",
 * ...)), else the hugetlbfs_path key, which only this provider reads.
 */
static const char *hugetlbfs_override(const struct hpshm_instance *self, const struct hpshm_request *rq, char *buf,
				      size_t len)
{
	int n;

	if (self->user)
		return (const char *)self->user;
	n = rq->option(rq, "hugetlbfs_path", buf, len);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* Find the directory for rq.  0, or HPSHM_EUNAVAILABLE with d->reason and d->hint set. */
static int hugetlbfs_find_dir(const struct hpshm_instance *self, const struct hpshm_request *rq,
			      struct hugetlbfs_dir *d)
{
	struct hpshm__mount *mounts;
	char psz[32], have[32], opt[32], option[HPSHM_PATH_MAX];
	const char *override = hugetlbfs_override(self, rq, option, sizeof(option));
	size_t page_size = 0;
	int n, i, unwritable = -1;

	d->path[0] = '\0';
	d->sys_errno = 0;
	d->reason[0] = '\0';
	d->hint[0] = '\0';
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	hpshm__hugetlbfs_size(rq->page_size, opt, sizeof(opt));

	if (override) {
		errno = 0;
		if (hpshm__linux_hugetlbfs_dir(override, &page_size) < 0) {
			d->sys_errno = errno;
			if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) {
				hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path %s: %s",
					 errno == EACCES ? "cannot be searched" : "is not a directory", override);
				hugetlbfs_text(d->hint, sizeof(d->hint), "create it and mount hugetlbfs on it, or fix hugetlbfs_path");
			} else {
				hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path is not on hugetlbfs: %s",
					 override);
				hugetlbfs_text(d->hint, sizeof(d->hint), "mount -t hugetlbfs -o pagesize=%s none %s",
					 opt, override);
			}
			return HPSHM_EUNAVAILABLE;
		}
		if (page_size != rq->page_size) {
			hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path has %s pages, not %s: %s",
				 hpshm_size_format(page_size, have, sizeof(have)), psz, override);
			hugetlbfs_text(d->hint, sizeof(d->hint), "point hugetlbfs_path at a mount with -o pagesize=%s", opt);
			return HPSHM_EUNAVAILABLE;
		}
		if (strlen(override) >= sizeof(d->path)) {
			d->sys_errno = ENAMETOOLONG;
			hugetlbfs_text(d->reason, sizeof(d->reason), "hugetlbfs_path is longer than %zu bytes",
				 sizeof(d->path) - 1);
			hugetlbfs_text(d->hint, sizeof(d->hint), "mount hugetlbfs on a shorter path");
			return HPSHM_EUNAVAILABLE;
		}
		strcpy(d->path, override);
		return 0;
	}

	mounts = hpshm__linux_hugetlbfs_mount_list(&n);
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
		free(mounts);
		return 0;
	}
	if (unwritable >= 0) {
		d->sys_errno = EACCES;
		hugetlbfs_text(d->reason, sizeof(d->reason), "the hugetlbfs mount for %s pages is not writable by this user: %s",
			 psz, mounts[unwritable].path);
		hugetlbfs_text(d->hint, sizeof(d->hint), "remount it with uid=, gid= or mode= for this user, or set hugetlbfs_path");
		free(mounts);
		return HPSHM_EUNAVAILABLE;
	}
	free(mounts);
	hugetlbfs_text(d->reason, sizeof(d->reason), "no hugetlbfs mount for %s pages", psz);
	hugetlbfs_text(d->hint, sizeof(d->hint), "mount -t hugetlbfs -o pagesize=%s none <dir> or set hugetlbfs_path", opt);
	return HPSHM_EUNAVAILABLE;
}

/*
 * requirements(): the pool and cgroup every hugetlb provider needs, then a writable hugetlbfs
 * mount of rq->page_size pages (or the configured directory).  The commands give the mount
 * to this process's group with the sticky bit, so other users of the group can create but
 * not remove one another's segments; systemd mounts the default size at /dev/hugepages, and
 * other sizes get their own directory beside it.
 */
static int hugetlbfs_needs(const struct hpshm_instance *self, const struct hpshm_request *rq,
				  hpshm_need_fn fn, void *user)
{
	struct hpshm__mount *mounts;
	struct hpshm_requirement r;
	struct hugetlbfs_dir d;
	char opt[16], dir[64], option[HPSHM_PATH_MAX];
	const char *override = hugetlbfs_override(self, rq, option, sizeof(option));
	size_t page_size = 0;
	int rc, n;

	rc = hpshm__hugetlb_requirements(rq, fn, user);
	if (rc != 0)
		return rc;
	hpshm__requirement_init(&r, "mount");
	r.met = hugetlbfs_find_dir(self, rq, &d) == 0;
	if (r.met)
		return fn(user, &r);
	hpshm__strlcpy(r.detail, d.reason, sizeof(r.detail));
	hpshm__hugetlbfs_size(rq->page_size, opt, sizeof(opt));
	if (override) {
		/* A directory that is not hugetlbfs yet gets a mount; one of another page size is
		 * the configuration's mistake, and the fix is in the note. */
		if (hpshm__linux_hugetlbfs_dir(override, &page_size) < 0) {
			hpshm__requirement_add(r.now, "mkdir -p %s && mount -t hugetlbfs -o pagesize=%s,mode=1770,gid=%ld none %s",
					       override, opt, (long)getegid(), override);
			hpshm__requirement_add(r.persist, "echo 'none %s hugetlbfs pagesize=%s,mode=1770,gid=%ld 0 0' >> /etc/fstab",
					       override, opt, (long)getegid());
		} else {
			hpshm__strlcpy(r.note, d.hint, sizeof(r.note));
		}
		return fn(user, &r);
	}
	mounts = hpshm__linux_hugetlbfs_mount_list(&n);
	for (int i = 0; i < n; i++) {
		if (mounts[i].page_size == rq->page_size && !mounts[i].writable) {
			hpshm__requirement_add(r.now, "chgrp %ld %s && chmod 1770 %s", (long)getegid(), mounts[i].path,
					       mounts[i].path);
			free(mounts);
			return fn(user, &r);
		}
	}
	free(mounts);
	if (rq->page_size == hpshm__port_default_huge_page_size())
		snprintf(dir, sizeof(dir), "/dev/hugepages");
	else
		snprintf(dir, sizeof(dir), "/dev/hugepages-%s", opt);
	hpshm__requirement_add(r.now, "mkdir -p %s && mount -t hugetlbfs -o pagesize=%s,mode=1770,gid=%ld none %s", dir,
			       opt, (long)getegid(), dir);
	hpshm__requirement_add(r.persist, "echo 'none %s hugetlbfs pagesize=%s,mode=1770,gid=%ld 0 0' >> /etc/fstab", dir,
			       opt, (long)getegid());
	return fn(user, &r);
}

static int hugetlbfs_requirements(const struct hpshm_instance *self, const struct hpshm_request *rq,
				  hpshm_need_fn fn, void *user)
{
	(void)hugetlbfs_needs(self, rq, fn, user); /* non-zero: fn asked to stop */
	return 0;
}

/* A name becomes one path component: no '/', not empty, not "." or "..", not too long. */
static int hugetlbfs_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= HUGETLBFS_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int hugetlbfs_probe(const struct hpshm_instance *self, const struct hpshm_request *rq,
			   struct hpshm_probe *out)
{
	struct hpshm_request at;
	struct hugetlbfs_dir d;
	int rc;

	rc = hpshm__hugetlb_probe(rq, out, &at);
	if (rc < 0)
		return rc;
	rc = hugetlbfs_find_dir(self, &at, &d);
	if (rc < 0) {
		out->sys_errno = d.sys_errno;
		/* The fix goes in its own field: appended to the reason, a long path cut both. */
		hugetlbfs_text(out->reason, sizeof(out->reason), "%s", d.reason);
		hugetlbfs_text(out->fix, sizeof(out->fix), "%s", d.hint);
	}
	return rc;
}

/* Is path one of our files: absolute, its last component "hpshm.<something>"? */
static int hugetlbfs_path_ok(const char *path)
{
	const char *base = strrchr(path, '/');

	return path[0] == '/' && base && strncmp(base + 1, HUGETLBFS_PREFIX, strlen(HUGETLBFS_PREFIX)) == 0 &&
	       base[1 + strlen(HUGETLBFS_PREFIX)] != '\0' && strlen(path) < HPSHM_PATH_MAX && !strstr(path, "/../");
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

/* What backends/named.c needs to know about our named files. */
static const struct hpshm__names hugetlbfs_names = {
	.shm_names    = 0,
	.shm_dir      = NULL,
	.fs_magic     = HUGETLBFS_MAGIC,
	.fs_name      = "hugetlbfs",
	.noun         = "file",
	.owner        = "the file's owner",
	.provider     = "hugetlbfs",
	.create_error = hugetlbfs_open_error,
};

/* An unnamed file in d (O_TMPFILE, else a fresh name unlinked at once), path what messages
 * call it: the descriptor, or an error. */
static int hugetlbfs_open_unnamed(const struct hugetlbfs_dir *d, unsigned mode, char *path, size_t len,
				  hpshm_error *err)
{
	int fd = -1, saved, tries, n;

#ifdef O_TMPFILE
	fd = hpshm__posix_sys.open(d->path, O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
	if (fd >= 0)
		snprintf(path, len, "an unnamed file in %.200s", d->path); /* for messages only */
#endif
	for (tries = 0; fd < 0 && tries < HUGETLBFS_TRIES; tries++) {
		n = snprintf(path, len, "%s/hpshm.%ld.%lu", d->path, (long)getpid(),
			     atomic_fetch_add(&hugetlbfs_counter, 1UL));
		if (n < 0 || (size_t)n >= len)
			return hpshm_error_set(err, HPSHM_EINVAL, ENAMETOOLONG, NULL, "mount hugetlbfs on a shorter path",
					       "hugetlbfs directory %s is too long for a file name", d->path);
		fd = hpshm__posix_sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd < 0 && errno != EEXIST)
			return hugetlbfs_open_error(errno, path, err);
		if (fd < 0)
			continue;
		/*
		 * The descriptor keeps it alive; unlinked now, a crash leaves no file behind.
		 * ENOENT: a forced gc took the unlocked file for debris and removed it first,
		 * which is just as good.
		 */
		if (hpshm__posix_sys.unlink(path) < 0 && errno != ENOENT) {
			saved = errno;
			(void)hpshm__posix_sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "unlink", NULL, "could not unlink %s", path);
		}
	}
	if (fd < 0)
		return hugetlbfs_open_error(EEXIST, path, err);
	return fd;
}

/* The new segment's file in d, at path: a named one through backends/named.c (locked; *linked:
 * it has its name already), else unnamed.  The descriptor, or an error, nothing left behind. */
static int hugetlbfs_open_file(const struct hugetlbfs_dir *d, const struct hpshm_request *rq, unsigned mode,
			       char *path, size_t len, int *linked, hpshm_error *err)
{
	int n;

	*linked = 0;
	if (!rq->name)
		return hugetlbfs_open_unnamed(d, mode, path, len, err);
	n = snprintf(path, len, "%s/hpshm.%s", d->path, rq->name);
	if (n < 0 || (size_t)n >= len)
		return hpshm_error_set(err, HPSHM_EINVAL, ENAMETOOLONG, NULL,
				       "use a shorter name or mount hugetlbfs on a shorter path",
				       "%s/hpshm.%s is longer than %d bytes", d->path, rq->name, HPSHM_PATH_MAX - 1);
	return hpshm__named_create(&hugetlbfs_names, rq, path, mode, linked, err);
}

/* mmap() of the new file at path failed with saved: the error, per errno. */
static int hugetlbfs_map_error(int saved, const struct hpshm_request *rq, const char *path, hpshm_error *err)
{
	char sz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	switch (saved) {
	case ENOMEM:
		return hpshm__reserve_failed(err, "mmap", saved, rq, "pool, hugetlb cgroup or the mount's size=");
	case EEXIST:
		return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_CREATE);
	case EINVAL:
		/* Size and address are multiples of the page (the core's guarantee), so this
		 * is the mapping refused as such: qemu-user does so for hugetlb files.
		 * Unavailable, as in mmap_hugetlb, so the walk moves on. */
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, saved, "mmap",
				       "use another provider (qemu-user refuses hugetlb mappings)",
				       "the kernel refused to map %s of %s", sz, path);
	default:
		return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL, "could not map %s of %s", sz, path);
	}
}

/* create(): the directory, the file, its size, the mapping, then (named) its header and name;
 * one clean-up path undoes the mapping, the name (still locked: nobody replaced it), the file. */
static int hugetlbfs_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	struct hugetlbfs_dir d;
	char path[HPSHM_PATH_MAX];
	char sz[32], psz[32];
	unsigned mode = rq->mode ? rq->mode & 0777 : HUGETLBFS_DEFAULT_MODE;
	int fd, linked = 0, saved, rc;
	void *p = MAP_FAILED;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (rq->name && !hugetlbfs_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use 1 to 200 characters without '/', other than \".\" and \"..\"",
				       "segment name \"%.64s\" cannot be a file name", rq->name);
	if (!hpshm__size_fits_off_t(rq->size))
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);
	rc = hugetlbfs_find_dir(self, rq, &d);
	if (rc < 0)
		return hpshm_error_set(err, rc, d.sys_errno, NULL, d.hint, "%s", d.reason);
	fd = hugetlbfs_open_file(&d, rq, mode, path, sizeof(path), &linked, err);
	if (fd < 0)
		return fd;

	if (hpshm__posix_sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno; /* the clean-up below may clobber it */
		rc = hpshm_error_set(err, HPSHM_ESYS, saved, "ftruncate", NULL,
				     "could not size %s to %s (not a multiple of its %s pages?)", path, sz, psz);
		goto fail;
	}
	p = hpshm__map_at(rq, MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		rc = hugetlbfs_map_error(errno, rq, path, err);
		goto fail;
	}
	if (rq->name) {
		rc = hpshm__named_publish(&hugetlbfs_names, rq, path, fd, linked,
					  (char *)p + rq->size - HPSHM_HEADER_REGION, err);
		if (rc < 0)
			goto fail;
	}
	hpshm__mapping_fill(m, p, rq->size, fd, -1, rq->name ? path : NULL);
	if (rq->flags & HPSHM_REQ_REATTACH)
		hpshm__fd_object(m, fd); /* a child's attach() must find this very file */
	return 0;

fail:
	if (p != MAP_FAILED)
		(void)hpshm__posix_sys.munmap(p, rq->size);
	if (linked)
		(void)hpshm__posix_sys.unlink(path); /* still locked: nobody replaced it */
	(void)hpshm__posix_sys.close(fd);
	return rc;
}

static int hugetlbfs_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	return hpshm__named_destroy(&hugetlbfs_names, m);
}

static int hugetlbfs_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	const char *spawn_hint = "start the child with hpshm_child_spawn(), which keeps the descriptor open across exec";
	char what[HPSHM_PATH_MAX + 16];
	char sz[32], psz[32], have[32];
	struct stat st;
	int fd = -1, named = 0;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (strncmp(id, "path=", 5) == 0) {
		if (!hugetlbfs_path_ok(id + 5))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the path of an hpshm hugetlbfs file", id + 5);
		named = 1;
		snprintf(what, sizeof(what), "%s", id + 5);
	} else if (hpshm__id_parse(id, "fd=", &fd) == 0) {
		snprintf(what, sizeof(what), "descriptor %d", fd);
	} else {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither fd=<descriptor> nor path=<file>", id);
	}

	if (named) {
		fd = hpshm__named_attach(&hugetlbfs_names, id + 5, err); /* takes LOCK_SH */
		if (fd < 0)
			return fd;
	} else if (hpshm__posix_sys.fcntl(fd, F_GETFD, 0) < 0) {
		return hpshm_error_set(err, HPSHM_EINVAL, errno, "fcntl", spawn_hint, "%s is not open in this process", what);
	}

	if (!hpshm__named_fs_ok(&hugetlbfs_names, fd, rq->page_size)) {
		if (named)
			(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, named ? "pass the creator's token unchanged" : spawn_hint,
				       "%s is not the segment's file (not hugetlbfs with %s pages)", what, psz);
	}
	/* Exactly the token's length: an edited size must not map part of the file, nor the
	 * file be taken for a segment it is not. */
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		if (named)
			(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, errno, "fstat", NULL, "could not inspect %s", what);
	}
	if (st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)rq->size) {
		if (named)
			(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "%s is not the token's segment: the file is %s long, the token says %s", what,
				       hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have)), sz);
	}
	/* The name stays its creator's: detach never unlinks it. */
	return hpshm__fd_attach_map(m, rq, fd, named ? id + 5 : NULL, what, err);
}

/* Is mount path on a file system in seen[0, *nseen) (one mounted twice, by bind mounts or
 * containers, is looked at once), or not stat()able?  1: skip it; 0: look, and it is in seen. */
static int hugetlbfs_mount_seen(const char *path, dev_t *seen, int *nseen)
{
	struct stat st;

	if (hpshm__posix_sys.stat(path, &st) < 0)
		return 1;
	for (int j = 0; j < *nseen; j++)
		if (seen[j] == st.st_dev)
			return 1;
	seen[(*nseen)++] = st.st_dev;
	return 0;
}

/*
 * lookup(): the file "hpshm.<name>" in the configured directory, else in every hugetlbfs
 * mount (one file system mounted twice is looked at once), those of the page size asked for
 * first: the creator may have used any of them, and an object of another page size is found
 * too, for the core to refuse naming its pages.
 */
static int hugetlbfs_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
			    hpshm_error *err)
{
	char option[HPSHM_PATH_MAX], path[HPSHM_PATH_MAX];
	const char *override = hugetlbfs_override(self, rq, option, sizeof(option));
	struct hpshm__mount *mounts;
	dev_t *seen;
	int n, i, pass, nseen = 0, rc = HPSHM_ENOENT, len;

	if (!hugetlbfs_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL, "\"%.64s\" cannot name a hugetlbfs file",
				       rq->name);
	if (override) {
		len = snprintf(path, sizeof(path), "%s/" HUGETLBFS_PREFIX "%s", override, rq->name);
		if (len < 0 || (size_t)len >= sizeof(path))
			return hpshm_error_set(err, HPSHM_ENOENT, ENAMETOOLONG, NULL, NULL, "%s/" HUGETLBFS_PREFIX
					       "%.64s is too long a path", override, rq->name);
		return hpshm__named_lookup(&hugetlbfs_names, path, rq->name, f, err);
	}
	mounts = hpshm__linux_hugetlbfs_mount_list(&n);
	seen = n > 0 ? malloc((size_t)n * sizeof(*seen)) : NULL;
	if (n > 0 && seen == NULL) {
		free(mounts);
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, "malloc", NULL, "out of memory for the mount list");
	}
	hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL, "no hugetlbfs file %s%s", HUGETLBFS_PREFIX, rq->name);
	/* Pass 0: mounts of the page size asked for; pass 1: the others. */
	for (pass = 0; pass < 2 && rc == HPSHM_ENOENT; pass++) {
		for (i = 0; i < n && rc == HPSHM_ENOENT; i++) {
			int wished = rq->page_size == HPSHM_PAGE_SIZE_DEFAULT || rq->page_size == HPSHM_PAGE_SIZE_LARGEST ||
				     mounts[i].page_size == rq->page_size;

			if (wished != (pass == 0) || hugetlbfs_mount_seen(mounts[i].path, seen, &nseen))
				continue;
			len = snprintf(path, sizeof(path), "%s/" HUGETLBFS_PREFIX "%s", mounts[i].path, rq->name);
			if (len < 0 || (size_t)len >= sizeof(path))
				continue;
			rc = hpshm__named_lookup(&hugetlbfs_names, path, rq->name, f, err);
		}
	}
	free(seen);
	free(mounts);
	return rc;
}

/* Report the files "hpshm.*" of one mount directory.  Returns fn's non-zero answer, or 0. */
static int hugetlbfs_scan_dir(const char *dir, hpshm_found_fn fn, void *user)
{
	char path[HPSHM_PATH_MAX];
	struct hpshm_found f;
	struct dirent *de;
	DIR *d;
	int n, stop = 0;

	d = opendir(dir);
	if (!d)
		return 0; /* not ours to read: nothing we could remove either */
	while (!stop && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, HUGETLBFS_PREFIX, strlen(HUGETLBFS_PREFIX)) != 0 ||
		    de->d_name[strlen(HUGETLBFS_PREFIX)] == '\0')
			continue;
		n = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (hpshm__named_inspect(&hugetlbfs_names, path, de->d_name + strlen(HUGETLBFS_PREFIX), de->d_type, &f) == 0)
			stop = fn(user, &f);
	}
	closedir(d);
	return stop;
}

static int hugetlbfs_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	(void)self;
	struct hpshm__mount *mounts;
	dev_t *seen;
	int n, i, nseen = 0;

	mounts = hpshm__linux_hugetlbfs_mount_list(&n);
	seen = n > 0 ? malloc((size_t)n * sizeof(*seen)) : NULL;
	if (n > 0 && seen == NULL) {
		free(mounts);
		return HPSHM_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (hugetlbfs_mount_seen(mounts[i].path, seen, &nseen))
			continue;
		if (hugetlbfs_scan_dir(mounts[i].path, fn, user) != 0)
			break;
	}
	free(seen);
	free(mounts);
	return 0;
}

static int hugetlbfs_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	(void)self;
	if (!hugetlbfs_path_ok(f->id))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "\"%.64s\" is not the path of an hpshm hugetlbfs file",
				       f->id);
	return hpshm__named_remove(&hugetlbfs_names, f, err);
}

const struct hpshm_provider hpshm__provider_hugetlbfs = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "hugetlbfs",
	.summary     = "file on a hugetlbfs mount, re-attachable by path or descriptor",
	.caps        = HPSHM_CAP_HUGE | HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD | HPSHM_CAP_RESIZE,
	.probe       = hugetlbfs_probe,
	.requirements = hugetlbfs_requirements,
	.create      = hugetlbfs_create,
	.destroy     = hugetlbfs_destroy,
	.identify    = hpshm__fd_identify,
	.attach      = hugetlbfs_attach,
	.detach      = hpshm__fd_unmap, /* unmap and close (dropping our lock); the creator owns the file */
	.scan        = hugetlbfs_scan,
	.remove      = hugetlbfs_remove,
	.lookup      = hugetlbfs_lookup,
};
