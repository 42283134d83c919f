/* SPDX-License-Identifier: MIT */
/*
 * backends/named_remove.c -- remove(): unlink a dead named object under its lock, and never
 * whatever its name holds by then, through a private directory: the remove half of the rules
 * in backends/named.c's top comment (backends/named.h; the layers: doc/architecture.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"
#include "backends/named.h"
#include "backends/named_internal.h"

#define NAMED_PRIVATE_TRIES 8   /* names tried for the private directory */
#define NAMED_TAKEN     "taken" /* the name an object has inside that directory */

/* Do a and b describe the same inode? */
static int named_same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Make remove()'s private directory in the directory open on dfd (whose fstat() is dir) and
 * open it: name ".hpshm-gc-<pid>-<random>" (a dot and no "hpshm." prefix: no scan lists it,
 * and a test can tell whose it is), mode 0700.  What gets opened under that name must be the
 * directory we made: ours, private, on the same file system (rename() moves nothing across).
 * Its descriptor with name filled, or -1 with errno and *call the call that failed.
 */
static int named_private_open(int dfd, const struct stat *dir, char *name, size_t len, const char **call)
{
	struct stat st;
	int pfd, tries, saved;

	*call = "mkdirat";
	for (tries = 0;; tries++) {
		snprintf(name, len, ".hpshm-gc-%lld-%016llx", hpshm__port_getpid(), (unsigned long long)hpshm__port_random64());
		if (hpshm__posix_sys.mkdirat(dfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || tries + 1 == NAMED_PRIVATE_TRIES)
			return -1;
	}
	*call = "openat";
	pfd = hpshm__posix_sys.openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (pfd < 0) {
		saved = errno; /* unlinkat() below may clobber it */
		(void)hpshm__posix_sys.unlinkat(dfd, name, AT_REMOVEDIR); /* only ever removes an empty directory */
		errno = saved;
		return -1;
	}
	if (hpshm__posix_sys.fstat(pfd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0 || st.st_dev != dir->st_dev) {
		(void)hpshm__posix_sys.close(pfd); /* swapped for someone else's: not ours to remove */
		errno = EPERM;
		return -1;
	}
	/* A umask may have taken the owner's write bit; the caller needs it to move objects in. */
	(void)hpshm__posix_sys.fchmod(pfd, 0700);
	return pfd;
}

/* Remove the private directory, if the name still is ours (rmdir takes only an empty one), and close it. */
static void named_private_close(int dfd, const char *name, int pfd)
{
	struct stat a, b;

	if (hpshm__posix_sys.fstat(pfd, &a) == 0 && hpshm__posix_sys.fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    named_same_inode(&a, &b))
		(void)hpshm__posix_sys.unlinkat(dfd, name, AT_REMOVEDIR);
	(void)hpshm__posix_sys.close(pfd);
}

/*
 * An object that is not the one remove() checked was moved into the private directory (its
 * name was given to it meanwhile): give it back its name base in dfd.  linkat() never
 * replaces, so if something took the name again, or the object is a directory (which cannot
 * be linked), it goes beside it under "<base>.kept-<random>", a name nobody could have
 * foreseen.  0 with where naming it, or -1 with errno (it stays in the private directory).
 */
static int named_put_back(int pfd, int dfd, const char *base, char *where, size_t len)
{
	int tries;

	snprintf(where, len, "%s", base);
	if (hpshm__posix_sys.linkat(pfd, NAMED_TAKEN, dfd, base, 0) == 0) {
		(void)hpshm__posix_sys.unlinkat(pfd, NAMED_TAKEN, 0);
		return 0;
	}
	for (tries = 0; tries < NAMED_PRIVATE_TRIES; tries++) {
		snprintf(where, len, "%s.kept-%016llx", base, (unsigned long long)hpshm__port_random64());
		if (hpshm__posix_sys.renameat(pfd, NAMED_TAKEN, dfd, where) == 0)
			return 0;
		if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR && errno != ENOTDIR)
			return -1;
	}
	return -1;
}

/*
 * Unlink path, whose object is open on fd (st its fstat(), LOCK_EX held), and nothing else
 * (top comment): into a private directory, checked there, unlinked there.  hint is for
 * permission errors.  0 (also when the name is gone: someone removed it first), or an error;
 * HPSHM_EINVAL when the name held another object by then, which is put back and kept.
 */
static int named_take(const struct hpshm__names *ns, int fd, const struct stat *st, const char *path,
		      const char *hint, hpshm_error *err)
{
	char dir[HPSHM_PATH_MAX], full[HPSHM_PATH_MAX], priv[64], where[HPSHM_PATH_MAX + 32];
	const char *base, *call;
	struct stat dst, moved;
	int dfd, pfd, saved, rc, same;

	if (hpshm__named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0) {
		/*
		 * Shm names the system keeps out of sight (no directory to work in): by name, as
		 * shm_unlink() alone can.  No scan() lists such objects, so gc never gets here.
		 */
		if (hpshm__named_same(ns, fd, path) && hpshm__named_unlink(ns, path) < 0 && errno != ENOENT) {
			saved = errno;
			return hpshm_error_set(err, HPSHM_ESYS, saved, ns->shm_names ? "shm_unlink" : "unlink",
					       saved == EACCES || saved == EPERM ? hint : NULL, "could not remove %s %s",
					       ns->noun, path);
		}
		return 0;
	}
	base = strrchr(full, '/') + 1; /* hpshm__named_where() gives a path with a directory */
	dfd = hpshm__posix_sys.open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (dfd < 0 || hpshm__posix_sys.fstat(dfd, &dst) < 0) {
		saved = errno;
		if (dfd >= 0)
			(void)hpshm__posix_sys.close(dfd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, dfd < 0 ? "open" : "fstat", NULL,
				       "could not open the directory %s to remove %s %s", dir, ns->noun, path);
	}
	pfd = named_private_open(dfd, &dst, priv, sizeof(priv), &call);
	if (pfd < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(dfd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, call,
				       saved == EACCES || saved == EPERM ? hint : NULL,
				       "could not make a private directory in %s to remove %s %s from", dir, ns->noun,
				       path);
	}
	if (hpshm__posix_sys.renameat(dfd, base, pfd, NAMED_TAKEN) < 0) {
		saved = errno;
		rc = saved == ENOENT ? 0 /* someone removed it first */
				     : hpshm_error_set(err, HPSHM_ESYS, saved, "renameat",
						       saved == EACCES || saved == EPERM ? hint : NULL,
						       "could not remove %s %s", ns->noun, path);
	} else {
		/* Nobody else may enter the private directory: what is checked here is what goes. */
		same = hpshm__posix_sys.fstatat(pfd, NAMED_TAKEN, &moved, AT_SYMLINK_NOFOLLOW) == 0 &&
		       named_same_inode(&moved, st);
		if (same && hpshm__posix_sys.unlinkat(pfd, NAMED_TAKEN, 0) == 0) {
			rc = 0;
		} else {
			/* Another object (or ours, which could not be unlinked): back under its name. */
			saved = errno;
			if (named_put_back(pfd, dfd, base, where, sizeof(where)) < 0)
				rc = hpshm_error_set(err, HPSHM_ESYS, errno, "renameat", "move it back by hand",
						     "%s changed while it was being removed, and what its name held could "
						     "not be put back: it is %s/%s/%s", path, dir, priv, NAMED_TAKEN);
			else if (same)
				rc = hpshm_error_set(err, HPSHM_ESYS, saved, "unlinkat", NULL,
						     "could not remove %s %s (kept as %s/%s)", ns->noun, path, dir, where);
			else
				rc = hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
						     "%s is no longer the one listed: its name came to hold another object, "
						     "which is kept (as %s/%s)", path, dir, where);
		}
	}
	named_private_close(dfd, priv, pfd);
	(void)hpshm__posix_sys.close(dfd);
	return rc;
}

int hpshm__named_remove(const struct hpshm__names *ns, const struct hpshm_found *f, hpshm_error *err)
{
	const char *path = f->id;
	struct hpshm_header h, listed;
	struct stat st;
	char hint[HPSHM_TEXT_MAX];
	mode_t type = 0;
	int fd, saved, cls;

	snprintf(hint, sizeof(hint), "run hpshm gc as %s or root", ns->owner);
	/* Never anything the scan did not find to be hpshm's, whatever the caller was told. */
	if (f->has_header < 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s is not an hpshm segment: never removed", path);
	fd = hpshm__named_open(ns, path, O_RDONLY, &type);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* someone removed it first */
		if (saved == ELOOP || saved == ENXIO)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again",
					       "%s is now %s, not an hpshm segment: never removed", path,
					       saved == ELOOP ? "a symbolic link" : hpshm__named_type_word(type));
		return hpshm_error_set(err, HPSHM_ESYS, saved, hpshm__named_open_call(ns), saved == EACCES ? hint : NULL,
				       "could not open %s %s", ns->noun, path);
	}
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect %s", path);
	}
	if (hpshm__posix_sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		if (saved == EWOULDBLOCK)
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "flock", "stop the process using it first",
					       "segment %s is alive: a process still holds it", path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL, "could not lock %s", path);
	}
	/*
	 * Under the lock: still what was listed (a recycled name holds a new object), and debris
	 * that a forced remove may take because it is the caller's is still the caller's.
	 */
	cls = hpshm__named_class(ns, fd, &st, &h);
	hpshm__header_of(f, &listed);
	if (cls < 0 || cls != f->has_header || (cls == HPSHM_FOUND_HEADER && h.nonce != listed.nonce) ||
	    (cls == HPSHM_FOUND_BARE && f->mine == 1 && !hpshm__named_mine(&st))) {
		(void)hpshm__posix_sys.close(fd);
		if (cls < 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s is not an hpshm segment: never removed",
					       path);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again", "%s is no longer the one listed",
				       path);
	}
	/* Unlinked under the lock, and only this object, whatever the name holds by then. */
	saved = named_take(ns, fd, &st, path, hint, err);
	(void)hpshm__posix_sys.close(fd);
	return saved;
}
