/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/generic.c -- the port of a POSIX system hpshm has no OS folder for yet.
 *
 * Every function of port.h that an OS folder implements its own way (ports/linux/ for Linux)
 * is implemented here with POSIX.1-2008 alone, as conservatively as that allows: no huge page
 * sizes (the hugetlb backends are Linux's and not built here), nothing verified, no start
 * times or boot id (so `hpshm gc` keeps what it cannot prove dead).  Re-attach addresses are
 * picked as on Linux, by hints far from where a fresh process's libraries go, reserved over
 * /dev/zero; a child that finds its range taken anyway fails its attach cleanly, naming it.
 * A new OS starts from this file: copy it into ports/<os>/ and replace what the OS does
 * better.
 *
 * CMake builds it only where no OS folder applies.  On Linux it is still compiled, strictly
 * and into an object library nothing links, so that it keeps compiling as the contract
 * changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "port.h"
#include "posix/posix.h"
#include "posix/sys.h"

/* An OS folder that knows its page sizes and how to verify them (ports/freebsd/pages.c)
 * brings these three itself, and CMake defines HPSHM_PORT_OWN_PAGES for this file. */
#ifndef HPSHM_PORT_OWN_PAGES
int hpshm__huge_page_sizes(size_t *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

size_t hpshm__default_huge_page_size(void)
{
	return 0;
}

int hpshm__verify_backing(void *addr, size_t len, int fd, struct hpshm__backing *out)
{
	(void)addr;
	(void)len;
	(void)fd;
	if (out == NULL)
		return HPSHM_EINVAL;
	out->page_size = 0;
	out->huge = 0;
	hpshm__strlcpy(out->source, "unverified", sizeof(out->source));
	return HPSHM_EUNAVAILABLE;
}
#endif /* HPSHM_PORT_OWN_PAGES */

int hpshm__populate(void *addr, size_t len, size_t page_size, int fd, unsigned *methods, hpshm_error *err)
{
	char sz[32];
	size_t bad = 0;
	unsigned unused;
	int rc, e;

	(void)fd;
	if (methods == NULL)
		methods = &unused;
	*methods = HPSHM_POPULATE_NONE;
	if (addr == NULL || len == 0)
		return 0;
	if (page_size == 0)
		page_size = hpshm__base_page_size();
	*methods = HPSHM_POPULATE_TOUCH;
	rc = hpshm__posix_touch(addr, len, page_size, &bad);
	hpshm_size_format(len, sz, sizeof(sz));
	if (rc < 0) {
		e = errno;
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "sigaction", NULL,
				       "cannot guard the touch of %s against SIGBUS: %s", sz, strerror(e));
	}
	if (rc > 0)
		return hpshm_error_set(err, HPSHM_EPOPULATE, 0, "touch", "free memory, or raise this process's memory limit",
				       "the system could not supply the page at offset %zu of %s at %p (SIGBUS on touch)",
				       bad, sz, addr);
	return 0;
}

/*
 * POSIX.1-2008 has no anonymous mappings (MAP_ANON is an extension), so the range is
 * reserved by a private mapping of /dev/zero, which every system this port serves has.
 */
int hpshm__pick_address(size_t len, size_t align, void **out)
{
	int fd, rc;

	if (align == 0 || (align & (align - 1)) || len > SIZE_MAX - align)
		return HPSHM_EINVAL;
	fd = hpshm__sys.open("/dev/zero", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return HPSHM_ENOMEM;
	rc = hpshm__posix_pick_address(len, align, MAP_PRIVATE, fd, NULL, out);
	(void)hpshm__sys.close(fd);
	return rc;
}

int hpshm__maps_line(const void *addr, size_t size, char *buf, size_t len)
{
	(void)addr;
	(void)size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return HPSHM_EUNAVAILABLE;
}

uint64_t hpshm__process_start(long long pid)
{
	(void)pid;
	return 0;
}

int hpshm__process_alive(long long pid, uint64_t start)
{
	(void)start;
	if (pid <= 0)
		return 0;
	/* Without start times a live pid may be a recycled one: "cannot tell", which keeps. */
	return kill((pid_t)pid, 0) == 0 || errno == EPERM ? -1 : 0;
}

int hpshm__boot_id(char *buf, size_t len)
{
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return HPSHM_ENOTSUP;
}

uint64_t hpshm__random64(void)
{
	return hpshm__posix_random64();
}

const char *hpshm__getenv(const char *name)
{
	/* POSIX has no AT_SECURE: a program whose ids differ from its caller's is privileged. */
	if (getuid() != geteuid() || getgid() != getegid())
		return NULL;
	return getenv(name);
}

int hpshm__port_descriptor(intptr_t handle, int descriptor)
{
	return descriptor && handle >= 0 && handle <= INT_MAX ? (int)handle : -1;
}

/* This port populates by the guarded touch alone (above): other bits are not its methods. */
const char *hpshm__port_populate_name(unsigned methods)
{
	if (methods == HPSHM_POPULATE_NONE)
		return "none";
	return methods == HPSHM_POPULATE_TOUCH ? "touch" : "unknown";
}
