/* SPDX-License-Identifier: MIT */
/*
 * bench/worker_posix.c -- os.h on POSIX: the bench's clocks, signals, address slots, and its
 * workers as processes (spawned by exec, or forked) and POSIX threads over socketpairs.
 *
 * A channel is one end of an AF_UNIX SOCK_SEQPACKET socketpair: every command and reply is
 * one packet, and a closed end reads as end of file.  The socket end a spawned worker needs
 * (and a raw memfd) is created close-on-exec and made inheritable only around the one spawn:
 * workers started in parallel must not hold each other's sockets, or a dead worker would
 * never read as end of file.  A worker process dies with its controller
 * (hpshm__os_die_with_parent(): PR_SET_PDEATHSIG on Linux) and ignores SIGINT, which the
 * controller handles.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP only set bench_stop; the handlers are installed
 * without SA_RESTART, so a blocked recv() wakes up and looks.  So does SIGPIPE: the reader of
 * the output went away (`hpshm bench | head`), and the run must still stop through its
 * ordinary path, which gives the pool back, rather than die at its next line of progress;
 * it stays ignored afterwards, so the tool exits as interrupted (130).
 *
 * Slots: one PROT_NONE, MAP_NORESERVE reservation, aligned by trimming its head and tail; a
 * slot is unmapped when a region is about to go there and mapped PROT_NONE again
 * (MAP_FIXED_NOREPLACE: never over something else) once it is gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "os.h"
#include "ports/process.h"
#include "ports/linux/flags.h"


/* ---- clocks and stopping ------------------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void)  { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
uint64_t bench_wall_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t bench_cpu_turn_ns(void) { return 5000000u; }

const char *bench_cpu_clock_name(void)
{
	return "thread CPU time (CLOCK_THREAD_CPUTIME_ID); wall_median by CLOCK_MONOTONIC";
}

static const int stop_sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
static struct sigaction stop_old[4];   /* what was installed before bench_os_stop_catch() */

static volatile sig_atomic_t pipe_closed;   /* a SIGPIPE came: the output has no reader */

static void on_stop(int sig)
{
	if (sig == SIGPIPE)
		pipe_closed = 1;
	bench_stop = 1;
}

void bench_os_stop_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;   /* no SA_RESTART: a blocked wait must wake up and look */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(stop_sigs[i], &sa, &stop_old[i]);
}

void bench_os_stop_release(void)
{
	/* With no reader left, the tool's last lines would raise SIGPIPE again, under the old
	 * action: ignored, they fail with EPIPE and the tool exits as interrupted. */
	for (int i = 0; i < 4; i++)
		if (stop_sigs[i] != SIGPIPE || !pipe_closed)
			sigaction(stop_sigs[i], &stop_old[i], NULL);
		else
			signal(SIGPIPE, SIG_IGN);
}

const char *bench_os_left_out(void)
{
	return "";
}

const char *bench_os_no_fork(void)
{
	return NULL;
}

int bench_os_pool_writable(char *why, size_t len)
{
	if (geteuid() == 0)
		return 0;
	snprintf(why, len, "--reserve needs root: it writes the huge page pool size");
	return -1;
}

/* ---- slots --------------------------------------------------------------------------------- */

/*
 * Workers are fresh execs of this program, each with its own randomized layout: slots where
 * the kernel puts mappings by default (just below the controller's libraries) now and then
 * hold a worker's loader or C library, and that worker cannot attach its member.  So the
 * slots go where hpshm puts a re-attachable segment, and only then anywhere.
 */
int bench_os_slots_reserve(unsigned char **slot, unsigned n, size_t slot_len, size_t align, char *why, size_t len)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	size_t total = n * slot_len + align;
	unsigned char *p = MAP_FAILED, *first, *end;
	void *hint;

	if (hpshm__os_far_address(total, align, &hint) == 0) {
		p = mmap(hint, total, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && p != hint) {   /* a kernel before 4.17 takes the flag as a hint */
			(void)munmap(p, total);
			p = MAP_FAILED;
		}
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, total, PROT_NONE, flags, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "cannot reserve %zu bytes of address space: %s", total, strerror(errno));
		return -1;
	}
	first = (unsigned char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	end = first + n * slot_len;
	if (first > p)
		(void)munmap(p, (size_t)(first - p));
	if (p + total > end)
		(void)munmap(end, (size_t)(p + total - end));
	for (unsigned i = 0; i < n; i++)
		slot[i] = first + i * slot_len;
	return 0;
}

void bench_os_slot_open(unsigned char *slot, size_t slot_len)
{
	(void)munmap(slot, slot_len);
}

int bench_os_slot_close(unsigned char *slot, size_t slot_len)
{
	void *p = mmap(slot, slot_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (p != slot) {   /* a kernel before 4.17 takes the flag as a hint */
		(void)munmap(p, slot_len);
		return -1;
	}
	return 0;
}

void bench_os_slots_free(unsigned char **slot, unsigned n, size_t slot_len)
{
	for (unsigned i = 0; i < n; i++)
		if (slot[i])
			(void)munmap(slot[i], slot_len);
}

/* ---- channels ------------------------------------------------------------------------------ */

int bench_os_chan_send(intptr_t chan, const void *buf, size_t n)
{
	return send((int)chan, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

long bench_os_chan_recv(intptr_t chan, void *buf, size_t n)
{
	ssize_t got;

	do
		got = recv((int)chan, buf, n, 0);
	while (got < 0 && errno == EINTR && !bench_stop);
	return got < 0 ? -1 : (long)got;
}

void bench_os_chan_close(intptr_t chan)
{
	if (chan >= 0)
		close((int)chan);
}

intptr_t bench_os_chan_open(uint64_t arg, long long parent)
{
	(void)parent;
	return arg <= INT32_MAX ? (intptr_t)arg : BENCH_OS_NONE;   /* the inherited socket itself */
}

/* ---- the worker's side --------------------------------------------------------------------- */

/* Die with the controller, and leave Ctrl-C to it. */
static void worker_process_setup(pid_t parent)
{
	(void)hpshm__os_die_with_parent();
	if (getppid() != parent)   /* it died before the line above */
		_exit(1);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

int bench_os_worker_setup(long long parent, uint64_t parent_start)
{
	(void)parent_start; /* the parent is the process's own parent: getppid() names it */
	worker_process_setup((pid_t)parent);
	return 0;
}

int bench_os_raw_map(struct bench_view *v, char *msg, size_t len)
{
	void *p;

	if (v->raw_flags & BENCH_RAW_SHMID) {   /* shmat() never replaces a mapping: a clash fails */
		p = shmat((int)v->raw, (void *)v->addr, 0);
		if (p == (void *)-1) {
			snprintf(msg, len, "shmat of SysV segment %lld at %p: %s", (long long)v->raw, (void *)v->addr,
				 strerror(errno));
			return -1;
		}
		v->raw = BENCH_OS_NONE;
		return 0;
	}
	p = mmap(v->addr, v->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, (int)v->raw, 0);
	if (p == MAP_FAILED || p != (void *)v->addr) {
		snprintf(msg, len, "mmap of the inherited descriptor at %p: %s", (void *)v->addr,
			 p == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
		return -1;
	}
	close((int)v->raw);
	v->raw = BENCH_OS_NONE;
	return 0;   /* the mapping goes with the process: raw_view stays NULL */
}

void bench_os_raw_unmap(struct bench_view *v)
{
	v->raw_view = NULL;
}

/* ---- the controller's side ----------------------------------------------------------------- */

static void *worker_thread(void *arg)
{
	struct bench_view *v = arg;

	bench_worker_serve(v, 0);
	bench_os_chan_close(v->chan);
	free(v);
	return NULL;
}

static int set_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFD, on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC);
}

/* exec this program as a worker: through hpshm_child_spawn() for hpshm, by hand for the peers. */
static int worker_spawn(struct bench_worker *w, const struct bench_region *r, const char *self_exe, int sock,
			char *why, size_t len)
{
	/* A SysV id is no descriptor: nothing to inherit, the worker attaches it by id. */
	int fd = r->handle == BENCH_OS_NONE || (r->raw_flags & BENCH_RAW_SHMID) ? -1 : (int)r->handle;
	char **argv = bench_worker_argv(self_exe, r, sock, r->handle, (long long)getpid());
	int rc = 0;
	pid_t pid;

	if (set_cloexec(sock, 0) < 0 || (fd >= 0 && set_cloexec(fd, 0) < 0)) {
		snprintf(why, len, "fcntl(FD_CLOEXEC): %s", strerror(errno));
		rc = -1;
	} else if (r->seg) {
		hpshm_error err;

		memset(&err, 0, sizeof(err));
		if (hpshm_child_spawn(r->seg, self_exe, argv, NULL, &w->child, &err) < 0) {
			snprintf(why, len, "hpshm_child_spawn: %.300s",
				 err.message[0] ? err.message : hpshm_strerror(err.code));
			rc = -1;
		} else {
			w->pid = w->child.pid;
			w->spawned = 1;
		}
	} else {
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			execv(self_exe, argv);
			_exit(127);
		}
		if (pid < 0) {
			snprintf(why, len, "fork: %s", strerror(errno));
			rc = -1;
		}
		w->pid = pid;
	}
	(void)set_cloexec(sock, 1);
	if (fd >= 0)
		(void)set_cloexec(fd, 1);
	return rc;
}

int bench_os_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
			  const char *self_exe, char *why, size_t len)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(why, len, "socketpair: %s", strerror(errno));
		return -1;
	}
	w->chan = sv[0];

	if (c->start == BENCH_START_THREAD) {
		struct bench_view *v = calloc(1, sizeof(*v));
		pthread_t *t = malloc(sizeof(*t));
		sigset_t stop, old;
		int e;

		if (!v || !t) {
			free(v);
			free(t);
			snprintf(why, len, "out of memory");
			goto fail;
		}
		v->chan = sv[1];
		v->addr = r->addr;
		v->size = r->size;
		v->len = r->len;
		v->raw = BENCH_OS_NONE;
		/* The thread starts with the stop signals blocked, so they reach the controller's
		 * thread and wake its recv(); the thread itself sees bench_stop within a batch. */
		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &stop, &old);
		e = pthread_create(t, NULL, worker_thread, v);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e != 0) {
			free(v);
			free(t);
			snprintf(why, len, "pthread_create: %s", strerror(e));
			goto fail;
		}
		w->thread = t;
		return 0;
	}

	if (c->start == BENCH_START_FORK) {
		pid_t parent = getpid();

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			snprintf(why, len, "fork: %s", strerror(errno));
			goto fail;
		}
		if (pid == 0) {
			struct bench_view v;

			worker_process_setup(parent);
			close(sv[0]);
			memset(&v, 0, sizeof(v));
			v.chan = sv[1];
			v.addr = r->addr;
			v.size = r->size;
			v.len = r->len;
			v.raw = BENCH_OS_NONE;
			bench_worker_serve(&v, 0);
			_exit(0);
		}
		w->pid = pid;
		close(sv[1]);
		return 0;
	}

	if (worker_spawn(w, r, self_exe, sv[1], why, len) < 0)
		goto fail;
	close(sv[1]);
	return 0;
fail:
	close(sv[0]);
	close(sv[1]);
	w->chan = BENCH_OS_NONE;
	return -1;
}

void bench_os_worker_gone(struct bench_worker *w, unsigned i, char *why, size_t len)
{
	int status = 0;

	if (w->pid > 0 && waitpid((pid_t)w->pid, &status, 0) == (pid_t)w->pid) {
		w->pid = 0;
		if (WIFSIGNALED(status))
			snprintf(why, len, "worker %u was killed by signal %d", i, WTERMSIG(status));
		else
			snprintf(why, len, "worker %u exited with status %d before answering", i, WEXITSTATUS(status));
		return;
	}
	snprintf(why, len, "worker %u closed its socket before answering", i);
}

/* Reap pid within the grace period; SIGKILL it if it is still there. */
static void worker_reap(pid_t pid, uint64_t deadline_ns)
{
	int status;

	for (;;) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid || (got < 0 && errno != EINTR))
			return;
		if (got == 0 && (bench_wall_ns() >= deadline_ns || bench_stop)) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return;
		}
		usleep(1000);
	}
}

void bench_os_worker_reap(struct bench_worker *w, uint64_t deadline_ns)
{
	if (w->pid > 0)
		worker_reap((pid_t)w->pid, deadline_ns);
	if (w->thread) {
		/* A thread leaves its loop at EXIT, or within a batch once bench_stop is set. */
		pthread_join(*(pthread_t *)w->thread, NULL);
		free(w->thread);
		w->thread = NULL;
	}
}
