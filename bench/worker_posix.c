/*
 * bench/worker.c -- the workers: how they are started, how they reach the memory, and the
 * little protocol the controller drives them with.
 *
 * Three ways to start one, each the way a real server would reach its shared memory:
 *   spawn   exec of this very program with the hidden subcommand __bench-worker, as a
 *           server with EXEC_BACKEND (or any server on Windows) starts its workers.  An hpshm
 *           segment goes through hpshm_child_spawn() and the child re-attaches it with
 *           hpshm_segment_attach_env(); a raw memfd is inherited by descriptor and mapped with
 *           mmap(MAP_FIXED_NOREPLACE) at the controller's address, which is what hpshm does
 *           under the hood.  This is the default: it is the path hpshm exists for.
 *   fork    fork(): the child inherits the mapping.  Shared mappings are not copied at fork,
 *           so the child's page tables start empty and its attach is the touch alone.
 *   thread  a thread of the controller, for private memory (THP without shmem THP), which
 *           no other process can share.
 *
 * Each worker owns one end of a SOCK_SEQPACKET socketpair: the controller sends a fixed-size
 * command, the worker answers with a fixed-size reply.  Sending a command to every worker
 * before reading any reply starts the timed phase in all of them at once.  A worker dies
 * with its controller (hpshm__os_die_with_parent(): PR_SET_PDEATHSIG on Linux), ignores SIGINT (the controller decides when the
 * run stops, then kills and reaps every worker: nothing is left behind), and exits at the
 * EXIT command or when its socket closes.
 *
 * The socket end a spawned worker needs (and a raw memfd) is created close-on-exec and made
 * inheritable only around the one spawn: workers started in parallel must not hold each
 * other's sockets, or a dead worker would never read as end of file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ports/introspect.h"

#define STOP_GRACE_MS 2000   /* how long a worker may take to exit before SIGKILL */

/* A command from the controller. */
struct bench_cmd {
	uint32_t op;         /* enum bench_op */
	uint32_t index;      /* the worker's number: seeds and start slots differ per worker */
	uint64_t budget_ns;  /* CPU budget of a timed phase */
	uint64_t seed;       /* the round's seed: the same for every member of a group in a round */
};

/* Where a worker's memory is and how it gets there. */
struct worker_view {
	int            sock;        /* the worker's end */
	unsigned char *addr;        /* the region (after attach, for spawned workers) */
	size_t         size;        /* bytes the workloads use */
	size_t         len;         /* bytes mapped: attach touches them all */
	int            raw_fd;      /* spawned raw worker: the memfd to map, else -1 */
	int            use_hpshm;   /* spawned hpshm worker: attach by token */
	hpshm_segment *seg;         /* the attached segment */
};

/* ---- the worker's side --------------------------------------------------------------------- */

/* Map the memory in a spawned worker.  0, or -1 with msg. */
static int worker_map(struct worker_view *v, char *msg, size_t len)
{
	if (v->use_hpshm) {
		hpshm_error err;

		memset(&err, 0, sizeof(err));
		if (hpshm_segment_attach_env(&v->seg, NULL, &err) < 0) {
			snprintf(msg, len, "hpshm_segment_attach_env: %.150s%s%.60s", err.message[0] ? err.message :
				 hpshm_strerror(err.code), err.hint[0] ? "; hint: " : "", err.hint);
			return -1;
		}
		if ((unsigned char *)hpshm_segment_address(v->seg) != v->addr) {
			snprintf(msg, len, "attached at %p, the controller's segment is at %p",
				 hpshm_segment_address(v->seg), (void *)v->addr);
			return -1;
		}
		return 0;
	}
	if (v->raw_fd >= 0) {
		void *p = mmap(v->addr, v->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, v->raw_fd, 0);

		if (p == MAP_FAILED || p != (void *)v->addr) {
			snprintf(msg, len, "mmap of the inherited memfd at %p: %s", (void *)v->addr,
				 p == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
			return -1;
		}
		close(v->raw_fd);
		v->raw_fd = -1;
	}
	return 0;
}

/*
 * Only an attached hpshm segment is let go of explicitly (destroy only detaches it): a raw
 * mapping goes with the process, and a fork child or thread must leave the controller's
 * mapping alone.
 */
static void worker_unmap(struct worker_view *v)
{
	if (v->seg)
		(void)hpshm_segment_destroy(v->seg);
	v->seg = NULL;
}

static void worker_attach(struct worker_view *v, int map, struct bench_reply *rep)
{
	uint64_t cpu0 = bench_cpu_ns(), wall0 = bench_wall_ns();
	uint64_t flt0;
	long pte0;

	if (map && worker_map(v, rep->msg, sizeof(rep->msg)) < 0) {
		rep->rc = -1;
		return;
	}
	/* Counted from here: the page tables and faults of touching the region, not whatever the
	 * attach itself allocated (reading smaps, a sanitizer's bookkeeping). */
	pte0 = hpshm__os_page_table_kib();
	flt0 = bench_minflt();
	bench_touch(v->addr, v->len, hpshm_base_page_size(), &rep->t);
	rep->t.cpu_ns = bench_cpu_ns() - cpu0;
	rep->t.wall_ns = bench_wall_ns() - wall0;
	rep->vmpte_kib = hpshm__os_page_table_kib() - pte0;
	rep->minflt = bench_minflt() - flt0;
}

/* Serve commands until EXIT or end of file.  map: 1 in a spawned worker (attach maps). */
static void worker_serve(struct worker_view *v, int map)
{
	struct bench_cmd cmd;
	struct bench_reply rep;
	ssize_t n;

	for (;;) {
		n = recv(v->sock, &cmd, sizeof(cmd), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(cmd) || cmd.op == BENCH_OP_EXIT)
			break;
		memset(&rep, 0, sizeof(rep));
		switch (cmd.op) {
		case BENCH_OP_ATTACH:
			worker_attach(v, map, &rep);
			break;
		case BENCH_OP_CHASE:
			/* The start moves every round, the same for every member of a round: no round
			 * re-walks the lines the one before left in the caches. */
			bench_chase_run(v->addr, v->size, ((cmd.index + 1) * 0x9e3779b97f4a7c15u) ^ cmd.seed, cmd.budget_ns,
					&rep.t);
			break;
		case BENCH_OP_RMW:
			bench_rmw_run(v->addr, v->size, cmd.seed ^ ((uint64_t)(cmd.index + 1) << 40), cmd.budget_ns,
				      &rep.t);
			break;
		default:
			rep.rc = -1;
			snprintf(rep.msg, sizeof(rep.msg), "unknown command %" PRIu32, cmd.op);
			break;
		}
		if (send(v->sock, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
			break;
	}
	worker_unmap(v);
}

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

static int parse_u64(const char *s, uint64_t *out, int base)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, base);
	return errno == 0 && end != s && *end == '\0' ? 0 : -1;
}

int bench_worker_main(int argc, char **argv)
{
	struct worker_view v;
	uint64_t sock = UINT64_MAX, size = 0, len = 0, raw_fd = UINT64_MAX, addr = 0, parent = 0, hp = 0;

	memset(&v, 0, sizeof(v));
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *val = argv[i + 1];
		int bad = 0;

		if (strcmp(k, "--sock") == 0) bad = parse_u64(val, &sock, 10);
		else if (strcmp(k, "--size") == 0) bad = parse_u64(val, &size, 10);
		else if (strcmp(k, "--len") == 0) bad = parse_u64(val, &len, 10);
		else if (strcmp(k, "--raw-fd") == 0) bad = parse_u64(val, &raw_fd, 10);
		else if (strcmp(k, "--addr") == 0) bad = parse_u64(val, &addr, 16);
		else if (strcmp(k, "--parent") == 0) bad = parse_u64(val, &parent, 10);
		else if (strcmp(k, "--hpshm") == 0) bad = parse_u64(val, &hp, 10);
		else bad = -1;
		if (bad) {
			fprintf(stderr, "hpshm %s: bad argument %s %s (started by `hpshm bench` only)\n", BENCH_WORKER_CMD,
				k, val);
			return 2;
		}
	}
	if (sock > INT32_MAX || parent == 0 || size == 0 || len < size) {
		fprintf(stderr, "hpshm %s: this is `hpshm bench`'s worker, not a command to run by hand\n",
			BENCH_WORKER_CMD);
		return 2;
	}
	worker_process_setup((pid_t)parent);
	v.sock = (int)sock;
	v.addr = (unsigned char *)(uintptr_t)addr;
	v.size = (size_t)size;
	v.len = (size_t)len;
	v.raw_fd = raw_fd > INT32_MAX ? -1 : (int)raw_fd;
	v.use_hpshm = hp != 0;
	worker_serve(&v, 1);
	return 0;
}

/* ---- the controller's side ---------------------------------------------------------------- */

static void *worker_thread(void *arg)
{
	struct worker_view *v = arg;

	worker_serve(v, 0);
	close(v->sock);
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

/* A NULL-terminated argv whose strings live in the struct itself. */
struct argv_buf {
	char  *argv[24];    /* the vector */
	int    n;           /* entries used */
	size_t used;        /* bytes of text used */
	char   text[6144];  /* the strings: this program's path and a few short arguments */
};

static void arg_add(struct argv_buf *a, const char *s)
{
	size_t l = strlen(s) + 1;

	if (a->n + 1 >= (int)(sizeof(a->argv) / sizeof(a->argv[0])) || a->used + l > sizeof(a->text))
		return;   /* cannot happen with the arguments below; the worker would then refuse */
	memcpy(a->text + a->used, s, l);
	a->argv[a->n++] = a->text + a->used;
	a->argv[a->n] = NULL;
	a->used += l;
}

static void arg_add_num(struct argv_buf *a, int hex, unsigned long long v)
{
	char num[32];

	snprintf(num, sizeof(num), hex ? "%llx" : "%llu", v);
	arg_add(a, num);
}

/* exec this program as a worker: through hpshm_child_spawn() for hpshm, by hand for the peers. */
static int worker_spawn(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
			const char *self_exe, int sock, char *why, size_t len)
{
	static struct argv_buf a;   /* large, and the controller spawns from one thread */
	int rc = 0;
	pid_t pid;

	memset(&a, 0, sizeof(a));
	arg_add(&a, self_exe);
	arg_add(&a, BENCH_WORKER_CMD);
	arg_add(&a, "--sock");
	arg_add_num(&a, 0, (unsigned long long)sock);
	arg_add(&a, "--size");
	arg_add_num(&a, 0, (unsigned long long)r->size);
	arg_add(&a, "--len");
	arg_add_num(&a, 0, (unsigned long long)r->len);
	arg_add(&a, "--addr");
	arg_add_num(&a, 1, (unsigned long long)(uintptr_t)r->addr);
	arg_add(&a, "--parent");
	arg_add_num(&a, 0, (unsigned long long)getpid());
	arg_add(&a, "--hpshm");
	arg_add(&a, r->seg ? "1" : "0");
	if (!r->seg) {
		arg_add(&a, "--raw-fd");
		arg_add_num(&a, 0, (unsigned long long)r->fd);
	}

	if (set_cloexec(sock, 0) < 0 || (r->fd >= 0 && set_cloexec(r->fd, 0) < 0)) {
		snprintf(why, len, "fcntl(FD_CLOEXEC): %s", strerror(errno));
		rc = -1;
	} else if (r->seg) {
		hpshm_error err;

		memset(&err, 0, sizeof(err));
		if (hpshm_child_spawn(r->seg, self_exe, a.argv, NULL, &w->child, &err) < 0) {
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
			execv(self_exe, a.argv);
			_exit(127);
		}
		if (pid < 0) {
			snprintf(why, len, "fork: %s", strerror(errno));
			rc = -1;
		}
		w->pid = pid;
	}
	(void)set_cloexec(sock, 1);
	if (r->fd >= 0)
		(void)set_cloexec(r->fd, 1);
	(void)c;
	return rc;
}

int bench_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
		       const char *self_exe, char *why, size_t len)
{
	int sv[2];
	pid_t pid;

	memset(w, 0, sizeof(*w));
	w->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(why, len, "socketpair: %s", strerror(errno));
		return -1;
	}
	w->sock = sv[0];

	if (c->start == BENCH_START_THREAD) {
		struct worker_view *v = calloc(1, sizeof(*v));
		pthread_t *t = malloc(sizeof(*t));
		sigset_t stop, old;
		int e;

		if (!v || !t) {
			free(v);
			free(t);
			snprintf(why, len, "out of memory");
			goto fail;
		}
		v->sock = sv[1];
		v->addr = r->addr;
		v->size = r->size;
		v->len = r->len;
		v->raw_fd = -1;
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
			struct worker_view v;

			worker_process_setup(parent);
			close(sv[0]);
			memset(&v, 0, sizeof(v));
			v.sock = sv[1];
			v.addr = r->addr;
			v.size = r->size;
			v.len = r->len;
			v.raw_fd = -1;
			worker_serve(&v, 0);
			_exit(0);
		}
		w->pid = pid;
		close(sv[1]);
		return 0;
	}

	if (worker_spawn(w, c, r, self_exe, sv[1], why, len) < 0)
		goto fail;
	close(sv[1]);
	return 0;
fail:
	close(sv[0]);
	close(sv[1]);
	w->sock = -1;
	return -1;
}

/* A worker's end, said in words for the error message. */
static void worker_gone(struct bench_worker *w, unsigned i, char *why, size_t len)
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

int bench_workers_run(struct bench_worker *w, unsigned n, enum bench_op op, uint64_t budget_ns, uint64_t round_seed,
		      struct bench_reply *replies, char *why, size_t len)
{
	for (unsigned i = 0; i < n; i++) {
		struct bench_cmd cmd = { .op = (uint32_t)op, .index = i, .budget_ns = budget_ns, .seed = round_seed };

		if (send(w[i].sock, &cmd, sizeof(cmd), MSG_NOSIGNAL) != (ssize_t)sizeof(cmd)) {
			worker_gone(&w[i], i, why, len);
			return -1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		ssize_t got;

		do
			got = recv(w[i].sock, &replies[i], sizeof(replies[i]), 0);
		while (got < 0 && errno == EINTR && !bench_stop);
		if (bench_stop) {
			snprintf(why, len, "interrupted");
			return -1;
		}
		if (got != (ssize_t)sizeof(replies[i])) {
			worker_gone(&w[i], i, why, len);
			return -1;
		}
		if (replies[i].rc < 0) {
			replies[i].msg[sizeof(replies[i].msg) - 1] = '\0';
			snprintf(why, len, "worker %u: %s", i, replies[i].msg);
			return -1;
		}
	}
	return 0;
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

void bench_workers_stop(struct bench_worker *w, unsigned n)
{
	struct bench_cmd cmd = { .op = BENCH_OP_EXIT };
	uint64_t deadline = bench_wall_ns() + (uint64_t)STOP_GRACE_MS * 1000000u;

	for (unsigned i = 0; i < n; i++)
		if (w[i].sock >= 0)
			(void)send(w[i].sock, &cmd, sizeof(cmd), MSG_NOSIGNAL);
	for (unsigned i = 0; i < n; i++) {
		if (w[i].pid > 0)
			worker_reap((pid_t)w[i].pid, deadline);
		if (w[i].thread) {
			/* A thread leaves its loop at EXIT, or within a batch once bench_stop is set. */
			pthread_join(*(pthread_t *)w[i].thread, NULL);
			free(w[i].thread);
		}
		if (w[i].sock >= 0)
			close(w[i].sock);
		memset(&w[i], 0, sizeof(w[i]));
		w[i].sock = -1;
	}
}
