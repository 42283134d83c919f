/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/numa_none.c -- NUMA placement where the port knows no nodes: POSIX has no call
 * for it.  numa=default changes nothing and needs nothing here; any other policy is refused
 * before a segment is made, so a policy is never silently ignored.
 */
#include "port.h"

int hpshm__port_numa_nodes(size_t page_size, struct hpshm__node *out, int max)
{
	(void)page_size;
	(void)out;
	(void)max;
	return 0;
}

int hpshm__port_numa_check(const struct hpshm__numa *p, size_t len, size_t page_size, hpshm_error *err)
{
	(void)p;
	(void)len;
	(void)page_size;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "leave numa at default on this system",
			       "this system reports no NUMA nodes to place a segment on");
}

int hpshm__port_numa_apply(void *addr, size_t len, const struct hpshm__numa *p, hpshm_error *err)
{
	(void)addr;
	(void)len;
	(void)p;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "leave numa at default on this system",
			       "this system has no call to place pages on NUMA nodes");
}

int hpshm__port_numa_where(void *addr, size_t len, size_t page_size, uint64_t *bytes, int max)
{
	(void)addr;
	(void)len;
	(void)page_size;
	(void)bytes;
	(void)max;
	return HPSHM_ENOTSUP;
}
