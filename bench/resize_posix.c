/* SPDX-License-Identifier: MIT */
/*
 * bench/resize_posix.c -- os.h's side of the resize rows (resize.c) on POSIX: the raw calls
 * a server would write by hand to grow and shrink shared memory in place, and the fork()
 * that runs the sync figure in an attached process.
 *
 * The raw region does what hpshm's resizable segment does, call for call, so hpshm / raw is
 * what hpshm adds: a memfd (MFD_HUGETLB and the size bits at a huge page size, base pages at
 * 0) ftruncated to its largest size, mapped whole with MAP_SHARED | MAP_NORESERVE and
 * PROT_NONE, its first bytes allocated (fallocate) and opened (mprotect).  A grow is
 * fallocate of the new range (a short pool is ENOSPC here, never a SIGBUS later) and mprotect
 * PROT_READ | PROT_WRITE of it; a shrink is mprotect PROT_NONE and fallocate(PUNCH_HOLE |
 * KEEP_SIZE), which hands the pages back to the pool.  That is the "ftruncate /
 * fallocate + mmap MAP_FIXED" without the remap: a MAP_FIXED mmap over the range would also
 * replace its page tables, which neither side needs, since the whole range is mapped once.
 * Linux only: elsewhere the rows say why they are absent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "os.h"
#include "ports/linux/flags.h"

static int rs_fail(char *why, size_t len, const char *call, int e)
{
	snprintf(why, len, "%s: %s%s", call, strerror(e),
		 e == ENOMEM || e == ENOSPC ? " (huge page pool too small?)" : "");
	return -1;
}

#if defined(__linux__) && defined(FALLOC_FL_PUNCH_HOLE)

int bench_os_rs_create(size_t page_size, size_t size, size_t max, struct bench_region *r, char *why, size_t len)
{
	unsigned flags = MFD_CLOEXEC | (page_size ? MFD_HUGETLB | hpshm__linux_huge_bits(page_size) : 0);
	int fd = memfd_create("bench-resize", flags), e;
	void *p;

	memset(r, 0, sizeof(*r));
	r->handle = BENCH_OS_NONE;
	if (fd < 0)
		return rs_fail(why, len, "memfd_create", errno);
	if (ftruncate(fd, (off_t)max) < 0 || fallocate(fd, 0, 0, (off_t)size) < 0) {
		e = errno;
		close(fd);
		return rs_fail(why, len, "ftruncate/fallocate", e);
	}
	p = mmap(NULL, max, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED || mprotect(p, size, PROT_READ | PROT_WRITE) < 0) {
		e = errno;
		if (p != MAP_FAILED)
			munmap(p, max);
		close(fd);
		return rs_fail(why, len, "mmap/mprotect", e);
	}
	r->addr = p;
	r->size = size;
	r->len = max;
	r->handle = fd;
	r->page_size = page_size ? page_size : (size_t)sysconf(_SC_PAGESIZE);
	r->huge = page_size != 0;
	return 0;
}

int bench_os_rs_grow(struct bench_region *r, size_t to, char *why, size_t len)
{
	size_t from = r->size;

	if (fallocate((int)r->handle, 0, (off_t)from, (off_t)(to - from)) < 0)
		return rs_fail(why, len, "fallocate", errno);
	if (mprotect((char *)r->addr + from, to - from, PROT_READ | PROT_WRITE) < 0)
		return rs_fail(why, len, "mprotect", errno);
	r->size = to;
	return 0;
}

int bench_os_rs_shrink(struct bench_region *r, size_t to, char *why, size_t len)
{
	size_t from = r->size;

	if (mprotect((char *)r->addr + to, from - to, PROT_NONE) < 0)
		return rs_fail(why, len, "mprotect", errno);
	if (fallocate((int)r->handle, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)to, (off_t)(from - to)) < 0)
		return rs_fail(why, len, "fallocate(PUNCH_HOLE)", errno);
	r->size = to;
	return 0;
}

#else

int bench_os_rs_create(size_t page_size, size_t size, size_t max, struct bench_region *r, char *why, size_t len)
{
	(void)page_size, (void)size, (void)max, (void)r;
	snprintf(why, len, "the raw calls of a resize (fallocate, PUNCH_HOLE) are Linux's");
	return -1;
}

int bench_os_rs_grow(struct bench_region *r, size_t to, char *why, size_t len)
{
	(void)r, (void)to;
	snprintf(why, len, "no raw resize here");
	return -1;
}

int bench_os_rs_shrink(struct bench_region *r, size_t to, char *why, size_t len)
{
	(void)r, (void)to;
	snprintf(why, len, "no raw resize here");
	return -1;
}

#endif

/* Read n bytes whole from fd: 0, or -1. */
static int rs_read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

int bench_os_forked(void (*fn)(void *arg, double *out, unsigned n), void *arg, double *out, unsigned n, char *why,
		    size_t len)
{
	int fds[2], status = 0, rc;
	pid_t pid;

	if (pipe(fds) < 0)
		return rs_fail(why, len, "pipe", errno);
	pid = fork();
	if (pid < 0) {
		rc = errno;
		close(fds[0]);
		close(fds[1]);
		return rs_fail(why, len, "fork", rc);
	}
	if (pid == 0) {
		ssize_t k;

		close(fds[0]);
		fn(arg, out, n);
		k = write(fds[1], out, n * sizeof(*out));
		_exit(k == (ssize_t)(n * sizeof(*out)) ? 0 : 1);
	}
	close(fds[1]);
	rc = rs_read_all(fds[0], out, n * sizeof(*out));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "the forked process did not report (status 0x%x)", (unsigned)status);
		return -1;
	}
	return 0;
}
