/* SPDX-License-Identifier: MIT */
/*
 * backends/named.h -- the lifecycle of named objects (hugetlbfs files, POSIX shm names), for
 * the backends that keep them: the create-time interlock, liveness by flock(), the header
 * read from the tail, scan, lookup and remove.  What differs between those objects is
 * described once per backend in a struct hpshm__names.  Implemented in backends/named.c
 * (whose top comment tells the rules), named_create.c and named_remove.c; the layers:
 * doc/architecture.md.
 *
 * Internal: included by backends after posix/sys.h, with backends/fixmap.h.  Every function
 * returns 0 or a negative HPSHM_E* code with err filled unless it says otherwise, and makes
 * every system call through hpshm__posix_sys.
 */
#ifndef HPSHM_BACKENDS_NAMED_H
#define HPSHM_BACKENDS_NAMED_H

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
 * (backends/named.c's top comment).  Never a foreign object; one without a header only when
 * f says so, which the core passes only when forced.
 */
int hpshm__named_remove(const struct hpshm__names *ns, const struct hpshm_found *f, hpshm_error *err);

#endif /* HPSHM_BACKENDS_NAMED_H */
