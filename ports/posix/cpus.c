/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/cpus.c -- the CPUs this process may run on, as far as POSIX can tell: the
 * online ones (sysconf), with no affinity mask or CPU quota to narrow them (Linux:
 * ports/linux/cpus.c).
 */
#include <unistd.h>

#include "port.h"

unsigned hpshm__port_cpus_usable(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1u;
}
