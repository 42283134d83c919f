/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/parent_none.c -- the fallback for ending a child with its parent: POSIX has no
 * parent-death signal, so a POSIX system without an OS file of its own (FreeBSD's procctl
 * PROC_PDEATHSIG_CTL would be one) cannot do it, and hpshm_child_spawn_ex() refuses
 * HPSHM_SPAWN_KILL_WITH_PARENT there before starting anything (posix.h).
 */
#include <errno.h>
#include <sys/types.h>

#include "port.h"
#include "posix/posix.h"

int hpshm__posix_can_end_with_parent(void)
{
	return 0;
}

int hpshm__posix_end_with_parent(pid_t parent)
{
	(void)parent;
	errno = ENOSYS;
	return -1;
}
