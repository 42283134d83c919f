/* SPDX-License-Identifier: MIT */
/*
 * backends/fdseg.h -- how hpshm handles a descriptor-backed segment, for the backends.
 *
 * Internal: included by backends after posix/sys.h.  Backends never include one another, so
 * what several of them do the same way lives here: the identifier a token carries, mapping at
 * exactly the creator's address and naming whoever holds it, and, for segments that are
 * named objects (hugetlbfs files, POSIX shm names), the create-time interlock, liveness by
 * flock(), the header read from the tail, scan and remove.  What differs between those
 * objects is described once per backend in a struct hpshm__names.
 *
 * Every function returns 0 or a negative HPSHM_E* code with err filled unless it says
 * otherwise, and makes every system call through hpshm__sys.
 */
#ifndef HPSHM_BACKENDS_FDSEG_H
#define HPSHM_BACKENDS_FDSEG_H

#include <limits.h>
#include <stdint.h>

#include "base/header.h"
#include "hpshm/provider.h"
#include "posix/sys.h"

/* ---- POSIX shm names ---- */

/* Segment <name> is the shm name "/hpshm.<name>" (plain, freebsd_largepage). */
#define HPSHM__SHM_PREFIX   "/hpshm."
#define HPSHM__SHM_NAME_MAX 200 /* well within NAME_MAX for "/hpshm.<name>" */

/* Can name be one shm name component: 1 to HPSHM__SHM_NAME_MAX characters, no '/', not "."
 * or ".."?  1 or 0. */
int hpshm__shm_name_ok(const char *name);

/* Is path "/hpshm.<name>" with such a name?  1 or 0. */
int hpshm__shm_path_ok(const char *path);

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

/* ---- the header at the tail ---- */

/* Is h (just read) hpshm's?  1 with its strings NUL-terminated, or 0. */
int hpshm__header_accept(struct hpshm_header *h);

/*
 * Whose is an object whose last len bytes (its header region) are region?  provider is the
 * name a header of the scanning provider carries, or NULL.  HPSHM_FOUND_HEADER with h filled;
 * HPSHM_FOUND_MARKED for a header of provider torn by a kill while it was written (every
 * field there but the magic); HPSHM_FOUND_BARE if the region is all zeros; else
 * HPSHM_FOUND_FOREIGN_HEADER.  h is zeroed but for HPSHM_FOUND_HEADER.
 */
int hpshm__header_class(const void *region, size_t len, const char *provider, struct hpshm_header *h);

/*
 * Write a provisional header for rq (rq->name set) at tail, the last HPSHM_HEADER_REGION
 * bytes of the new mapping: the creator, the boot, the provider and the name, nonce 0, the
 * magic last.  The core overwrites it with the segment's own header once create() returns;
 * until then it proves that the object is hpshm's and whose it is.
 */
void hpshm__header_provisional(void *tail, const char *provider, const struct hpshm_request *rq);

/* ---- named objects: files on a mount, or POSIX shm names ---- */

/*
 * Where a backend's named objects live and how its messages call them.  The liveness rule
 * (provider.h): every process mapping one holds flock(LOCK_SH) on its descriptor, so LOCK_EX
 * | LOCK_NB succeeds only on a dead one.  A backend keeps one const instance.
 */
struct hpshm__names {
	int           shm_names; /* 1: shm_open()/shm_unlink() by name; 0: open()/unlink() of paths */
	const char   *shm_dir;   /* shm names only: the directory where they are files, or NULL if unknown */
	unsigned long fs_magic;  /* statfs f_type an object must have to be ours, 0 for any */
	const char   *fs_name;   /* that file system's name, for messages */
	const char   *noun;      /* an object in messages: "file", "POSIX shared memory" */
	const char   *owner;     /* its owner in hints: "the file's owner" */
	const char   *provider;  /* the provider's name, as its headers carry it */
	/* create() could not make path for a reason other than EEXIST: fill err, return its code */
	int (*create_error)(int sys_errno, const char *path, hpshm_error *err);
	/* shm names made by a call of the backend's own rather than shm_open(O_RDWR | O_CREAT |
	 * O_EXCL) (FreeBSD's shm_create_largepage()), with the same contract: the descriptor, or
	 * -1 with errno (EEXIST: the name is taken).  NULL for shm_open(). */
	int (*shm_create)(const struct hpshm_request *rq, const char *path, mode_t mode);
};

/*
 * Open an existing regular file: shm_open(), or open() with O_CLOEXEC, both with O_NOFOLLOW
 * and O_NONBLOCK (cleared again), so a FIFO cannot block us and a symbolic link is never
 * followed.  fd, or -1 with errno: ELOOP for a symbolic link; ENXIO for anything but a
 * regular file, with *type (if not NULL) its S_IFMT bits; else the call's.
 */
int hpshm__named_open(const struct hpshm__names *ns, const char *path, int flags, mode_t *type);

/* flock(op | LOCK_NB), retried for a moment: 0, or -1 with errno (EWOULDBLOCK: still held). */
int hpshm__lock(int fd, int op);

/* Is fd on ns's file system (with page_size blocks if page_size != 0)?  1 or 0. */
int hpshm__named_fs_ok(const struct hpshm__names *ns, int fd, size_t page_size);

/*
 * Make the object path for rq (rq->name set) with exactly mode (whatever the umask), and
 * return its descriptor holding LOCK_SH.  What path names now is looked at first: nothing,
 * or a dead hpshm segment (removed), lets the create go on; a live one is HPSHM_EEXIST
 * naming its creator; anything else (a FIFO, a symbolic link, a file without hpshm's header,
 * another user's dead segment this user may not remove) is HPSHM_EEXIST saying what and is
 * left alone.  Where the file system can (O_TMPFILE), the object is made without a name,
 * *linked = 0, and gets path only in hpshm__named_publish(); elsewhere it is made under path
 * (O_EXCL), *linked = 1.  The descriptor, or an error.
 */
int hpshm__named_create(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path,
			unsigned mode, int *linked, hpshm_error *err);

/*
 * The object of hpshm__named_create() is sized and mapped, tail its last HPSHM_HEADER_REGION
 * bytes: write the provisional header, then, unless linked, give it path (a dead segment
 * that took the name meanwhile is removed first, as in create).  So an object appears under
 * an hpshm name already locked and with hpshm's header: a creator killed at any moment
 * leaves nothing that cannot be proved hpshm's.  0, or an error (the caller unmaps and
 * closes; an unlinked object then vanishes).
 */
int hpshm__named_publish(const struct hpshm__names *ns, const struct hpshm_request *rq, const char *path, int fd,
			 int linked, void *tail, hpshm_error *err);

/* Open path read-write for attach() and take LOCK_SH, the mark of liveness.  The descriptor, or an error. */
int hpshm__named_attach(const struct hpshm__names *ns, const char *path, hpshm_error *err);

/* Remove path (unlink or shm_unlink).  0, or -1 with errno, as the call. */
int hpshm__named_unlink(const struct hpshm__names *ns, const char *path);

/* destroy() of a segment whose creator may own a name: unmap, unlink m->path (still locked), close. */
int hpshm__named_destroy(const struct hpshm__names *ns, struct hpshm_mapping *m);

/*
 * scan(): fill f for object path (f->id = path, f->name = name) with its size, liveness, whose
 * it is (mine: its owner is the effective uid) and has_header: hpshm's header, none (size 0
 * or a zero tail), or foreign -- a symbolic link, a FIFO or other non-file (told by d_type,
 * the directory entry's type or 0 for unknown, or found on opening, which never blocks), a
 * file on the wrong file system or of a size hpshm never makes, a tail that is not hpshm's
 * header.  Foreign objects get alive -1.  0, or -1 if it is gone or not ours to open: skip it.
 */
int hpshm__named_inspect(const struct hpshm__names *ns, const char *path, const char *name, unsigned d_type,
			 struct hpshm_found *f);

/*
 * lookup() of the object at path, which a segment named name would have: f as scan() fills
 * it (hpshm__named_inspect()), but f->id "path=<path>", the identifier attach() takes.
 * HPSHM_ENOENT when nothing is there; HPSHM_EACCES, naming the owner, when this user may not
 * open it; HPSHM_ESYS for another failure.
 */
int hpshm__named_lookup(const struct hpshm__names *ns, const char *path, const char *name, struct hpshm_found *f,
			hpshm_error *err);

/*
 * remove(): unlink f->id if it is dead and still what f says (its has_header, the header's
 * nonce), under LOCK_EX, and only the object locked: the name is moved into a private
 * directory of the caller's and unlinked there only if it is that inode, else put back
 * (backends/fdseg.c's top comment).  Never a foreign object; one without a header only when
 * f says so, which the core passes only when forced.
 */
int hpshm__named_remove(const struct hpshm__names *ns, const struct hpshm_found *f, hpshm_error *err);

#endif /* HPSHM_BACKENDS_FDSEG_H */
