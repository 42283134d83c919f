/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/system.c -- what every POSIX system answers the same way: the base page size and a
 * monotonic clock.
 */
#include <time.h>
#include <unistd.h>

#include "port.h"

size_t hpshm__port_base_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	/* sysconf cannot fail for _SC_PAGESIZE on the systems we know; the fallback only keeps
	 * callers from ever dividing by zero. */
	return ps > 0 ? (size_t)ps : 4096;
}

uint64_t hpshm__port_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
