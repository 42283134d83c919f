/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/admin.c -- ports/admin.h on Windows: nothing to change.  Windows keeps no pool
 * of large pages to resize (they are taken from free memory when a section is created) and
 * has no transparent huge pages; both say so in words.
 */
#include "base/base.h"
#include "admin.h"

int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len)
{
	(void)page_size;
	(void)pages;
	if (why != NULL && len > 0)
		hpshm__strlcpy(why, "Windows keeps no large page pool: large pages come from free physical memory", len);
	return -1;
}

int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len)
{
	(void)mode;
	if (why != NULL && len > 0)
		hpshm__strlcpy(why, "Windows has no transparent huge pages", len);
	return -1;
}
