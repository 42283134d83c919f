/* SPDX-License-Identifier: MIT */
/*
 * backends/named.c -- the lifecycle of named objects (hugetlbfs files, POSIX shm names),
 * whatever their backend: opening one safely, liveness, whose it is, attach, destroy, scan
 * and lookup (backends/named.h).  Creating one is in named_create.c, removing one in
 * named_remove.c; the layers: doc/architecture.md.  Every system call goes through
 * hpshm__posix_sys, so fault injection reaches this code as it reaches the backends.
 *
 * The rules (PostgreSQL's interlock, done with locks instead of pids; DPDK marks its
 * hugepage files the same way).  The creator and every process that attaches by name hold
 * flock(LOCK_SH) on their descriptor while they map the object; a child that inherited the
 * creator's descriptor shares the creator's open file and so its lock.  An object on which
 * LOCK_EX | LOCK_NB succeeds is mapped by nobody: dead.  The lock says whether an object is
 * in use; only the header at its tail says whether it is hpshm's to remove, since anyone can
 * put a file, a FIFO or a symbolic link under an hpshm.* name.  So:
 *   - every open of an existing object is O_NONBLOCK (a FIFO would block it forever) and
 *     O_NOFOLLOW (a link is never followed), and anything but a regular file is refused;
 *   - a new object gets its name only once it is locked and carries hpshm's header: it is
 *     made unnamed (O_TMPFILE), sized, mapped, given a provisional header (the creator, the
 *     name; the core writes the real one right after) and only then linked under its name
 *     (linkat(), which fails with EEXIST rather than replace anything).  A creator killed at
 *     any moment leaves either nothing or an object that proves it is hpshm's.  Where
 *     O_TMPFILE does not work (another OS, an old kernel) the object is made under its name
 *     with O_EXCL, and is unlocked for a moment between open() and flock(), when another
 *     creator may take it for dead and unlink it: after locking, that creator checks that
 *     the name still refers to its object (same inode) and starts again if not;
 *   - create() of a name that exists looks at the old object first, before anything is
 *     reserved: alive, the error names the creator from its header; dead with hpshm's
 *     header, it is unlinked (which frees its pages) and creation goes on; anything else (a
 *     FIFO, a link, a file without hpshm's header, one this user may not remove) is left
 *     alone and named in the error, with what to do;
 *   - scan() reports every object of the namespace, each with what it is (HPSHM_FOUND_*),
 *     and remove() unlinks a dead one only if it is still what scan() reported;
 *   - remove() unlinks only while holding LOCK_EX, and destroy() unlinks before closing, so a
 *     name is never unlinked by someone who does not hold its object's lock;
 *   - remove() never unlinks by name what it looked at through a descriptor: between the look
 *     and an unlink(path) anyone who may write the directory can swap the name onto another
 *     object (rename(2) with RENAME_EXCHANGE, in a loop: root's gc then unlinked a live
 *     segment's name every time).  It opens the directory once, makes a private directory
 *     of its own in it (0700, owned by the caller, so in a sticky /dev/shm nobody else may
 *     touch what is inside), moves whatever the name holds into it (renameat(), atomic),
 *     and unlinks it there only if it is the very inode it locked and checked; anything else
 *     goes back under its name (linkat(), which never replaces what took the name
 *     meanwhile; else beside it under a new name).  The private directory goes on every
 *     path, once empty.
 * Locks are taken with LOCK_NB and a short retry: a checker holds LOCK_EX for microseconds,
 * and a foreign process holding it must not hang us.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hpshm/provider.h"
#ifdef __linux__
#include "linux/linux.h" /* fstatfs, for the file system of hugetlbfs objects */
#endif
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "backends/named.h"
#include "backends/named_internal.h"

#define NAMED_LOCK_TRIES 200 /* 1 ms apart: a checker holds LOCK_EX for microseconds */

/* ---- POSIX shm names ---- */

int hpshm__shm_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= HPSHM__SHM_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

int hpshm__shm_path_ok(const char *path)
{
	size_t pre = strlen(HPSHM__SHM_PREFIX);

	return strncmp(path, HPSHM__SHM_PREFIX, pre) == 0 && hpshm__shm_name_ok(path + pre);
}

/* ---- opening, liveness, whose an object is ---- */

/* The call that opens ns's objects, as errors name it. */
const char *hpshm__named_open_call(const struct hpshm__names *ns)
{
	return ns->shm_names ? "shm_open" : "open";
}

/* The file of path: path itself, or a shm name's file where there is one (else path, for messages). */
const char *hpshm__named_where_text(const struct hpshm__names *ns, const char *path, char *buf, size_t len)
{
	if (!ns->shm_names || !ns->shm_dir)
		return path;
	snprintf(buf, len, "%s%s", ns->shm_dir, path);
	return buf;
}

/* A file type in words, for messages about what sits where a segment should.  Never a
 * symbolic link: hpshm__named_open() answers ELOOP for one, and the callers name it so. */
const char *hpshm__named_type_word(mode_t type)
{
	switch (type & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFDIR:
		return "a directory";
	default:
		return "not a regular file";
	}
}

int hpshm__named_open(const struct hpshm__names *ns, const char *path, int flags, mode_t *type)
{
	char where[HPSHM_PATH_MAX + 32];
	struct stat st;
	int fd, fl;

	/*
	 * Where the object is a file we can name, what it is is asked first, without opening it:
	 * an open() of a device runs its driver.  The checks after the open() still decide, since
	 * the name may be replaced in between.
	 */
	if ((!ns->shm_names || ns->shm_dir) && lstat(hpshm__named_where_text(ns, path, where, sizeof(where)), &st) == 0 &&
	    !S_ISREG(st.st_mode)) {
		if (type)
			*type = st.st_mode & S_IFMT;
		errno = S_ISLNK(st.st_mode) ? ELOOP : ENXIO;
		return -1;
	}
	/*
	 * O_NONBLOCK: an open() of a FIFO waits for a writer, and anyone may put one under an
	 * hpshm.* name.  O_NOFOLLOW: a symbolic link is never followed (shm_open() adds it too).
	 */
	if (ns->shm_names)
		fd = hpshm__posix_sys.shm_open(path, flags | O_NONBLOCK | O_NOFOLLOW, 0);
	else
		fd = hpshm__posix_sys.open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		int saved = errno; /* close() below may clobber it */

		(void)hpshm__posix_sys.close(fd);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		if (type)
			*type = st.st_mode & S_IFMT;
		(void)hpshm__posix_sys.close(fd);
		errno = ENXIO; /* what open() itself says of a FIFO or socket it cannot use */
		return -1;
	}
	/* On a regular file O_NONBLOCK changes nothing, but a descriptor we keep gets none. */
	fl = hpshm__posix_sys.fcntl(fd, F_GETFL, 0);
	if (fl >= 0)
		(void)hpshm__posix_sys.fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int hpshm__named_unlink(const struct hpshm__names *ns, const char *path)
{
	return ns->shm_names ? hpshm__posix_sys.shm_unlink(path) : hpshm__posix_sys.unlink(path);
}

int hpshm__lock(int fd, int op)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < NAMED_LOCK_TRIES; i++) {
		if (hpshm__posix_sys.flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		(void)nanosleep(&ms, NULL);
	}
	errno = EWOULDBLOCK;
	return -1;
}

int hpshm__named_fs_ok(const struct hpshm__names *ns, int fd, size_t page_size)
{
#ifdef __linux__
	struct statfs sfs;

	if (ns->fs_magic == 0)
		return 1;
	if (hpshm__linux_sys.fstatfs(fd, &sfs) < 0)
		return 0;
	return (uint32_t)sfs.f_type == (uint32_t)ns->fs_magic && sfs.f_bsize > 0 &&
	       (page_size == 0 || (size_t)sfs.f_bsize == page_size);
#else
	/* Only Linux names file systems by a magic number: where a backend asks for one and
	 * none can be read, the object is not taken for ours. */
	(void)fd;
	(void)page_size;
	return ns->fs_magic == 0;
#endif
}

/* Does path still name the object open on fd?  1 yes, 0 no (or gone). */
int hpshm__named_same(const struct hpshm__names *ns, int fd, const char *path)
{
	struct stat a, b;
	int fd2, same;

	fd2 = hpshm__named_open(ns, path, O_RDONLY, NULL);
	if (fd2 < 0)
		return 0;
	same = hpshm__posix_sys.fstat(fd, &a) == 0 && hpshm__posix_sys.fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	(void)hpshm__posix_sys.close(fd2);
	return same;
}

/* Does the calling user own the object st describes?  1 or 0. */
int hpshm__named_mine(const struct stat *st)
{
	return st->st_uid == geteuid();
}

/* 0 if nobody holds a lock on fd (dead), 1 if someone does (alive), -1 if flock cannot tell. */
static int named_alive(int fd)
{
	if (hpshm__posix_sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
		(void)hpshm__posix_sys.flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -1;
}

/*
 * Whose is the regular file open on fd (st its fstat())?  An HPSHM_FOUND_* code, with h
 * filled for HPSHM_FOUND_HEADER.  hpshm makes files of a whole number of pages (the fs block
 * size on hugetlbfs, the base page elsewhere) with the header in the last HPSHM_HEADER_REGION
 * bytes; an empty one is what a create killed between open() and ftruncate() left where the
 * file could not be made unnamed first.
 */
int hpshm__named_class(const struct hpshm__names *ns, int fd, const struct stat *st, struct hpshm_header *h)
{
	unsigned char region[HPSHM_HEADER_REGION];

	memset(h, 0, sizeof(*h));
	if (!hpshm__named_fs_ok(ns, fd, 0))
		return HPSHM_FOUND_FOREIGN_BACKING;
	if (st->st_size == 0)
		return HPSHM_FOUND_BARE;
	if (st->st_size < HPSHM_HEADER_REGION || (size_t)st->st_size % hpshm__port_base_page_size() != 0)
		return HPSHM_FOUND_FOREIGN_BACKING;
	/* pread(), not a mapping: hugetlbfs files can be read (never written), and a look maps nothing. */
	if (hpshm__posix_sys.pread(fd, region, sizeof(region), st->st_size - HPSHM_HEADER_REGION) != (ssize_t)sizeof(region))
		return HPSHM_FOUND_FOREIGN_HEADER; /* cannot tell: never taken for ours */
	return hpshm__header_class(region, sizeof(region), ns->provider, h);
}

/* "uid 1000 (alice)" for messages about whose an object is. */
char *hpshm__named_owner(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (hpshm__posix_sys.getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, len, "uid %lu (%s)", (unsigned long)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %lu", (unsigned long)uid);
	return buf;
}

/*
 * Whose is path, which this user cannot open?  Asked of the file where there is one (stat()
 * needs no permission on the file itself).  0 with "uid N (name)" in buf, or -1.
 */
int hpshm__named_owner_of(const struct hpshm__names *ns, const char *path, char *buf, size_t len)
{
	char where[HPSHM_PATH_MAX + 32];
	struct stat st;

	if (ns->shm_names && !ns->shm_dir)
		return -1;
	if (lstat(hpshm__named_where_text(ns, path, where, sizeof(where)), &st) < 0)
		return -1;
	hpshm__named_owner(st.st_uid, buf, len);
	return 0;
}


/*
 * Where an object with path is made unnamed (O_TMPFILE), and the path linkat() gives it:
 * a file's own directory; for shm names, ns->shm_dir.  0, or -1 where that cannot be done.
 */
int hpshm__named_where(const struct hpshm__names *ns, const char *path, char *dir, size_t dlen, char *full,
		       size_t flen)
{
	const char *slash;
	int n;

	if (ns->shm_names) {
		if (!ns->shm_dir)
			return -1;
		n = snprintf(dir, dlen, "%s", ns->shm_dir);
		if (n < 0 || (size_t)n >= dlen)
			return -1;
		n = snprintf(full, flen, "%s%s", ns->shm_dir, path);
		return n < 0 || (size_t)n >= flen ? -1 : 0;
	}
	slash = strrchr(path, '/');
	if (!slash || slash == path || (size_t)(slash - path) >= dlen)
		return -1;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	n = snprintf(full, flen, "%s", path);
	return n < 0 || (size_t)n >= flen ? -1 : 0;
}

/* ---- attach and destroy ---- */

/* An object at path that is not hpshm's, for attach(): HPSHM_EINVAL saying what it is. */
static int named_attach_foreign(const struct hpshm__names *ns, const char *path, int sys_errno, mode_t type,
				hpshm_error *err)
{
	return hpshm_error_set(err, HPSHM_EINVAL, sys_errno, hpshm__named_open_call(ns), "pass the creator's token unchanged",
			       "%s is %s, not an hpshm segment", path,
			       sys_errno == ELOOP ? "a symbolic link" : hpshm__named_type_word(type));
}

int hpshm__named_attach(const struct hpshm__names *ns, const char *path, hpshm_error *err)
{
	mode_t type = 0;
	int fd, saved;

	fd = hpshm__named_open(ns, path, O_RDWR, &type);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, hpshm__named_open_call(ns),
					       "start the child while the creator still holds the segment",
					       "%s %s does not exist (its creator removed it)", ns->noun, path);
		if (saved == ELOOP || saved == ENXIO)
			return named_attach_foreign(ns, path, saved, type, err);
		if (saved == EACCES || saved == EPERM)
			return hpshm_error_set(err, HPSHM_EACCES, saved, hpshm__named_open_call(ns),
					       "run this process as the creator's user, or have the creator give the "
					       "segment a mode= that admits this user (mode=0660 and a group both are in)",
					       "this user may not open %s %s for reading and writing", ns->noun, path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, hpshm__named_open_call(ns), NULL, "could not open %s %s", ns->noun,
				       path);
	}
	/* Our mark of liveness for scan() and the next create(). */
	if (hpshm__lock(fd, LOCK_SH) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
				       saved == EWOULDBLOCK ? "another process is removing it: create the segment again" : NULL,
				       "could not lock %s %s", ns->noun, path);
	}
	return fd;
}

int hpshm__named_destroy(const struct hpshm__names *ns, struct hpshm_mapping *m)
{
	int rc = 0;

	if (hpshm__posix_sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	/*
	 * A named object belongs to its creator.  Unlinked before the descriptor (and with it the
	 * lock) goes, so nobody can meanwhile take it for dead and put a new object under the name
	 * that this unlink would then remove.
	 */
	if (m->path[0] != '\0' && hpshm__named_unlink(ns, m->path) < 0 && errno != ENOENT)
		rc = HPSHM_ESYS;
	if (hpshm__fd_of(m) >= 0 && hpshm__posix_sys.close(hpshm__fd_of(m)) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
	m->path[0] = '\0';
	return rc;
}

/* ---- scan and lookup ---- */

/* f, as scan() reports something at path that is not hpshm's. */
static void named_foreign(struct hpshm_found *f, int cls)
{
	f->has_header = cls;
	f->alive = -1;
	memset(f->header, 0, sizeof(f->header));
}

int hpshm__named_inspect(const struct hpshm__names *ns, const char *path, const char *name, unsigned d_type,
			 struct hpshm_found *f)
{
	struct stat st;
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", path);
	snprintf(f->name, sizeof(f->name), "%.127s", name); /* the header's name is whole */
#ifdef DT_LNK
	/* What the directory says is enough for what is plainly not a file: nothing is opened. */
	if (d_type != DT_UNKNOWN && d_type != DT_REG) {
		named_foreign(f, d_type == DT_LNK ? HPSHM_FOUND_FOREIGN_LINK : HPSHM_FOUND_FOREIGN_TYPE);
		return 0;
	}
#else
	(void)d_type;
#endif
	fd = hpshm__named_open(ns, path, O_RDONLY, NULL);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENXIO) {
			named_foreign(f, errno == ELOOP ? HPSHM_FOUND_FOREIGN_LINK : HPSHM_FOUND_FOREIGN_TYPE);
			return 0;
		}
		return -1; /* gone meanwhile, or not ours to see */
	}
	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		(void)hpshm__posix_sys.close(fd);
		return -1;
	}
	f->size = (size_t)st.st_size;
	f->mine = hpshm__named_mine(&st);
	{
		struct hpshm_header h;

		memset(&h, 0, sizeof(h));
		f->has_header = hpshm__named_class(ns, fd, &st, &h);
		hpshm__header_to(f, &h);
	}
	f->alive = f->has_header < 0 ? -1 : named_alive(fd);
	(void)hpshm__posix_sys.close(fd);
	return 0;
}

int hpshm__named_lookup(const struct hpshm__names *ns, const char *path, const char *name, struct hpshm_found *f,
			hpshm_error *err)
{
	char owner[96], hint[HPSHM_TEXT_MAX], where[HPSHM_PATH_MAX + 32];
	int saved, n;

	/* 0: the type is not known from a directory entry, so the object is looked at itself. */
	if (hpshm__named_inspect(ns, path, name, 0, f) < 0) {
		saved = errno;
		if (saved == ENOENT || saved == ENOTDIR)
			return hpshm_error_set(err, HPSHM_ENOENT, saved, hpshm__named_open_call(ns), NULL, "no %s %s", ns->noun,
					       path);
		if (saved == EACCES || saved == EPERM) {
			if (hpshm__named_owner_of(ns, path, owner, sizeof(owner)) < 0)
				snprintf(owner, sizeof(owner), "another user");
			snprintf(hint, sizeof(hint),
				 "open it as %s, or have its creator give it a mode= that admits this user (mode=0660 "
				 "and a group both are in)", owner);
			return hpshm_error_set(err, HPSHM_EACCES, saved, hpshm__named_open_call(ns), hint,
					       "segment %s (%s) belongs to %s, and this user may not open it", name,
					       hpshm__named_where_text(ns, path, where, sizeof(where)), owner);
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, hpshm__named_open_call(ns), NULL, "could not open %s %s",
				       ns->noun, path);
	}
	n = snprintf(f->id, sizeof(f->id), "path=%s", path);
	if (n < 0 || (size_t)n >= sizeof(f->id))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "use a shorter name, or a mount on a shorter path",
				       "%s is too long a path to open by name", path);
	return 0;
}
