/*
 * ports/linux/absent.c -- the Linux pool facts core/segment.c reads, for a build without the
 * Linux port: no pools, no hint, no cgroup risk.
 *
 * core/segment.c still asks linux.h for the huge page pools (to pick a page size that has
 * pages, and to name vm.nr_hugepages in a hint) and for the hugetlb cgroup's fault risk;
 * provider ABI 3 moves those facts into the providers' probe(), and then this file goes.  Until
 * then a build of the POSIX port (FreeBSD, macOS, and posix-generic on Linux, HPSHM_PORT=posix)
 * compiles this instead of the Linux readers: it answers as a system without hugetlb pools
 * would, which is what the Linux readers answer on a kernel without hugetlb support.
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
