/* SPDX-License-Identifier: MIT */
/*
 * backends/named_create.c -- making a named object so that it gets its name only once it is
 * locked and carries hpshm's header, and looking first at what holds the name: the create
 * half of the rules in backends/named.c's top comment (backends/named.h; the layers:
 * doc/architecture.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/named.h"
#include "backends/named_internal.h"

#define NAMED_CREATE_TRIES 4 /* rounds of "exists, dead, unlinked, try again" */

/*
 * Write a provisional header for rq (rq->name set) at tail, the last HPSHM_HEADER_REGION
 * bytes of the new mapping: the creator, the boot, the provider and the name, nonce 0, the
 * magic last.  The core overwrites it with the segment's own header once create() returns;
 * until then it proves that the object is hpshm's and whose it is.
 */
static void named_provisional(void *tail, const char *provider, const struct hpshm_request *rq)
{
	struct hpshm_header h, *dst = tail;

	memset(&h, 0, sizeof(h));
	h.version = HPSHM_HEADER_VERSION;
	h.header_size = (uint32_t)sizeof(h);
	h.usable_size = rq->size - HPSHM_HEADER_REGION;
	h.page_size = rq->page_size;
	h.nonce = 0; /* no token names a segment before the core writes its own header */
	h.creator_pid = hpshm__port_getpid();
	h.creator_start = hpshm__port_process_start(h.creator_pid);
	h.created_unix = (uint64_t)time(NULL);
	if (hpshm__port_boot_id(h.boot_id, sizeof(h.boot_id)) < 0)
		h.boot_id[0] = '\0';
	snprintf(h.provider, sizeof(h.provider), "%s", provider);
	snprintf(h.name, sizeof(h.name), "%s", rq->name ? rq->name : "");
	/* Magic last, as the core does: a reader that sees it sees a whole header. */
	*dst = h;
	hpshm__port_release_fence();
	memcpy(dst->magic, HPSHM_HEADER_MAGIC, sizeof(dst->magic));
}

/* Something that is not hpshm's sits at path, which create() needs: HPSHM_EEXIST saying what. */
static int named_foreign_error(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			       int sys_errno, const char *what, hpshm_error *err)
{
	char where[HPSHM_PATH_MAX + 32];

	return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, hpshm__named_open_call(ns),
			       "choose another name=, or remove that object yourself if nothing needs it: hpshm never does",
			       "segment %s cannot be created: %s is %s, not an hpshm segment", rq->name,
			       hpshm__named_where_text(ns, path, where, sizeof(where)), what);
}

/*
 * create() needs path.  Nothing there, or a dead hpshm segment (which is unlinked, freeing
 * its pages): 0, and the caller goes on.  A live segment: HPSHM_EEXIST naming its creator.
 * Anything else -- a FIFO, a symbolic link, a file without hpshm's header -- is left alone
 * and named in an HPSHM_EEXIST.
 */
static int named_recycle(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			 hpshm_error *err)
{
	struct hpshm_header h;
	struct stat st;
	char owner[96], hint[HPSHM_TEXT_MAX], where[HPSHM_PATH_MAX + 32];
	mode_t type = 0;
	int fd, saved, cls;

	fd = hpshm__named_open(ns, path, O_RDONLY, &type);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* nothing there, or removed meanwhile */
		if (saved == ELOOP)
			return named_foreign_error(ns, rq, path, saved, "a symbolic link", err);
		if (saved == ENXIO)
			return named_foreign_error(ns, rq, path, 0, hpshm__named_type_word(type), err);
		if (hpshm__named_owner_of(ns, path, owner, sizeof(owner)) == 0) {
			snprintf(hint, sizeof(hint), "choose another name=, or ask %s (or root) to remove it if it is dead",
				 owner);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, hpshm__named_open_call(ns), hint,
					       "segment %s cannot be created: %s belongs to %s and this user cannot open it",
					       rq->name, hpshm__named_where_text(ns, path, where, sizeof(where)), owner);
		}
		snprintf(hint, sizeof(hint), "choose another name= or ask %s to remove it", ns->owner);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, hpshm__named_open_call(ns), hint,
				       "segment %s already exists and this user cannot open it", path);
	}
	if (!hpshm__named_fs_ok(ns, fd, 0)) {
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, hpshm__named_open_call(ns), "choose another name=",
				       "%s exists and is not a %s file", path, ns->fs_name);
	}
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect %s", path);
	}
	if (hpshm__posix_sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		if (saved != EWOULDBLOCK) {
			(void)hpshm__posix_sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL,
					       "could not tell whether segment %s is in use", path);
		}
		if (hpshm__named_class(ns, fd, &st, &h) == HPSHM_FOUND_HEADER)
			snprintf(owner, sizeof(owner), "created by pid %lld per its header", (long long)h.creator_pid);
		else
			snprintf(owner, sizeof(owner), "no hpshm header yet: it is being created");
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, hpshm__named_open_call(ns),
				       "choose another name= or stop the process using it", "segment %s is in use (%s)",
				       rq->name, owner);
	}
	/* Dead: nobody maps it.  Ours to remove only if it proves it is hpshm's. */
	cls = hpshm__named_class(ns, fd, &st, &h);
	if (cls < 0 || cls == HPSHM_FOUND_BARE) {
		(void)hpshm__posix_sys.close(fd);
		if (cls == HPSHM_FOUND_BARE)
			return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, hpshm__named_open_call(ns),
					       "if it is hpshm's, `hpshm gc --force` removes it; else choose another name=",
					       "segment %s cannot be created: %s exists without an hpshm header and nobody "
					       "holds it (a create killed early, or another program's file)", rq->name,
					       hpshm__named_where_text(ns, path, where, sizeof(where)));
		return named_foreign_error(ns, rq, path, 0,
					   cls == HPSHM_FOUND_FOREIGN_HEADER ? "a file whose tail is not hpshm's header"
									    : "a file of a size hpshm never makes",
					   err);
	}
	/* Unlinked under the lock, and only if the name is still this object. */
	if (hpshm__named_same(ns, fd, path) && hpshm__named_unlink(ns, path) < 0 && errno != ENOENT) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		hpshm__named_owner(st.st_uid, owner, sizeof(owner));
		if (saved == EPERM || saved == EACCES) {
			snprintf(hint, sizeof(hint), "run `hpshm gc` as %s or as root, or choose another name=", owner);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, ns->shm_names ? "shm_unlink" : "unlink", hint,
					       "segment %s cannot be created: %s is a dead segment of %s, which this "
					       "user may not remove", rq->name, hpshm__named_where_text(ns, path, where, sizeof(where)),
					       owner);
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, ns->shm_names ? "shm_unlink" : "unlink", NULL,
				       "could not remove the dead segment %s", path);
	}
	(void)hpshm__posix_sys.close(fd);
	return 0;
}

/* An unnamed file in the directory of path, where the OS and file system can: fd, or -1. */
static int named_tmpfile(const struct hpshm__names *ns, const char *path, unsigned mode)
{
#ifdef O_TMPFILE
	char dir[HPSHM_PATH_MAX], full[HPSHM_PATH_MAX];

	if (hpshm__named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0)
		return -1;
	/* EISDIR before Linux 3.11, EOPNOTSUPP on a file system without it: the caller falls back. */
	return hpshm__posix_sys.open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
#else
	(void)ns;
	(void)path;
	(void)mode;
	return -1;
#endif
}

/* Give the unnamed file fd the name path: 0, or -1 with errno (EEXIST: the name is taken). */
static int named_link(const struct hpshm__names *ns, int fd, const char *path)
{
	char dir[HPSHM_PATH_MAX], full[HPSHM_PATH_MAX], self[64];

	if (hpshm__named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
#ifdef AT_EMPTY_PATH
	/* Needs CAP_DAC_READ_SEARCH (ENOENT without it); /proc/self/fd below needs none. */
	if (hpshm__posix_sys.linkat(fd, "", AT_FDCWD, full, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
#endif
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return hpshm__posix_sys.linkat(AT_FDCWD, self, AT_FDCWD, full, AT_SYMLINK_FOLLOW);
}

int hpshm__named_create(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			unsigned mode, int *linked, hpshm_error *err)
{
	int fd, saved, rc, tries;

	for (tries = 0; tries < NAMED_CREATE_TRIES; tries++) {
		/* Checked before anything is reserved: a live owner must be HPSHM_EEXIST, not ENOMEM. */
		rc = named_recycle(ns, rq, path, err);
		if (rc < 0)
			return rc;
		fd = named_tmpfile(ns, path, mode);
		if (fd >= 0) {
			*linked = 0;
		} else {
			*linked = 1;
			if (ns->shm_create)
				fd = ns->shm_create(rq, path, (mode_t)mode);
			else if (ns->shm_names)
				fd = hpshm__posix_sys.shm_open(path, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
			else
				fd = hpshm__posix_sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
			if (fd < 0) {
				saved = errno;
				if (saved != EEXIST)
					return ns->create_error(saved, path, err);
				continue; /* made meanwhile: look at it again */
			}
		}
		/* The umask has narrowed mode: mode= means exactly that mode. */
		if (hpshm__posix_sys.fchmod(fd, (mode_t)mode) < 0) {
			saved = errno;
			if (*linked && hpshm__named_same(ns, fd, path))
				(void)hpshm__named_unlink(ns, path);
			(void)hpshm__posix_sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "fchmod", NULL, "could not give %s %s mode %03o",
					       ns->noun, path, mode);
		}
		if (hpshm__lock(fd, LOCK_SH) < 0) {
			saved = errno;
			if (*linked && hpshm__named_same(ns, fd, path))
				(void)hpshm__named_unlink(ns, path);
			(void)hpshm__posix_sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       "another process holds an exclusive lock on it: stop it",
					       "could not lock new %s %s", ns->noun, path);
		}
		if (!*linked || hpshm__named_same(ns, fd, path))
			return fd;
		(void)hpshm__posix_sys.close(fd); /* taken for dead and unlinked before we locked it: again */
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, hpshm__named_open_call(ns), "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}

int hpshm__named_publish(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path, int fd,
			 int linked, void *tail, hpshm_error *err)
{
	int rc, tries, saved;

	named_provisional(tail, ns->provider, rq);
	if (linked)
		return 0;
	for (tries = 0; tries < NAMED_CREATE_TRIES; tries++) {
		if (named_link(ns, fd, path) == 0)
			return 0;
		saved = errno;
		if (saved != EEXIST)
			return hpshm_error_set(err, HPSHM_ESYS, saved, "linkat",
					       saved == ENOENT ? "mount /proc, which names the new object to linkat()" : NULL,
					       "could not give the new %s its name %s", ns->noun, path);
		rc = named_recycle(ns, rq, path, err); /* another creator got there first */
		if (rc < 0)
			return rc;
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "linkat", "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}
