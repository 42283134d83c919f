/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/pages_none.c -- the page facts of a system hpshm knows no huge pages of: no huge
 * page sizes, and nothing verified.
 *
 * One of the per-concern fallbacks of ports/posix/ that CMake picks where no OS folder does
 * better (doc/architecture.md); ports/freebsd/pages.c replaces this file on FreeBSD.
 */
#include <assert.h>
#include <stddef.h>

#include "port.h"

int hpshm__port_huge_page_sizes(size_t *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}

size_t hpshm__port_default_huge_page_size(void)
{
	return 0;
}

int hpshm__port_verify_backing(void *addr, size_t len, struct hpshm__port_handle h, struct hpshm__backing *out)
{
	(void)addr;
	(void)len;
	(void)h;
	assert(out != NULL);
	out->page_size = 0;
	out->huge = 0;
	hpshm__strlcpy(out->source, "unverified", sizeof(out->source));
	return HPSHM_EUNAVAILABLE;
}
