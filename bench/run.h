/* SPDX-License-Identifier: MIT */
/*
 * bench/run.h -- what the files of the controller share: the state of one run, the groups
 * it wants, the members of the live group, and the few helpers they all use.
 *
 * The controller is bench_run() (run.c) and its rooms, one idea per file, each named by the
 * prefix of what it offers the others:
 *   plan.c     plan_*    which configurations run, and which groups the run wants
 *   fit.c      fit_*     what memory allows in one group: a wanted group split into groups
 *   group.c    group_*   one group: its setup cycles, then its rounds in alternating order
 *   member.c   member_*  one member of a group: create, attach, a timed phase, release
 *   place.c    place_*   the address slot each member is mapped at
 *   latency.c  latency_* create and probe latencies, once per run
 *   resize.c   resize_*  grow, shrink and sync of a resizable segment, once per run
 *   pool.c     pool_*    --reserve: the pool for the run, warmed, put back after
 *   run.c      bench_run the top level
 *   share.c    run_*     what every file above uses: progress, notes, sizes, the clock
 * Nothing outside them includes this header: the tool sees bench.h only.
 */
#ifndef HPSHM_BENCH_RUN_H
#define HPSHM_BENCH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define GIB ((size_t)1 << 30)
#define PEERS "raw,thp,apr"   /* the peers, as --providers names them */
#define DEFAULT_LIST "auto,plain," PEERS /* --providers when not given */

/* The state of one run. */
struct run {
	const struct bench_options *opt;
	struct bench_result        *res;
	unsigned char              *slot[BENCH_GROUP_MAX]; /* where member i of a group lives; NULL: anywhere */
	size_t                      slot_len;   /* bytes of one slot: a region, rounded up to whole GiB */
	unsigned                    nslots;     /* slots in the reservation */
	int                         plain;      /* the plain configuration, every vs-plain reference */
	unsigned                    groups_ran; /* groups in which something ran */
	uint64_t                    budget;     /* CPU budget of a timed phase, ns */
	uint64_t                    t0;         /* wall clock at the start */
};

/* Configurations that take turns, the plain reference last when it is one of them. */
struct group {
	unsigned n;                    /* members */
	int      m[BENCH_GROUP_MAX];   /* indices into res->cfg */
};

/* A member of the live group. */
struct member {
	int                  idx;                 /* its configuration, in res->cfg */
	struct bench_config *c;                   /* the same */
	struct bench_region  reg;                 /* its memory while created */
	int                  created;             /* reg holds memory */
	int                  live;                /* still measured */
	struct bench_worker  w[BENCH_MAX_WORKERS]; /* its workers */
	unsigned             nw;                  /* workers started */
	long                 pte_kib;             /* the controller's VmPTE growth at create, -1 unknown */
	uint64_t             faults;              /* the controller's faults at create, BENCH_FAULTS_UNKNOWN */
	double               cur[BENCH_NW];       /* this round's (or this group's) figure, CPU based */
	double               acc_cpu[BENCH_NW];   /* the round's passes so far: sum of their figures */
	double               acc_wall[BENCH_NW];  /* the same by wall time */
	unsigned             nacc[BENCH_NW];      /* passes in acc_cpu */
	uint8_t              have[BENCH_NW];      /* cur measured */
	double               turn[2][BENCH_SLICES]; /* chase and rmw: this round's figure of each turn, NAN if none */
};

/* ---- plan.c ---------------------------------------------------------------------------------- */

/* Is name an item of the comma list? */
int plan_has(const char *list, const char *name);
/* Every configuration of the run into run->res->cfg, usable or with why not; run->plain set. */
void plan_configs(struct run *run);
/* The groups the run wants, before memory has its say, into want[0..max).  Returns the count. */
unsigned plan_groups(struct run *run, struct group *want, unsigned max);

/* ---- fit.c ----------------------------------------------------------------------------------- */

/* Huge pages of size ps one region of the run takes. */
uint64_t fit_region_pages(const struct run *run, size_t ps);
/* Can the measured members m[0..n) (res->cfg indexes; setup-only ones do not count) be alive
 * together right now?  1 or 0. */
int fit_together(struct run *run, const int *m, unsigned n);
/* Run the wanted group, split into as many groups as memory needs.  0, or -1 when stopping. */
int fit_run(struct run *run, const struct group *want);

/* ---- group.c --------------------------------------------------------------------------------- */

/* Run members g[0..n) in turn, as group gi.  The rounds completed, -2 if no
 * member could run, or -1 when stopping. */
int group_run(struct run *run, const int *g, unsigned n, unsigned gi);

/* ---- member.c -------------------------------------------------------------------------------- */

/* Create member m's memory at slot i: a setup sample when timed.  0, or -1 when stopping. */
int member_create(struct run *run, struct member *m, unsigned i, unsigned gi, int timed);
/* Start its workers and attach them: an attach sample when timed, and page tables once. */
void member_attach(struct run *run, struct member *m, int timed);
/* One phase of workload w (chase or rmw) with seed r and a CPU budget; a timed one adds its
 * figure to the round's (member_round_close) and returns it, a warm-up (timed 0) keeps
 * nothing.  NAN when it kept nothing. */
double member_phase(struct run *run, struct member *m, enum bench_workload w, unsigned r, uint64_t budget, int timed);
/* The round's sample of workload w: the mean of its passes' figures, if it had any. */
void member_round_close(struct member *m, enum bench_workload w);
/* Release its memory, its workers gone first: a teardown sample when timed. */
void member_release(struct run *run, struct member *m, unsigned i, int timed);

/* ---- place.c --------------------------------------------------------------------------------- */

/* Reserve nslots slots for the largest group; without them regions go where the system puts them. */
void place_init(struct run *run, unsigned nslots);
/* Open slot i for a region: its address, or NULL for anywhere. */
void *place_open(struct run *run, unsigned i);
/* Reserve slot i again after its region's teardown. */
void place_close(struct run *run, unsigned i);
/* Give up the slots still reserved. */
void place_free(struct run *run);

/* ---- latency.c ------------------------------------------------------------------------------- */

/* The create and probe latencies, into run->res->lat. */
void latency_run(struct run *run);

/* ---- resize.c -------------------------------------------------------------------------------- */

/* The resize rows, into run->res->rs (or why not into run->res->rs_note). */
void resize_run(struct run *run);

/* ---- pool.c ---------------------------------------------------------------------------------- */

/* --reserve: add each pool's pages for the run to pools[].  0, or -1 with why. */
int pool_reserve(struct run *run, struct bench_pool *pools, char *why, size_t len);

/* ---- share.c --------------------------------------------------------------------------------- */

/* Mark c unusable, with why. */
void run_unusable(struct bench_config *c, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;
/* Append to a note, as far as it has room. */
void run_note_add(char *note, size_t size, const char *fmt, ...)
	HPSHM__PRINTF(3, 4)
	;
/* A page size for a message, "4KiB" for base pages (0). */
const char *run_short_size(size_t v, char *buf, size_t len);
/* A byte count of the machine for a message, also past what size_t counts. */
char *run_bytes(uint64_t v, char *buf, size_t len);
/* The seed of round r: the same chase and rmw order in every member of the round. */
uint64_t run_round_seed(unsigned r);
/* Wall seconds since the run started, for the progress lines. */
double run_elapsed(const struct run *run);

#endif /* HPSHM_BENCH_RUN_H */
