/* SPDX-License-Identifier: MIT */
/*
 * bench/member.c -- one member of a group: its memory, its workers, its samples.
 *
 * A member is one configuration while its group runs.  Its memory is created at its slot
 * (place.c) and timed by the controller's thread CPU time per GiB; its workers attach it,
 * each timed by its own CPU time (and, once per configuration, the page tables with 1, 2
 * and 4 workers, which are exact); a phase runs the chase or the rmw in all its workers at
 * once; its release comes after its workers are gone, so it frees the memory.  Every
 * sample goes to the configuration's series, and to the member's figure of the round, from
 * which group.c takes the gains between members.  A member that fails is marked unusable
 * with why and its workers are stopped; the group goes on without it.
 */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "ports/facts.h"
#include "run.h"

static void sample(struct member *m, enum bench_workload w, double cpu, double wall)
{
	struct bench_series *s = &m->c->s[w];

	if (s->n < BENCH_MAX_SAMPLES) {
		s->cpu[s->n] = cpu;
		s->wall[s->n] = wall;
		s->n++;
	}
	m->cur[w] = cpu;
	m->have[w] = 1;
}


static void member_fail(struct member *m, const char *why)
{
	if (!bench_stop)
		run_unusable(m->c, "%s", why);
	bench_workers_stop(m->w, m->nw);
	m->nw = 0;
	m->live = 0;
}

/* Pages tables per worker with 1, 2, 4 workers: the mean over the first k attaches. */
static void pagetables(struct bench_config *c, const struct bench_reply *rep, unsigned n)
{
	static const unsigned counts[3] = { 1, 2, BENCH_PT_WORKERS };

	for (int i = 0; i < 3; i++) {
		double kib = 0, flt = 0;

		if (counts[i] > n)
			continue;
		for (unsigned k = 0; k < counts[i]; k++) {
			kib = rep[k].vmpte_kib == BENCH_PTE_UNKNOWN || bench_isnan(kib) ? NAN : kib + (double)rep[k].vmpte_kib;
			flt = rep[k].minflt == BENCH_FAULTS_UNKNOWN || bench_isnan(flt) ? NAN : flt + (double)rep[k].minflt;
		}
		c->pt_sampled |= 1u << i;
		c->pt_kib[i] = kib / counts[i];   /* NAN where the OS offers no figure (output.c says why) */
		c->pt_faults[i] = flt / counts[i];
	}
	c->pt_done = 1;
}

/* Create member i's memory at slot i: a setup sample when timed.  0, or -1 when stopping. */
int member_create(struct run *run, struct member *m, unsigned i, unsigned gi, int timed)
{
	const struct bench_options *opt = run->opt;
	struct bench_config *c = m->c;
	double gib = (double)opt->size / (double)GIB;
	uint64_t cpu0, wall0, flt0;
	char why[BENCH_WHY_MAX] = "", ps[32];
	long pte0;
	void *at;

	at = place_open(run, i);
	pte0 = hpshm__os_page_table_kib();
	flt0 = bench_minflt();
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	if (bench_region_create(c, at, opt->size, &m->reg, why, sizeof(why)) < 0) {
		run_unusable(c, "%s", why);
		place_close(run, i);
		bench_progress(opt, "[%6.1fs] group %u: cannot use %s: %s", run_elapsed(run), gi, c->label, why);
		return bench_stop ? -1 : 0;
	}
	m->created = 1;
	/*
	 * By wall time, the create's one exception to the timing rule: a populate split over
	 * threads does most of its work outside the controller's thread, whose CPU clock would
	 * not see it, and a server waits for its segment by the wall clock.  The CPU figure is
	 * kept beside it, where the wall figure usually is.  The limit's figure is its zeroing.
	 */
	if (timed && c->kind == BENCH_LIMIT) {
		sample(m, BENCH_W_SETUP, m->reg.populate_s / gib, m->reg.populate_s / gib);
		sample(m, BENCH_W_POPULATE, m->reg.populate_s / gib, m->reg.populate_s / gib);
	} else if (timed) {
		sample(m, BENCH_W_SETUP, (double)(bench_wall_ns() - wall0) / 1e9 / gib,
		       (double)(bench_cpu_ns() - cpu0) / 1e9 / gib);
		/* The create's two parts, where the mechanism says (by wall time, as hpshm's report). */
		if (!bench_isnan(m->reg.populate_s) && !bench_isnan(m->reg.rest_s)) {
			sample(m, BENCH_W_POPULATE, m->reg.populate_s / gib, m->reg.populate_s / gib);
			sample(m, BENCH_W_SETUP_REST, m->reg.rest_s / gib, m->reg.rest_s / gib);
		}
	}
	m->pte_kib = pte0 < 0 || hpshm__os_page_table_kib() < 0 ? -1 : hpshm__os_page_table_kib() - pte0;
	m->faults = flt0 == 0 ? BENCH_FAULTS_UNKNOWN : bench_minflt() - flt0;
	if (!c->verified_by[0]) {
		c->threads = m->reg.threads ? m->reg.threads : c->threads;
		c->verified_page_size = m->reg.page_size;
		c->huge = m->reg.huge;
		c->map_len = m->reg.len;
		snprintf(c->verified_by, sizeof(c->verified_by), "%s", m->reg.verified_by);
		/* The raw peer maps exactly what hpshm mapped (a header page included). */
		if (c->kind == BENCH_HPSHM && c->raw_ref >= 0 && run->res->cfg[c->raw_ref].map_len == 0)
			run->res->cfg[c->raw_ref].map_len = m->reg.len;
		if (c->kind == BENCH_HPSHM && c->raw1_ref >= 0 && run->res->cfg[c->raw1_ref].map_len == 0)
			run->res->cfg[c->raw1_ref].map_len = m->reg.len;
		if (c->kind == BENCH_HPSHM && c->limit_ref >= 0 && run->res->cfg[c->limit_ref].map_len == 0)
			run->res->cfg[c->limit_ref].map_len = m->reg.len;
	}
	if (c->page_size && c->kind != BENCH_THP && (!m->reg.huge || m->reg.page_size != c->page_size)) {
		run_unusable(c, "asked for %s pages, the kernel (%s) reports %s pages", hpshm_size_format(c->page_size, ps,
			     sizeof(ps)), m->reg.verified_by, m->reg.huge ? "other huge" : "base");
		return 0;
	}
	m->live = 1;
	if (timed)
		bench_progress(opt, "[%6.1fs] group %u: created %-14s %-6s at %p: setup %.3f s/GiB, %u thread%s (%s)",
			       run_elapsed(run), gi, c->label, run_short_size(m->reg.page_size, ps, sizeof(ps)), m->reg.addr,
			       m->cur[BENCH_W_SETUP], m->reg.threads, m->reg.threads == 1 ? "" : "s", m->reg.verified_by);
	return 0;
}

/* Start the member's workers and attach them: an attach sample when timed, and page tables once. */
void member_attach(struct run *run, struct member *m, int timed)
{
	const struct bench_options *opt = run->opt;
	struct bench_config *c = m->c;
	struct bench_reply att[BENCH_MAX_WORKERS > BENCH_PT_WORKERS ? BENCH_MAX_WORKERS : BENCH_PT_WORKERS];
	char why[BENCH_WHY_MAX] = "";
	unsigned want = c->workers;
	double sum = 0, wsum = 0;

	for (m->nw = 0; m->nw < want; m->nw++)
		if (bench_worker_start(&m->w[m->nw], c, &m->reg, opt->self_exe, why, sizeof(why)) < 0)
			goto failed;
	if (bench_workers_run(m->w, m->nw, BENCH_OP_ATTACH, run->budget, 0, att, why, sizeof(why)) < 0)
		goto failed;
	for (unsigned i = 0; i < m->nw; i++) {
		sum += (double)att[i].t.cpu_ns / 1e9;
		wsum += (double)att[i].t.wall_ns / 1e9;
	}
	if (timed)
		sample(m, BENCH_W_ATTACH, sum / m->nw, wsum / m->nw);
	if (c->pt_done)
		return;
	if (c->start == BENCH_START_THREAD) {
		/* One process: its page tables are the controller's, grown by create + populate. */
		c->pt_kib[0] = m->pte_kib < 0 ? NAN : (double)m->pte_kib;
		c->pt_faults[0] = m->faults == BENCH_FAULTS_UNKNOWN ? NAN : (double)m->faults;
		c->pt_sampled = 1;
		c->pt_done = 1;
		return;
	}
	/* Exact, so measured once: more workers attach one at a time, then leave again. */
	for (unsigned k = m->nw; k < BENCH_PT_WORKERS; k++) {
		if (bench_worker_start(&m->w[m->nw], c, &m->reg, opt->self_exe, why, sizeof(why)) < 0)
			goto failed;
		m->nw++;
		if (bench_workers_run(&m->w[k], 1, BENCH_OP_ATTACH, run->budget, 0, &att[k], why, sizeof(why)) < 0)
			goto failed;
	}
	pagetables(c, att, m->nw);
	if (m->nw > want) {
		bench_workers_stop(&m->w[want], m->nw - want);
		m->nw = want;
	}
	return;
failed:
	member_fail(m, why);
}

/* One timed phase in all of the member's workers at once; a warm-up (timed 0) keeps no sample. */
double member_phase(struct run *run, struct member *m, enum bench_workload w, unsigned r, uint64_t budget, int timed)
{
	struct bench_reply rep[BENCH_MAX_WORKERS];
	char why[BENCH_WHY_MAX] = "";
	double sum = 0, wsum = 0, wmax = 0, fig;
	unsigned n = m->nw;

	(void)run;
	if (bench_workers_run(m->w, n, w == BENCH_W_CHASE ? BENCH_OP_CHASE : BENCH_OP_RMW, budget, run_round_seed(r),
			      rep, why, sizeof(why)) < 0) {
		member_fail(m, why);
		return NAN;
	}
	for (unsigned i = 0; i < n; i++) {
		if (w == BENCH_W_CHASE) {
			sum += (double)rep[i].t.cpu_ns / (double)rep[i].t.ops;
			wsum += (double)rep[i].t.wall_ns / (double)rep[i].t.ops;
		} else {
			sum += (double)rep[i].t.ops / ((double)rep[i].t.cpu_ns / 1e9);
			wsum += (double)rep[i].t.ops;
			if ((double)rep[i].t.wall_ns > wmax)
				wmax = (double)rep[i].t.wall_ns;
		}
	}
	if (!timed)
		return NAN;
	fig = w == BENCH_W_CHASE ? sum / n : sum;
	m->acc_cpu[w] += fig;
	m->acc_wall[w] += w == BENCH_W_CHASE ? wsum / n : wsum / (wmax / 1e9);
	m->nacc[w]++;
	return fig;
}

void member_round_close(struct member *m, enum bench_workload w)
{
	if (m->nacc[w])
		sample(m, w, m->acc_cpu[w] / m->nacc[w], m->acc_wall[w] / m->nacc[w]);
	m->acc_cpu[w] = m->acc_wall[w] = 0;
	m->nacc[w] = 0;
}

/* Release the member's memory, its workers gone first: a teardown sample when timed. */
void member_release(struct run *run, struct member *m, unsigned i, int timed)
{
	uint64_t cpu0, wall0;
	int rc;

	bench_workers_stop(m->w, m->nw);
	m->nw = 0;
	if (!m->created)
		return;
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	rc = bench_region_destroy(&m->reg);
	if (rc < 0 && m->live)
		member_fail(m, "releasing the memory failed");
	if (timed && m->live && !bench_stop)
		sample(m, BENCH_W_TEARDOWN, (double)(bench_cpu_ns() - cpu0) / 1e9, (double)(bench_wall_ns() - wall0) / 1e9);
	m->created = 0;
	place_close(run, i);
}
