/*
 * ports/posix/process.c -- starting and waiting for a child by fork and exec, and nonces.
 *
 * The child keeps exactly the descriptors the segment needs: their close-on-exec flag is
 * cleared between fork and exec, in the child only, so the parent's other threads never see
 * a descriptor without the flag (a plain fcntl in the parent would leak it into every other
 * program the parent's threads start meanwhile).  Between fork and exec the child calls only
 * async-signal-safe functions, because the parent may be multi-threaded.
 *
 * A failed exec is reported back through a close-on-exec pipe: the parent reads either EOF
 * (exec succeeded and closed the pipe) or the child's errno.  So a missing program is an
 * error from hpshm_spawn(), not a child that mysteriously exits 127.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "port.h"

extern char **environ;

long long hpshm__getpid(void)
{
	return (long long)getpid();
}

uint64_t hpshm__random64(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* Early boot or a seccomp filter: a nonce needs to be unlikely to repeat, not secret. */
	clock_gettime(CLOCK_REALTIME, &ts);
	v = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return v;
}

int hpshm__spawn(const char *path, char *const argv[], char *const envp[], const int *keep, int nkeep,
		 long long *pid, hpshm_error *err)
{
	int pipefd[2], child_errno = 0, saved;
	ssize_t n;
	pid_t p;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		saved = errno;
		return hpshm_error_set(err, HPSHM_ESYS, saved, "pipe2", "raise the descriptor limit (ulimit -n)",
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
		char *const *env = envp ? envp : environ;

		for (int i = 0; i < nkeep; i++) {
			int fl = fcntl(keep[i], F_GETFD);

			if (fl >= 0)
				(void)fcntl(keep[i], F_SETFD, fl & ~FD_CLOEXEC);
		}
		if (strchr(path, '/'))
			execve(path, argv, env);
		else
			execvpe(path, argv, env);
		child_errno = errno;
		n = write(pipefd[1], &child_errno, sizeof(child_errno));
		(void)n;
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
				       "cannot run %s: %s", path, strerror(child_errno));
	}
	*pid = (long long)p;
	return 0;
}

int hpshm__wait(long long pid, int *status, hpshm_error *err)
{
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
