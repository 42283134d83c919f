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
 *     shm_open() and shm_unlink() are called directly, not through hpshm__sys.open/unlink on
 *     "/dev/shm/...": where a POSIX shm name lives is the C library's business (glibc
 *     looks for its tmpfs mount, FreeBSD and macOS keep the objects in the kernel), so a
 *     path of our own making would be wrong off glibc.  Fault injection therefore reaches
 *     named segments only through ftruncate and mmap.
 *
 * Operator setup: none for unnamed segments.  Named ones need /dev/shm (a tmpfs) writable
 * and large enough: on Linux its size= limit is charged page by page at fault time, and a
 * full tmpfs raises SIGBUS there.  The core populates through m->fd (fallocate reports
 * ENOSPC instead), which is one reason the descriptor is kept.
 *
 * Kernel quirks: none that matter; transparent huge pages may back the memory when
 * shmem_enabled allows, which the core's verification reports rather than promises.
 *
 * Capabilities: REATTACH, NAMED, FD; not HUGE.  probe() always says yes: this provider is
 * the end of every huge_pages=try walk.
 *
 * Re-attach: named segments by shm_open() of m->path; unnamed ones by the inherited memfd
 * (FD_CLOEXEC cleared just before exec).  The ENOSYS fallback has neither, and says so by
 * m->fd == -1.  A named segment belongs to its creator: destroy() unlinks it.  A crash
 * leaves it in /dev/shm for `hpshm gc`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hpshm/provider.h"
#include "port.h"
#include "posix/sys.h"

#define PLAIN_DEFAULT_MODE 0600
#define PLAIN_NAME_MAX     200 /* well within NAME_MAX for "/hpshm.<name>" */

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

/* Get the backing descriptor: a named POSIX object, a memfd, or -1 for MAP_ANONYMOUS. */
static int plain_open(const struct hpshm_request *rq, char *path, size_t len, int *fdp, hpshm_error *err)
{
	unsigned mode = rq->mode ? rq->mode & 0777 : PLAIN_DEFAULT_MODE;
	int fd, saved;

	path[0] = '\0';
	if (rq->name) {
		snprintf(path, len, "/hpshm.%s", rq->name);
		fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
		if (fd < 0) {
			saved = errno;
			path[0] = '\0';
			if (saved == EEXIST)
				return hpshm_error_set(err, HPSHM_EEXIST, saved, "shm_open",
						       "another process owns it, or a dead one left it: remove it (hpshm gc) or choose another name",
						       "segment /hpshm.%s already exists", rq->name);
			return hpshm_error_set(err, HPSHM_ESYS, saved, "shm_open",
					       saved == EACCES ? "make /dev/shm writable for this user" : NULL,
					       "could not create POSIX shared memory /hpshm.%s", rq->name);
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

/* Undo plain_open(). */
static void plain_close(int fd, const char *path)
{
	if (fd >= 0)
		(void)hpshm__sys.close(fd);
	if (path[0] != '\0')
		(void)shm_unlink(path);
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
	if (m->fd >= 0 && hpshm__sys.close(m->fd) < 0)
		rc = HPSHM_ESYS;
	/* A named object belongs to its creator; ENOENT means someone (hpshm gc) removed it already. */
	if (m->path[0] != '\0' && shm_unlink(m->path) < 0 && errno != ENOENT)
		rc = HPSHM_ESYS;
	m->addr = NULL;
	m->fd = -1;
	m->path[0] = '\0';
	return rc;
}

const struct hpshm_provider hpshm__provider_plain = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "plain",
	.summary     = "base pages from a memfd or shm_open() object; always available",
	.caps        = HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD,
	.probe       = plain_probe,
	.create      = plain_create,
	.destroy     = plain_destroy,
};
