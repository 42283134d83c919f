/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/sys.c -- the POSIX system call table backends and ports call through (hpshm__sys).
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
 *   - fopen() cannot make its descriptor close-on-exec in POSIX.1-2008 (the "e" of the mode
 *     is a glibc and BSD extension), so the wrapper opens with O_CLOEXEC and fdopen()s: a
 *     program a server starts never inherits a file hpshm was reading.
 *
 * The table is written only by tests, while no segment is being created: no locking.
 */
#include "posix/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "port.h"

static int sys_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags, mode);
}

static int sys_fcntl(int fd, int cmd, int arg)
{
	return fcntl(fd, cmd, arg);
}

static FILE *sys_fopen(const char *path, const char *mode)
{
	int flags, fd, saved;
	FILE *f;

	switch (mode[0]) {
	case 'r':
		flags = strchr(mode, '+') ? O_RDWR : O_RDONLY;
		break;
	case 'w':
		flags = (strchr(mode, '+') ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = (strchr(mode, '+') ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, flags | O_CLOEXEC, 0666);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (f == NULL) {
		saved = errno;
		(void)close(fd);
		errno = saved;
	}
	return f;
}

/*
 * The real calls, written once: the table is initialised from this list and reset to it,
 * so the two can never disagree.
 */
#define SYS_REAL_CALLS                          \
	{                                       \
		.mmap         = mmap,           \
		.munmap       = munmap,         \
		.shmget       = shmget,         \
		.shmat        = shmat,          \
		.shmdt        = shmdt,          \
		.shmctl       = shmctl,         \
		.open         = sys_open,       \
		.close        = close,          \
		.ftruncate    = ftruncate,      \
		.unlink       = unlink,         \
		.flock        = flock,          \
		.fstat        = fstat,          \
		.stat         = stat,           \
		.pread        = pread,          \
		.fcntl        = sys_fcntl,      \
		.shm_open     = shm_open,       \
		.shm_unlink   = shm_unlink,     \
		.kill         = kill,           \
		.fchmod       = fchmod,         \
		.linkat       = linkat,         \
		.fopen        = sys_fopen,      \
		.readlink     = readlink,       \
	}

struct hpshm__syscalls hpshm__sys = SYS_REAL_CALLS;

void hpshm__sys_reset(void)
{
	static const struct hpshm__syscalls real = SYS_REAL_CALLS;

	hpshm__sys = real;
}

FILE *hpshm__fopen(const char *path, const char *mode)
{
	return hpshm__sys.fopen(path, mode);
}
