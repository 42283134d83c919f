/* SPDX-License-Identifier: MIT */
/*
 * bench/group.c -- one group: configurations measured side by side, in short turns.
 *
 * Every ratio is taken between members of one group, seconds apart, under the same load.
 * A group goes through:
 *   cycles    one untimed, then BENCH_SETUP_CYCLES times (BENCH_POOL_CYCLES for the members on
 *             a huge page pool), each member in turn (order reversed on odd cycles):
 *             create and populate (wall s per GiB; hpshm before its raw peers on the first,
 *             which then map as many bytes), attach by its N workers (map and touch every
 *             base page, per worker), teardown (workers first, then the release); the
 *             setup-only members (raw x1, the limit) are created and released only.  The
 *             gains of a cycle are taken between its members.  Page tables the first time a
 *             configuration runs, since they are exact: VmPTE and minor faults per worker
 *             with 1, 2 and 4 workers attached;
 *   rounds    where memory holds all the members at once (fit_together()): every member
 *             created, its chase built, its workers started, attached and warmed up (a short
 *             untimed chase and rmw); then turns of chase (5 ms) and of rmw (10 ms) adding up
 *             to a phase each, the order rotated; then all torn down, created in
 *             an order rotated by one next round (group_round_together()).  Else BENCH_PASSES
 *             passes: in a pass each member in turn (A B C, then C B A in the next pass, so
 *             a slow drift favours no one) is created, its chase built, its workers started
 *             and attached, warmed up, timed (chase, then rmw, a third of a phase each), and
 *             torn down before the next member is created.  A member's figure of the round
 *             is the mean of its turns, and the gains of the round are taken at its end:
 *             together, as the median of its blocks of turns (below, "Blocks"), which the
 *             run also pools for a row's figure; in turn, between the members' figures.
 *
 * Why one at a time: with the members alive together for the whole run, each kept the
 * memory it got at its create, and on a guest the host backs that memory as it likes (its
 * own huge pages or not) for the whole run.  Two members making the same system calls
 * (plain and raw memfd at 4 KiB) then read 0.94-1.20 from run to run, the same side winning
 * every round, and memfd_hugetlb against raw memfd at 2 MiB up to 1.33: the rows measured
 * placement, not hpshm.  Taking turns, each member runs on the pages the one before it has
 * just freed: hugetlb hands its pool's pages back last in, first out, and the page allocator
 * reuses what was freed last, so both sides of a ratio run on the same memory.  It also
 * lets a pool of one region's pages compare hpshm with its raw peer at all.
 *
 * Why together, where memory allows: a turn that includes a create lasts a second or more,
 * and on a shared host one region's chase moves by a fifth from one half second to the next
 * (never made again: 221-271 ns at 2 MiB), as much as between fresh regions, so most of a
 * round's spread was time, not placement.  Two regions alive together and chased in turns
 * of about 25 ms read 0.997-1.002 at 2 MiB (doc/bench.md, "The noise floor").  Placement is
 * kept neutral the other way round: the members swap their memory from one round to the
 * next (group_round_together()).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "run.h"

static struct member members[BENCH_GROUP_MAX];   /* the controller runs one group at a time */
static unsigned round_block;                     /* turns in a block this round; 0: no turns (in turn) */
static unsigned round_place;                     /* this round's place in the creation rotation ("Places") */
static unsigned round_slices[2];                 /* turns of chase and of rmw this round */

/*
 * Blocks.  In a round with the members alive together, a member's turn right after another
 * member's runs on caches and TLBs that member left (rmw: 27 % slower at 5 ms turns, 2.6 %
 * at 50 ms), and one right after its own does not; and a neighbour's burst on the host
 * slows whatever runs during it.  The rotation (group_round_together()) puts every member
 * in every place once in k turns in a row, k the members of the round, so such k turns, a
 * block, hold the same places for both sides of a ratio: the gain of a block is the ratio
 * of the two members' sums over it, and a round's gain the median of its blocks.  The
 * blocks of every round are also pooled (bench_blocks), and a row's figure is their
 * median: a burst spoils the few blocks it falls in, not a whole round (two equal members
 * under bursts of another program read 0.989 as a median of five rounds' means, 1.002 as
 * the median of their 50 blocks).
 *
 * Places.  The members of a round are created one after the other and released the last
 * first, and a huge page pool hands pages back last in, first out, so the member created
 * first tends to get the same pages round after round: its place in the creation order
 * decides its memory where the members are not mixed (group_mix()).  On a guest those sets
 * of pages need not be alike: unmixed, one run here read memfd_hugetlb / raw memfd rmw 0.82,
 * 1.12, 0.87, 1.19 and 0.82 in its five rounds, and the median of all its blocks, three
 * rounds in one place and two in the other, 0.876.  So the creation order is rotated by one
 * from round to round (with two members, swapped), every member taking every place once in
 * k rounds, and a row's figure is the geometric mean over the places of each place's median
 * block (bench_placed_median()), every place weighed alike.  That alone was not enough (the
 * next run read 0.86, 1.17, 0.87, 0.88 and 1.16: the pool does not hand a place the same
 * pages every round); mixed, the same pair read 1.00-1.02 in every round.  The places
 * remain for the members that cannot be mixed (Windows, a region of one huge page).
 */
static unsigned block_gains(const struct member *a, const struct member *b, enum bench_workload w, double *g)
{
	unsigned n = 0;

	if (w > BENCH_W_RMW || round_block < 2)
		return 0;
	for (unsigned q = 0; q + round_block <= round_slices[w]; q += round_block) {
		double sa = 0, sb = 0;
		unsigned t;

		for (t = q; t < q + round_block; t++) {
			if (bench_isnan(a->turn[w][t]) || bench_isnan(b->turn[w][t]))
				break;
			sa += a->turn[w][t];
			sb += b->turn[w][t];
		}
		if (t == q + round_block && sa > 0 && sb > 0)
			g[n++] = bench_gain(w, sa, sb);
	}
	return n;
}

/* The gain of a over b in workload w this round: the median of its blocks where it had
 * some (their gains also appended to pool with the round's place when pool is not NULL),
 * else the ratio of the two members' figures of the round. */
static double pair_gain(const struct member *a, const struct member *b, enum bench_workload w,
			struct bench_block_gains *pool)
{
	double g[BENCH_SLICES];
	unsigned n = block_gains(a, b, w, g);
	struct bench_summary s;

	if (n == 0)
		return bench_gain(w, a->cur[w], b->cur[w]);
	for (unsigned k = 0; k < n && pool && pool->n < BENCH_MAX_BLOCKS; k++) {
		pool->place[pool->n] = (unsigned char)round_place;
		pool->g[pool->n++] = g[k];
	}
	bench_summarize(g, n, &s);
	return s.median;
}

/* The gains of workload w between members measured in the same round (or group). */
static void gains(struct member *mem, unsigned n, enum bench_workload w)
{
	for (unsigned i = 0; i < n; i++) {
		struct member *a = &mem[i];
		struct bench_series *s = &a->c->s[w];
		struct bench_blocks *blk = w <= BENCH_W_RMW ? &a->c->blk[w] : NULL;

		if (!a->live || !a->have[w] || a->cur[w] <= 0)
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct member *b = &mem[j];

			if (j == i || !b->live || !b->have[w] || b->cur[w] <= 0)
				continue;
			if (b->idx == a->c->plain_ref && s->n_plain < BENCH_MAX_SAMPLES)
				s->vs_plain[s->n_plain++] = pair_gain(a, b, w, blk ? &blk->vs_plain : NULL);
			if (b->idx == a->c->raw_ref && s->n_raw < BENCH_MAX_SAMPLES)
				s->vs_raw[s->n_raw++] = pair_gain(a, b, w, blk ? &blk->vs_raw : NULL);
			if (b->idx == a->c->raw1_ref && s->n_raw1 < BENCH_MAX_SAMPLES)
				s->vs_raw1[s->n_raw1++] = bench_gain(w, a->cur[w], b->cur[w]);
			if (b->idx == a->c->limit_ref && s->n_limit < BENCH_MAX_SAMPLES && w == BENCH_W_SETUP)
				s->of_limit[s->n_limit++] = bench_gain(w, a->cur[w], b->cur[w]);
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
		n1 = snprintf(buf + used, len - used, "%s%.2fx %s", used ? ", " : " (", pair_gain(a, b, w, NULL),
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
	if (m->live && !m->c->setup_only)
		member_attach(run, m, timed);
	member_release(run, m, i, timed && !m->c->setup_only);
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
			else if (m->have[BENCH_W_SETUP])
				run_note_add(line, sizeof(line), "%s%s %.3f", line[0] ? ", " : "", m->c->label,
					     m->cur[BENCH_W_SETUP]);
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
	bench_progress(run->opt, "[%6.1fs] group %u: %s, in turn", run_elapsed(run), gi, line);
}

/* The member's warm-up: a quarter of a pass's phase of chase and of rmw, untimed, so its
 * first timed phase does not measure the first touches of its workers' caches and TLBs. */
static void member_warm(struct run *run, struct member *m, uint64_t budget)
{
	member_phase(run, m, BENCH_W_CHASE, 0, budget / 4, 0);
	if (m->live)
		member_phase(run, m, BENCH_W_RMW, 0, budget / 4, 0);
}

/* Member i's turn in pass k: create, build, attach, warm up, chase, rmw, tear down.  1 if it ran. */
static int member_turn(struct run *run, unsigned i, unsigned gi, unsigned k, uint64_t budget)
{
	struct member *m = &members[i];

	if (!m->c->usable || m->c->setup_only || bench_stop)
		return 0;
	m->live = 0;
	if (member_create(run, m, i, gi, 0) < 0 || !m->live) {
		member_release(run, m, i, 0);
		return 0;
	}
	bench_chase_build(m->reg.addr, run->opt->size, run_round_seed(0));
	member_attach(run, m, 0);
	if (m->live)
		member_warm(run, m, budget);
	if (m->live && !bench_stop)
		member_phase(run, m, BENCH_W_CHASE, k, budget, 1);
	if (m->live && !bench_stop)
		member_phase(run, m, BENCH_W_RMW, k, budget, 1);
	member_release(run, m, i, 0);
	return m->live;
}

/* The end of round r: each member's figure of it, the gains between them, the progress line.  ran. */
static int round_close(struct run *run, unsigned n, unsigned gi, unsigned r, int ran)
{
	for (unsigned i = 0; i < n; i++) {
		member_round_close(&members[i], BENCH_W_CHASE);
		member_round_close(&members[i], BENCH_W_RMW);
	}
	gains(members, n, BENCH_W_CHASE);
	gains(members, n, BENCH_W_RMW);
	progress_round(run, members, n, gi, r);
	return ran;
}

/*
 * Round r: BENCH_PASSES passes, each every member's turn with a phase of budget /
 * BENCH_PASSES, the order reversed on every other pass (A B C, C B A, A B C, then C B A ...
 * in the next round); a member's figure of the round is the mean of its passes.  Shorter
 * turns put A and B closer in time: on this kind of host a slow spell lasts seconds and
 * slows whichever member runs in it (one round read rmw 115 M/s for both 2 MiB members,
 * the others 160-180), so the two sides of a ratio should take turns often.  Then the
 * round's gains.  The members that ran, or -1 when stopping.
 */
static int group_round(struct run *run, unsigned n, unsigned gi, unsigned r)
{
	uint64_t budget = run->budget / BENCH_PASSES;
	int ran = 0;

	round_block = 0;
	for (unsigned i = 0; i < n; i++)
		members[i].have[BENCH_W_CHASE] = members[i].have[BENCH_W_RMW] = 0;
	for (unsigned p = 0; p < BENCH_PASSES && !bench_stop; p++) {
		unsigned k = r * BENCH_PASSES + p;

		ran = 0;
		for (unsigned j = 0; j < n && !bench_stop; j++)
			ran += member_turn(run, k % 2 ? n - 1 - j : j, gi, k, budget);
	}
	return bench_stop ? -1 : round_close(run, n, gi, r, ran);
}

/*
 * The members alive together, mixed (bench_os_mix()): each region made afresh takes the
 * free memory that comes next, and the host backs some of that with its own huge pages and
 * some not, so two regions made one after the other differ for their whole life (plain
 * against raw memfd at 4 KiB, the same system calls, read 1.03-1.05 in three repeats with
 * the same side slower).  Mixed page by page, both sides are on the same memory.  The order
 * of the members changes at random from step to step (the round's seed): in a fixed order
 * one member always took the first 64 KiB of every 128 KiB, and rmw read plain / raw
 * 0.94-1.06 from round to round, the two halves of a round agreeing within 0.01-0.02;
 * chase did not see it.  Most likely rmw, which keeps many misses in flight, feels how
 * memory spreads them over its channels and banks, and a chase, one miss at a time, does
 * not; random steps leave no address bit that tells the members apart.
 *
 * The members on a huge page pool are mixed the same way, a huge page at a time: the pool's
 * pages are not alike either.  Unmixed, memfd_hugetlb / raw memfd at 2 MiB read rmw 0.86,
 * 1.17, 0.87, 0.88 and 1.16 in the five rounds of one run, the rotation of places ("Places")
 * not enough: the pool did not hand every place the same pages every round.  If a pool's
 * pages cannot all be faulted in again (another program took some meanwhile), its members
 * would fault at their first touch, where a pool without pages is a SIGBUS: they leave the
 * run instead.
 */
static void mix_class(struct run *run, const unsigned *order, unsigned k, unsigned gi, unsigned r, size_t page,
		      int *unmixed)
{
	unsigned char *addr[BENCH_GROUP_MAX];
	size_t len[BENCH_GROUP_MAX];
	unsigned in[BENCH_GROUP_MAX];
	char why[BENCH_WHY_MAX], size[16];
	unsigned n = 0;
	int rc;

	for (unsigned j = 0; j < k; j++) {
		const struct member *m = &members[order[j]];

		if (m->live && m->c->page_size == page && m->c->kind != BENCH_APR && m->c->kind != BENCH_THP &&
		    (page == 0 || run->opt->size % page == 0)) {
			/* The size asked for, not the mapping: a re-attachable segment keeps its header
			 * in a page past it, which its workers read to attach. */
			in[n] = order[j];
			addr[n] = m->reg.addr;
			len[n++] = run->opt->size;
		}
	}
	if (n < 2 || bench_stop || (rc = bench_os_mix(addr, len, n, page, run_round_seed(r), why, sizeof(why))) == 0)
		return;
	run_short_size(page ? page : hpshm_base_page_size(), size, sizeof(size));
	if (rc == -2 && page != 0) {
		for (unsigned i = 0; i < n; i++) {
			run_unusable(members[in[i]].c, "its pages could not be mixed with its peers' and faulted in again: %s",
				     why);
			members[in[i]].live = 0;
		}
		return;
	}
	if (!*unmixed)
		bench_progress(run->opt, "[%6.1fs] group %u: the %s members are not mixed: %s", run_elapsed(run), gi, size,
			       why);
	*unmixed = 1;
}

static void group_mix(struct run *run, const unsigned *order, unsigned k, unsigned gi, unsigned r, int *unmixed)
{
	/* Each page size on its own, once: the first member of that size starts it. */
	for (unsigned j = 0; j < k; j++) {
		size_t page = members[order[j]].c->page_size;
		unsigned i = 0;

		while (i < j && members[order[i]].c->page_size != page)
			i++;
		if (i == j)
			mix_class(run, order, k, gi, r, page, unmixed);
	}
}

/*
 * How many turns a phase of budget CPU ns of workload w takes in a together round.  A chase
 * turn is as short as the CPU clock times well (bench_cpu_turn_ns(): 5 ms here), since the
 * host's noise is partly shared by turns close in time, and more of them cancel more of it.
 * An rmw turn is at least BENCH_RMW_TURN_NS: right after another member's turn, rmw ran 27 %
 * slower than right after its own at 5 ms (chase 6-8 %), a cost the blocks share out evenly
 * ("Blocks") but which still widens each one; at 10 ms the floor read 1.0005, 1.0069 and
 * 1.0025 in three runs of 250 blocks, at 50 ms 0.991-0.998 in four runs of 50 (where a
 * round's placement weighs more).  Never a turn under the clock's: a phase also ends after
 * four turns of wall time, and that must outlast a tick of the CPU clock (15.6 ms on
 * Windows), or a turn could read no CPU time at all.  A short --phase-seconds gets fewer
 * turns.
 */
static unsigned turns(uint64_t budget, enum bench_workload w, unsigned k)
{
	uint64_t turn = bench_cpu_turn_ns(), want;

	if (w == BENCH_W_RMW && turn < BENCH_RMW_TURN_NS)
		turn = BENCH_RMW_TURN_NS;
	want = budget / turn;
	want = want > BENCH_SLICES ? BENCH_SLICES : want;
	want -= want % k;
	return want < k ? k : (unsigned)want;
}

/*
 * Round r with the members alive together: each created (the order rotated by one from
 * round to round: "Places"), mixed (group_mix()), its chase built, its workers attached and
 * warmed up; then short turns of chase (200 of 5 ms at the default phase), then of rmw (100
 * of 10 ms; turns()), each turn every member for the budget over the turns, the order
 * rotated by one from turn to turn (A B C, B C A, C A B; with two, A B then B A); then all
 * torn down, the last created first.
 *
 * Turns of milliseconds cancel what the host's other tenants do to both sides, which a turn
 * of a whole create cannot (doc/bench.md, "The noise floor").  The rotation gives every
 * member every place equally often and, with three or more, never two phases in a row:
 * reversing the order instead (A B C, C B A) let the first and last run twice in a row, on
 * caches and TLBs still warm from their own phase, and never the middle one, which read
 * 1.5 % slow in every round against an equal peer.  Released in reverse and created in an order
 * rotated by one next round, the members trade memory: the pool hands back last in, first
 * out, so a place in the creation order tends to hold the same pages from round to round,
 * and in k rounds every member has had every place.  (Reversing the creation order instead
 * kept the middle of three on its pages for the whole run.)  The members that ran, or -1
 * when stopping.
 */
static int group_round_together(struct run *run, unsigned n, unsigned gi, unsigned r, int *unmixed)
{
	unsigned in[BENCH_GROUP_MAX], order[BENCH_GROUP_MAX], k = 0;
	int ran = 0;

	for (unsigned i = 0; i < n; i++) {
		members[i].have[BENCH_W_CHASE] = members[i].have[BENCH_W_RMW] = 0;
		for (unsigned s = 0; s < BENCH_SLICES; s++)
			members[i].turn[BENCH_W_CHASE][s] = members[i].turn[BENCH_W_RMW][s] = NAN;
		if (members[i].c->usable && !members[i].c->setup_only)
			in[k++] = i;
	}
	/* Created in an order rotated by one from round to round ("Places"). */
	for (unsigned j = 0; j < k; j++)
		order[j] = in[(j + r) % k];
	round_block = k;
	round_place = k ? r % k : 0;
	for (unsigned j = 0; j < k && !bench_stop; j++) {
		members[order[j]].live = 0;
		if (member_create(run, &members[order[j]], order[j], gi, 0) < 0)
			break;
	}
	group_mix(run, order, k, gi, r, unmixed);
	for (unsigned j = 0; j < k && !bench_stop; j++) {
		struct member *m = &members[order[j]];

		if (!m->live)
			continue;
		bench_chase_build(m->reg.addr, run->opt->size, run_round_seed(0));
		member_attach(run, m, 0);
		if (m->live)
			member_warm(run, m, run->budget / BENCH_PASSES);
	}
	for (enum bench_workload w = BENCH_W_CHASE; w <= BENCH_W_RMW && !bench_stop; w++) {
		unsigned slices = turns(run->budget, w, k ? k : 1);
		uint64_t slice = run->budget / slices;

		round_slices[w] = slices;
		for (unsigned s = 0; s < slices && !bench_stop; s++)
			for (unsigned j = 0; j < k && !bench_stop; j++) {
				struct member *m = &members[order[(j + s) % k]];

				if (m->live && m->created)
					m->turn[w][s] = member_phase(run, m, w, r * BENCH_SLICES + s, slice, 1);
			}
	}
	for (unsigned j = k; j-- > 0;) {
		ran += members[order[j]].live && members[order[j]].created;
		member_release(run, &members[order[j]], order[j], 0);
	}
	return bench_stop ? -1 : round_close(run, n, gi, r, ran);
}

/*
 * Run members g[0..n): the setup cycles, then the rounds, with the members alive together
 * in short turns where memory holds them all, else one at a time.  Returns the rounds
 * completed, -2 if no member could run, or -1 when stopping; the rounds every group
 * completed go to res->rounds_done either way.
 */
int group_run(struct run *run, const int *g, unsigned n, unsigned gi)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned done = 0;
	int ran = 0, k = 0, together, unmixed = 0;

	group_open(run, g, n, gi);
	(void)group_cycles(run, n, gi);
	together = fit_together(run, g, n);
	bench_progress(opt, "[%6.1fs] group %u: rounds with the members %s", run_elapsed(run), gi,
		       together ? "alive together, in short turns" : "in turn, one region alive at a time");
	for (unsigned r = 0; r < opt->rounds && !bench_stop; r++) {
		k = together ? group_round_together(run, n, gi, r, &unmixed) : group_round(run, n, gi, r);
		if (k <= 0)
			break;
		ran = 1;
		done = r + 1;
	}
	for (unsigned i = 0; i < n; i++)
		members[i].live = 0;
	run_note_add(res->groups_note, sizeof(res->groups_note), " %s",
		     !together ? "in turn" : unmixed ? "together, unmixed" : "together");
	if (ran && (run->groups_ran++ == 0 || done < res->rounds_done))
		res->rounds_done = done;
	if (bench_stop)
		return -1;
	if (!ran)
		return -2;
	bench_progress(opt, "[%6.1fs] group %u: done", run_elapsed(run), gi);
	return (int)done;
}
