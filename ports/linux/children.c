/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/children.c -- ports/facts.h's hpshm__os_children_mapping() on Linux: which
 * children of this process map an address (doc/architecture.md, "Inside ports/").
 *
 * The interposer asks it in its destructor, at a process's exit, to tell whether a region it
 * made lives on in a child (a daemon's first process forks the server and exits).  So it
 * allocates nothing and uses no stdio stream: the directory is read with getdents64 itself
 * (opendir() allocates), and each file through open() and read() into stack buffers.  A
 * process's children are listed per thread, in /proc/self/task/TID/children (the kernel
 * counts a child as the thread's that forked it); each child's /proc/PID/maps says whether
 * it still has a mapping starting at the address.  Paths are read under the sysroot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "facts.h"
#include "linux/linux.h"

/*
 * A line reader over read(): a maps file can be long (a server with many libraries has
 * hundreds of VMAs), so lines are taken one at a time from a stack buffer.  A line longer
 * than the buffer (a path name) is skipped whole.
 */
struct children_lines {
	int    fd;           /* the file */
	char   buf[4096];    /* bytes read, not yet returned */
	size_t start, end;   /* the unread part of buf */
	int    eof;          /* read() returned 0 or failed */
};

/* Read more of the file into buf, keeping its unread part; sets eof at its end. */
static void children_fill(struct children_lines *l)
{
	ssize_t n;

	if (l->start == 0 && l->end == sizeof(l->buf) - 1) {
		l->end = 0; /* an overlong line: drop what we have, keep reading to its end */
	} else {
		memmove(l->buf, l->buf + l->start, l->end - l->start);
		l->end -= l->start;
	}
	l->start = 0;
	do
		n = read(l->fd, l->buf + l->end, sizeof(l->buf) - 1 - l->end);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		l->eof = 1;
	else
		l->end += (size_t)n;
}

static const char *children_next(struct children_lines *l)
{
	for (;;) {
		char *nl = memchr(l->buf + l->start, '\n', l->end - l->start);

		if (nl) {
			const char *line = l->buf + l->start;

			*nl = '\0';
			l->start = (size_t)(nl - l->buf) + 1;
			return line;
		}
		if (l->eof)
			return NULL;
		children_fill(l);
	}
}

/* Open path under the sysroot, read-only and close-on-exec (flags added): a descriptor, or -1. */
static int children_open(const char *path, int flags)
{
	char full[4096];
	int n = snprintf(full, sizeof(full), "%s%s", hpshm__linux_sysroot(), path);

	if (n < 0 || (size_t)n >= sizeof(full))
		return -1;
	return open(full, O_RDONLY | O_CLOEXEC | flags);
}

/* Does /proc/PID/maps have a mapping that starts at addr? */
static int children_maps_has(long pid, uintptr_t addr)
{
	struct children_lines l;
	const char *line;
	char path[64];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	l.fd = children_open(path, 0);
	if (l.fd < 0)
		return 0;
	l.start = l.end = 0;
	l.eof = 0;
	while (!found && (line = children_next(&l)) != NULL) {
		unsigned long lo;

		found = sscanf(line, "%lx-", &lo) == 1 && (uintptr_t)lo == addr;
	}
	close(l.fd);
	return found;
}

/* The children one thread of this process made (/proc/self/task/TID/children) that map addr. */
static int children_of_thread(const char *tid, uintptr_t addr, long *out, int n, int max)
{
	char path[96], buf[4096];
	const char *p = buf;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/children", tid);
	fd = children_open(path, 0);
	if (fd < 0)
		return n;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	while (*p && n < max) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0 && children_maps_has(pid, addr))
			out[n++] = pid;
		p = end;
	}
	return n;
}

/* One entry of getdents64(), as the kernel lays it out. */
struct children_dirent {
	uint64_t       ino;     /* inode number */
	int64_t        off;     /* offset of the next entry */
	unsigned short reclen;  /* length of this entry */
	unsigned char  type;    /* file type */
	char           name[];  /* NUL-terminated name */
};

int hpshm__os_children_mapping(const void *addr, long *out, int max)
{
	_Alignas(8) char buf[4096];
	int fd = children_open("/proc/self/task", O_DIRECTORY), n = 0;
	long got;

	if (fd < 0 || out == NULL || max <= 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < got;) {
			const struct children_dirent *d = (const struct children_dirent *)(void *)(buf + off);

			if (d->name[0] >= '0' && d->name[0] <= '9')
				n = children_of_thread(d->name, (uintptr_t)addr, out, n, max);
			off += d->reclen;
		}
	close(fd);
	return n;
}
