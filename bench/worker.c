/* SPDX-License-Identifier: MIT */
/*
 * bench/worker.c -- the workers' protocol: the commands the controller sends, the loop a
 * worker serves them in, and the arguments a spawned worker is started with.
 *
 * Three ways to start a worker, each the way a real server would reach its shared memory
 * (how is the system's: os.h, worker_posix.c and worker_windows.c):
 *   spawn   this very program started again with the hidden subcommand __bench-worker, as
 *           a server with EXEC_BACKEND (or any server on Windows) starts its workers.  An
 *           hpshm segment goes through hpshm_child_spawn() and the child re-attaches it with
 *           hpshm_segment_attach_env(); the raw peer's memfd or section is inherited and
 *           mapped at the controller's address, which is what hpshm does under the hood.
 *           This is the default: it is the path hpshm exists for.
 *   fork    fork() (POSIX only): the child inherits the mapping.  Shared mappings are not
 *           copied at fork, so the child's page tables start empty and its attach is the
 *           touch alone.
 *   thread  a thread of the controller: for private memory (THP without shmem THP), which
 *           no other process can share, and for --threads.
 *
 * Each worker owns one end of a channel: the controller sends a fixed-size command, the
 * worker answers with a fixed-size reply.  Sending a command to every worker before reading
 * any reply starts the timed phase in all of them at once.  A worker dies with its
 * controller, leaves Ctrl-C to it (the controller decides when the run stops, then kills and
 * reaps every worker: nothing is left behind), and exits at the EXIT command or when its
 * channel closes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/facts.h"
#include "ports/process.h"

#define STOP_GRACE_MS 2000   /* how long a worker may take to exit before it is killed */

/* A command from the controller. */
struct bench_cmd {
	uint32_t op;         /* enum bench_op */
	uint32_t index;      /* the worker's number: seeds and start slots differ per worker */
	uint64_t budget_ns;  /* CPU budget of a timed phase */
	uint64_t seed;       /* the round's seed: the same for every member of a group in a round */
};

/* ---- the worker's side --------------------------------------------------------------------- */

/* Map the memory in a spawned worker.  0, or -1 with msg. */
static int worker_map(struct bench_view *v, char *msg, size_t len)
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
	if (v->raw != BENCH_OS_NONE)
		return bench_os_raw_map(v, msg, len);
	return 0;
}

/*
 * What a spawned worker attached is let go of explicitly (destroy only detaches an hpshm
 * segment); a fork child or thread must leave the controller's mapping alone.
 */
static void worker_unmap(struct bench_view *v)
{
	if (v->seg)
		(void)hpshm_segment_destroy(v->seg);
	v->seg = NULL;
	if (v->raw_view)
		bench_os_raw_unmap(v);
}

static void worker_attach(struct bench_view *v, int map, struct bench_reply *rep)
{
	uint64_t cpu0 = bench_cpu_ns(), wall0 = bench_wall_ns();
	uint64_t flt0;
	long pte0, pte1;

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
	pte1 = hpshm__os_page_table_kib();
	/* No figure is a figure of its own: never 0 - 0 = "no page tables". */
	rep->vmpte_kib = pte0 < 0 || pte1 < 0 ? BENCH_PTE_UNKNOWN : (int64_t)pte1 - pte0;
	/* A process that ran at all has faulted: a counter at 0 is one the OS does not keep (wine). */
	rep->minflt = flt0 == 0 ? BENCH_FAULTS_UNKNOWN : bench_minflt() - flt0;
}

void bench_worker_serve(struct bench_view *v, int map)
{
	struct bench_cmd cmd;
	struct bench_reply rep;

	for (;;) {
		if (bench_os_chan_recv(v->chan, &cmd, sizeof(cmd)) != (long)sizeof(cmd) || cmd.op == BENCH_OP_EXIT)
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
		if (bench_os_chan_send(v->chan, &rep, sizeof(rep)) < 0)
			break;
	}
	worker_unmap(v);
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
	struct bench_view v;
	uint64_t chan = UINT64_MAX, size = 0, len = 0, raw = UINT64_MAX, addr = 0, parent = 0, hp = 0, flags = 0;
	uint64_t parent_start = 0;

	memset(&v, 0, sizeof(v));
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *val = argv[i + 1];
		int bad = 0;

		if (strcmp(k, "--chan") == 0) bad = parse_u64(val, &chan, 10);
		else if (strcmp(k, "--size") == 0) bad = parse_u64(val, &size, 10);
		else if (strcmp(k, "--len") == 0) bad = parse_u64(val, &len, 10);
		else if (strcmp(k, "--raw") == 0) bad = parse_u64(val, &raw, 10);
		else if (strcmp(k, "--raw-flags") == 0) bad = parse_u64(val, &flags, 10);
		else if (strcmp(k, "--addr") == 0) bad = parse_u64(val, &addr, 16);
		else if (strcmp(k, "--parent") == 0) bad = parse_u64(val, &parent, 10);
		else if (strcmp(k, "--parent-start") == 0) bad = parse_u64(val, &parent_start, 10);
		else if (strcmp(k, "--hpshm") == 0) bad = parse_u64(val, &hp, 10);
		else bad = -1;
		if (bad) {
			fprintf(stderr, "hpshm %s: bad argument %s %s (started by `hpshm bench` only)\n", BENCH_WORKER_CMD,
				k, val);
			return 2;
		}
	}
	if (chan > INTPTR_MAX || parent == 0 || size == 0 || len < size) {
		fprintf(stderr, "hpshm %s: this is `hpshm bench`'s worker, not a command to run by hand\n",
			BENCH_WORKER_CMD);
		return 2;
	}
	if (bench_os_worker_setup((long long)parent, parent_start) < 0) {
		fprintf(stderr, "hpshm %s: the bench that started it (pid %llu) is gone\n", BENCH_WORKER_CMD,
			(unsigned long long)parent);
		return 1;
	}
	v.chan = bench_os_chan_open(chan, (long long)parent);
	if (v.chan == BENCH_OS_NONE) {
		fprintf(stderr, "hpshm %s: cannot open the channel to the bench\n", BENCH_WORKER_CMD);
		return 1;
	}
	v.addr = (unsigned char *)(uintptr_t)addr;
	v.size = (size_t)size;
	v.len = (size_t)len;
	v.raw = raw > INTPTR_MAX ? BENCH_OS_NONE : (intptr_t)raw;
	v.raw_flags = (unsigned)flags;
	v.use_hpshm = hp != 0;
	bench_worker_serve(&v, 1);
	bench_os_chan_close(v.chan);
	return 0;
}

/* ---- the controller's side ---------------------------------------------------------------- */

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

char **bench_worker_argv(const char *self_exe, const struct bench_region *r, intptr_t chan_arg, intptr_t raw_arg,
			 long long parent)
{
	static struct argv_buf a;   /* large, and the controller spawns from one thread */

	memset(&a, 0, sizeof(a));
	arg_add(&a, self_exe);
	arg_add(&a, BENCH_WORKER_CMD);
	arg_add(&a, "--chan");
	arg_add_num(&a, 0, (unsigned long long)chan_arg);
	arg_add(&a, "--size");
	arg_add_num(&a, 0, (unsigned long long)r->size);
	arg_add(&a, "--len");
	arg_add_num(&a, 0, (unsigned long long)r->len);
	arg_add(&a, "--addr");
	arg_add_num(&a, 1, (unsigned long long)(uintptr_t)r->addr);
	arg_add(&a, "--parent");
	arg_add_num(&a, 0, (unsigned long long)parent);
	/* With the pid, when it started: a worker must not take a later process that got the
	 * controller's pid for its controller (bench_os_worker_setup()). */
	arg_add(&a, "--parent-start");
	arg_add_num(&a, 0, (unsigned long long)hpshm__port_process_start(parent));
	arg_add(&a, "--hpshm");
	arg_add(&a, r->seg ? "1" : "0");
	if (!r->seg && raw_arg != BENCH_OS_NONE) {
		arg_add(&a, "--raw");
		arg_add_num(&a, 0, (unsigned long long)raw_arg);
		arg_add(&a, "--raw-flags");
		arg_add_num(&a, 0, (unsigned long long)r->raw_flags);
	}
	return a.argv;
}

int bench_worker_start(struct bench_worker *w, const struct bench_config *c, const struct bench_region *r,
		       const char *self_exe, char *why, size_t len)
{
	memset(w, 0, sizeof(*w));
	w->chan = BENCH_OS_NONE;
	return bench_os_worker_start(w, c, r, self_exe, why, len);
}

int bench_workers_run(struct bench_worker *w, unsigned n, enum bench_op op, uint64_t budget_ns, uint64_t round_seed,
		      struct bench_reply *replies, char *why, size_t len)
{
	for (unsigned i = 0; i < n; i++) {
		struct bench_cmd cmd = { .op = (uint32_t)op, .index = i, .budget_ns = budget_ns, .seed = round_seed };

		if (bench_os_chan_send(w[i].chan, &cmd, sizeof(cmd)) < 0) {
			bench_os_worker_gone(&w[i], i, why, len);
			return -1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		long got = bench_os_chan_recv(w[i].chan, &replies[i], sizeof(replies[i]));

		if (bench_stop) {
			snprintf(why, len, "interrupted");
			return -1;
		}
		if (got != (long)sizeof(replies[i])) {
			bench_os_worker_gone(&w[i], i, why, len);
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

void bench_workers_stop(struct bench_worker *w, unsigned n)
{
	struct bench_cmd cmd = { .op = BENCH_OP_EXIT };
	uint64_t deadline = bench_wall_ns() + (uint64_t)STOP_GRACE_MS * 1000000u;

	for (unsigned i = 0; i < n; i++)
		if (w[i].chan != BENCH_OS_NONE)
			(void)bench_os_chan_send(w[i].chan, &cmd, sizeof(cmd));
	for (unsigned i = 0; i < n; i++) {
		bench_os_worker_reap(&w[i], deadline);
		if (w[i].chan != BENCH_OS_NONE)
			bench_os_chan_close(w[i].chan);
		memset(&w[i], 0, sizeof(w[i]));
		w[i].chan = BENCH_OS_NONE;
	}
}
