/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/sys.c -- the POSIX system call table backends and ports call through (hpshm__posix_sys).
 *
 * Every entry starts out as the real call; a test replaces one entry to make it fail with
 * the errno it wants (EPERM, ENOMEM, EINVAL, ENODEV, ENOSPC) and hpshm__posix_sys_reset() puts the
 * real calls back.  SQLite's aSyscall[] does the same for its VFS.
 *
 * Most entries are the libc functions themselves, since their prototypes match the table's.
 * These are wrapped:
 *   - open(), openat() and fcntl() are variadic in libc, and a variadic function cannot sit
 *     in a pointer of a fixed-argument type; the wrappers always pass the last argument
 *     (every fcntl() command we use takes an int or ignores it).
 *   - fopen() cannot make its descriptor close-on-exec in POSIX.1-2008 (the "e" of the mode
 *     is a glibc and BSD extension), so the wrapper opens with O_CLOEXEC and fdopen()s: a
 *     program a server starts never inherits a file hpshm was reading.
 *
 *   - getpwuid_r() is bound weakly with glibc (below), so a static program is not handed
 *     glibc's NSS.
 *
 * The table is written only by tests, while no segment is being created: no locking.
 */
#include "posix/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "port.h"

static int sys_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags, mode);
}

static int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat(dirfd, path, flags, mode);
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
 * hpshm looks a user up only to name them in a message ("uid 1000 (alice)").  glibc answers
 * getpwuid_r() through NSS, which loads shared modules at run time even into a static program
 * (and they must come from the very glibc it was linked with), so its linker warns every static
 * program that links the call; a server linking libhpshm.a statically should not inherit that
 * for a message.  So with glibc the call is referenced weakly: a dynamic program binds it as
 * ever, and a static one has it only when something else in the program links it; otherwise
 * the lookup fails with ENOSYS and the message gives the uid alone.  Other C libraries (musl
 * reads /etc/passwd itself) link it as usual.
 */
#ifdef __GLIBC__
extern int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len, struct passwd **res)
	__attribute__((weak));
#endif

static int sys_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len, struct passwd **res)
{
#ifdef __GLIBC__
	if (!getpwuid_r) {
		*res = NULL;
		return ENOSYS;
	}
#endif
	return getpwuid_r(uid, pw, buf, len, res);
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
		.getpwuid_r   = sys_getpwuid_r, \
		.openat       = sys_openat,     \
		.mkdirat      = mkdirat,        \
		.renameat     = renameat,       \
		.unlinkat     = unlinkat,       \
		.fstatat      = fstatat,        \
	}

struct hpshm__syscalls hpshm__posix_sys = SYS_REAL_CALLS;

void hpshm__posix_sys_reset(void)
{
	static const struct hpshm__syscalls real = SYS_REAL_CALLS;

	hpshm__posix_sys = real;
}

FILE *hpshm__port_fopen(const char *path, const char *mode)
{
	return hpshm__posix_sys.fopen(path, mode);
}
