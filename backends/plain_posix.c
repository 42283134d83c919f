/* SPDX-License-Identifier: MIT */
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
 *     shm_open() and shm_unlink() are called by name (through hpshm__posix_sys), never as paths
 *     under /dev/shm: where a POSIX shm name lives is the C library's business (glibc looks
 *     for its tmpfs mount, FreeBSD and macOS keep the objects in the kernel).  The
 *     exceptions are Linux-only, where the objects are the files of /dev/shm: scan(), which
 *     must list them, and create(), which makes the object there unnamed (O_TMPFILE) and
 *     links it as /dev/shm/hpshm.<name> only once it carries hpshm's header, so a creator
 *     killed half-way leaves nothing gc could not prove is hpshm's (backends/named.c).
 *
 * Operator setup: none for unnamed segments.  Named ones need /dev/shm (a tmpfs) writable
 * and large enough: on Linux its size= limit is charged page by page at fault time, and a
 * full tmpfs raises SIGBUS there.  The core populates through m->fd (fallocate reports
 * ENOSPC instead), which is one reason the descriptor is kept.
 *
 * Kernel quirks: none that matter; transparent huge pages may back the memory when
 * shmem_enabled allows, which the core's verification reports rather than promises.
 *
 * Liveness of named segments is the flock() interlock of backends/named.c
 * (PostgreSQL's interlock, done with locks instead of pids): the creator and every process
 * that attaches by name hold LOCK_SH; create() of a taken name unlinks a dead hpshm object
 * and goes on, names the creator of a live one from its header, and leaves anything else (a
 * FIFO, a symbolic link, a file without hpshm's header) alone, saying what it is; remove()
 * unlinks only under LOCK_EX, and destroy() unlinks before closing.  Here the shared code is told only that our
 * objects are shm names (shm_open/shm_unlink) on whatever file system the C library uses.
 *
 * Capabilities: REATTACH, NAMED, FD; not HUGE.  probe() always says yes: this provider is
 * the end of every huge_pages=try walk.
 *
 * Re-attach: named segments by name ("path=/hpshm.<name>": shm_open, LOCK_SH, then mmap);
 * unnamed ones by the inherited memfd ("fd=<n>", FD_CLOEXEC cleared just before exec),
 * both at the creator's address with MAP_FIXED_NOREPLACE, the address compared afterwards.
 * The object must be exactly the token's length and memory this provider makes: a hugetlb
 * file is refused before it is mapped (the kernel would map whole huge pages of it, more than
 * the token's length, which an undo of the token's length could not unmap), and a descriptor
 * must be a memfd (shmem).
 * The ENOSYS fallback has neither, and says so by m->fd == -1: identify() refuses it.  A
 * name with ':' or white space cannot sit in a token; such a segment is identified by its
 * descriptor instead.  A named segment belongs to its creator: destroy() unlinks it.  A
 * crash leaves it in /dev/shm, dead, for `hpshm gc` (scan/remove) or the next create().
 * Any process opens a named one by its name (hpshm_segment_open()): lookup() opens
 * "/hpshm.<name>" through shm_open(), as attach() does, on every system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __linux__
#include <dirent.h>
#endif

#include "hpshm/provider.h"
#ifdef __linux__
#include "linux/linux.h" /* memfd_create, for unnamed segments a child can re-attach */
#endif
#include "port.h"
#include "posix/sys.h"
#include "backends/fixmap.h"
#include "backends/named.h"

#define PLAIN_DEFAULT_MODE 0600
#ifdef __linux__
/* tmpfs and memfds allocate a range ahead and punch it out again (ports/linux/resize.c);
 * other systems' shm objects have no such calls the port uses. */
#define PLAIN_CAP_RESIZE HPSHM_CAP_RESIZE
#else
#define PLAIN_CAP_RESIZE 0
#endif
#define PLAIN_PREFIX       HPSHM__SHM_PREFIX
#ifdef __linux__
#define PLAIN_SHM_DIR "/dev/shm" /* where glibc and musl keep POSIX shm objects on Linux */
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994 /* shmem: memfds, and /dev/shm */
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6 /* a memfd on a kernel built without shmem */
#endif
#endif

/* A name becomes one shm name component (backends/named.c). */
static int plain_name_ok(const char *name)
{
	return hpshm__shm_name_ok(name);
}

static int plain_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	(void)rq;
	/* Base pages, always there: no pool to count. */
	out->nsizes = 1;
	out->sizes[0] = hpshm__port_base_page_size();
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	return 0;
}

/* shm_open() failed other than with EEXIST. */
static int plain_create_error(int sys_errno, const char *path, hpshm_error *err)
{
	return hpshm_error_set(err, HPSHM_ESYS, sys_errno, "shm_open",
			       sys_errno == EACCES ? "make /dev/shm writable for this user" : NULL,
			       "could not create POSIX shared memory %s", path);
}

/* What backends/named.c needs to know about our named objects: shm names, any file system. */
static const struct hpshm__names plain_names = {
	.shm_names    = 1,
#ifdef PLAIN_SHM_DIR
	.shm_dir      = PLAIN_SHM_DIR,
#else
	.shm_dir      = NULL,
#endif
	.fs_magic     = 0,
	.fs_name      = NULL,
	.noun         = "POSIX shared memory",
	.owner        = "the object's owner",
	.provider     = "plain",
	.create_error = plain_create_error,
};

/*
 * Get the backing descriptor: a named POSIX object (path set; *linked 0 while it has no name
 * yet, see hpshm__named_create()), a memfd, or -1 for MAP_ANONYMOUS.
 */
static int plain_open(const struct hpshm_request *rq, char *path, size_t len, int *fdp, int *linked, hpshm_error *err)
{
	int fd, saved;

	path[0] = '\0';
	*linked = 0;
	if (rq->name) {
		snprintf(path, len, PLAIN_PREFIX "%s", rq->name);
		fd = hpshm__named_create(&plain_names, rq, path, rq->mode ? rq->mode & 0777 : PLAIN_DEFAULT_MODE, linked,
					 err);
		if (fd < 0) {
			path[0] = '\0';
			return fd;
		}
		*fdp = fd;
		return 0;
	}

#ifdef __linux__
	fd = hpshm__linux_sys.memfd_create("hpshm:anon", MFD_CLOEXEC);
#else
	fd = -1;
	errno = ENOSYS; /* no memfd here: the MAP_ANONYMOUS fallback below */
#endif
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

/* Undo plain_open(): unlink a name it gave while the lock is still held, then close. */
static void plain_close(int fd, const char *path, int linked)
{
	if (linked && path[0] != '\0')
		(void)hpshm__posix_sys.shm_unlink(path);
	if (fd >= 0)
		(void)hpshm__posix_sys.close(fd);
}

static int plain_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];
	char sz[32], psz[32];
	int fd = -1, linked = 0, saved, rc;
	void *p;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	hpshm_size_format(rq->page_size, psz, sizeof(psz));
	if (rq->name && !plain_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use 1 to 200 characters without '/', other than \".\" and \"..\"",
				       "segment name \"%.64s\" cannot be a POSIX shared memory name", rq->name);
	if (!hpshm__size_fits_off_t(rq->size))
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%s does not fit in off_t", sz);

	rc = plain_open(rq, path, sizeof(path), &fd, &linked, err);
	if (rc < 0)
		return rc;

	if (fd >= 0 && hpshm__posix_sys.ftruncate(fd, (off_t)rq->size) < 0) {
		saved = errno;
		plain_close(fd, path, linked);
		return hpshm_error_set(err, saved == EFBIG || saved == ENOSPC ? HPSHM_ENOMEM : HPSHM_ESYS, saved,
				       "ftruncate", NULL, "could not size the segment to %s", sz);
	}

	p = hpshm__map_at(rq, fd < 0 ? MAP_SHARED | MAP_ANONYMOUS : MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		saved = errno; /* plain_close() below may clobber it */
		plain_close(fd, path, linked);
		switch (saved) {
		case ENOMEM:
			return hpshm_error_set(err, HPSHM_ENOMEM, saved, "mmap",
					       "check ulimit -v and vm.overcommit_memory, or ask for less",
					       "no room to map %s", sz);
		case EEXIST:
			return hpshm__map_taken(err, "mmap", saved, rq, HPSHM__MAP_CREATE);
		default:
			return hpshm_error_set(err, HPSHM_ESYS, saved, "mmap", NULL, "could not map %s", sz);
		}
	}

	if (rq->name) {
		rc = hpshm__named_publish(&plain_names, rq, path, fd, linked, (char *)p + rq->size - HPSHM_HEADER_REGION,
					  err);
		if (rc < 0) {
			(void)hpshm__posix_sys.munmap(p, rq->size);
			plain_close(fd, path, linked);
			return rc;
		}
	}
	hpshm__mapping_fill(m, p, rq->size, fd, -1, path);
	/* Anonymous memory has nothing a child could open: this segment cannot be re-attached,
	 * and says so rather than claim the provider's capabilities. */
	if (fd < 0)
		m->caps = self->ops->caps & ~(unsigned)(HPSHM_CAP_REATTACH | HPSHM_CAP_FD | HPSHM_CAP_RESIZE);
	return 0;
}

static int plain_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	return hpshm__named_destroy(&plain_names, m);
}

static int plain_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	(void)self;
	if (hpshm__fd_of(m) < 0)
		return HPSHM_ENOTSUP; /* the MAP_ANONYMOUS fallback: fork() children only */
	return hpshm__fd_identify(self, m, id, len);
}

/* A name this provider made: "/hpshm.<name>", one component. */
static int plain_path_ok(const char *path)
{
	return hpshm__shm_path_ok(path);
}

/*
 * Is fd memory this provider makes?  Base pages only: a hugetlb file (another provider's
 * memfd or file, named in an edited token) is refused before it is mapped, since the kernel
 * would map whole huge pages of it.  A descriptor (an unnamed segment) must be a memfd, which
 * lives on shmem (ramfs without it); a name is the C library's, on whatever /dev/shm is, and
 * only hugetlbfs is refused there.  0 if ours; 1 if not, with *why; -1 with errno.
 */
static int plain_backing_foreign(int fd, int named, const char **why)
{
#ifdef __linux__
	struct statfs sfs;
	uint32_t type;

	if (hpshm__linux_sys.fstatfs(fd, &sfs) < 0)
		return -1;
	type = (uint32_t)sfs.f_type;
	if (type == (uint32_t)HUGETLBFS_MAGIC) {
		*why = "it is hugetlb memory, which plain never makes (another provider's object)";
		return 1;
	}
	if (!named && type != (uint32_t)TMPFS_MAGIC && type != (uint32_t)RAMFS_MAGIC) {
		*why = "it is not a memfd (its file system is not shmem)";
		return 1;
	}
	return 0;
#else
	/* No hugetlb files elsewhere, and no file system names to tell a memfd by. */
	(void)fd;
	(void)named;
	(void)why;
	return 0;
#endif
}

static int plain_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq, const char *id, hpshm_error *err)
{
	const char *spawn_hint = "start the child with hpshm_child_spawn(), which keeps the descriptor open across exec";
	char what[HPSHM_PATH_MAX + 32];
	char sz[32], have[32];
	struct stat st;
	const char *why = NULL;
	int fd = -1, named = 0, saved, foreign;

	(void)self;
	hpshm_size_format(rq->size, sz, sizeof(sz));
	if (strncmp(id, "path=", 5) == 0) {
		if (!plain_path_ok(id + 5))
			return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
					       "\"%.64s\" is not the name of an hpshm POSIX shared memory object", id + 5);
		snprintf(what, sizeof(what), "POSIX shared memory %s", id + 5);
		named = 1;
	} else if (hpshm__id_parse(id, "fd=", &fd) == 0) {
		snprintf(what, sizeof(what), "descriptor %d", fd);
	} else {
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "identifier \"%.64s\" is neither fd=<descriptor> nor path=/hpshm.<name>", id);
	}

	if (named) {
		fd = hpshm__named_attach(&plain_names, id + 5, err); /* takes LOCK_SH */
		if (fd < 0)
			return fd;
	}

	if (hpshm__posix_sys.fstat(fd, &st) < 0) {
		saved = errno;
		if (named)
			(void)hpshm__posix_sys.close(fd);
		if (saved == EBADF)
			return hpshm_error_set(err, HPSHM_EINVAL, saved, "fstat", spawn_hint,
					       "descriptor %d is not open in this process", fd);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fstat", NULL, "could not inspect descriptor %d", fd);
	}
	if (!S_ISREG(st.st_mode)) {
		if (named)
			(void)hpshm__posix_sys.close(fd);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, named ? "pass the creator's token unchanged" : spawn_hint,
				       "%s is not a segment: not a regular file", what);
	}
	foreign = plain_backing_foreign(fd, named, &why);
	if (foreign != 0) {
		saved = errno;
		if (named)
			(void)hpshm__posix_sys.close(fd);
		if (foreign < 0)
			return hpshm_error_set(err, HPSHM_ESYS, saved, "fstatfs", NULL, "could not inspect %s", what);
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "%s is not a plain segment: %s", what, why);
	}
	/* Exactly the token's length: an edited size must not map part of the object. */
	if (st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)rq->size) {
		if (named)
			(void)hpshm__posix_sys.close(fd);
		hpshm_size_format(st.st_size > 0 ? (size_t)st.st_size : 0, have, sizeof(have));
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the creator's token unchanged",
				       "%s is not the token's segment: it is %s long, the token says %s", what, have, sz);
	}
	/* The name stays its creator's: detach never unlinks it. */
	return hpshm__fd_attach_map(m, rq, fd, named ? id + 5 : NULL, what, err);
}

#ifdef __linux__
/*
 * The Linux part: POSIX has no call that lists shm objects, but glibc and musl keep them as
 * files in the tmpfs at /dev/shm, where "/hpshm.x" is /dev/shm/hpshm.x.  Everything else
 * still goes through shm_open() by name.
 */
static int plain_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	struct hpshm_found f;
	struct dirent *de;
	char shm[HPSHM_PATH_MAX];
	DIR *dir;
	int stop = 0;

	(void)self;
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
		if (hpshm__named_inspect(&plain_names, shm, shm + strlen(PLAIN_PREFIX), de->d_type, &f) == 0)
			stop = fn(user, &f);
	}
	closedir(dir);
	return 0;
}
#else
/*
 * Elsewhere POSIX shm objects live where no call can list them: nothing to list, by design
 * rather than by failure (an error would make `hpshm ls` useless for every other provider
 * there); hpshm.h and `hpshm ls` say that these are not shown.
 */
static int plain_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	(void)self;
	(void)fn;
	(void)user;
	return 0;
}
#endif

/* lookup(): the shm name "/hpshm.<name>", opened by name (through the C library) on every system. */
static int plain_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
			hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];

	(void)self;
	if (!plain_name_ok(rq->name))
		return hpshm_error_set(err, HPSHM_ENOENT, 0, NULL, NULL,
				       "\"%.64s\" cannot be a POSIX shared memory name", rq->name);
	snprintf(path, sizeof(path), PLAIN_PREFIX "%s", rq->name);
	return hpshm__named_lookup(&plain_names, path, rq->name, f, err);
}

static int plain_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	(void)self;
	if (!plain_path_ok(f->id))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "\"%.64s\" is not the name of an hpshm POSIX shared memory object", f->id);
	return hpshm__named_remove(&plain_names, f, err);
}

const struct hpshm_provider hpshm__provider_plain = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name        = "plain",
	.summary     = "base pages from a memfd or shm_open() object; always available",
	.caps        = HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED | HPSHM_CAP_FD | PLAIN_CAP_RESIZE,
	.probe       = plain_probe,
	.create      = plain_create,
	.destroy     = plain_destroy,
	.identify    = plain_identify,
	.attach      = plain_attach,
	.detach      = hpshm__fd_unmap, /* unmap and close (dropping our lock); the creator owns the name */
	.scan        = plain_scan,
	.remove      = plain_remove,
	.lookup      = plain_lookup,
};
