/* SPDX-License-Identifier: MIT */
/*
 * backends/fixmap.c -- mapping a segment at exactly the address asked for, whatever the
 * backend, and what goes with it (backends/fixmap.h; the layers: doc/architecture.md).
 *
 * Mechanism: none of its own.  Every backend that maps at an address (descriptor-backed or
 * not: mmap_hugetlb and sysv_hugetlb have no descriptor) calls in here for the parts that do
 * not depend on how the memory was obtained.  Every system call goes through hpshm__posix_sys, so
 * fault injection reaches this code as it reaches the backends.
 *
 * Kernel quirks, and what we do about them:
 *   - MAP_FIXED_NOREPLACE (Linux 4.17) fails with EEXIST rather than replace a mapping.
 *     Older kernels ignore the flag and take the address as a hint, so the address we got is
 *     compared as well, and a mapping elsewhere is undone and counts as EEXIST.  MAP_FIXED is
 *     never used: it would silently replace whatever the process had there.
 *   - A clash is reported with the line of /proc/self/maps that holds the address, since "the
 *     range is taken" alone leaves a person guessing by what.
 *
 * Identifiers are "fd=<n>" (an inherited descriptor) and "path=<name>" (a named object),
 * parsed and written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hpshm/provider.h"
#ifdef __linux__
#include "linux/linux.h" /* fstatfs, for the length of a hugetlb file's mapping */
#endif
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"

#define FIXMAP_LINE_MAX (HPSHM_TEXT_MAX - 80) /* a maps line, leaving room for the words around it */

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

/*
 * A resizable segment's reservation (HPSHM_REQ_RESERVE) holds pages only where the core puts
 * them, but its tail (the header and the table of processes) is written by the provider and
 * the core at once: its pages are taken here, right after the mapping, so a short pool is an
 * error now (ENOMEM) and never a SIGBUS at the first write.  0, or -1 with errno set.
 */
static int map_reserve_tail(const struct hpshm_request *rq, int fd)
{
	size_t area;
	int rc;

	if (hpshm__round_up(HPSHM_RESIZE_AREA, rq->page_size, &area) < 0 || area >= rq->size) {
		errno = EINVAL;
		return -1;
	}
	rc = hpshm__port_commit(hpshm__port_handle_of(fd, 1), rq->size - area, area, rq->page_size, NULL);
	if (rc == 0)
		return 0;
	errno = rc == HPSHM_ENOMEM ? ENOMEM : rc == HPSHM_ENOTSUP ? EOPNOTSUPP : EIO;
	return -1;
}

void *hpshm__map_at(const struct hpshm_request *rq, int flags, int fd)
{
	void *p;
	int saved;

#if defined(MAP_NORESERVE)
	/* Pages are taken range by range through the descriptor (HPSHM_REQ_RESERVE): reserving
	 * the whole range here would ask the pool for max_size at once. */
	if (rq->flags & HPSHM_REQ_RESERVE)
		flags |= MAP_NORESERVE;
#endif

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
	p = hpshm__posix_sys.mmap(rq->address, rq->size, PROT_READ | PROT_WRITE, flags, fd, 0);
#if !defined(MAP_FIXED_NOREPLACE) && defined(MAP_EXCL)
	if (p == MAP_FAILED && rq->address && errno == EINVAL)
		errno = EEXIST;
#endif
	if (p != MAP_FAILED && rq->address && p != rq->address) {
		(void)hpshm__posix_sys.munmap(p, fd_map_length(fd, rq->size)); /* pre-4.17 kernel: NOREPLACE was a hint */
		errno = EEXIST;
		return MAP_FAILED;
	}
	if (p != MAP_FAILED && (rq->flags & HPSHM_REQ_RESERVE) && fd >= 0 && map_reserve_tail(rq, fd) < 0) {
		saved = errno;
		(void)hpshm__posix_sys.munmap(p, fd_map_length(fd, rq->size));
		errno = saved;
		return MAP_FAILED;
	}
	return p;
}

int hpshm__map_taken(hpshm_error *err, const char *call, int sys_errno, const struct hpshm_request *rq,
		     enum hpshm__map_use use)
{
	const char *attach_hint = "attach earlier in the child's start-up, or set base_address to a free range";
	char line[FIXMAP_LINE_MAX];
	char sz[32];

	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (use == HPSHM__MAP_CREATE) {
		if (hpshm__port_maps_line(rq->address, rq->size, line, sizeof(line)) == 0)
			return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, "choose another base_address",
					       "base_address %p is taken by: %s", rq->address, line);
		return hpshm_error_set(err, HPSHM_EEXIST, sys_errno, call, "choose another base_address",
				       "another mapping overlaps %s at base_address %p", sz, rq->address);
	}
	if (hpshm__port_maps_line(rq->address, rq->size, line, sizeof(line)) == 0)
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
	if (sys_errno == ENOMEM && hpshm__linux_pool_get(rq->page_size, &pool) == 0 && hpshm__linux_pool_available(&pool) >= pages)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, sys_errno, call,
				       sizeof(void *) < 8 ? "ask for less, or use a 64-bit build of the program"
							  : "check the hugetlb cgroup limits and ulimit -v, or ask for less",
				       "could not map %s of %s huge pages although the pool has %lu free: this process has "
				       "no free %s range aligned to %s%s, or a hugetlb cgroup limit is short",
				       sz, psz, hpshm__linux_pool_available(&pool), sz, psz,
				       sizeof(void *) < 8 ? " (a 32-bit address space)" : "");
	hpshm__linux_hugetlb_hint(rq->size, rq->page_size, hint, sizeof(hint));
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
			(void)hpshm__posix_sys.close(fd);
		if (saved == EEXIST)
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_ATTACH);
		return hpshm_error_set(err, saved == ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS, saved, "mmap",
				       saved == ENOMEM ? "check ulimit -v" : NULL, "could not map %s of %s at %p", sz, what,
				       rq->address);
	}
	/* An inherited descriptor is the child's own now: keep it out of what the child execs. */
	if (inherited)
		(void)hpshm__posix_sys.fcntl(fd, F_SETFD, FD_CLOEXEC);
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
	if (hpshm__posix_sys.fstat(fd, &st) == 0)
		snprintf(m->object, sizeof(m->object), "dev=%#llx ino=%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
}

int hpshm__fd_unmap(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = 0;

	(void)self;
	if (hpshm__posix_sys.munmap(m->addr, m->size) < 0)
		rc = HPSHM_ESYS;
	if (hpshm__fd_of(m) >= 0 && hpshm__posix_sys.close(hpshm__fd_of(m)) < 0)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->handle = HPSHM_NO_HANDLE;
	m->flags = 0;
	return rc;
}
