/*
 * backends/plain_posix.c -- shared memory in base pages: the fallback that always works.
 *
 * Mechanism:
 *   - unnamed: memfd_create("hpshm:anon", MFD_CLOEXEC), ftruncate(), mmap(MAP_SHARED).  A
 *     descriptor rather than MAP_ANONYMOUS so that a child started by exec can map the same
 *     memory.  Where memfd_create does not exist (ENOSYS: Linux before 3.17, some seccomp
 *     sandboxes) it falls back to mmap(MAP_SHARED | MAP_ANONYMOUS) with no descriptor,
 *     which only fork() children share;
 *   - named: shm_open("/hpshm.<name>", O_RDWR | O_CREAT | O_EXCL, mode), ftruncate(), mmap.
 *     shm_open() and shm_unlink() are called by name (through hpshm__sys), never as paths
 *     under /dev/shm: where a POSIX shm name lives is the C library's business (glibc looks
 *     for its tmpfs mount, FreeBSD and macOS keep the objects in the kernel).  The one
 *     exception is scan(), which must list the objects and can only do so on Linux, where
 *     they are the files of /dev/shm.
 *
 * Operator setup: none for unnamed segments.  Named ones need /dev/shm (a tmpfs) writable
 * and large enough: on Linux its size= limit is charged page by page at fault time, and a
 * full tmpfs raises SIGBUS there.  The core populates through m->fd (fallocate reports
 * ENOSPC instead), which is one reason the descriptor is kept.
 *
 * Kernel quirks: none that matter; transparent huge pages may back the memory when
 * shmem_enabled allows, which the core's verification reports rather than promises.
 *
 * Liveness of named segments (PostgreSQL's interlock, done with locks instead of pids):
 * the creator and every process that attaches by name hold flock(LOCK_SH) on their
 * descriptor for as long as they map the segment; a child that inherited the creator's
 * descriptor shares the creator's open file and so its lock.  An object nobody holds a
 * shared lock on is dead: LOCK_EX | LOCK_NB succeeds on it.  So:
 *   - create() of a name that exists takes LOCK_EX | LOCK_NB on the old object; dead, it is
 *     unlinked and creation retried; alive, the error names the creator from its header;
 *   - a new object is unlocked for a moment between shm_open(O_EXCL) and flock(), when
 *     another creator may take it for dead and unlink it.  So after locking, the creator
 *     checks that the name still refers to its object (same inode) and starts again if not;
 *   - remove() unlinks only while holding LOCK_EX, and destroy() unlinks before closing, so a
 *     name is never unlinked by someone who does not hold its object's lock.
 * The locks are taken with LOCK_NB and a short retry: whoever holds LOCK_EX (a checker)
 * holds it for microseconds, and a foreign process holding it must not hang us.
 *
 * Capabilities: REATTACH, NAMED, FD; not HUGE.  probe() always says yes: this provider is
 * the end of every huge_pages=try walk.
 *
 * Re-attach: named segments by name ("path=/hpshm.<name>": shm_open, LOCK_SH, then mmap);
 * unnamed ones by the inherited memfd ("fd=<n>", FD_CLOEXEC cleared just before exec),
 * both at the creator's address with MAP_FIXED_NOREPLACE, the address compared afterwards.
 * The ENOSYS fallback has neither, and says so by m->fd == -1: identify() refuses it.  A
 * name with ':' or white space cannot sit in a token; such a segment is identified by its
 * descriptor instead.  A named segment belongs to its creator: destroy() unlinks it.  A
 * crash leaves it in /dev/shm, dead, for `hpshm gc` (scan/remove) or the next create().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#ifdef __linux__
#include <dirent.h>
#endif

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"

#define PLAIN_DEFAULT_MODE 0600
#define PLAIN_NAME_MAX     200 /* well within NAME_MAX for "/hpshm.<name>" */
#define PLAIN_PREFIX       "/hpshm."
#define PLAIN_CREATE_TRIES 4   /* create(): rounds of "exists, dead, unlinked, try again" */
#define PLAIN_LOCK_TRIES   200 /* 1 ms apart: a checker holds LOCK_EX for microseconds */
#ifdef __linux__
#define PLAIN_SHM_DIR "/dev/shm" /* where glibc and musl keep POSIX shm objects on Linux */
#endif

/* A name becomes one shm name component: no '/', not empty, not "." or "..", not too long. */
static int plain_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= PLAIN_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int plain_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)rq;
	out->sys_errno = 0;
	out->reason[0] = '\0';
	return 0;
}

/* flock(op | LOCK_NB), retried for a moment: 0, or -1 with errno (EWOULDBLOCK: still held). */
static int plain_lock(int fd, int op)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < PLAIN_LOCK_TRIES; i++) {
		if (hpshm__sys.flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		(void)nanosleep(&ms, NULL);
	}
	errno = EWOULDBLOCK;
	return -1;
}

/* Does the name path still refer to the object open on fd?  1 yes, 0 no (or gone). */
static int plain_same(int fd, const char *path)
{
	struct stat a, b;
	int fd2, same;

	fd2 = hpshm__sys.shm_open(path, O_RDONLY, 0);
	if (fd2 < 0)
		return 0;
	same = hpshm__sys.fstat(fd, &a) == 0 && hpshm__sys.fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	(void)hpshm__sys.close(fd2);
	return same;
}

/* Read the header from the last HPSHM_HEADER_REGION bytes of the object: 1 if it is hpshm's. */
static int plain_read_header(int fd, off_t size, struct hpshm_header *h)
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

/*
 * create() found path taken.  Dead (no process holds LOCK_SH): unlink it and return 0 so the
 * caller tries again.  Alive: HPSHM_EEXIST naming the creator from the header.
 */
static int plain_recycle(const struct hpshm_request *rq, const char *path, hpshm_error *err)
{
	struct hpshm_header h;
	struct stat st;
	char owner[96];
	int fd, saved;

	fd = hpshm__sys.shm_open(path, O_RDONLY, 0);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* removed meanwhile: try again */
		return hpshm_error_set(err, HPSHM_EEXIST, saved, "shm_open",
				       "choose another name= or ask the object's owner to remove it",
				       "segment %s already exists and this user cannot open it", path);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
		/* Dead: nobody maps it.  Unlink under the lock, and only if the name is still this object. */
		if (plain_same(fd, path))
			(void)hpshm__sys.shm_unlink(path);
		(void)hpshm__sys.close(fd);
		return 0;
	}
	saved = errno;
	if (saved != EWOULDBLOCK) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL,
				       "could not tell whether segment %s is in use", path);
	}
	if (hpshm__sys.fstat(fd, &st) == 0 && plain_read_header(fd, st.st_size, &h))
		snprintf(owner, sizeof(owner), "created by pid %lld per its header", (long long)h.creator_pid);
	else
		snprintf(owner, sizeof(owner), "no hpshm header yet: it is being created");
	(void)hpshm__sys.close(fd);
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shm_open",
			       "choose another name= or stop the process using it",
			       "segment %s is in use (%s)", rq->name, owner);
}

/*
 * Create the named object path, locked shared, recycling a dead one of the same name (see
 * the top comment for the race this loop closes).
 */
static int plain_open_named(const struct hpshm_request *rq, const char *path, hpshm_error *err)
{
	unsigned mode = rq->mode ? rq->mode & 0777 : PLAIN_DEFAULT_MODE;
	int fd, saved, rc, tries;

	for (tries = 0; tries < PLAIN_CREATE_TRIES; tries++) {
		fd = hpshm__sys.shm_open(path, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
		if (fd < 0) {
			saved = errno;
			if (saved != EEXIST)
				return hpshm_error_set(err, HPSHM_ESYS, saved, "shm_open",
						       saved == EACCES ? "make /dev/shm writable for this user" : NULL,
						       "could not create POSIX shared memory %s", path);
			rc = plain_recycle(rq, path, err);
			if (rc < 0)
				return rc;
			continue;
		}
		if (plain_lock(fd, LOCK_SH) < 0) {
			saved = errno;
			if (plain_same(fd, path))
				(void)hpshm__sys.shm_unlink(path);
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       "another process holds an exclusive lock on it: stop it",
					       "could not lock new POSIX shared memory %s", path);
		}
		if (plain_same(fd, path))
			return fd;
		(void)hpshm__sys.close(fd); /* taken for dead and unlinked before we locked it: again */
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, "shm_open", "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}

/* Get the backing descriptor: a named POSIX object, a memfd, or -1 for MAP_ANONYMOUS. */
static int plain_open(const struct hpshm_request *rq, char *path, size_t len, int *fdp, hpshm_error *err)
{
	int fd, saved;

	path[0] = '\0';
	if (rq->name) {
		snprintf(path, len, PLAIN_PREFIX "%s", rq->name);
		fd = plain_open_named(rq, path, err);
		if (fd < 0) {
			path[0] = '\0';
			return fd;
		}
		*fdp = fd;
		return 0;
	}

	fd = hpshm__sys.memfd_create("hpshm:anon", MFD_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOSYS) {
			*fdp = -1;   /* MAP_ANONYMOUS: shared with fork() children only */
			return 0;
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, "memfd_create",
				       saved == EMFILE || saved == ENFILE ? "raise the open file limit (ulimit -n)" : NULL,
				       "could not create a memfd");
	}
	*fdp = fd;
	return 0;
}

/* Undo plain_open(): unlink while the lock is still held, then close. */
static void plain_close(int fd, const char *path)
{
	if (path[0] != '\0')
		(void)hpshm__sys.shm_unlink(path);
	if (fd >= 0)
		(void)hpshm__sys.close(fd);
}

static int plain_create(struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];
	char sz[32], psz[32];
	int flags = MAP_SHARED;
	int fd = -1, saved, rc;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (rq->name && !plain_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use 1 to 200 characters without '/', other than \".\" and \"..\"",
				       "segment name \"%.64s\" cannot be a POSIX shared memory name", rq->name);
	if ((off_t)rq->size < 0 || (size_t)(off_t)rq->size != rq->size)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);
	if (rq->address) {
		if ((uintptr_t)rq->address % rq->page_size != 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "give a base_address that is a multiple of the page size",
					       "base_address %p is not aligned to %s pages", rq->address, psz);
		flags |= MAP_FIXED_NOREPLACE;
	}

	rc = plain_open(rq, path, sizeof(path), &fd, err);
	if (rc < 0)
		return rc;

	if (fd < 0)
		flags |= MAP_ANONYMOUS;
	else if (hpshm__sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno;
		plain_close(fd, path);
		return hpshm_error_set(err, saved == EFBIG || saved == ENOSPC ? HPSHM_ENOMEM : HPSHM_ESYS, saved,
				       "ftruncate", NULL, "could not size the segment to %s", sz);
	}

	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED || (rq->address && p != rq->address)) {
		char line[HPSHM_TEXT_MAX - 80];

		saved = p == MAP_FAILED ? errno : EEXIST;   /* close() below may clobber errno */
		if (p != MAP_FAILED)
			(void)hpshm__sys.munmap(p, rq->size); /* pre-4.17 kernel: NOREPLACE was a hint */
		plain_close(fd, path);
		switch (saved) {
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_ENOMEM, saved, "mmap",
					       "check ulimit -v and vm.overcommit_memory, or ask for less",
					       "no room to map %s", sz);
		case EEXIST:
			if (hpshm__maps_line(rq->address, line, sizeof(line)) == 0)
				return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap", "choose another base_address",
						       "base_address %p is taken by: %s", rq->address, line);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "mmap", "choose another base_address",
					       "another mapping overlaps %s at base_address %p", sz, rq->address);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL, "could not map %s", sz);
		}
	}

	m->addr = p;
	m->size = rq->size;
	m->fd = fd;
	m->id = -1;
	memcpy(m->path, path, sizeof(m->path));
	m->priv = NULL;
	return 0;
}

static int plain_destroy(struct hpshm_mapping *m)
{
	int rc = 0;

	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	/*
	 * A named object belongs to its creator.  Unlinked before the descriptor (and with it the
	 * lock) goes, so nobody can meanwhile take it for dead and put a new object under the name
	 * that this unlink would then remove.
	 */
	if (m->path[0] != '\0' && hpshm__sys.shm_unlink(m->path) < 0 && errno != ENOENT)
		rc = HPSHM_ESYS;
	if (m->fd >= 0 && hpshm__sys.close(m->fd) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->fd = -1;
	m->path[0] = '\0';
	return rc;
}

/* Can text sit in a token's identifier field?  Tokens are split at ':' and end at white space. */
static int plain_token_safe(const char *text)
{
	return strpbrk(text, ": \t\n\r\v\f") == NULL;
}

static int plain_identify(const struct hpshm_mapping *m, char *id, size_t len)
{
	int n;

	if (m->path[0] != '\0' && plain_token_safe(m->path))
		n = snprintf(id, len, "path=%s", m->path);
	else if (m->fd >= 0)
		n = snprintf(id, len, "fd=%d", m->fd);
	else
		return HPSHM_ENOTSUP; /* the MAP_ANONYMOUS fallback: fork() children only */
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

/* "fd=<n>": n decimal, no sign, no trailing text.  0, or -1. */
static int plain_parse_fd(const char *id, int *fd)
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

/* A name this provider made: "/hpshm.<name>", one component, within PLAIN_NAME_MAX. */
static int plain_path_ok(const char *path)
{
	size_t pre = strlen(PLAIN_PREFIX);

	return strncmp(path, PLAIN_PREFIX, pre) == 0 && plain_name_ok(path + pre);
}

static int plain_attach(struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];
	char sz[32], have[32];
	struct stat st;
	int fd = -1, named = 0, saved;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	path[0] = '\0';
	if (strncmp(id, "path=", 5) == 0) {
		if (!plain_path_ok(id + 5))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the name of an hpshm POSIX shared memory object", id + 5);
		snprintf(path, sizeof(path), "%s", id + 5);
		named = 1;
	} else if (plain_parse_fd(id, &fd) < 0) {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither fd=<descriptor> nor path=/hpshm.<name>", id);
	}
	if (!rq->address || (uintptr_t)rq->address % rq->page_size != 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "address %p is not a multiple of the page size", rq->address);

	if (named) {
		fd = hpshm__sys.shm_open(path, O_RDWR, 0);
		if (fd < 0) {
			saved = errno;
			if (saved == ENOENT)
				return hpshm_error_set(err, HPSHM_EINVAL, saved, "shm_open",
						       "start the child while the creator still holds the segment",
						       "POSIX shared memory %s does not exist (its creator removed it)", path);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "shm_open",
					       saved == EACCES ? "run the child as the creator's user, or create with a wider mode=" : NULL,
					       "could not open POSIX shared memory %s", path);
		}
		/* Our mark of liveness for scan() and the next create() (top comment). */
		if (plain_lock(fd, LOCK_SH) < 0) {
			saved = errno;
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       saved == EWOULDBLOCK ? "another process is removing it: create the segment again" : NULL,
					       "could not lock POSIX shared memory %s", path);
		}
	}

	if (hpshm__sys.fstat(fd, &st) < 0) {
		saved = errno;
		if (named)
			(void)hpshm__sys.close(fd);
		if (saved == EBADF)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, "fstat",
					       "start the child with hpshm_spawn(), which keeps the descriptor open across exec",
					       "descriptor %d is not open in this process", fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect descriptor %d", fd);
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size < (uint64_t)rq->size) {
		if (named)
			(void)hpshm__sys.close(fd);
		hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have));
		if (named)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "POSIX shared memory %s is %s long, not the segment's %s", path, have, sz);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "start the child with hpshm_spawn(), which keeps the descriptor open across exec",
				       "descriptor %d is not the segment's memfd (%s, the segment is %s)", fd,
				       S_ISREG(st.st_mode) ? have : "not a regular file", sz);
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
				       saved == ENOMEM ? "check ulimit -v" : NULL, "could not map %s at %p", sz, rq->address);
	}

	/* An inherited descriptor is the child's own now: keep it out of what the child execs. */
	if (!named)
		(void)hpshm__sys.fcntl(fd, F_SETFD, FD_CLOEXEC);
	m->addr = p;
	m->size = rq->size;
	m->fd = fd;
	m->id = -1;
	m->path[0] = '\0'; /* never unlinked by this process: the creator owns the name */
	m->priv = NULL;
	return 0;
}

/* Undo attach(): unmap and close (dropping our lock); the name stays, its creator owns it. */
static int plain_detach(struct hpshm_mapping *m)
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

#ifdef __linux__
/*
 * The Linux part: POSIX has no call that lists shm objects, but glibc and musl keep them as
 * files in the tmpfs at /dev/shm, where "/hpshm.x" is /dev/shm/hpshm.x.  Everything else
 * still goes through shm_open() by name.
 */
static int plain_scan(hpshm_found_fn fn, void *user)
{
	struct hpshm_found f;
	struct dirent *de;
	struct stat st;
	char shm[HPSHM_PATH_MAX];
	DIR *dir;
	int fd, stop = 0;

	dir = opendir(PLAIN_SHM_DIR);
	if (!dir)
		return errno == ENOENT ? 0 : HPSHM_EIO;
	while (!stop && (de = readdir(dir)) != NULL) {
		if (strncmp(de->d_name, &PLAIN_PREFIX[1], strlen(PLAIN_PREFIX) - 1) != 0)
			continue;
		if (strlen(de->d_name) + 2 > sizeof(shm))
			continue;
		shm[0] = '/';
		memcpy(shm + 1, de->d_name, strlen(de->d_name) + 1);
		if (!plain_path_ok(shm))
			continue;
		fd = hpshm__sys.shm_open(shm, O_RDONLY, 0);
		if (fd < 0)
			continue; /* gone meanwhile, or not ours to see */
		if (hpshm__sys.fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			(void)hpshm__sys.close(fd);
			continue;
		}
		memset(&f, 0, sizeof(f));
		snprintf(f.id, sizeof(f.id), "%s", shm);
		snprintf(f.name, sizeof(f.name), "%.127s", shm + strlen(PLAIN_PREFIX)); /* the header's name is whole */
		f.size = (size_t)st.st_size;
		if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
			f.alive = 0;
			(void)hpshm__sys.flock(fd, LOCK_UN);
		} else {
			f.alive = errno == EWOULDBLOCK ? 1 : -1;
		}
		f.has_header = plain_read_header(fd, st.st_size, &f.header);
		(void)hpshm__sys.close(fd);
		stop = fn(user, &f);
	}
	closedir(dir);
	return 0;
}
#else
/* Elsewhere POSIX shm objects live where no call can list them. */
static int plain_scan(hpshm_found_fn fn, void *user)
{
	(void)fn;
	(void)user;
	return HPSHM_ENOTSUP;
}
#endif

static int plain_remove(const struct hpshm_found *f, hpshm_error *err)
{
	int fd, saved;

	if (!plain_path_ok(f->id))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "\"%.64s\" is not the name of an hpshm POSIX shared memory object", f->id);
	fd = hpshm__sys.shm_open(f->id, O_RDONLY, 0);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shm_open",
				       saved == EACCES ? "run hpshm gc as the object's owner or root" : NULL,
				       "could not open POSIX shared memory %s", f->id);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		if (saved == EWOULDBLOCK)
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "flock", "stop the process using it first",
					       "segment %s is alive: a process still holds it", f->id);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL, "could not lock %s", f->id);
	}
	/* Unlinked under the lock, and only if the name still is this object. */
	if (plain_same(fd, f->id) && hpshm__sys.shm_unlink(f->id) < 0 && errno != ENOENT) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "shm_unlink",
				       saved == EACCES ? "run hpshm gc as the object's owner or root" : NULL,
				       "could not remove POSIX shared memory %s", f->id);
	}
	(void)hpshm__sys.close(fd);
	return 0;
}

const struct hpshm_provider hpshm__provider_plain = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "plain",
	.summary     = "base pages from a memfd or shm_open() object; always available",
	.caps        = HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD,
	.probe       = plain_probe,
	.create      = plain_create,
	.destroy     = plain_destroy,
	.identify    = plain_identify,
	.attach      = plain_attach,
	.detach      = plain_detach,
	.scan        = plain_scan,
	.remove      = plain_remove,
};
