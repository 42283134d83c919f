/* SPDX-License-Identifier: MIT */
/*
 * backends/fixmap.h -- mapping a segment at exactly the address asked for, and the rest of
 * what every backend does the same way with a mapping: the identifier a token carries, the
 * errors of a taken range or a short pool, and the end of a descriptor-backed attach().
 *
 * Internal: included by backends after posix/sys.h.  Backends never include one another
 * (doc/architecture.md), so these live here; the backends with named objects also use
 * backends/named.h.  Every function returns 0 or a negative HPSHM_E* code with err filled
 * unless it says otherwise, and makes every system call through hpshm__posix_sys.
 */
#ifndef HPSHM_BACKENDS_FIXMAP_H
#define HPSHM_BACKENDS_FIXMAP_H

#include <limits.h>
#include <stdint.h>

#include "hpshm/provider.h"
#include "posix/sys.h"

/* ---- the identifier in a token ---- */

/* "<key><n>" (key "fd=", "shm="): n decimal, no sign, no trailing text, at most INT32_MAX.  0, or -1. */
int hpshm__id_parse(const char *text, const char *key, int *out);

/*
 * identify() of a descriptor-backed segment: "path=<m->path>" when it has a path a token can
 * carry (no ':' or white space), else "fd=<m->fd>"; HPSHM_EINVAL with neither.  The length,
 * or HPSHM_EOVERFLOW.
 */
int hpshm__fd_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len);

/*
 * Can a descriptor-backed segment of size bytes be sized with ftruncate(), whose length is an
 * off_t?  off_t is signed; the bound is computed in uintmax_t so that the one comparison is
 * right for every width: a 64-bit off_t holds every 32-bit size_t (i686, where a cast check
 * such as "(off_t)size < 0" would always be false), and holds a 64-bit size_t up to 2^63 - 1.
 */
static inline int hpshm__size_fits_off_t(size_t size)
{
	const uintmax_t off_max = (UINTMAX_C(1) << (sizeof(off_t) * CHAR_BIT - 1)) - 1;

	return (uintmax_t)size <= off_max;
}

/* The descriptor behind m (HPSHM_MAP_DESCRIPTOR), or -1. */
static inline int hpshm__fd_of(const struct hpshm_mapping *m)
{
	return (m->flags & HPSHM_MAP_DESCRIPTOR) ? (int)m->handle : -1;
}

/* ---- mapping at an address ---- */

/* Who asks for rq->address: the wording of errors differs, the checks do not. */
enum hpshm__map_use {
	HPSHM__MAP_CREATE, /* create(): rq->address is the base_address option, or NULL */
	HPSHM__MAP_ATTACH  /* attach(): rq->address is the creator's, from the token */
};

/*
 * mmap() rq->size bytes of fd (-1 with MAP_ANONYMOUS in flags), read-write, with flags, and
 * when rq->address is set at exactly that address: MAP_FIXED_NOREPLACE is added (FreeBSD:
 * MAP_FIXED | MAP_EXCL, whose EINVAL for a taken range becomes EEXIST), and a mapping
 * elsewhere (kernels before 4.17 take the flag as a hint; macOS has neither) is unmapped and
 * counts as EEXIST.  The mapping, or MAP_FAILED with errno set, as mmap() itself.
 */
void *hpshm__map_at(const struct hpshm_request *rq, int flags, int fd);

/*
 * rq->address is taken (mmap EEXIST, shmat EINVAL): HPSHM_EEXIST naming the holder from
 * /proc/self/maps, with the hint for use.  call is the call that failed.
 */
int hpshm__map_taken(hpshm_error *err, const char *call, int sys_errno, const struct hpshm_request *rq,
		     enum hpshm__map_use use);

/*
 * A huge page reservation for rq failed (ENOMEM from mmap or shmget): HPSHM_EUNAVAILABLE, so
 * the core moves on, with the pool hint.  short_of names what may be short ("pool or hugetlb
 * cgroup").
 */
int hpshm__reserve_failed(hpshm_error *err, const char *call, int sys_errno, const struct hpshm_request *rq,
			  const char *short_of);

/*
 * Fill m for a mapping at addr of descriptor fd (or -1) or SysV id (or -1); path NULL or empty
 * when create()'s caller owns no name.  A descriptor without a path is what a child inherits.
 */
void hpshm__mapping_fill(struct hpshm_mapping *m, void *addr, size_t size, int fd, long id, const char *path);

/*
 * The end of every descriptor-backed attach(): map fd MAP_SHARED at exactly rq->address and
 * fill m: m->size is the length the kernel mapped (more than rq->size only for a hugetlb file
 * whose pages rq->size does not fill, which the backends refuse before), m->object the file's
 * (hpshm__fd_object()).  An inherited descriptor becomes the child's own on success (FD_CLOEXEC set again,
 * so programs it execs in turn do not get it); one the caller opened by name (named: that name)
 * is closed on failure, and the mapping keeps the name, so it is not marked for inheritance.
 * what names the object in messages ("descriptor 5", a path).
 */
int hpshm__fd_attach_map(struct hpshm_mapping *m, const struct hpshm_request *rq, int fd, const char *named,
			 const char *what, hpshm_error *err);

/*
 * Fill m->object for the file open on fd: "dev=<st_dev> ino=<st_ino>", which no other file
 * has while this one lives; empty if fstat() fails.  hpshm__fd_attach_map() calls it; a
 * backend's create() calls it when rq->flags has HPSHM_REQ_REATTACH.
 */
void hpshm__fd_object(struct hpshm_mapping *m, int fd);

/* Unmap and close; never removes a name.  destroy() of a nameless segment, and every detach(). */
int hpshm__fd_unmap(const struct hpshm_instance *self, struct hpshm_mapping *m);

#endif /* HPSHM_BACKENDS_FIXMAP_H */
