/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/address.c -- addresses with POSIX alone: re-attach addresses picked by hints far
 * from where a fresh process's libraries go, reserved over /dev/zero; no map of the process to
 * quote in messages.
 *
 * A child that finds its range taken anyway fails its attach cleanly, naming it.  A
 * per-concern fallback CMake picks where no OS folder applies (doc/architecture.md).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

#include "port.h"
#include "posix/posix.h"
#include "posix/sys.h"

/*
 * POSIX.1-2008 has no anonymous mappings (MAP_ANON is an extension), so the range is
 * reserved by a private mapping of /dev/zero, which every system this port serves has.
 */
int hpshm__port_pick_address(size_t len, size_t align, void **out)
{
	int fd, rc;

	if (align == 0 || (align & (align - 1)) || len > SIZE_MAX - align)
		return HPSHM_EINVAL;
	fd = hpshm__posix_sys.open("/dev/zero", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return HPSHM_ENOMEM;
	rc = hpshm__posix_pick_address(len, align, MAP_PRIVATE, fd, NULL, out);
	(void)hpshm__posix_sys.close(fd);
	return rc;
}

int hpshm__port_maps_line(const void *addr, size_t size, char *buf, size_t len)
{
	(void)addr;
	(void)size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return HPSHM_EUNAVAILABLE;
}
