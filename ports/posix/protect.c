/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/protect.c -- a range of a mapping made accessible or not, in this process
 * (port.h): mprotect().  What a resizable segment does with the part of its reservation that
 * is past its published size (core/resize.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "port.h"

int hpshm__port_protect(void *addr, size_t len, int writable, hpshm_error *err)
{
	char sz[32];

	if (mprotect(addr, len, writable ? PROT_READ | PROT_WRITE : PROT_NONE) == 0)
		return 0;
	return hpshm_error_set(err, HPSHM_ESYS, errno, "mprotect", NULL, "could not make %s at %p %s: %s",
			       hpshm_size_format(len, sz, sizeof(sz)), addr, writable ? "accessible" : "inaccessible",
			       strerror(errno));
}
