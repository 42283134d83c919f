/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/identity.c -- who a process is, with POSIX alone: no start times and no boot id
 * (so `hpshm gc` keeps what it cannot prove dead), nonces from /dev/urandom, and a getenv
 * that a privileged program does not trust.
 *
 * A per-concern fallback CMake picks where no OS folder applies (doc/architecture.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "port.h"
#include "posix/posix.h"

uint64_t hpshm__port_process_start(long long pid)
{
	(void)pid;
	return 0;
}

int hpshm__port_process_alive(long long pid, uint64_t start)
{
	(void)start;
	if (pid <= 0)
		return 0;
	/* Without start times a live pid may be a recycled one: "cannot tell", which keeps. */
	return kill((pid_t)pid, 0) == 0 || errno == EPERM ? -1 : 0;
}

int hpshm__port_boot_id(char *buf, size_t len)
{
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	return HPSHM_ENOTSUP;
}

uint64_t hpshm__port_random64(void)
{
	return hpshm__posix_random64();
}

const char *hpshm__port_getenv(const char *name)
{
	/* POSIX has no AT_SECURE: a program whose ids differ from its caller's is privileged. */
	if (getuid() != geteuid() || getgid() != getegid())
		return NULL;
	return getenv(name);
}
