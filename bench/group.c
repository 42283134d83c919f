/* SPDX-License-Identifier: MIT */
/*
 * bench/group.c -- one group: configurations alive at the same time, measured in turn.
 *
 * Every ratio is taken between regions that stayed put, seconds apart, under the same load.
 * A group goes through:
 *   cycles    one untimed, then BENCH_SETUP_CYCLES times (BENCH_POOL_CYCLES for the members on
 *             a huge page pool), each member in turn (order reversed on odd cycles):
 *             create and populate (controller's thread CPU time, per GiB; hpshm before its
 *             raw peer on the first, which then maps as many bytes), attach by its N workers
 *             (map and touch every base page, per worker), teardown (workers first, then the
 *             release); the gains of a cycle are taken between its members.  Page tables the
 *             first time a configuration runs, since they are exact: VmPTE and minor faults
 *             per worker with 1, 2 and 4 workers attached;
 *   create    every member again, now all alive at once (untimed), and its workers;
 *   build     the chase is written in each (untimed: the same sequential pass everywhere);
 *   warm-up   one untimed chase and rmw phase per member;
 *   rounds    every member's chase, then every member's rmw, the member order reversed on
 *             odd rounds (A B C, C B A, ...) so a slow drift favours no one; the gains of a
 *             round are taken right away, between members of the group;
 *   re-create halfway through the rounds, every member torn down and created, built,
 *             attached and warmed up again, raw peers first this time (group_up says why);
 *   end       every worker exits, then the controller releases each member's memory.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "run.h"

static struct member members[BENCH_GROUP_MAX];   /* the controller runs one group at a time */

/* The gains of workload w between members measured in the same round (or group). */
static void gains(struct member *mem, unsigned n, enum bench_workload w)
{
	for (unsigned i = 0; i < n; i++) {
		struct member *a = &mem[i];
		struct bench_series *s = &a->c->s[w];

		if (!a->live || !a->have[w] || a->cur[w] <= 0)
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct member *b = &mem[j];

			if (j == i || !b->live || !b->have[w] || b->cur[w] <= 0)
				continue;
			if (b->idx == a->c->plain_ref && s->n_plain < BENCH_MAX_SAMPLES)
				s->vs_plain[s->n_plain++] = bench_gain(w, a->cur[w], b->cur[w]);
			if (b->idx == a->c->raw_ref && s->n_raw < BENCH_MAX_SAMPLES)
				s->vs_raw[s->n_raw++] = bench_gain(w, a->cur[w], b->cur[w]);
		}
	}
}

/* "(2.19x plain, 1.00x raw)" for the gains of this round, or "". */
static const char *round_gains(const struct member *mem, unsigned n, const struct member *a, enum bench_workload w,
			       char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned j = 0; j < n; j++) {
		const struct member *b = &mem[j];
		int n1;

		if (b == a || !b->live || !b->have[w] || !a->have[w] || (b->idx != a->c->plain_ref && b->idx != a->c->raw_ref))
			continue;
		n1 = snprintf(buf + used, len - used, "%s%.2fx %s", used ? ", " : " (", bench_gain(w, a->cur[w], b->cur[w]),
			      b->idx == a->c->plain_ref ? "plain" : "raw");
		if (n1 < 0 || (size_t)n1 >= len - used)
			break;
		used += (size_t)n1;
	}
	if (used && used + 1 < len)
		snprintf(buf + used, len - used, ")");
	return buf;
}

static void progress_round(struct run *run, struct member *mem, unsigned n, unsigned gi, unsigned r)
{
	char ps[32], g1[96], g2[96];

	for (unsigned i = 0; i < n; i++) {
		const struct member *m = &mem[i];

		if (!m->live)
			continue;
		bench_progress(run->opt, "[%6.1fs] group %u round %u/%u %-14s %-6s chase %.0f ns%s  rmw %.1f M/s%s",
			       run_elapsed(run), gi, r + 1, run->opt->rounds, m->c->label,
			       run_short_size(m->c->verified_page_size, ps, sizeof(ps)), m->cur[BENCH_W_CHASE],
			       round_gains(mem, n, m, BENCH_W_CHASE, g1, sizeof(g1)), m->cur[BENCH_W_RMW] / 1e6,
			       round_gains(mem, n, m, BENCH_W_RMW, g2, sizeof(g2)));
	}
}


/* One setup cycle of member i: create and populate, attach its workers, tear down.  -1 when stopping. */
static int member_cycle(struct run *run, unsigned i, unsigned gi, int timed)
{
	struct member *m = &members[i];

	if (member_create(run, m, i, gi, timed) < 0)
		return -1;
	if (m->live)
		member_attach(run, m, timed);
	member_release(run, m, i, timed);
	return 0;
}

/*
 * Does the member take the further setup cycles?  Those on a huge page pool do: their
 * create costs a fraction of a 4 KiB region's, and their teardown is under a millisecond,
 * where one hiccup of the host moves a sample by a third (a 31-cycle run: per-cycle
 * hpshm/raw teardown ratios 0.43-1.19 around a median of 0.98), so 7 samples leave the
 * median a few per cent to chance.  4 KiB members, THP and APR take BENCH_SETUP_CYCLES.
 */
static int pool_member(const struct bench_config *c)
{
	return c->page_size != 0 && c->kind != BENCH_THP && c->kind != BENCH_APR;
}

/*
 * The setup cycles of a group: after one untimed cycle (the host's first touch),
 * BENCH_SETUP_CYCLES times (BENCH_POOL_CYCLES for pool_member()s), every member in turn is created
 * and populated afresh, attached by its workers and torn down again (the order reversed on
 * odd cycles, hpshm before its raw peer on the first, which then maps as many bytes), so
 * setup, attach and teardown get as many samples as a workload gets rounds, and their gains
 * are taken between members of one cycle, seconds apart.  One member lives at a time here:
 * the group's memory check covers it.  0, or -1 when stopping.
 */
static int group_cycles(struct run *run, unsigned n, unsigned gi)
{
	unsigned order[BENCH_GROUP_MAX], k = 0;
	char line[BENCH_WHY_MAX];

	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < n; i++)
			if ((members[i].c->kind == BENCH_HPSHM) == (pass == 0))
				order[k++] = i;
	/* One untimed cycle first, for the host: the pages a pool has just been given, or that
	 * the guest handed back, are slow to touch the first time (the first timed cycle of a
	 * run used to read 3.7 s/GiB for whichever member came first, against 0.05). */
	for (unsigned j = 0; j < n && !bench_stop; j++)
		if (members[order[j]].c->usable && member_cycle(run, order[j], gi, 0) < 0)
			break;
	for (unsigned r = 0; r < BENCH_POOL_CYCLES && !bench_stop; r++) {
		line[0] = '\0';
		for (unsigned i = 0; i < n; i++)
			for (enum bench_workload w = BENCH_W_SETUP; w < BENCH_NW; w++)
				members[i].have[w] = 0;
		for (unsigned j = 0; j < n && !bench_stop; j++) {
			unsigned i = order[r % 2 ? n - 1 - j : j];
			struct member *m = &members[i];

			if (!m->c->usable || (r >= BENCH_SETUP_CYCLES && !pool_member(m->c)))
				continue;
			if (member_cycle(run, i, gi, 1) < 0)
				break;
			if (m->have[BENCH_W_TEARDOWN])
				run_note_add(line, sizeof(line), "%s%s %.3f/%.4f/%.4f", line[0] ? ", " : "", m->c->label,
					     m->cur[BENCH_W_SETUP], m->cur[BENCH_W_ATTACH], m->cur[BENCH_W_TEARDOWN]);
		}
		if (bench_stop)
			break;
		gains(members, n, BENCH_W_SETUP);
		gains(members, n, BENCH_W_ATTACH);
		gains(members, n, BENCH_W_TEARDOWN);
		gains(members, n, BENCH_W_POPULATE);
		gains(members, n, BENCH_W_SETUP_REST);
		if (!line[0])
			break;   /* past BENCH_SETUP_CYCLES, and the group has no pool member */
		bench_progress(run->opt, "[%6.1fs] group %u setup cycle %u/%u (create s/GiB / attach s / teardown s): %s",
			       run_elapsed(run), gi, r + 1, BENCH_POOL_CYCLES, line);
	}
	for (unsigned i = 0; i < n; i++)
		if (members[i].c->usable)
			members[i].live = 0;   /* the rounds' create makes them live again */
	return bench_stop ? -1 : 0;
}

/*
 * Bring the group's members up for the rounds: create every one (hpshm before its raw peer,
 * or the other way round when raw_first), build the chase in each, start and attach the
 * workers, and run one untimed chase and rmw phase per member.  The members alive after it.
 *
 * The order is swapped halfway through the rounds because it is not neutral: on this kind
 * of machine (a guest whose memory the host backs lazily) the member created first was
 * measured 4-6 % slower at 4 KiB pages than the same calls created second, in either
 * role, so a fixed order would charge hpshm for the host's placement.  The warm-up phase
 * exists for the same host: memory it has just handed back to the guest stays slow to
 * touch for a while after populate (doc/bench.md), and round 1 would measure that instead
 * of the page size.
 */
static unsigned group_up(struct run *run, unsigned n, unsigned gi, int raw_first)
{
	const struct bench_options *opt = run->opt;
	unsigned live = 0;

	for (int pass = 0; pass < 2 && !bench_stop; pass++)
		for (unsigned i = 0; i < n && !bench_stop; i++)
			if (members[i].c->usable && (members[i].c->kind == BENCH_HPSHM) == (pass == raw_first) &&
			    member_create(run, &members[i], i, gi, 0) < 0)
				break;
	for (unsigned i = 0; i < n && !bench_stop; i++)
		if (members[i].live)
			bench_chase_build(members[i].reg.addr, opt->size, run_round_seed(0));
	for (unsigned i = 0; i < n && !bench_stop; i++) {
		struct member *m = &members[i];

		if (!m->live)
			continue;
		member_attach(run, m, 0);
		/* A system that keeps no page-table figure gets no number (NaN printed as "nan"):
		 * the results say why once, beside the page-table rows. */
		if (m->live && !raw_first && !bench_isnan(m->c->pt_kib[0]))
			bench_progress(opt, "[%6.1fs] group %u: %-14s %u workers attached, page tables %.0f KiB/worker",
				       run_elapsed(run), gi, m->c->label, m->nw, m->c->pt_kib[0]);
		else if (m->live && !raw_first)
			bench_progress(opt, "[%6.1fs] group %u: %-14s %u workers attached", run_elapsed(run), gi,
				       m->c->label, m->nw);
	}
	for (unsigned i = 0; i < n; i++)
		live += members[i].live;
	for (unsigned i = 0; i < n && live && !bench_stop; i++)
		if (members[i].live) {
			member_phase(run, &members[i], BENCH_W_CHASE, 0, 0);
			if (members[i].live)
				member_phase(run, &members[i], BENCH_W_RMW, 0, 0);
		}
	return bench_stop ? 0 : live;
}

/* Stop every worker first, so the controller's release is the last reference, then tear
 * the memory down.  The setup cycles sampled teardown already, on memory populated alike. */
static void group_down(struct run *run, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		bench_workers_stop(members[i].w, members[i].nw);
		members[i].nw = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		member_release(run, &members[i], i, 0);
		members[i].live = 0;   /* group_up's create makes it live again */
	}
}

/* The group's members from g[0..n), each with no worker yet; who is alive with whom said. */
static void group_open(struct run *run, const int *g, unsigned n, unsigned gi)
{
	struct bench_result *res = run->res;
	char ps[32], line[BENCH_WHY_MAX] = "";

	memset(members, 0, sizeof(members));
	for (unsigned i = 0; i < n; i++) {
		members[i].idx = g[i];
		members[i].c = &res->cfg[g[i]];
		for (unsigned k = 0; k < BENCH_MAX_WORKERS; k++)
			members[i].w[k].chan = BENCH_OS_NONE;
		run_note_add(line, sizeof(line), "%s%s%s%s", i ? ", " : "", members[i].c->label,
			     members[i].c->kind == BENCH_THP || members[i].c->kind == BENCH_APR ? "" : " ",
			     members[i].c->kind == BENCH_THP || members[i].c->kind == BENCH_APR ? "" :
			     run_short_size(members[i].c->page_size, ps, sizeof(ps)));
	}
	run_note_add(res->groups_note, sizeof(res->groups_note), "%s{%s}", res->groups_note[0] ? " " : "", line);
	bench_progress(run->opt, "[%6.1fs] group %u: %s, alive at the same time", run_elapsed(run), gi, line);
}

/* Round r: every member's chase, then every member's rmw, the order reversed on odd rounds;
 * then the round's gains.  0, or -1 when stopping. */
static int group_round(struct run *run, unsigned n, unsigned gi, unsigned r)
{
	for (unsigned i = 0; i < n; i++)
		members[i].have[BENCH_W_CHASE] = members[i].have[BENCH_W_RMW] = 0;
	for (unsigned k = 0; k < n && !bench_stop; k++) {
		struct member *m = &members[r % 2 ? n - 1 - k : k];

		if (m->live)
			member_phase(run, m, BENCH_W_CHASE, r, 1);
	}
	for (unsigned k = 0; k < n && !bench_stop; k++) {
		struct member *m = &members[r % 2 ? n - 1 - k : k];

		if (m->live)
			member_phase(run, m, BENCH_W_RMW, r, 1);
	}
	if (bench_stop)
		return -1;
	gains(members, n, BENCH_W_CHASE);
	gains(members, n, BENCH_W_RMW);
	progress_round(run, members, n, gi, r);
	return 0;
}

/*
 * Run members g[0..n) alive at the same time: the setup cycles, then create all, build the
 * chase in each, start and attach all workers, then the rounds, then stop every worker and
 * tear the memory down.  Returns the rounds completed, -2 if no member could run, or -1 when
 * stopping; the rounds every group completed go to res->rounds_done either way.
 */
int group_run(struct run *run, const int *g, unsigned n, unsigned gi)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned live = 0, done = 0;
	int ran;

	group_open(run, g, n, gi);
	(void)group_cycles(run, n, gi);
	live = group_up(run, n, gi, 0);
	ran = live > 0;
	for (unsigned r = 0; r < opt->rounds && live && !bench_stop; r++) {
		/* Halfway, every member again, created in the other order (group_up says why). */
		if (r > 0 && r == opt->rounds / 2) {
			group_down(run, n);
			bench_progress(opt, "[%6.1fs] group %u: created again, raw peers first, for rounds %u-%u",
				       run_elapsed(run), gi, r + 1, opt->rounds);
			live = group_up(run, n, gi, 1);
			if (!live)
				break;
		}
		if (group_round(run, n, gi, r) < 0)
			break;
		done = r + 1;
	}
	group_down(run, n);
	if (ran && (run->groups_ran++ == 0 || done < res->rounds_done))
		res->rounds_done = done;
	if (bench_stop)
		return -1;
	if (!ran)
		return -2;
	bench_progress(opt, "[%6.1fs] group %u: torn down", run_elapsed(run), gi);
	return (int)done;
}
