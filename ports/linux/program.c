/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/program.c -- ports/process.h on Linux: this program's path (/proc/self/exe),
 * dying with its parent (PR_SET_PDEATHSIG), and the far address the library would pick.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "linux/linux.h"
#include "process.h"

int hpshm__os_program_path(char *buf, size_t len)
{
	ssize_t n;

	if (buf == NULL || len < 2)
		return HPSHM_EINVAL;
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return HPSHM_EUNAVAILABLE; /* no /proc, or a path that may have been cut */
	buf[n] = '\0';
	return 0;
}

int hpshm__os_die_with_parent(void)
{
	return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : HPSHM_ENOTSUP;
}

int hpshm__os_far_address(size_t len, size_t align, void **out)
{
	return hpshm__port_pick_address(len, align, out);
}
