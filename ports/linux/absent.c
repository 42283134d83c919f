/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/absent.c -- the Linux pool facts, for a build without the Linux port: no pools,
 * no hint, no cgroup risk.
 *
 * Since provider ABI 3 the core asks no OS fact; what still calls these is the backend helper
 * for descriptor-backed segments (backends/fdseg.c: the pool hint of a failed reservation),
 * shared by the plain backend that a build of the POSIX port (FreeBSD, macOS, and
 * posix-generic on Linux, HPSHM_PORT=posix) compiles.  It answers as a system without hugetlb
 * pools would, which is what the Linux readers answer on a kernel without hugetlb support.
 *
 * No system call and no OS header: only the declarations of linux.h.
 */
#include <stddef.h>

#include "linux/linux.h"

unsigned long hpshm__pool_available(const struct hpshm__pool *p)
{
	(void)p;
	return 0;
}

int hpshm__pools(struct hpshm__pool *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

int hpshm__pool_get(size_t page_size, struct hpshm__pool *out)
{
	(void)page_size;
	(void)out;
	return HPSHM_EUNAVAILABLE;
}

char *hpshm__hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len)
{
	(void)size;
	(void)page_size;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return buf;
}

int hpshm__hugetlb_fault_risk(size_t size, size_t page_size)
{
	(void)size;
	(void)page_size;
	return 0;
}
