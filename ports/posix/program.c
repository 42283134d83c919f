/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/program.c -- ports/process.h where no OS folder applies: POSIX names no file a
 * program runs from and cannot tie a child's life to its parent's; the far address is the
 * library's own choice.
 */
#include "hpshm.h"
#include "port.h"
#include "process.h"

int hpshm__os_program_path(char *buf, size_t len)
{
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return HPSHM_EUNAVAILABLE;
}

int hpshm__os_die_with_parent(void)
{
	return HPSHM_ENOTSUP;
}

int hpshm__os_far_address(size_t len, size_t align, void **out)
{
	return hpshm__port_pick_address(len, align, out);
}
