/* SPDX-License-Identifier: MIT */
/*
 * ports/facts_absent.c -- the facts of ports/facts.h that only Linux has, as a system without
 * them answers: no huge page pools, no hugetlbfs mounts, no hugetlb cgroup, no SysV limits,
 * no transparent huge pages, no listing of which children map a region.  Counts of 0,
 * HPSHM_EUNAVAILABLE or HPSHM_EIO, empty strings: the tool then says "none" or "unreadable"
 * rather than guessing.  ISO C alone, so the POSIX fallbacks (ports/posix/facts.c) and Windows
 * (ports/windows/facts.c) take the same file; Linux has ports/linux/facts.c instead
 * (doc/architecture.md, inside ports/).
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "facts.h"
#include "port.h"

int hpshm__os_pools(struct hpshm__pool *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

int hpshm__os_pool(size_t page_size, struct hpshm__pool *out)
{
	(void)page_size;
	(void)out;
	return HPSHM_EUNAVAILABLE;
}

unsigned long hpshm__os_pool_available(const struct hpshm__pool *p)
{
	(void)p;
	return 0;
}

const char *hpshm__os_pool_source(void)
{
	return "";
}

char *hpshm__os_pool_knob(size_t page_size, char *buf, size_t len)
{
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

char *hpshm__os_page_size_cpu_check(size_t page_size, char *buf, size_t len)
{
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

/* No nodes to show: a port that places pages on nodes (Windows' preferred node) answers here
 * once it does, in its own facts file. */
int hpshm__os_numa_nodes(size_t page_size, struct hpshm__node *out, int max)
{
	(void)page_size;
	(void)out;
	(void)max;
	return 0;
}

const char *hpshm__os_numa_source(void)
{
	return "";
}

char *hpshm__os_numa_pool_file(int node, size_t page_size, char *buf, size_t len)
{
	(void)node;
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

int hpshm__os_mounts(struct hpshm__mount *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

long hpshm__os_huge_group(void)
{
	return -1;
}

int hpshm__os_in_group(long gid)
{
	(void)gid;
	return 0;
}

int hpshm__os_sysv_limits(struct hpshm__sysv_limits *out)
{
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	return HPSHM_EIO;
}

int hpshm__os_limit(size_t page_size, struct hpshm__limit *out)
{
	(void)page_size;
	if (out == NULL)
		return HPSHM_EINVAL;
	memset(out, 0, sizeof(*out));
	return 0;
}

char *hpshm__os_limit_size_name(size_t page_size, char *buf, size_t len)
{
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

int hpshm__os_fault_risk(size_t size, size_t page_size)
{
	(void)size;
	(void)page_size;
	return 0;
}

int hpshm__os_thp(struct hpshm__thp *out)
{
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	return HPSHM_EUNAVAILABLE;
}

size_t hpshm__os_thp_page_size(void)
{
	return 0;
}

long hpshm__os_thp_kib(const void *addr)
{
	(void)addr;
	return -1;
}

int hpshm__os_children_mapping(const void *addr, long *out, int max)
{
	(void)addr;
	(void)out;
	(void)max;
	return 0; /* no interposer here, and no listing of a process's children */
}
