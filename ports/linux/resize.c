/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/resize.c -- the pages of a resizable segment's object (port.h): fallocate()
 * gives a range of a hugetlbfs or tmpfs file its pages, or fails with ENOSPC while a failure
 * is still an error code, and fallocate(PUNCH_HOLE) gives them back.  Both act on the file,
 * so every process that maps the range sees the change; the core makes sure none touches a
 * range that is being given back (core/resize.c).
 *
 * A hugetlbfs fallocate() that runs out of pages keeps those it got: they are punched out
 * again, so a failed grow leaves the pool as it found it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "linux/linux.h"
#include "port.h"
#include "posix/sys.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

static int resize_fallocate(int fd, int mode, uint64_t off, size_t len)
{
	int rc;

	do
		rc = hpshm__linux_sys.fallocate(fd, mode, (off_t)off, (off_t)len);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? errno : 0;
}

int hpshm__port_commit(struct hpshm__port_handle h, uint64_t off, size_t len, size_t page_size, hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX], sz[32], psz[32];
	int e;

	hpshm_size_format(len, sz, sizeof(sz));
	hpshm_size_format(page_size, psz, sizeof(psz));
	if (!(h.flags & HPSHM__PORT_FILE))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
				       "the segment has no file to allocate its pages in");
	e = resize_fallocate((int)h.value, 0, off, len);
	if (e == 0)
		return 0;
	if (e == ENOSPC || e == ENOMEM) {
		/* Partly done: hand back what was had, so nothing changed. */
		(void)resize_fallocate((int)h.value, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
		return hpshm_error_set(err, HPSHM_ENOMEM, e, "fallocate",
				       hpshm__linux_shortage_hint(len, page_size, hint, sizeof(hint)),
				       "the kernel could not allocate %s of %s pages for the segment", sz, psz);
	}
	if (e == EOPNOTSUPP || e == ENOSYS)
		return hpshm_error_set(err, HPSHM_ENOTSUP, e, "fallocate", "use memfd_hugetlb, hugetlbfs or plain",
				       "the segment's file system cannot allocate pages in advance");
	return hpshm_error_set(err, HPSHM_ESYS, e, "fallocate", NULL, "fallocate of %s at offset %llu failed: %s", sz,
			       (unsigned long long)off, strerror(e));
}

int hpshm__port_decommit(struct hpshm__port_handle h, uint64_t off, size_t len, hpshm_error *err)
{
	char sz[32];
	int e;

	if (!(h.flags & HPSHM__PORT_FILE))
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "the segment has no file to give pages back from");
	e = resize_fallocate((int)h.value, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	if (e == 0)
		return 0;
	return hpshm_error_set(err, e == EOPNOTSUPP || e == ENOSYS ? HPSHM_ENOTSUP : HPSHM_ESYS, e, "fallocate", NULL,
			       "could not give back %s at offset %llu (fallocate PUNCH_HOLE): %s",
			       hpshm_size_format(len, sz, sizeof(sz)), (unsigned long long)off, strerror(e));
}

/*
 * Does any line of /proc/<pid>/maps map the object (its device and inode)?  After an exec
 * none does, unless the new program attached it again (which the core tells apart).  Not by
 * address: under qemu-user another process's maps show the host's addresses, not the
 * guest's.  Reading another process's maps needs the right to trace it: without it, or when
 * a read fails, -1.
 */
int hpshm__port_process_maps(long long pid, struct hpshm__port_handle h)
{
	char path[64], line[512];
	unsigned long long ino;
	unsigned maj, min;
	struct stat st;
	int found = 0;
	FILE *f;

	if (!(h.flags & HPSHM__PORT_FILE) || hpshm__posix_sys.fstat((int)h.value, &st) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%lld/maps", pid);
	f = hpshm__linux_sysfile_open(path);
	if (!f)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*x-%*x %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 &&
			ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev);
	/* A read that failed part way says nothing of the lines it did not return: the caller
	 * would free the slot of a process that still maps the segment. */
	if (!found && ferror(f))
		found = -1;
	fclose(f);
	return found;
}
