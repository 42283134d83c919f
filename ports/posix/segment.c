/*
 * ports/posix/segment.c -- how hpshm handles a descriptor-backed segment, whatever its backend.
 *
 * Mechanism: none of its own.  The backends that map a descriptor (hugetlbfs, memfd_hugetlb,
 * plain) or attach at an address (mmap_hugetlb, sysv_hugetlb) call in here for the parts that
 * do not depend on how the memory was obtained; each backend keeps only what is special
 * about its mechanism.  Every system call goes through hpshm__sys, so fault injection reaches
 * this code as it reaches the backends.
 *
 * Operator setup: none.
 *
 * Kernel quirks, and what we do about them:
 *   - MAP_FIXED_NOREPLACE (Linux 4.17) fails with EEXIST rather than replace a mapping.
 *     Older kernels ignore the flag and take the address as a hint, so the address we got is
 *     compared as well, and a mapping elsewhere is undone and counts as EEXIST.  MAP_FIXED is
 *     never used: it would silently replace whatever the process had there.
 *   - A clash is reported with the line of /proc/self/maps that holds the address, since "the
 *     range is taken" alone leaves a person guessing by what.
 *
 * Named objects (PostgreSQL's interlock, done with locks instead of pids; DPDK marks its
 * hugepage files the same way).  The creator and every process that attaches by name hold
 * flock(LOCK_SH) on their descriptor while they map the object; a child that inherited the
 * creator's descriptor shares the creator's open file and so its lock.  An object on which
 * LOCK_EX | LOCK_NB succeeds is mapped by nobody: dead.  So:
 *   - create() of a name that exists takes LOCK_EX | LOCK_NB on the old object; dead, it is
 *     unlinked (which frees its pages) and creation retried; alive, the error names the
 *     creator from the header at the object's tail.  Whether a dead object has a header
 *     does not matter: one without is what a creator killed before the core wrote it left;
 *   - scan() reports every object of the namespace, with or without a header, and remove()
 *     unlinks any dead one: the lock, not the header, says whether it is in use;
 *   - a new object is unlocked for a moment between open(O_EXCL) and flock(), when another
 *     creator may take it for dead and unlink it.  So after locking, the creator checks that
 *     the name still refers to its object (same inode) and starts again if not;
 *   - remove() unlinks only while holding LOCK_EX, and destroy() unlinks before closing, so a
 *     name is never unlinked by someone who does not hold its object's lock.
 * Locks are taken with LOCK_NB and a short retry: a checker holds LOCK_EX for microseconds,
 * and a foreign process holding it must not hang us.
 *
 * Capabilities and re-attach: those of the backends; identifiers are "fd=<n>" (an inherited
 * descriptor) and "path=<name>" (a named object), parsed and written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"
#include "posix/segment.h"

#define SEGMENT_CREATE_TRIES 4   /* named objects: rounds of "exists, dead, unlinked, try again" */
#define SEGMENT_LOCK_TRIES   200 /* 1 ms apart: a checker holds LOCK_EX for microseconds */
#define SEGMENT_LINE_MAX     (HPSHM_TEXT_MAX - 80) /* a maps line, leaving room for the words around it */

/* ---- the identifier in a token ---- */

int hpshm__id_parse(const char *text, const char *key, int *out)
{
	size_t klen = strlen(key);
	char *end;
	long v;

	if (strncmp(text, key, klen) != 0 || text[klen] < '0' || text[klen] > '9')
		return -1;
	errno = 0;
	v = strtol(text + klen, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

int hpshm__fd_identify(const struct hpshm_mapping *m, char *id, size_t len)
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

/* ---- mapping at an address ---- */

int hpshm__address_check(const struct hpshm_request *rq, enum hpshm__map_use use, hpshm_error *err)
{
	char psz[32];

	if (use == HPSHM__MAP_CREATE && !rq->address)
		return 0;
	if (rq->address && (uintptr_t)rq->address % rq->page_size == 0)
		return 0;
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (use == HPSHM__MAP_CREATE)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "give a base_address that is a multiple of the page size",
				       "base_address %p is not aligned to %s pages", rq->address, psz);
	return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
			       "address %p is not a multiple of the %s page size", rq->address, psz);
}

void *hpshm__map_at(const struct hpshm_request *rq, int flags, int fd)
{
	void *p;

	if (rq->address)
		flags |= MAP_FIXED_NOREPLACE;
	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p != MAP_FAILED && rq->address && p != rq->address) {
		(void)hpshm__sys.munmap(p, rq->size); /* pre-4.17 kernel: NOREPLACE was a hint */
		errno = EEXIST;
		return MAP_FAILED;
	}
	return p;
}

int hpshm__map_taken(hpshm_error *err, const char *call, int sys_errno, const struct hpshm_request *rq,
		     enum hpshm__map_use use)
{
	const char *attach_hint = "attach earlier in the child's start-up, or set base_address to a free range";
	char line[SEGMENT_LINE_MAX];
	char sz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (use == HPSHM__MAP_CREATE) {
		if (hpshm__maps_line(rq->address, rq->size, line, sizeof(line)) == 0)
			return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, "choose another base_address",
					       "base_address %p is taken by: %s", rq->address, line);
		return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, "choose another base_address",
				       "another mapping overlaps %s at base_address %p", sz, rq->address);
	}
	if (hpshm__maps_line(rq->address, rq->size, line, sizeof(line)) == 0)
		return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, attach_hint,
				       "the segment's range (%s at %p) is taken in this process by: %s", sz, rq->address,
				       line);
	return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, attach_hint,
			       "another mapping overlaps the %s segment's range at %p in this process", sz, rq->address);
}

int hpshm__reserve_failed(hpshm_error *err, const char *call, int sys_errno, const struct hpshm_request *rq,
			  const char *short_of)
{
	char hint[HPSHM_TEXT_MAX];
	char sz[32], psz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	return hpshm_error_set(err, HPSHM_EUNAVAILABLE, sys_errno, call,
			       hpshm__hugetlb_hint(rq->size, rq->page_size, hint, sizeof(hint)),
			       "could not reserve %s of %s huge pages (%s short)", sz, psz, short_of);
}

void hpshm__mapping_fill(struct hpshm_mapping *m, void *addr, size_t size, int fd, long id, const char *path)
{
	m->addr = addr;
	m->size = size;
	m->fd = fd;
	m->id = id;
	snprintf(m->path, sizeof(m->path), "%s", path ? path : "");
	m->priv = NULL;
}

int hpshm__fd_attach_map(struct hpshm_mapping *m, const struct hpshm_request *rq, int fd, int inherited,
			 const char *what, hpshm_error *err)
{
	char sz[32];
	int saved;
	void *p;

	hpshm_size_format(rq->size, sz, sizeof(sz));
	p = hpshm__map_at(rq, MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		saved = errno; /* close() below may clobber it */
		if (!inherited)
			(void)hpshm__sys.close(fd);
		if (saved == EEXIST)
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_ATTACH);
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "mmap",
				       saved == ENOMEM ? "check ulimit -v" : NULL, "could not map %s of %s at %p", sz, what,
				       rq->address);
	}
	/* An inherited descriptor is the child's own now: keep it out of what the child execs. */
	if (inherited)
		(void)hpshm__sys.fcntl(fd, F_SETFD, FD_CLOEXEC);
	hpshm__mapping_fill(m, p, rq->size, fd, -1, NULL); /* no path: this process never unlinks the name */
	return 0;
}

int hpshm__fd_unmap(struct hpshm_mapping *m)
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

/* ---- the header at the tail ---- */

int hpshm__header_accept(struct hpshm_header *h)
{
	if (memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic)) != 0)
		return 0;
	h->boot_id[sizeof(h->boot_id) - 1] = '\0';
	h->provider[sizeof(h->provider) - 1] = '\0';
	h->name[sizeof(h->name) - 1] = '\0';
	return 1;
}

int hpshm__header_pread(int fd, off_t size, struct hpshm_header *h)
{
	memset(h, 0, sizeof(*h));
	/* pread(), not a mapping: hugetlbfs files can be read (never written), and a look maps nothing. */
	if (size < HPSHM_HEADER_REGION ||
	    hpshm__sys.pread(fd, h, sizeof(*h), size - HPSHM_HEADER_REGION) != (ssize_t)sizeof(*h))
		return 0;
	return hpshm__header_accept(h);
}

/* ---- named objects ---- */

/* The call that opens ns's objects, as errors name it. */
static const char *named_open_call(const struct hpshm__names *ns)
{
	return ns->shm_names ? "shm_open" : "open";
}

int hpshm__named_open(const struct hpshm__names *ns, const char *path, int flags)
{
	if (ns->shm_names)
		return hpshm__sys.shm_open(path, flags, 0);
	return hpshm__sys.open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0);
}

int hpshm__named_unlink(const struct hpshm__names *ns, const char *path)
{
	return ns->shm_names ? hpshm__sys.shm_unlink(path) : hpshm__sys.unlink(path);
}

int hpshm__lock(int fd, int op)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < SEGMENT_LOCK_TRIES; i++) {
		if (hpshm__sys.flock(fd, op | LOCK_NB) == 0)
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
	struct statfs sfs;

	if (ns->fs_magic == 0)
		return 1;
	if (hpshm__linux_sys.fstatfs(fd, &sfs) < 0)
		return 0;
	return (uint32_t)sfs.f_type == (uint32_t)ns->fs_magic && sfs.f_bsize > 0 &&
	       (page_size == 0 || (size_t)sfs.f_bsize == page_size);
}

/* Does path still name the object open on fd?  1 yes, 0 no (or gone). */
static int named_same(const struct hpshm__names *ns, int fd, const char *path)
{
	struct stat a, b;
	int fd2, same;

	fd2 = hpshm__named_open(ns, path, O_RDONLY);
	if (fd2 < 0)
		return 0;
	same = hpshm__sys.fstat(fd, &a) == 0 && hpshm__sys.fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	(void)hpshm__sys.close(fd2);
	return same;
}

/* 0 if nobody holds a lock on fd (dead), 1 if someone does (alive), -1 if flock cannot tell. */
static int named_alive(int fd)
{
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
		(void)hpshm__sys.flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -1;
}

/*
 * create() found path taken.  Dead (nobody holds LOCK_SH): unlink it, freeing its pages, and
 * return 0 so the caller tries again.  Alive: HPSHM_EEXIST naming the creator from the header.
 */
static int named_recycle(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			 hpshm_error *err)
{
	struct hpshm_header h;
	struct stat st;
	char owner[96], hint[HPSHM_TEXT_MAX];
	int fd, saved;

	fd = hpshm__named_open(ns, path, O_RDONLY);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* removed meanwhile: try again */
		snprintf(hint, sizeof(hint), "choose another name= or ask %s to remove it", ns->owner);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, named_open_call(ns), hint,
				       "segment %s already exists and this user cannot open it", path);
	}
	if (!hpshm__named_fs_ok(ns, fd, 0)) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns), "choose another name=",
				       "%s exists and is not a %s file", path, ns->fs_name);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) == 0) {
		/* Dead: nobody maps it.  Unlink under the lock, and only if the name is still this object. */
		if (named_same(ns, fd, path))
			(void)hpshm__named_unlink(ns, path);
		(void)hpshm__sys.close(fd);
		return 0;
	}
	saved = errno;
	if (saved != EWOULDBLOCK) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL,
				       "could not tell whether segment %s is in use", path);
	}
	if (hpshm__sys.fstat(fd, &st) == 0 && hpshm__header_pread(fd, st.st_size, &h))
		snprintf(owner, sizeof(owner), "created by pid %lld per its header", (long long)h.creator_pid);
	else
		snprintf(owner, sizeof(owner), "no hpshm header yet: it is being created");
	(void)hpshm__sys.close(fd);
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns),
			       "choose another name= or stop the process using it", "segment %s is in use (%s)", rq->name,
			       owner);
}

int hpshm__named_create(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			unsigned mode, hpshm_error *err)
{
	int fd, saved, rc, tries;

	for (tries = 0; tries < SEGMENT_CREATE_TRIES; tries++) {
		if (ns->shm_names)
			fd = hpshm__sys.shm_open(path, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
		else
			fd = hpshm__sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd < 0) {
			saved = errno;
			if (saved != EEXIST)
				return ns->create_error(saved, path, err);
			rc = named_recycle(ns, rq, path, err);
			if (rc < 0)
				return rc;
			continue;
		}
		if (hpshm__lock(fd, LOCK_SH) < 0) {
			saved = errno;
			if (named_same(ns, fd, path))
				(void)hpshm__named_unlink(ns, path);
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       "another process holds an exclusive lock on it: stop it",
					       "could not lock new %s %s", ns->noun, path);
		}
		if (named_same(ns, fd, path))
			return fd;
		(void)hpshm__sys.close(fd); /* taken for dead and unlinked before we locked it: again */
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns), "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}

int hpshm__named_attach(const struct hpshm__names *ns, const char *path, hpshm_error *err)
{
	int fd, saved;

	fd = hpshm__named_open(ns, path, O_RDWR);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, named_open_call(ns),
					       "start the child while the creator still holds the segment",
					       "%s %s does not exist (its creator removed it)", ns->noun, path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, named_open_call(ns),
				       saved == EACCES ? "run the child as the creator's user, or create with a wider mode=" : NULL,
				       "could not open %s %s", ns->noun, path);
	}
	/* Our mark of liveness for scan() and the next create(). */
	if (hpshm__lock(fd, LOCK_SH) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
				       saved == EWOULDBLOCK ? "another process is removing it: create the segment again" : NULL,
				       "could not lock %s %s", ns->noun, path);
	}
	return fd;
}

int hpshm__named_destroy(const struct hpshm__names *ns, struct hpshm_mapping *m)
{
	int rc = 0;

	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	/*
	 * A named object belongs to its creator.  Unlinked before the descriptor (and with it the
	 * lock) goes, so nobody can meanwhile take it for dead and put a new object under the name
	 * that this unlink would then remove.
	 */
	if (m->path[0] != '\0' && hpshm__named_unlink(ns, m->path) < 0 && errno != ENOENT)
		rc = HPSHM_ESYS;
	if (m->fd >= 0 && hpshm__sys.close(m->fd) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->fd = -1;
	m->path[0] = '\0';
	return rc;
}

int hpshm__named_inspect(const struct hpshm__names *ns, const char *path, const char *name, struct hpshm_found *f)
{
	struct stat st;
	int fd;

	fd = hpshm__named_open(ns, path, O_RDONLY);
	if (fd < 0)
		return -1; /* gone meanwhile, or not ours to see */
	if (hpshm__sys.fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)hpshm__sys.close(fd);
		return -1;
	}
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", path);
	snprintf(f->name, sizeof(f->name), "%.127s", name); /* the header's name is whole */
	f->size = (size_t)st.st_size;
	f->alive = named_alive(fd);
	f->has_header = hpshm__header_pread(fd, st.st_size, &f->header);
	(void)hpshm__sys.close(fd);
	return 0;
}

int hpshm__named_remove(const struct hpshm__names *ns, const char *path, hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX];
	int fd, saved;

	snprintf(hint, sizeof(hint), "run hpshm gc as %s or root", ns->owner);
	fd = hpshm__named_open(ns, path, O_RDONLY);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0; /* someone removed it first */
		return hpshm_error_set(err, HPSHM_ESYS, saved, named_open_call(ns), saved == EACCES ? hint : NULL,
				       "could not open %s %s", ns->noun, path);
	}
	/* Never unlink anything but one of ours, whatever the caller was told. */
	if (!hpshm__named_fs_ok(ns, fd, 0)) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s is not on %s", path, ns->fs_name);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		if (saved == EWOULDBLOCK)
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "flock", "stop the process using it first",
					       "segment %s is alive: a process still holds it", path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL, "could not lock %s", path);
	}
	/* Unlinked under the lock, and only if the name still is this object. */
	if (named_same(ns, fd, path) && hpshm__named_unlink(ns, path) < 0 && errno != ENOENT) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, ns->shm_names ? "shm_unlink" : "unlink",
				       saved == EACCES || saved == EPERM ? hint : NULL, "could not remove %s %s", ns->noun,
				       path);
	}
	(void)hpshm__sys.close(fd);
	return 0;
}
