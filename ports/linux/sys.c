/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/sys.c -- the Linux system call table (hpshm__linux_sys): the calls POSIX lacks.
 *
 * It works like the POSIX table (posix/sys.c): every entry starts out as the real call, a
 * test replaces one to inject a failure, and hpshm__linux_sys_reset() puts the real calls
 * back.  Two entries are wrapped:
 *   - memfd_create() went into glibc only in 2.27 and into musl in 1.1.20, and getrandom()
 *     into glibc in 2.25, while the system calls exist since Linux 3.17; calling them through
 *     syscall() works with any libc.  Where the kernel lacks one the caller sees ENOSYS, its
 *     cue to try another provider (memfd) or another source of bits (getrandom).
 * fallocate(), madvise(), fstatfs() and statfs() are in every libc we build with (glibc,
 * musl), and libc's fallocate already maps a 64-bit off_t onto the system call's arguments
 * on 32-bit targets.  secure_getenv() is no system call, but its answer depends on how the
 * kernel started us (AT_SECURE), which a test cannot arrange: the table lets it pretend.
 * procmap_query is ioctl(PROCMAP_QUERY), which kernels before 6.11 answer ENOTTY: a test
 * answers so on any kernel to reach the smaps fallback (verify.c).
 *
 * The table is written only by tests, while no segment is being created: no locking.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux.h"

static int sys_memfd_create(const char *name, unsigned flags)
{
#ifdef SYS_memfd_create
	return (int)syscall(SYS_memfd_create, name, flags);
#else
	(void)name;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

static ssize_t sys_getrandom(void *buf, size_t len, unsigned flags)
{
#ifdef SYS_getrandom
	return (ssize_t)syscall(SYS_getrandom, buf, len, flags);
#else
	(void)buf;
	(void)len;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * mbind, move_pages and getcpu have no wrapper in glibc (libnuma's numaif.h declares the first
 * two) and getcpu only since glibc 2.29: syscall() works everywhere.  A kernel built without
 * NUMA answers ENOSYS, which numa.c reports as "cannot place".
 */
static long sys_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
		      unsigned flags)
{
#ifdef SYS_mbind
	return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
#else
	(void)addr, (void)len, (void)mode, (void)nodemask, (void)maxnode, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

static long sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
#ifdef SYS_move_pages
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
#else
	(void)pid, (void)count, (void)pages, (void)nodes, (void)status, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

static int sys_getcpu(unsigned *cpu, unsigned *node)
{
#ifdef SYS_getcpu
	return (int)syscall(SYS_getcpu, cpu, node, NULL);
#else
	(void)cpu, (void)node;
	errno = ENOSYS;
	return -1;
#endif
}

static int sys_sched_setaffinity(int pid, size_t size, const void *mask)
{
	return sched_setaffinity((pid_t)pid, size, (const cpu_set_t *)mask);
}

/*
 * PROCMAP_QUERY is _IOWR('f', 17, struct procmap_query): 0xC0686611 where _IOWR is x86's.
 * Through syscall(): glibc's ioctl() takes the request as unsigned long and musl's as int,
 * which cannot hold it without a warning.
 */
_Static_assert(sizeof(struct hpshm__procmap_query) == 104, "struct procmap_query is 104 bytes in every ABI");

static int sys_procmap_query(int fd, struct hpshm__procmap_query *q)
{
	return (int)syscall(SYS_ioctl, fd, (unsigned long)_IOWR('f', 17, struct hpshm__procmap_query), q);
}

/* The real calls, written once, as in posix/sys.c. */
#define LINUX_REAL_CALLS                          \
	{                                         \
		.memfd_create = sys_memfd_create, \
		.fallocate    = fallocate,        \
		.madvise      = madvise,          \
		.fstatfs      = fstatfs,          \
		.statfs       = statfs,           \
		.getrandom    = sys_getrandom,    \
		.secure_getenv = secure_getenv,   \
		.mbind        = sys_mbind,        \
		.move_pages   = sys_move_pages,   \
		.getcpu       = sys_getcpu,       \
		.sched_setaffinity = sys_sched_setaffinity, \
		.procmap_query = sys_procmap_query, \
	}

struct hpshm__linux_syscalls hpshm__linux_sys = LINUX_REAL_CALLS;

void hpshm__linux_sys_reset(void)
{
	static const struct hpshm__linux_syscalls real = LINUX_REAL_CALLS;

	hpshm__linux_sys = real;
}
