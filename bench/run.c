/* SPDX-License-Identifier: MIT */
/*
 * bench/run.c -- the controller's top level: bench_run() from its options to its result.
 *
 * A run sets the machine up when asked (--reserve: the pools and shared THP), plans the
 * configurations and the groups it wants (plan.c), runs each group or as much of it as
 * memory holds at once (fit.c, group.c), then the latencies (latency.c) and the resize rows
 * (resize.c), and puts back what it changed.  run.h lists the files of the controller; doc/bench.md how to read a result.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP (Ctrl-C and Ctrl-Break on Windows) only set
 * bench_stop (os.h).  Every wait wakes up or polls it (on Windows a controller waiting for a
 * reply sees it when the phase ends, within four budgets), and the ordinary unwinding path
 * then kills and reaps the workers, destroys every member's memory and puts the pool back:
 * one cleanup path, run whether the bench ends well or not.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/facts.h"
#include "run.h"

/* ---- the run, phase by phase ------------------------------------------------------------------ */

/* A new run: its state, an empty result, the stop requests caught. */
static void run_start(struct run *run, const struct bench_options *opt, struct bench_result *res)
{
	memset(res, 0, sizeof(*res));
	memset(run, 0, sizeof(*run));
	res->opt = *opt;
	run->opt = &res->opt;
	run->res = res;
	run->plain = -1;
	run->t0 = bench_wall_ns();
	run->budget = (uint64_t)(opt->phase_seconds * 1e9);
	bench_stop = 0;
	res->left_out = bench_os_left_out();
	res->pt_absent = hpshm__os_page_table_absent();
	res->populate_how = bench_os_populate_how();
	res->caveat = bench_os_caveat();
	bench_os_stop_catch();
}

/*
 * --reserve: the pools the run needs, and shared THP set to advise (thp_prev: what it was,
 * "" when unchanged).  Nothing without --reserve.  0, or -1 with why.
 */
static int run_machine(struct run *run, struct bench_pool *pools, char *thp_prev, size_t thp_len, char *why,
		       size_t len)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	char pwhy[BENCH_WHY_MAX];

	if (!opt->reserve)
		return 0;
	if (pool_reserve(run, pools, why, len) < 0)
		return -1;
	/* Shared THP is the peer a user would pick instead of hugetlb: --reserve lets it run. */
	if (!opt->providers || plan_has(opt->providers, "thp")) {
		if (bench_os_thp_advise(thp_prev, thp_len, pwhy, sizeof(pwhy)) < 0)
			bench_progress(opt, "--reserve: shared THP stays off: %s", pwhy);
		else if (thp_prev[0])
			run_note_add(res->pool_note, sizeof(res->pool_note), "%sshmem THP %s -> advise",
				     res->pool_note[0] ? "; " : "", thp_prev);
	}
	return 0;
}

/* The configurations, what cannot run said, and the groups wanted into want[0..max): their count. */
static unsigned run_plan(struct run *run, struct group *want, unsigned max)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;

	plan_configs(run);
	for (unsigned i = 0; i < res->ncfg; i++)
		if (!res->cfg[i].usable)
			bench_progress(opt, "cannot use %s: %s", res->cfg[i].label, res->cfg[i].why);
	if (res->thp_why[0])
		bench_progress(opt, "cannot use thp: %s", res->thp_why);
	if (res->apr_why[0])
		bench_progress(opt, "cannot use apr: %s", res->apr_why);
	if (res->left_out[0])
		bench_progress(opt, "left out: %s", res->left_out);
	return plan_groups(run, want, max);
}

/* Every wanted group, in slots for the largest; then the latencies. */
static void run_groups(struct run *run, const struct group *want, unsigned nwant)
{
	struct bench_result *res = run->res;
	unsigned nslots = 1;

	for (unsigned k = 0; k < nwant; k++)
		if (want[k].n > nslots)
			nslots = want[k].n;
	place_init(run, nslots);
	for (unsigned k = 0; k < nwant && !bench_stop; k++)
		if (fit_run(run, &want[k]) < 0)
			break;
	/* No group could hold plain with anything else (or plain is all that was asked for):
	 * it is still measured, alone, so its own figures are there. */
	if (!bench_stop && run->plain >= 0 && res->cfg[run->plain].usable && res->cfg[run->plain].s[BENCH_W_CHASE].n == 0)
		(void)group_run(run, &run->plain, 1, ++res->groups);
	if (!bench_stop)
		latency_run(run);
	if (!bench_stop)
		resize_run(run);
}

/*
 * Put back what the run changed, whatever happened: the slots, the pools, shared THP, the
 * stop requests.  Returns rc, or BENCH_FAIL when it was BENCH_OK and something could not be
 * put back.
 */
static int run_finish(struct run *run, struct bench_pool *pools, const char *thp_prev, int rc)
{
	const struct bench_options *opt = run->opt;
	char pwhy[BENCH_WHY_MAX];

	place_free(run);
	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		if (bench_pool_restore(&pools[s], pwhy, sizeof(pwhy)) < 0) {
			fprintf(stderr, "hpshm bench: could not restore the huge page pool: %s\n", pwhy);
			if (rc == BENCH_OK)
				rc = BENCH_FAIL;
		}
	}
	if (bench_os_thp_restore(thp_prev, pwhy, sizeof(pwhy)) < 0) {
		fprintf(stderr, "hpshm bench: could not put shmem THP back to %s: %s\n", thp_prev, pwhy);
		if (rc == BENCH_OK)
			rc = BENCH_FAIL;
	}
	bench_os_stop_release();
	run->res->seconds = (double)(bench_wall_ns() - run->t0) / 1e9;
	return rc;
}

int bench_run(const struct bench_options *opt, struct bench_result *res, char *why, size_t len)
{
	static struct group want[BENCH_MAX_CONFIGS];
	struct bench_pool pools[BENCH_MAX_SIZES];
	struct run run;
	int rc = BENCH_OK;
	char thp_prev[32] = "";

	why[0] = '\0';
	memset(pools, 0, sizeof(pools));
	run_start(&run, opt, res);
	if (run_machine(&run, pools, thp_prev, sizeof(thp_prev), why, len) < 0) {
		rc = BENCH_FAIL;
	} else {
		run_groups(&run, want, run_plan(&run, want, BENCH_MAX_CONFIGS));
		if (bench_stop) {
			snprintf(why, len, "interrupted in group %u: workers killed, memory released%s", res->groups,
				 opt->reserve ? ", pool restored" : "");
			rc = BENCH_INTERRUPTED;
		}
	}
	return run_finish(&run, pools, thp_prev, rc);
}
