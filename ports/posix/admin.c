/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/admin.c -- ports/admin.h where no OS folder applies: POSIX has no huge page pool
 * and no transparent huge pages to set, and says so in words.
 */
#include "admin.h"
#include "base/base.h"

int hpshm__os_pool_resize(size_t page_size, unsigned long pages, char *why, size_t len)
{
	(void)page_size;
	(void)pages;
	if (why != NULL && len > 0)
		hpshm__strlcpy(why, "this system keeps no huge page pool to resize", len);
	return -1;
}

int hpshm__os_thp_shmem_set(const char *mode, char *why, size_t len)
{
	(void)mode;
	if (why != NULL && len > 0)
		hpshm__strlcpy(why, "this system has no transparent huge pages to set", len);
	return -1;
}
