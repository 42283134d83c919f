/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/resize_none.c -- a POSIX system without a way to allocate a shared object's
 * pages ahead and give them back one range at a time (port.h): no resizable segments.
 * Linux's are ports/linux/resize.c.  posix_fallocate() would do the first half on some
 * systems, but without the second a shrink could never return its pages, so neither is
 * offered and no provider here claims HPSHM_CAP_RESIZE.
 */
#include "port.h"

int hpshm__port_commit(struct hpshm__port_handle h, uint64_t off, size_t len, size_t page_size, hpshm_error *err)
{
	(void)h, (void)off, (void)len, (void)page_size;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
			       "this system cannot allocate a shared object's pages in advance");
}

int hpshm__port_process_maps(long long pid, struct hpshm__port_handle h)
{
	(void)pid, (void)h;
	return -1;
}

int hpshm__port_decommit(struct hpshm__port_handle h, uint64_t off, size_t len, hpshm_error *err)
{
	(void)h, (void)off, (void)len;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
			       "this system cannot give a range of a shared object's pages back");
}
