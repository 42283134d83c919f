/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/process.c -- who created a segment, in which boot, and where to put it.
 *
 * A pid alone does not identify a process: pids are recycled, and a crashed creator's pid may
 * belong to an unrelated process by the time `hpshm gc` looks.  The pair (pid, start time) does,
 * within one boot; the boot id tells boots apart.  The start time is field 22 of
 * /proc/<pid>/stat, in clock ticks since boot; the command name before it is in parentheses
 * and may itself contain spaces and parentheses, so fields are counted after the last ')'.
 *
 * Address choice for re-attach: on x86-64 the kernel places mmap()s top-down from just below
 * the stack (about 0x7fxx_xxxx_xxxx, randomised over about 1 TiB), and the heap sits low,
 * after the executable.  A segment placed around 0x6000_0000_0000 (96 TiB) is far from both,
 * so a freshly exec'd child -- whose libraries and stacks land near its own mmap base -- is
 * very unlikely to have anything there.  Smaller address spaces get hints of their own
 * (ports/posix/process.c): 32-bit processes load their libraries top-down from just below
 * the stack, at a random place in each process, where the kernel's own choice would put the
 * segment too.  The reservation goes through the system call table like every mapping.
 *
 * Nonces come from getrandom(); the trusted getenv is libc's secure_getenv(), which follows the
 * kernel's AT_SECURE flag.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "linux/linux.h"
#include "posix/posix.h"
#include "posix/sys.h"

/*
 * The start time of pid: 0 with *start set; ESRCH when /proc has no such process; EIO when
 * its stat could not be read or parsed, which says nothing about whether it runs (a short
 * read, a file out of format, no descriptor left).
 */
static int process_start_read(long long pid, uint64_t *start)
{
	char path[64], buf[1024];
	const char *p;
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	errno = 0;
	if (hpshm__linux_read_file(path, buf, sizeof(buf)) <= 0)
		return errno == ENOENT || errno == ESRCH ? ESRCH : EIO;
	p = strrchr(buf, ')');
	if (!p)
		return EIO;
	/* After ") " come fields 3 (state) .. 22 (starttime): skip 19 fields. */
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return EIO;
	*start = (uint64_t)v;
	return 0;
}

uint64_t hpshm__port_process_start(long long pid)
{
	uint64_t start = 0;

	return process_start_read(pid, &start) == 0 ? start : 0;
}

int hpshm__port_process_alive(long long pid, uint64_t start)
{
	uint64_t now = 0;
	int e;

	if (pid <= 0)
		return 0;
	e = process_start_read(pid, &now);
	if (e == ESRCH)
		return 0; /* no /proc/<pid>: gone (or another pid namespace: then -1 would be honest,
			   * but a creator in another namespace is also not ours to keep) */
	/* A stat that could not be read is no proof of death: a resizable segment's owner frees
	 * the slot of a process it calls dead and gives back pages that process may still touch. */
	if (e != 0 || start == 0)
		return -1;
	return now == start;
}

int hpshm__port_boot_id(char *buf, size_t len)
{
	long n = hpshm__linux_read_file("/proc/sys/kernel/random/boot_id", buf, len);

	if (n <= 0)
		return HPSHM_EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Does /proc/self/maps show anything in [at, at + len)?  Unreadable maps say nothing. */
static int pick_busy(uintptr_t at, size_t len)
{
	char line[256];

	return hpshm__port_maps_line((const void *)at, len, line, sizeof(line)) == 0;
}

int hpshm__port_pick_address(size_t len, size_t align, void **out)
{
	if (align == 0 || (align & (align - 1)) || len > SIZE_MAX - align)
		return HPSHM_EINVAL;
	return hpshm__posix_pick_address(len, align, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, pick_busy, out);
}

uint64_t hpshm__port_random64(void)
{
	uint64_t v = 0;

	/* GRND_NONBLOCK: early in boot the pool may not be ready, and a nonce must not wait
	 * for it; /dev/urandom or the clock then do (ports/posix/random.c). */
	if (hpshm__linux_sys.getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	return hpshm__posix_random64();
}

const char *hpshm__port_getenv(const char *name)
{
	/* glibc and musl answer NULL when the kernel says AT_SECURE: setuid, setgid, or file
	 * capabilities, which a uid comparison alone would miss. */
	return hpshm__linux_sys.secure_getenv(name);
}

int hpshm__posix_can_end_with_parent(void)
{
	return 1;
}

/*
 * The kernel sends the signal when the thread that forked us ends (not the whole process:
 * hpshm.h says so); a parent that was gone before the prctl() left us with another parent
 * (init or a subreaper), which getppid() shows.
 */
int hpshm__posix_end_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	if (getppid() != parent)
		_exit(127); /* nobody is left to read our error */
	return 0;
}
