/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/process.c -- starting and waiting for a child by fork and exec.
 *
 * The child keeps exactly the descriptors the segment needs: their close-on-exec flag is
 * cleared between fork and exec, in the child only, so the parent's other threads never see
 * a descriptor without the flag (a plain fcntl in the parent would leak it into every other
 * program the parent's threads start meanwhile).  Between fork and exec the child calls only
 * async-signal-safe functions, because the parent may be multi-threaded.
 *
 * A program named without a '/' is looked up in PATH by the parent, before the fork, as
 * execvp() would (PATH unset: the system's default path from confstr(_CS_PATH)): the search
 * needs getenv() and string work, which have no place between fork and exec, and POSIX.1-2008
 * has no execvpe() to do it with a chosen environment.  As with execvp(), a file that is found
 * but cannot be run is skipped and EACCES reported only if nothing runs; unlike execvp(), a
 * file the kernel does not know how to run (ENOEXEC: a script without "#!") is an error
 * rather than handed to /bin/sh.
 *
 * A failed exec is reported back through a close-on-exec pipe: the parent reads either EOF
 * (exec succeeded and closed the pipe) or the child's errno.  So a missing program is an
 * error from hpshm_child_spawn(), not a child that mysteriously exits 127.  POSIX.1-2008 has no
 * pipe2(), so the pipe is made close-on-exec by fcntl() right after pipe(): a program another
 * thread starts in that window of a few instructions would keep the write end, and our read
 * would wait until that program exits or execs again.
 *
 * A child that must end with its parent (hpshm_child_spawn_ex()'s HPSHM_SPAWN_KILL_WITH_PARENT)
 * is set up for it between fork and exec by the OS folder (posix.h: Linux's PR_SET_PDEATHSIG,
 * which survives exec); a system that cannot do it refuses the flag before starting anything
 * rather than start a child that outlives the server.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port.h"
#include "posix/posix.h"
#include "posix/sys.h"

#ifdef HPSHM_COVERAGE
void __gcov_dump(void);   /* libgcov, in a --coverage build only */
#endif

#define PROCESS_PATH_MAX 4096 /* a program's full path; a longer PATH entry is skipped, as by execvp */

extern char **environ;

long long hpshm__port_getpid(void)
{
	return (long long)getpid();
}

/*
 * The start time is kept with the pid it was read for: a child made by fork() (or any clone)
 * has another pid, so its first call reads its own.  Only a descendant that got the very pid
 * of an ancestor, gone meanwhile, and whose forebears since never asked, could read the
 * ancestor's: the kernel hands a pid out again only after its whole range (pid_max) went by.
 * The start is stored before the pid, released, so a thread that sees the pid sees its start.
 */
static _Atomic uint64_t self_start;
static _Atomic long long self_pid;

long long hpshm__port_self(uint64_t *start)
{
	long long pid = hpshm__port_getpid();

	if (atomic_load_explicit(&self_pid, memory_order_acquire) == pid) {
		*start = atomic_load_explicit(&self_start, memory_order_relaxed);
		return pid;
	}
	*start = hpshm__port_process_start(pid);
	atomic_store_explicit(&self_start, *start, memory_order_relaxed);
	atomic_store_explicit(&self_pid, pid, memory_order_release);
	return pid;
}

/* Is path an executable regular file for this process's effective ids?  0, or an errno. */
static int process_runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno;
	if (!S_ISREG(st.st_mode))
		return EACCES;
	return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0 ? 0 : errno;
}

/*
 * The file execvp() would run for name: name itself when it holds a '/', else the first
 * executable regular file of that name in PATH's directories (an empty entry is the current
 * directory).  0 with full set, or an errno: ENOENT found nowhere, EACCES found but not
 * runnable, ENAMETOOLONG.
 */
static int process_find(const char *name, char *full, size_t len)
{
	char defpath[512];
	const char *path, *dir, *end;
	int e, seen = ENOENT;
	size_t dirlen, n;

	if (name[0] == '\0')
		return ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= len)
			return ENAMETOOLONG;
		memcpy(full, name, strlen(name) + 1);
		return 0;
	}
	path = getenv("PATH");
	if (path == NULL) {
		n = confstr(_CS_PATH, defpath, sizeof(defpath));
		path = n > 0 && n <= sizeof(defpath) ? defpath : "/bin:/usr/bin";
	}
	for (dir = path;; dir = end + 1) {
		end = strchr(dir, ':');
		if (end == NULL)
			end = dir + strlen(dir);
		dirlen = (size_t)(end - dir);
		if (dirlen + 1 + strlen(name) < len) {
			if (dirlen == 0)
				snprintf(full, len, "%s", name);
			else
				snprintf(full, len, "%.*s/%s", (int)dirlen, dir, name);
			e = process_runnable(full);
			if (e == 0)
				return 0;
			if (e == EACCES)
				seen = EACCES; /* keep looking, as execvp does, but say why if nothing runs */
		}
		if (*end == '\0')
			return seen;
	}
}

/* pipe() with both ends close-on-exec: 0, or -1 with errno set. */
static int process_pipe(int fd[2])
{
	if (pipe(fd) < 0)
		return -1;
	/* F_SETFD fails only with EBADF, and pipe() has just made both descriptors. */
	(void)fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(fd[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

int hpshm__port_spawn(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit, int ninherit,
		 const void *reserve, size_t reserve_len, struct hpshm__process *child, hpshm_error *err)
{
	return hpshm__port_spawn_ex(path, argv, envp, inherit, ninherit, reserve, reserve_len, 0, child, err);
}

int hpshm__port_spawn_ex(const char *path, char *const argv[], char *const envp[], const intptr_t *inherit,
			 int ninherit, const void *reserve, size_t reserve_len, unsigned flags,
			 struct hpshm__process *child, hpshm_error *err)
{
	char full[PROCESS_PATH_MAX];
	int pipefd[2], child_errno = 0, saved;
	pid_t parent = getpid();
	ssize_t n;
	pid_t p;

	/* exec replaces the address space: nothing can be reserved in the new image from here. */
	(void)reserve;
	(void)reserve_len;
	if ((flags & HPSHM__SPAWN_KILL_WITH_PARENT) && !hpshm__posix_can_end_with_parent())
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
				       "end the workers from the server's own shutdown path, or have them watch it",
				       "cannot start %s to end with this process: this system has no parent-death "
				       "signal (Linux PR_SET_PDEATHSIG) and no job objects (Windows)", path);
	saved = process_find(path, full, sizeof(full));
	if (saved != 0)
		return hpshm_error_set(err, HPSHM_ESYS, saved, "execve",
				       strchr(path, '/') ? "check the program's path" :
				       "give the program's full path, or add its directory to PATH",
				       "cannot run %s: %s%s", path, strerror(saved),
				       strchr(path, '/') ? "" : " (searched PATH)");
	if (process_pipe(pipefd) < 0) {
		saved = errno;
		return hpshm_error_set(err, HPSHM_ESYS, saved, "pipe", "raise the descriptor limit (ulimit -n)",
				       "cannot create the spawn pipe: %s", strerror(saved));
	}
	p = fork();
	if (p < 0) {
		saved = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fork", "check the process limit (ulimit -u) and memory",
				       "cannot fork: %s", strerror(saved));
	}
	if (p == 0) {
		for (int i = 0; i < ninherit; i++) {
			int fd = (int)inherit[i], fl = fcntl(fd, F_GETFD);

			if (fl >= 0)
				(void)fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
		}
		if (!(flags & HPSHM__SPAWN_KILL_WITH_PARENT) || hpshm__posix_end_with_parent(parent) == 0)
			execve(full, argv, envp ? envp : environ);
		child_errno = errno;
		n = write(pipefd[1], &child_errno, sizeof(child_errno));
		(void)n;
#ifdef HPSHM_COVERAGE
		__gcov_dump();   /* _exit() writes no coverage data (scripts/coverage.sh) */
#endif
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		return hpshm_error_set(err, HPSHM_ESYS, child_errno, "execve", "check the program's path and permissions",
				       "cannot run %s: %s", full, strerror(child_errno));
	}
	child->pid = (long long)p;
	child->handle = 0;
	return 0;
}

int hpshm__port_wait(struct hpshm__process *child, int *status, hpshm_error *err)
{
	long long pid = child->pid;
	int st, saved;

	while (waitpid((pid_t)pid, &st, 0) < 0) {
		if (errno == EINTR)
			continue;
		saved = errno;
		return hpshm_error_set(err, HPSHM_ESYS, saved, "waitpid", NULL, "cannot wait for process %lld: %s", pid,
				       strerror(saved));
	}
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int hpshm__posix_pick_address(size_t len, size_t align, int flags, int fd, int (*busy)(uintptr_t at, size_t len),
			      void **out)
{
	/* Best first; the 64-bit ones are left out where a pointer cannot hold them.  80 TiB is
	 * for a program whose 96 TiB is taken: AddressSanitizer keeps its allocator there and its
	 * shadow gap over 256 GiB, and without it a sanitized server's segments went where the
	 * kernel chose, among the libraries of the children that re-attach them. */
	static const unsigned long long hints[] = { 0x600000000000ULL, 0x500000000000ULL, 0x4000000000ULL,
						    0x10000000ULL };
	size_t span = len + align;
	uintptr_t a;
	void *p = MAP_FAILED;

	/* Reserve a span with room to align, then give it back: the provider maps there with
	 * an exclusive fixed mapping, which fails rather than clobber whatever another thread
	 * might map in between. */
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if (hints[i] > UINTPTR_MAX || hints[i] > UINTPTR_MAX - span)
			continue;
		if (busy && busy((uintptr_t)hints[i], span))
			continue;
		p = hpshm__posix_sys.mmap((void *)(uintptr_t)hints[i], span, PROT_NONE, flags, fd, 0);
		if (p == MAP_FAILED || (uintptr_t)p == (uintptr_t)hints[i])
			break;
		(void)hpshm__posix_sys.munmap(p, span); /* placed elsewhere: try the next hint */
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)
		p = hpshm__posix_sys.mmap(NULL, span, PROT_NONE, flags, fd, 0);
	if (p == MAP_FAILED)
		return HPSHM_ENOMEM;
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	(void)hpshm__posix_sys.munmap(p, span);
	*out = (void *)a;
	return 0;
}

int hpshm__port_reservation_release(void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return 0; /* hpshm__port_spawn() reserves nothing on POSIX */
}

int hpshm__port_child_prepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *handles,
			      int n, intptr_t *out, hpshm_error *err)
{
	(void)process;
	(void)reserve;
	(void)reserve_len;
	(void)handles;
	(void)n;
	(void)out;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL,
			       "call hpshm_segment_inherit() in the forked child before its exec, or use "
			       "hpshm_child_spawn()",
			       "hpshm_child_prepare: a POSIX process cannot be prepared from outside before it runs "
			       "(exec replaces its address space)");
}

void hpshm__port_child_unprepare(intptr_t process, const void *reserve, size_t reserve_len, const intptr_t *out,
				 int n)
{
	(void)process;
	(void)reserve;
	(void)reserve_len;
	(void)out;
	(void)n;
}

char **hpshm__port_environ(void)
{
	return environ;
}

/* Set (inherit 0) or clear (1) descriptor handle's close-on-exec flag.  0, or an error. */
static int process_cloexec(intptr_t handle, int inherit, hpshm_error *err)
{
	int fd = (int)handle, fl, saved;

	if (handle < 0 || (intptr_t)fd != handle)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "%lld is not a descriptor", (long long)handle);
	fl = hpshm__posix_sys.fcntl(fd, F_GETFD, 0);
	if (fl < 0 || hpshm__posix_sys.fcntl(fd, F_SETFD, inherit ? fl & ~FD_CLOEXEC : fl | FD_CLOEXEC) < 0) {
		saved = errno;
		return hpshm_error_set(err, HPSHM_ESYS, saved, "fcntl", NULL, "cannot %s descriptor %d: %s",
				       inherit ? "keep open across exec" : "close on exec", fd, strerror(saved));
	}
	return 0;
}

int hpshm__port_handle_inheritable(intptr_t handle, hpshm_error *err)
{
	return process_cloexec(handle, 1, err);
}

int hpshm__port_handle_private(intptr_t handle, hpshm_error *err)
{
	return process_cloexec(handle, 0, err);
}
