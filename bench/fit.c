/* SPDX-License-Identifier: MIT */
/*
 * bench/fit.c -- what memory allows in one group.
 *
 * The members of a group take turns (group.c), so a group holds one region at a time:
 * before it runs, its largest 4 KiB member is checked against 60 % of MemAvailable and one
 * region of each huge page size against what that pool can give, and what does not fit
 * runs in a further group with plain (fit_run), an hpshm provider and its raw peer always
 * together, with the gains that then have no common group left unmeasured rather than
 * taken across groups.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "ports/facts.h"
#include "run.h"

uint64_t fit_region_pages(const struct run *run, size_t ps)
{
	/* An unnamed segment keeps its header in a companion of base pages: the size alone. */
	return (run->opt->size + ps - 1) / ps;
}


/*
 * Whether members m[0..n) can take turns right now: the largest 4 KiB one (with room for
 * the workers' page tables) within 60 % of MemAvailable, and one region of each huge page
 * size within what its pool can still give.  0, or -1 with why.
 */
static int group_fits(struct run *run, const int *m, unsigned n, char *why, size_t len)
{
	const struct bench_options *opt = run->opt;
	uint64_t base = 0, avail = hpshm__os_mem_available();
	char a[32], b[32], ps[32];

	for (unsigned i = 0; i < n; i++)
		if (run->res->cfg[m[i]].page_size == 0)
			base = opt->size + opt->size / 512 * (1 + BENCH_PT_WORKERS);
	if (avail && (double)base > 0.6 * (double)avail) {
		snprintf(why, len, "%s of 4 KiB memory is more than 60%% of MemAvailable (%s)",
			 run_bytes(base, a, sizeof(a)), run_bytes(avail, b, sizeof(b)));
		return -1;
	}
	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		size_t size = opt->page_sizes[s];
		uint64_t need = fit_region_pages(run, size);
		unsigned k = 0;
		struct hpshm__pool p;

		for (unsigned i = 0; i < n; i++)
			k += run->res->cfg[m[i]].page_size == size;
		if (k == 0)
			continue;
		if (hpshm__os_pool(size, &p) == 0 && hpshm__os_pool_available(&p) < need) {
			unsigned long have = hpshm__os_pool_available(&p);

			snprintf(why, len, "the %s pool can give %lu pages, a region needs %llu: %llu pages short (add "
				 "them to the pool, or run with --reserve)", hpshm_size_format(size, ps, sizeof(ps)), have,
				 (unsigned long long)need, (unsigned long long)(need - have));
			return -1;
		}
	}
	return 0;
}


/*
 * For the rounds' short turns (group.c): every member that runs workers alive at once, its
 * 4 KiB ones (with their page tables) within 60 % of MemAvailable, and for each huge page
 * size as many regions as it has members within what the pool can give now.
 */
int fit_together(struct run *run, const int *m, unsigned n)
{
	const struct bench_options *opt = run->opt;
	uint64_t base = 0, avail = hpshm__os_mem_available();

	for (unsigned i = 0; i < n; i++) {
		const struct bench_config *c = &run->res->cfg[m[i]];

		/* THP and APR take their memory from the page allocator, as 4 KiB pages do */
		if (c->usable && !c->setup_only && (c->page_size == 0 || c->kind == BENCH_THP || c->kind == BENCH_APR))
			base += opt->size + opt->size / 512 * (1 + BENCH_PT_WORKERS);
	}
	if (!avail || (double)base > 0.6 * (double)avail)
		return 0;
	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		size_t size = opt->page_sizes[s];
		struct hpshm__pool p;
		unsigned k = 0;

		for (unsigned i = 0; i < n; i++) {
			const struct bench_config *c = &run->res->cfg[m[i]];

			k += c->usable && !c->setup_only && c->page_size == size && c->kind != BENCH_THP &&
			     c->kind != BENCH_APR;
		}
		if (k > 0 && (hpshm__os_pool(size, &p) < 0 || hpshm__os_pool_available(&p) < k * fit_region_pages(run, size)))
			return 0;
	}
	return 1;
}

/*
 * Order pending so that each hpshm member is followed by its raw peer when both are pending,
 * and say in unit[] how many members go together from each place (2 for a pair, 1 alone, 0
 * for the second of a pair): a group that memory splits then keeps pairs whole, and every
 * hpshm/raw ratio is still taken within one group.
 */
static void pair_up(const struct bench_result *res, int *pending, unsigned np, unsigned *unit)
{
	int out[BENCH_GROUP_MAX];
	unsigned char used[BENCH_GROUP_MAX] = { 0 };
	unsigned n = 0;

	for (unsigned i = 0; i < np; i++) {
		const struct bench_config *c = &res->cfg[pending[i]];

		if (used[i])
			continue;
		used[i] = 1;
		out[n] = pending[i];
		unit[n++] = 1;
		for (unsigned j = 0; j < np && c->kind == BENCH_HPSHM && c->raw_ref >= 0; j++)
			if (!used[j] && pending[j] == c->raw_ref) {
				used[j] = 1;
				unit[n - 1] = 2;
				out[n] = pending[j];
				unit[n++] = 0;
				break;
			}
	}
	memcpy(pending, out, np * sizeof(pending[0]));
}

/*
 * Which of pending[0..np) join the next group: in order, pairs whole (unit[], pair_up), while
 * they fit with the reference ref (-1: none).  They go to g[], the others to rest[] (*nr of
 * them), each said in the split note unless none fits at all.  Returns how many joined.
 */
static unsigned fit_take(struct run *run, const int *pending, unsigned np, const unsigned *unit, int ref, int *g,
			 int *rest, unsigned *nr)
{
	struct bench_result *res = run->res;
	char why[BENCH_WHY_MAX], ps[32];
	unsigned ng = 0;

	*nr = 0;
	for (unsigned i = 0; i < np; i += unit[i]) {
		unsigned k = unit[i];

		memcpy(&g[ng], &pending[i], k * sizeof(g[0]));
		if (ref >= 0)
			g[ng + k] = ref;
		if (group_fits(run, g, ng + k + (ref >= 0), why, sizeof(why)) == 0) {
			ng += k;
			continue;
		}
		memcpy(&rest[*nr], &pending[i], k * sizeof(rest[0]));
		*nr += k;
		if (ng == 0)
			continue;   /* not even with the reference alone: fit_alone() */
		for (unsigned j = i; j < i + k; j++) {
			run_note_add(res->split_note, sizeof(res->split_note), "%s%s %s kept out of group %u: %s",
				     res->split_note[0] ? "; " : "", res->cfg[pending[j]].label,
				     run_short_size(res->cfg[pending[j]].page_size, ps, sizeof(ps)), res->groups + 1, why);
			bench_progress(run->opt, "%s %s kept out of group %u: %s", res->cfg[pending[j]].label,
				       run_short_size(res->cfg[pending[j]].page_size, ps, sizeof(ps)), res->groups + 1, why);
		}
	}
	return ng;
}

/*
 * The first of rest[0..*nr) does not fit even with the reference ref alone: it leaves rest,
 * and runs alone, without a gain over plain, if it fits by itself (1: g[0] is the group), or
 * is unusable (0).
 */
static unsigned fit_alone(struct run *run, int ref, int *g, int *rest, unsigned *nr)
{
	struct bench_result *res = run->res;
	char why[BENCH_WHY_MAX], alone[BENCH_WHY_MAX], ps[32];

	g[0] = rest[0];
	g[1] = ref;
	memmove(rest, rest + 1, --*nr * sizeof(rest[0]));
	(void)group_fits(run, g, 1 + (ref >= 0), why, sizeof(why));   /* its own reason, for the note */
	if (group_fits(run, g, 1, alone, sizeof(alone)) < 0) {
		run_unusable(&res->cfg[g[0]], "not enough memory: %s", alone);
		bench_progress(run->opt, "cannot use %s: not enough memory: %s", res->cfg[g[0]].label, alone);
		return 0;
	}
	run_note_add(res->split_note, sizeof(res->split_note), "%s%s %s ran alone (no gain over plain): %s",
		     res->split_note[0] ? "; " : "", res->cfg[g[0]].label,
		     run_short_size(res->cfg[g[0]].page_size, ps, sizeof(ps)), why);
	return 1;
}

/*
 * Run the wanted group g, or as much of it as memory allows at once: members join while
 * they fit (with the reference), the others run in further groups with the reference.  A
 * member that does not fit even alone with it runs alone, and one that does not fit at all
 * is reported unusable.  Gains whose two sides end up in different groups are not measured,
 * and the split note says so.  Returns -1 when stopping.
 */
int fit_run(struct run *run, const struct group *want)
{
	struct bench_result *res = run->res;
	int pending[BENCH_GROUP_MAX], rest[BENCH_GROUP_MAX], g[BENCH_GROUP_MAX];
	unsigned np = 0;
	int ref = -1;

	for (unsigned i = 0; i < want->n; i++) {
		if (!res->cfg[want->m[i]].usable)
			continue;
		if (want->m[i] == run->plain)
			ref = run->plain;
		else
			pending[np++] = want->m[i];
	}
	if (np == 0)
		return 0;   /* plain alone compares nothing: bench_run() measures it alone only if no group had it */
	while (np > 0 && !bench_stop) {
		unsigned unit[BENCH_GROUP_MAX], ng, nr;

		pair_up(res, pending, np, unit);
		ng = fit_take(run, pending, np, unit, ref, g, rest, &nr);
		if (ng == 0)
			ng = fit_alone(run, ref, g, rest, &nr);
		else if (ref >= 0)
			g[ng++] = ref;
		if (ng > 0 && group_run(run, g, ng, ++res->groups) == -1)
			return -1;
		memcpy(pending, rest, nr * sizeof(rest[0]));
		np = nr;
	}
	return bench_stop ? -1 : 0;
}
