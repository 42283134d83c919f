/* SPDX-License-Identifier: MIT */
/*
 * examples/provider/file_provider.c -- an hpshm provider written outside hpshm: shared memory
 * backed by a file the application names.
 *
 * It is written from <hpshm/provider.h>, <hpshm.h> and doc/providers.md alone, and is what a
 * third party would write to put its own mechanism (a DAX file, a file on a RAM disk, a
 * vendor's device) behind hpshm: probe, create, destroy and detach, plus two configuration
 * keys of its own that the configuration checks and `hpshm probe` lists:
 *   file.path  the file the segment lives in (created; removed at destroy unless file.keep);
 *   file.keep  on: keep the file, and its contents, after destroy, and reuse it next time.
 * Built two ways (CMakeLists.txt): as a module the `hpshm` tool and the conformance suite
 * load (HPSHM_PROVIDER_MODULES, entry point hpshm_provider_module()), and into file_demo.
 * POSIX only (open, ftruncate, mmap).
 */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE where the C library has it */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hpshm.h>
#include <hpshm/provider.h>

#include "file_provider.h"

/* What destroy() and detach() need: whether the file stays. */
#define FILE_KEEP ((void *)1)

static const struct hpshm_provider_key file_keys[] = {
	{ "file.path", HPSHM_KEY_PATH, "", "the file a segment lives in; created, and removed at destroy" },
	{ "file.keep", HPSHM_KEY_BOOL, "off", "on: keep the file and its contents after destroy, reuse it next time" },
	{ NULL, 0, NULL, NULL },
};

/* The file rq's configuration names: 0 with path filled, or -1 when file.path is empty. */
static int file_path(const struct hpshm_request *rq, char *path, size_t len)
{
	int n = rq->option(rq, "file.path", path, len);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

static int file_keep(const struct hpshm_request *rq)
{
	char v[8];

	return rq->option(rq, "file.keep", v, sizeof(v)) > 0 && strcmp(v, "on") == 0;
}

static int file_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	char path[HPSHM_PATH_MAX], dir[HPSHM_PATH_MAX];
	char *slash;

	(void)self;
	/* Base pages, whatever the wish: a file's page cache has no other size. */
	out->nsizes = 1;
	out->sizes[0] = (size_t)sysconf(_SC_PAGESIZE);
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	if (file_path(rq, path, sizeof(path)) < 0) {
		snprintf(out->reason, sizeof(out->reason), "file.path is not set");
		snprintf(out->fix, sizeof(out->fix), "set file.path to the file to back segments with, "
			 "e.g. file.path=/var/tmp/app.mem");
		return HPSHM_EUNAVAILABLE;
	}
	/* Side-effect free: only ask whether the directory would take the file. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (access(dir, W_OK | X_OK) != 0) {
		out->sys_errno = errno;
		snprintf(out->reason, sizeof(out->reason), "cannot create files in %.180s: %s", dir,
			 strerror(errno));
		snprintf(out->fix, sizeof(out->fix), "point file.path into a directory this user may write");
		return HPSHM_EUNAVAILABLE;
	}
	return 0;
}

/* Map fd's first size bytes at address, exactly there or not at all, or where the system chooses. */
static void *file_map(int fd, size_t size, void *address)
{
	int flags = MAP_SHARED;
	void *p;

#ifdef MAP_FIXED_NOREPLACE
	if (address)
		flags |= MAP_FIXED_NOREPLACE;
#endif
	p = mmap(address, size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p != MAP_FAILED && address && p != address) {
		/* An old kernel took MAP_FIXED_NOREPLACE as a hint: never keep a mapping elsewhere. */
		munmap(p, size);
		errno = EEXIST;
		return MAP_FAILED;
	}
	return p;
}

static int file_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		       hpshm_error *err)
{
	char path[HPSHM_PATH_MAX];
	int keep = file_keep(rq), fd, saved, rc;
	const char *call;
	void *addr;

	(void)self;
	if (file_path(rq, path, sizeof(path)) < 0)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, 0, NULL, "set file.path", "file.path is not set");
	/* A file it makes it may remove; with file.keep it reuses one, contents and all. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | (keep ? 0 : O_EXCL), (mode_t)rq->mode);
	if (fd < 0) {
		saved = errno;
		return hpshm_error_set(err, saved == EEXIST ? HPSHM_EEXIST : HPSHM_ESYS, saved, "open",
				       saved == EEXIST ? "remove the file, choose another file.path, or set file.keep=on "
							 "to reuse it"
						       : "check file.path and the directory's permissions",
				       "cannot create %s: %s", path, strerror(saved));
	}
	call = "ftruncate";
	if (ftruncate(fd, (off_t)rq->size) != 0)
		goto fail;
	call = "mmap";
	addr = file_map(fd, rq->size, rq->address);
	if (addr == MAP_FAILED)
		goto fail;
	m->addr = addr;
	m->size = rq->size;
	m->handle = fd;
	m->flags = HPSHM_MAP_DESCRIPTOR;
	m->priv = keep ? FILE_KEEP : NULL;
	snprintf(m->path, sizeof(m->path), "%s", path);
	return 0;

fail:
	saved = errno;
	if (!keep)
		unlink(path);
	close(fd);
	rc = hpshm_error_set(err, saved == EEXIST ? HPSHM_EEXIST : HPSHM_ESYS, saved, call,
			     saved == ENOSPC || saved == EFBIG ? "free space on the file system of file.path, or ask for less"
							       : "check the file system of file.path",
			     "cannot map %zu bytes of %s: %s", rq->size, path, strerror(saved));
	return rc;
}

/* This process's mapping and descriptor go; the file stays. */
static int file_detach(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = 0;

	(void)self;
	if (munmap(m->addr, m->size) != 0)
		rc = HPSHM_ESYS;
	if (m->handle != HPSHM_NO_HANDLE && close((int)m->handle) != 0)
		rc = HPSHM_ESYS;
	m->handle = HPSHM_NO_HANDLE;
	return rc;
}

static int file_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	int rc = file_detach(self, m);

	if (m->priv != FILE_KEEP && unlink(m->path) != 0 && rc == 0)
		rc = HPSHM_ESYS;
	return rc;
}

const struct hpshm_provider file_provider = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name = "file",
	.summary = "a file the application names (file.path), example out-of-tree provider",
	.caps = HPSHM_CAP_FD,
	.probe = file_probe,
	.create = file_create,
	.destroy = file_destroy,
	.detach = file_detach,
	.keys = file_keys,
};

FILE_PROVIDER_EXPORT int hpshm_provider_module(hpshm_error *err)
{
	return hpshm_provider_register(&file_provider, NULL, NULL, err);
}
