/*
 * ports/posix/sys.c -- the system call table backends and ports call through (hpshm__sys).
 *
 * Every entry starts out as the real call; a test replaces one entry to make it fail with
 * the errno it wants (EPERM, ENOMEM, EINVAL, ENODEV, ENOSPC) and hpshm__sys_reset() puts the
 * real calls back.  SQLite's aSyscall[] does the same for its VFS.
 *
 * Most entries are the libc functions themselves, since their prototypes match the table's.
 * Three are wrapped:
 *   - open() and fcntl() are variadic in libc, and a variadic function cannot sit in a
 *     pointer of a fixed-argument type; the wrappers always pass the third argument (every
 *     fcntl() command we use takes an int or ignores it).
 *   - memfd_create() went into glibc only in 2.27 and into musl in 1.1.20, while the system
 *     call exists since Linux 3.17; calling it through syscall() works with any libc.
 *     Where the kernel lacks it the caller sees ENOSYS, its cue to try another provider.
 * fallocate() and flock() are in every libc we build with (glibc, musl), and libc's
 * fallocate already maps a 64-bit off_t onto the system call's arguments on 32-bit targets.
 *
 * The table is written only by tests, while no segment is being created: no locking.
 */
#include "posix/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags, mode);
}

static int sys_fcntl(int fd, int cmd, int arg)
{
	return fcntl(fd, cmd, arg);
}

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

/*
 * The real calls, written once: the table is initialised from this list and reset to it,
 * so the two can never disagree.
 */
#define SYS_REAL_CALLS                          \
	{                                       \
		.mmap         = mmap,           \
		.munmap       = munmap,         \
		.madvise      = madvise,        \
		.shmget       = shmget,         \
		.shmat        = shmat,          \
		.shmdt        = shmdt,          \
		.shmctl       = shmctl,         \
		.memfd_create = sys_memfd_create, \
		.open         = sys_open,       \
		.close        = close,          \
		.ftruncate    = ftruncate,      \
		.fallocate    = fallocate,      \
		.unlink       = unlink,         \
		.fstatfs      = fstatfs,        \
		.flock        = flock,          \
		.fstat        = fstat,          \
		.pread        = pread,          \
		.fcntl        = sys_fcntl,      \
		.shm_open     = shm_open,       \
		.shm_unlink   = shm_unlink,     \
		.kill         = kill,           \
		.fchmod       = fchmod,         \
		.linkat       = linkat,         \
		.secure_getenv = secure_getenv, \
	}

struct hpshm__syscalls hpshm__sys = SYS_REAL_CALLS;

void hpshm__sys_reset(void)
{
	static const struct hpshm__syscalls real = SYS_REAL_CALLS;

	hpshm__sys = real;
}

unsigned hpshm__huge_bits(size_t page_size)
{
	unsigned log2 = 0;

	if (page_size == 0 || (page_size & (page_size - 1)) != 0)
		return 0;
	while ((page_size >>= 1) != 0)
		log2++;
	return log2 << HPSHM__HUGE_SHIFT;
}
