/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/cpus.c -- the CPUs this process may run on: its affinity mask
 * (sched_getaffinity, which taskset and cpuset cgroups narrow), less what the CPU quota of
 * its cgroup allows (cpu.max, as a container's --cpus sets it).  A populate over more threads
 * than that would only queue them behind each other.
 */
#include <sched.h>
#include <unistd.h>

#include "linux/linux.h"

unsigned hpshm__port_cpus_usable(void)
{
	cpu_set_t set;
	unsigned n = 0, quota;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = (unsigned)CPU_COUNT(&set);
	if (n == 0) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		n = online > 0 ? (unsigned)online : 1u;
	}
	quota = hpshm__linux_cgroup_cpus();
	if (quota != 0 && quota < n)
		n = quota;
	return n;
}
