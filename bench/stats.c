/* SPDX-License-Identifier: MIT */
/*
 * bench/stats.c -- medians and ranges.
 *
 * Every figure of the bench is a median with its min and max, never a mean: on a shared VM
 * one round in five can be slowed twofold by a neighbour, and a median shrugs that off
 * while the range still shows it happened.  Ratios are taken per round (A and B of the same
 * round ran seconds apart, on the same pages, under the same load) and then
 * summarized, rather than taking the ratio of two medians.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_summarize(const double *v, unsigned n, struct bench_summary *s)
{
	double sorted[BENCH_MAX_BLOCKS > BENCH_MAX_SAMPLES ? BENCH_MAX_BLOCKS : BENCH_MAX_SAMPLES];

	s->n = n;
	s->blocks = 0;
	if (n == 0) {
		s->median = s->min = s->max = NAN;
		return;
	}
	if (n > sizeof(sorted) / sizeof(sorted[0]))
		n = sizeof(sorted) / sizeof(sorted[0]);
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double bench_placed_median(const struct bench_block_gains *b)
{
	double g[BENCH_MAX_BLOCKS], logs = 0;
	unsigned places = 0;
	struct bench_summary s;

	for (unsigned p = 0; p < BENCH_GROUP_MAX; p++) {
		unsigned n = 0;

		for (unsigned i = 0; i < b->n; i++)
			if (b->place[i] == p)
				g[n++] = b->g[i];
		if (n == 0)
			continue;
		bench_summarize(g, n, &s);
		logs += log(s.median);
		places++;
	}
	return places ? exp(logs / places) : NAN;
}

/* Rates are better higher; latencies, times and sizes lower. */
int bench_higher_is_better(enum bench_workload w)
{
	return w == BENCH_W_RMW;
}

double bench_gain(enum bench_workload w, double v, double ref)
{
	return bench_higher_is_better(w) ? v / ref : ref / v;
}
