/* SPDX-License-Identifier: MIT */
/*
 * backends/fdseg.c -- how hpshm handles a descriptor-backed segment, whatever its backend.
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
 *
 * Capabilities and re-attach: those of the backends; identifiers are "fd=<n>" (an inherited
 * descriptor) and "path=<name>" (a named object), parsed and written here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdatomic.h>
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
#include "backends/fdseg.h"

#define SEGMENT_CREATE_TRIES 4   /* named objects: rounds of "exists, dead, unlinked, try again" */
#define SEGMENT_PRIVATE_TRIES 8  /* remove(): names tried for its private directory */
#define SEGMENT_TAKEN "taken"    /* remove(): the name an object has inside that directory */
#define SEGMENT_LOCK_TRIES   200 /* 1 ms apart: a checker holds LOCK_EX for microseconds */
#define SEGMENT_LINE_MAX     (HPSHM_TEXT_MAX - 80) /* a maps line, leaving room for the words around it */

/* ---- the identifier in a token ---- */

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

int hpshm__fd_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	int n;

	(void)self;
	/* Tokens are split at ':' and end at white space: such a path goes by descriptor. */
	if (m->path[0] != '\0' && !strpbrk(m->path, ": \t\n\r\v\f"))
		n = snprintf(id, len, "path=%s", m->path);
	else if (hpshm__fd_of(m) >= 0)
		n = snprintf(id, len, "fd=%d", hpshm__fd_of(m));
	else
		return HPSHM_EINVAL;
	return n < 0 || (size_t)n >= len ? HPSHM_EOVERFLOW : n;
}

/* ---- mapping at an address ---- */

/*
 * The length the kernel maps for len bytes of fd: len, but for a hugetlb file, whose
 * mapping it rounds up to whole huge pages of the file (and whose munmap() fails with EINVAL
 * for a length that ends inside one, leaving the whole mapping behind).  The file system
 * names the page size: hugetlbfs reports it as its block size.
 */
static size_t fd_map_length(int fd, size_t len)
{
#ifdef __linux__
	struct statfs sfs;
	size_t page, whole;

	if (fd < 0 || hpshm__linux_sys.fstatfs(fd, &sfs) < 0 || (uint32_t)sfs.f_type != (uint32_t)HUGETLBFS_MAGIC ||
	    sfs.f_bsize <= 0)
		return len;
	page = (size_t)sfs.f_bsize;
	if ((page & (page - 1)) != 0 || hpshm__round_up(len, page, &whole) < 0)
		return len;
	return whole;
#else
	(void)fd;
	return len;
#endif
}

void *hpshm__map_at(const struct hpshm_request *rq, int flags, int fd)
{
	void *p;

#if defined(MAP_FIXED_NOREPLACE)
	if (rq->address)
		flags |= MAP_FIXED_NOREPLACE;
#elif defined(MAP_EXCL)
	/* FreeBSD: MAP_FIXED never replaces a mapping when MAP_EXCL is given; a taken range is
	 * EINVAL, the answer to nothing else here (the core hands page-aligned addresses and
	 * sizes), so it is told as Linux tells it. */
	if (rq->address)
		flags |= MAP_FIXED | MAP_EXCL;
#endif
	/* Without either flag (macOS) the address is a hint, checked below like an old
	 * kernel's: a mapping elsewhere is undone and counts as EEXIST. */
	p = hpshm__sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, fd, 0);
#if !defined(MAP_FIXED_NOREPLACE) && defined(MAP_EXCL)
	if (p == MAP_FAILED && rq->address && errno == EINVAL)
		errno = EEXIST;
#endif
	if (p != MAP_FAILED && rq->address && p != rq->address) {
		(void)hpshm__sys.munmap(p, fd_map_length(fd, rq->size)); /* pre-4.17 kernel: NOREPLACE was a hint */
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
#ifdef __linux__
	struct hpshm__pool pool;
	unsigned long pages = (unsigned long)(rq->size / rq->page_size);
#endif

	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
#ifdef __linux__
	/*
	 * ENOMEM with the pages free in the pool is not the pool's doing: the mapping needs a free
	 * range of the whole size on the page size's grid, which a 32-bit process often lacks
	 * (2 GiB aligned to 1 GiB), or a hugetlb cgroup refused the reservation.  Saying "raise
	 * nr_hugepages" there would send the operator after the wrong knob.
	 */
	if (sys_errno == ENOMEM && hpshm__pool_get(rq->page_size, &pool) == 0 && hpshm__pool_available(&pool) >= pages)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, sys_errno, call,
				       sizeof(void *) < 8 ? "ask for less, or use a 64-bit build of the program"
							  : "check the hugetlb cgroup limits and ulimit -v, or ask for less",
				       "could not map %s of %s huge pages although the pool has %lu free: this process has "
				       "no free %s range aligned to %s%s, or a hugetlb cgroup limit is short",
				       sz, psz, hpshm__pool_available(&pool), sz, psz,
				       sizeof(void *) < 8 ? " (a 32-bit address space)" : "");
	hpshm__hugetlb_hint(rq->size, rq->page_size, hint, sizeof(hint));
#else
	hint[0] = '\0'; /* the pool a hint names is Linux's; elsewhere no backend reserves one */
#endif
	return hpshm_error_set(err, HPSHM_EUNAVAILABLE, sys_errno, call, hint[0] ? hint : NULL,
			       "could not reserve %s of %s huge pages (%s short)", sz, psz, short_of);
}

void hpshm__mapping_fill(struct hpshm_mapping *m, void *addr, size_t size, int fd, long id, const char *path)
{
	m->addr = addr;
	m->size = size;
	m->handle = fd >= 0 ? (intptr_t)fd : id >= 0 ? (intptr_t)id : HPSHM_NO_HANDLE;
	m->flags = fd >= 0 ? HPSHM_MAP_DESCRIPTOR : 0;
	if (fd >= 0 && !(path && path[0]))
		m->flags |= HPSHM_MAP_INHERIT; /* no name to open: a child gets the descriptor itself */
	m->caps = 0;
	snprintf(m->path, sizeof(m->path), "%s", path ? path : "");
	m->priv = NULL;
	m->object[0] = '\0';
}

int hpshm__fd_attach_map(struct hpshm_mapping *m, const struct hpshm_request *rq, int fd, const char *named,
			 const char *what, hpshm_error *err)
{
	int inherited = named == NULL;
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
	/*
	 * An object opened by name keeps its name, so a token made here names it the same way
	 * and a child of ours needs no descriptor; detach never unlinks it (only the creator's
	 * destroy does).  An inherited descriptor is what this process's children inherit in turn.
	 * The length is what the kernel mapped, so that whoever undoes this mapping unmaps all
	 * of it: the backends refuse an object the token's length does not fit, and the core
	 * refuses a mapping longer than the token's.
	 */
	hpshm__mapping_fill(m, p, fd_map_length(fd, rq->size), fd, -1, named);
	hpshm__fd_object(m, fd);
	return 0;
}

void hpshm__fd_object(struct hpshm_mapping *m, int fd)
{
	struct stat st;

	m->object[0] = '\0';
	if (hpshm__sys.fstat(fd, &st) == 0)
		snprintf(m->object, sizeof(m->object), "dev=%#llx ino=%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
}

int hpshm__fd_unmap(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = 0;

	(void)self;
	if (hpshm__sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	if (hpshm__fd_of(m) >= 0 && hpshm__sys.close(hpshm__fd_of(m)) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
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

/* Is every byte of p[0, len) zero? */
static int segment_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

int hpshm__header_class(const void *region, size_t len, const char *provider, struct hpshm_header *h)
{
	const unsigned char *magic;

	memset(h, 0, sizeof(*h));
	if (segment_zero(region, len))
		return HPSHM_FOUND_BARE;
	if (len < sizeof(*h))
		return HPSHM_FOUND_FOREIGN_HEADER;
	memcpy(h, region, sizeof(*h));
	if (hpshm__header_accept(h))
		return HPSHM_FOUND_HEADER;
	/*
	 * A writer puts the magic last (hpshm__header_provisional(), the core's header), so a
	 * process killed in the middle leaves every other field written and the magic zero or
	 * partly there: hpshm's, torn.  A header of this provider in all but the magic is that.
	 */
	magic = (const unsigned char *)h->magic;
	for (size_t i = 0; i < sizeof(h->magic); i++)
		if (magic[i] != 0 && magic[i] != (unsigned char)HPSHM_HEADER_MAGIC[i])
			provider = NULL;
	if (provider && h->version != 0 && h->header_size != 0 &&
	    strncmp(h->provider, provider, sizeof(h->provider)) == 0) {
		memset(h, 0, sizeof(*h));
		return HPSHM_FOUND_MARKED;
	}
	memset(h, 0, sizeof(*h));
	return HPSHM_FOUND_FOREIGN_HEADER;
}

void hpshm__header_provisional(void *tail, const char *provider, const struct hpshm_request *rq)
{
	struct hpshm_header h, *dst = tail;

	memset(&h, 0, sizeof(h));
	h.version = HPSHM_HEADER_VERSION;
	h.header_size = (uint32_t)sizeof(h);
	h.usable_size = rq->size - HPSHM_HEADER_REGION;
	h.page_size = rq->page_size;
	h.nonce = 0; /* no token names a segment before the core writes its own header */
	h.creator_pid = hpshm__getpid();
	h.creator_start = hpshm__process_start(h.creator_pid);
	h.created_unix = (uint64_t)time(NULL);
	if (hpshm__boot_id(h.boot_id, sizeof(h.boot_id)) < 0)
		h.boot_id[0] = '\0';
	snprintf(h.provider, sizeof(h.provider), "%s", provider);
	snprintf(h.name, sizeof(h.name), "%s", rq->name ? rq->name : "");
	/* Magic last, as the core does: a reader that sees it sees a whole header. */
	*dst = h;
	atomic_thread_fence(memory_order_release);
	memcpy(dst->magic, HPSHM_HEADER_MAGIC, sizeof(dst->magic));
}

/* ---- named objects ---- */

/* The call that opens ns's objects, as errors name it. */
static const char *named_open_call(const struct hpshm__names *ns)
{
	return ns->shm_names ? "shm_open" : "open";
}

/* The file of path: path itself, or a shm name's file where there is one (else path, for messages). */
static const char *named_where_text(const struct hpshm__names *ns, const char *path, char *buf, size_t len)
{
	if (!ns->shm_names || !ns->shm_dir)
		return path;
	snprintf(buf, len, "%s%s", ns->shm_dir, path);
	return buf;
}

/* A file type in words, for messages about what sits where a segment should.  Never a
 * symbolic link: hpshm__named_open() answers ELOOP for one, and the callers name it so. */
static const char *named_type_word(mode_t type)
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
	if ((!ns->shm_names || ns->shm_dir) && lstat(named_where_text(ns, path, where, sizeof(where)), &st) == 0 &&
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
		fd = hpshm__sys.shm_open(path, flags | O_NONBLOCK | O_NOFOLLOW, 0);
	else
		fd = hpshm__sys.open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (hpshm__sys.fstat(fd, &st) < 0) {
		int saved = errno; /* close() below may clobber it */

		(void)hpshm__sys.close(fd);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		if (type)
			*type = st.st_mode & S_IFMT;
		(void)hpshm__sys.close(fd);
		errno = ENXIO; /* what open() itself says of a FIFO or socket it cannot use */
		return -1;
	}
	/* On a regular file O_NONBLOCK changes nothing, but a descriptor we keep gets none. */
	fl = hpshm__sys.fcntl(fd, F_GETFL, 0);
	if (fl >= 0)
		(void)hpshm__sys.fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
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
static int named_same(const struct hpshm__names *ns, int fd, const char *path)
{
	struct stat a, b;
	int fd2, same;

	fd2 = hpshm__named_open(ns, path, O_RDONLY, NULL);
	if (fd2 < 0)
		return 0;
	same = hpshm__sys.fstat(fd, &a) == 0 && hpshm__sys.fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	(void)hpshm__sys.close(fd2);
	return same;
}

/* Does the calling user own the object st describes?  1 or 0. */
static int named_mine(const struct stat *st)
{
	return st->st_uid == geteuid();
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
 * Whose is the regular file open on fd (st its fstat())?  An HPSHM_FOUND_* code, with h
 * filled for HPSHM_FOUND_HEADER.  hpshm makes files of a whole number of pages (the fs block
 * size on hugetlbfs, the base page elsewhere) with the header in the last HPSHM_HEADER_REGION
 * bytes; an empty one is what a create killed between open() and ftruncate() left where the
 * file could not be made unnamed first.
 */
static int named_class(const struct hpshm__names *ns, int fd, const struct stat *st, struct hpshm_header *h)
{
	unsigned char region[HPSHM_HEADER_REGION];

	memset(h, 0, sizeof(*h));
	if (!hpshm__named_fs_ok(ns, fd, 0))
		return HPSHM_FOUND_FOREIGN_BACKING;
	if (st->st_size == 0)
		return HPSHM_FOUND_BARE;
	if (st->st_size < HPSHM_HEADER_REGION || (size_t)st->st_size % hpshm__base_page_size() != 0)
		return HPSHM_FOUND_FOREIGN_BACKING;
	/* pread(), not a mapping: hugetlbfs files can be read (never written), and a look maps nothing. */
	if (hpshm__sys.pread(fd, region, sizeof(region), st->st_size - HPSHM_HEADER_REGION) != (ssize_t)sizeof(region))
		return HPSHM_FOUND_FOREIGN_HEADER; /* cannot tell: never taken for ours */
	return hpshm__header_class(region, sizeof(region), ns->provider, h);
}

/* "uid 1000 (alice)" for messages about whose an object is. */
static char *named_owner(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (hpshm__sys.getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, len, "uid %lu (%s)", (unsigned long)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %lu", (unsigned long)uid);
	return buf;
}

/*
 * Whose is path, which this user cannot open?  Asked of the file where there is one (stat()
 * needs no permission on the file itself).  0 with "uid N (name)" in buf, or -1.
 */
static int named_owner_of(const struct hpshm__names *ns, const char *path, char *buf, size_t len)
{
	char where[HPSHM_PATH_MAX + 32];
	struct stat st;

	if (ns->shm_names && !ns->shm_dir)
		return -1;
	if (lstat(named_where_text(ns, path, where, sizeof(where)), &st) < 0)
		return -1;
	named_owner(st.st_uid, buf, len);
	return 0;
}

/* Something that is not hpshm's sits at path, which create() needs: HPSHM_EEXIST saying what. */
static int named_foreign_error(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			       int sys_errno, const char *what, hpshm_error *err)
{
	char where[HPSHM_PATH_MAX + 32];

	return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, named_open_call(ns),
			       "choose another name=, or remove that object yourself if nothing needs it: hpshm never does",
			       "segment %s cannot be created: %s is %s, not an hpshm segment", rq->name,
			       named_where_text(ns, path, where, sizeof(where)), what);
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
			return named_foreign_error(ns, rq, path, 0, named_type_word(type), err);
		if (named_owner_of(ns, path, owner, sizeof(owner)) == 0) {
			snprintf(hint, sizeof(hint), "choose another name=, or ask %s (or root) to remove it if it is dead",
				 owner);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, named_open_call(ns), hint,
					       "segment %s cannot be created: %s belongs to %s and this user cannot open it",
					       rq->name, named_where_text(ns, path, where, sizeof(where)), owner);
		}
		snprintf(hint, sizeof(hint), "choose another name= or ask %s to remove it", ns->owner);
		return hpshm_error_set(err, HPSHM_EEXIST, saved, named_open_call(ns), hint,
				       "segment %s already exists and this user cannot open it", path);
	}
	if (!hpshm__named_fs_ok(ns, fd, 0)) {
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns), "choose another name=",
				       "%s exists and is not a %s file", path, ns->fs_name);
	}
	if (hpshm__sys.fstat(fd, &st) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect %s", path);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		if (saved != EWOULDBLOCK) {
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL,
					       "could not tell whether segment %s is in use", path);
		}
		if (named_class(ns, fd, &st, &h) == HPSHM_FOUND_HEADER)
			snprintf(owner, sizeof(owner), "created by pid %lld per its header", (long long)h.creator_pid);
		else
			snprintf(owner, sizeof(owner), "no hpshm header yet: it is being created");
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns),
				       "choose another name= or stop the process using it", "segment %s is in use (%s)",
				       rq->name, owner);
	}
	/* Dead: nobody maps it.  Ours to remove only if it proves it is hpshm's. */
	cls = named_class(ns, fd, &st, &h);
	if (cls < 0 || cls == HPSHM_FOUND_BARE) {
		(void)hpshm__sys.close(fd);
		if (cls == HPSHM_FOUND_BARE)
			return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns),
					       "if it is hpshm's, `hpshm gc --force` removes it; else choose another name=",
					       "segment %s cannot be created: %s exists without an hpshm header and nobody "
					       "holds it (a create killed early, or another program's file)", rq->name,
					       named_where_text(ns, path, where, sizeof(where)));
		return named_foreign_error(ns, rq, path, 0,
					   cls == HPSHM_FOUND_FOREIGN_HEADER ? "a file whose tail is not hpshm's header"
									    : "a file of a size hpshm never makes",
					   err);
	}
	/* Unlinked under the lock, and only if the name is still this object. */
	if (named_same(ns, fd, path) && hpshm__named_unlink(ns, path) < 0 && errno != ENOENT) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		named_owner(st.st_uid, owner, sizeof(owner));
		if (saved == EPERM || saved == EACCES) {
			snprintf(hint, sizeof(hint), "run `hpshm gc` as %s or as root, or choose another name=", owner);
			return hpshm_error_set(err, HPSHM_EEXIST, saved, ns->shm_names ? "shm_unlink" : "unlink", hint,
					       "segment %s cannot be created: %s is a dead segment of %s, which this "
					       "user may not remove", rq->name, named_where_text(ns, path, where, sizeof(where)),
					       owner);
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, ns->shm_names ? "shm_unlink" : "unlink", NULL,
				       "could not remove the dead segment %s", path);
	}
	(void)hpshm__sys.close(fd);
	return 0;
}

/*
 * Where an object with path is made unnamed (O_TMPFILE), and the path linkat() gives it:
 * a file's own directory; for shm names, ns->shm_dir.  0, or -1 where that cannot be done.
 */
static int named_where(const struct hpshm__names *ns, const char *path, char *dir, size_t dlen, char *full,
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

/* An unnamed file in the directory of path, where the OS and file system can: fd, or -1. */
static int named_tmpfile(const struct hpshm__names *ns, const char *path, unsigned mode)
{
#ifdef O_TMPFILE
	char dir[HPSHM_PATH_MAX], full[HPSHM_PATH_MAX];

	if (named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0)
		return -1;
	/* EISDIR before Linux 3.11, EOPNOTSUPP on a file system without it: the caller falls back. */
	return hpshm__sys.open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
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

	if (named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
#ifdef AT_EMPTY_PATH
	/* Needs CAP_DAC_READ_SEARCH (ENOENT without it); /proc/self/fd below needs none. */
	if (hpshm__sys.linkat(fd, "", AT_FDCWD, full, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
#endif
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return hpshm__sys.linkat(AT_FDCWD, self, AT_FDCWD, full, AT_SYMLINK_FOLLOW);
}

int hpshm__named_create(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			unsigned mode, int *linked, hpshm_error *err)
{
	int fd, saved, rc, tries;

	for (tries = 0; tries < SEGMENT_CREATE_TRIES; tries++) {
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
				fd = hpshm__sys.shm_open(path, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
			else
				fd = hpshm__sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
			if (fd < 0) {
				saved = errno;
				if (saved != EEXIST)
					return ns->create_error(saved, path, err);
				continue; /* made meanwhile: look at it again */
			}
		}
		/* The umask has narrowed mode: mode= means exactly that mode. */
		if (hpshm__sys.fchmod(fd, (mode_t)mode) < 0) {
			saved = errno;
			if (*linked && named_same(ns, fd, path))
				(void)hpshm__named_unlink(ns, path);
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "fchmod", NULL, "could not give %s %s mode %03o",
					       ns->noun, path, mode);
		}
		if (hpshm__lock(fd, LOCK_SH) < 0) {
			saved = errno;
			if (*linked && named_same(ns, fd, path))
				(void)hpshm__named_unlink(ns, path);
			(void)hpshm__sys.close(fd);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "flock",
					       "another process holds an exclusive lock on it: stop it",
					       "could not lock new %s %s", ns->noun, path);
		}
		if (!*linked || named_same(ns, fd, path))
			return fd;
		(void)hpshm__sys.close(fd); /* taken for dead and unlinked before we locked it: again */
	}
	return hpshm_error_set(err, HPSHM_EEXIST, EEXIST, named_open_call(ns), "choose another name=",
			       "segment %s keeps being re-created by other processes", path);
}

int hpshm__named_publish(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path, int fd,
			 int linked, void *tail, hpshm_error *err)
{
	int rc, tries, saved;

	hpshm__header_provisional(tail, ns->provider, rq);
	if (linked)
		return 0;
	for (tries = 0; tries < SEGMENT_CREATE_TRIES; tries++) {
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

/* An object at path that is not hpshm's, for attach(): HPSHM_EINVAL saying what it is. */
static int named_attach_foreign(const struct hpshm__names *ns, const char *path, int sys_errno, mode_t type,
				hpshm_error *err)
{
	return hpshm_error_set(err, HPSHM_EINVAL, sys_errno, named_open_call(ns), "pass the creator's token unchanged",
			       "%s is %s, not an hpshm segment", path,
			       sys_errno == ELOOP ? "a symbolic link" : named_type_word(type));
}

int hpshm__named_attach(const struct hpshm__names *ns, const char *path, hpshm_error *err)
{
	mode_t type = 0;
	int fd, saved;

	fd = hpshm__named_open(ns, path, O_RDWR, &type);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, named_open_call(ns),
					       "start the child while the creator still holds the segment",
					       "%s %s does not exist (its creator removed it)", ns->noun, path);
		if (saved == ELOOP || saved == ENXIO)
			return named_attach_foreign(ns, path, saved, type, err);
		if (saved == EACCES || saved == EPERM)
			return hpshm_error_set(err, HPSHM_EACCES, saved, named_open_call(ns),
					       "run this process as the creator's user, or have the creator give the "
					       "segment a mode= that admits this user (mode=0660 and a group both are in)",
					       "this user may not open %s %s for reading and writing", ns->noun, path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, named_open_call(ns), NULL, "could not open %s %s", ns->noun,
				       path);
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
	if (hpshm__fd_of(m) >= 0 && hpshm__sys.close(hpshm__fd_of(m)) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
	m->path[0] = '\0';
	return rc;
}

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
	if (hpshm__sys.fstat(fd, &st) < 0) {
		(void)hpshm__sys.close(fd);
		return -1;
	}
	f->size = (size_t)st.st_size;
	f->mine = named_mine(&st);
	{
		struct hpshm_header h;

		memset(&h, 0, sizeof(h));
		f->has_header = named_class(ns, fd, &st, &h);
		hpshm__header_to(f, &h);
	}
	f->alive = f->has_header < 0 ? -1 : named_alive(fd);
	(void)hpshm__sys.close(fd);
	return 0;
}

/* ---- remove(): unlink the object locked, never whatever its name holds by then ---- */

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
		snprintf(name, len, ".hpshm-gc-%lld-%016llx", hpshm__getpid(), (unsigned long long)hpshm__random64());
		if (hpshm__sys.mkdirat(dfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || tries + 1 == SEGMENT_PRIVATE_TRIES)
			return -1;
	}
	*call = "openat";
	pfd = hpshm__sys.openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (pfd < 0) {
		saved = errno; /* unlinkat() below may clobber it */
		(void)hpshm__sys.unlinkat(dfd, name, AT_REMOVEDIR); /* only ever removes an empty directory */
		errno = saved;
		return -1;
	}
	if (hpshm__sys.fstat(pfd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0 || st.st_dev != dir->st_dev) {
		(void)hpshm__sys.close(pfd); /* swapped for someone else's: not ours to remove */
		errno = EPERM;
		return -1;
	}
	/* A umask may have taken the owner's write bit; the caller needs it to move objects in. */
	(void)hpshm__sys.fchmod(pfd, 0700);
	return pfd;
}

/* Remove the private directory, if the name still is ours (rmdir takes only an empty one), and close it. */
static void named_private_close(int dfd, const char *name, int pfd)
{
	struct stat a, b;

	if (hpshm__sys.fstat(pfd, &a) == 0 && hpshm__sys.fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    named_same_inode(&a, &b))
		(void)hpshm__sys.unlinkat(dfd, name, AT_REMOVEDIR);
	(void)hpshm__sys.close(pfd);
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
	if (hpshm__sys.linkat(pfd, SEGMENT_TAKEN, dfd, base, 0) == 0) {
		(void)hpshm__sys.unlinkat(pfd, SEGMENT_TAKEN, 0);
		return 0;
	}
	for (tries = 0; tries < SEGMENT_PRIVATE_TRIES; tries++) {
		snprintf(where, len, "%s.kept-%016llx", base, (unsigned long long)hpshm__random64());
		if (hpshm__sys.renameat(pfd, SEGMENT_TAKEN, dfd, where) == 0)
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

	if (named_where(ns, path, dir, sizeof(dir), full, sizeof(full)) < 0) {
		/*
		 * Shm names the system keeps out of sight (no directory to work in): by name, as
		 * shm_unlink() alone can.  No scan() lists such objects, so gc never gets here.
		 */
		if (named_same(ns, fd, path) && hpshm__named_unlink(ns, path) < 0 && errno != ENOENT) {
			saved = errno;
			return hpshm_error_set(err, HPSHM_ESYS, saved, ns->shm_names ? "shm_unlink" : "unlink",
					       saved == EACCES || saved == EPERM ? hint : NULL, "could not remove %s %s",
					       ns->noun, path);
		}
		return 0;
	}
	base = strrchr(full, '/') + 1; /* named_where() gives a path with a directory */
	dfd = hpshm__sys.open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (dfd < 0 || hpshm__sys.fstat(dfd, &dst) < 0) {
		saved = errno;
		if (dfd >= 0)
			(void)hpshm__sys.close(dfd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, dfd < 0 ? "open" : "fstat", NULL,
				       "could not open the directory %s to remove %s %s", dir, ns->noun, path);
	}
	pfd = named_private_open(dfd, &dst, priv, sizeof(priv), &call);
	if (pfd < 0) {
		saved = errno;
		(void)hpshm__sys.close(dfd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, call,
				       saved == EACCES || saved == EPERM ? hint : NULL,
				       "could not make a private directory in %s to remove %s %s from", dir, ns->noun,
				       path);
	}
	if (hpshm__sys.renameat(dfd, base, pfd, SEGMENT_TAKEN) < 0) {
		saved = errno;
		rc = saved == ENOENT ? 0 /* someone removed it first */
				     : hpshm_error_set(err, HPSHM_ESYS, saved, "renameat",
						       saved == EACCES || saved == EPERM ? hint : NULL,
						       "could not remove %s %s", ns->noun, path);
	} else {
		/* Nobody else may enter the private directory: what is checked here is what goes. */
		same = hpshm__sys.fstatat(pfd, SEGMENT_TAKEN, &moved, AT_SYMLINK_NOFOLLOW) == 0 &&
		       named_same_inode(&moved, st);
		if (same && hpshm__sys.unlinkat(pfd, SEGMENT_TAKEN, 0) == 0) {
			rc = 0;
		} else {
			/* Another object (or ours, which could not be unlinked): back under its name. */
			saved = errno;
			if (named_put_back(pfd, dfd, base, where, sizeof(where)) < 0)
				rc = hpshm_error_set(err, HPSHM_ESYS, errno, "renameat", "move it back by hand",
						     "%s changed while it was being removed, and what its name held could "
						     "not be put back: it is %s/%s/%s", path, dir, priv, SEGMENT_TAKEN);
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
	(void)hpshm__sys.close(dfd);
	return rc;
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
			return hpshm_error_set(err, HPSHM_ENOENT, saved, named_open_call(ns), NULL, "no %s %s", ns->noun,
					       path);
		if (saved == EACCES || saved == EPERM) {
			if (named_owner_of(ns, path, owner, sizeof(owner)) < 0)
				snprintf(owner, sizeof(owner), "another user");
			snprintf(hint, sizeof(hint),
				 "open it as %s, or have its creator give it a mode= that admits this user (mode=0660 "
				 "and a group both are in)", owner);
			return hpshm_error_set(err, HPSHM_EACCES, saved, named_open_call(ns), hint,
					       "segment %s (%s) belongs to %s, and this user may not open it", name,
					       named_where_text(ns, path, where, sizeof(where)), owner);
		}
		return hpshm_error_set(err, HPSHM_ESYS, saved, named_open_call(ns), NULL, "could not open %s %s",
				       ns->noun, path);
	}
	n = snprintf(f->id, sizeof(f->id), "path=%s", path);
	if (n < 0 || (size_t)n >= sizeof(f->id))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "use a shorter name, or a mount on a shorter path",
				       "%s is too long a path to open by name", path);
	return 0;
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
					       saved == ELOOP ? "a symbolic link" : named_type_word(type));
		return hpshm_error_set(err, HPSHM_ESYS, saved, named_open_call(ns), saved == EACCES ? hint : NULL,
				       "could not open %s %s", ns->noun, path);
	}
	if (hpshm__sys.fstat(fd, &st) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect %s", path);
	}
	if (hpshm__sys.flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		(void)hpshm__sys.close(fd);
		if (saved == EWOULDBLOCK)
			return hpshm_error_set(err, HPSHM_EEXIST, saved, "flock", "stop the process using it first",
					       "segment %s is alive: a process still holds it", path);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "flock", NULL, "could not lock %s", path);
	}
	/*
	 * Under the lock: still what was listed (a recycled name holds a new object), and debris
	 * that a forced remove may take because it is the caller's is still the caller's.
	 */
	cls = named_class(ns, fd, &st, &h);
	hpshm__header_of(f, &listed);
	if (cls < 0 || cls != f->has_header || (cls == HPSHM_FOUND_HEADER && h.nonce != listed.nonce) ||
	    (cls == HPSHM_FOUND_BARE && f->mine == 1 && !named_mine(&st))) {
		(void)hpshm__sys.close(fd);
		if (cls < 0)
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%s is not an hpshm segment: never removed",
					       path);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "run hpshm ls again", "%s is no longer the one listed",
				       path);
	}
	/* Unlinked under the lock, and only this object, whatever the name holds by then. */
	saved = named_take(ns, fd, &st, path, hint, err);
	(void)hpshm__sys.close(fd);
	return saved;
}
