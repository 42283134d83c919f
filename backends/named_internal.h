/* SPDX-License-Identifier: MIT */
/*
 * backends/named_internal.h -- what backends/named.c, named_create.c and named_remove.c share
 * and no backend calls: the small steps of the named-object lifecycle (backends/named.h).
 *
 * Internal to those three files: included after backends/named.h.
 */
#ifndef HPSHM_BACKENDS_NAMED_INTERNAL_H
#define HPSHM_BACKENDS_NAMED_INTERNAL_H

#include <stddef.h>
#include <sys/stat.h>

#include "backends/named.h"

/* The call that opens ns's objects, as errors name it. */
const char *hpshm__named_open_call(const struct hpshm__names *ns);

/* The file of path: path itself, or a shm name's file where there is one (else path, for messages). */
const char *hpshm__named_where_text(const struct hpshm__names *ns, const char *path, char *buf, size_t len);

/* A file type in words, for messages about what sits where a segment should.  Never a
 * symbolic link: hpshm__named_open() answers ELOOP for one, and the callers name it so. */
const char *hpshm__named_type_word(mode_t type);

/* Does path still name the object open on fd?  1 yes, 0 no (or gone). */
int hpshm__named_same(const struct hpshm__names *ns, int fd, const char *path);

/* Does the calling user own the object st describes?  1 or 0. */
int hpshm__named_mine(const struct stat *st);

/*
 * Whose is the regular file open on fd (st its fstat())?  An HPSHM_FOUND_* code, with h
 * filled for HPSHM_FOUND_HEADER.  hpshm makes files of a whole number of pages (the fs block
 * size on hugetlbfs, the base page elsewhere) with the header in the last HPSHM_HEADER_REGION
 * bytes; an empty one is what a create killed between open() and ftruncate() left where the
 * file could not be made unnamed first.
 */
int hpshm__named_class(const struct hpshm__names *ns, int fd, const struct stat *st, struct hpshm_header *h);

/* "uid 1000 (alice)" for messages about whose an object is.  Returns buf. */
char *hpshm__named_owner(uid_t uid, char *buf, size_t len);

/*
 * Whose is path, which this user cannot open?  Asked of the file where there is one (stat()
 * needs no permission on the file itself).  0 with "uid N (name)" in buf, or -1.
 */
int hpshm__named_owner_of(const struct hpshm__names *ns, const char *path, char *buf, size_t len);

/*
 * Where an object with path is made unnamed (O_TMPFILE), and the path linkat() gives it:
 * a file's own directory; for shm names, ns->shm_dir.  0, or -1 where that cannot be done.
 */
int hpshm__named_where(const struct hpshm__names *ns, const char *path, char *dir, size_t dlen, char *full,
		       size_t flen);

#endif /* HPSHM_BACKENDS_NAMED_INTERNAL_H */
