/* SPDX-License-Identifier: MIT */
/*
 * tests/test_bench_stats.c -- the bench's figures from gains it is given (bench/stats.c).
 *
 * A row's gain over its peer is bench_placed_median() of the run's blocks of turns: the
 * median of each place in the creation rotation, the places weighed alike (bench/group.c,
 * "Places").  Made-up gains stand for a host whose two sets of pages differ, which no test
 * can order from a real one.
 */
#include <math.h>
#include <string.h>

#include "harness.h"

#include "bench.h"

static struct bench_block_gains gains;

/* Appends n blocks of gain g measured in place p. */
static void add(unsigned p, double g, unsigned n)
{
	for (unsigned i = 0; i < n && gains.n < BENCH_MAX_BLOCKS; i++) {
		gains.place[gains.n] = (unsigned char)p;
		gains.g[gains.n++] = g;
	}
}

static void reset(void)
{
	memset(&gains, 0, sizeof(gains));
}

TestSuite(bench_stats, .init = reset);

static int near(double got, double want)
{
	return fabs(got - want) < 1e-12;
}

/* Five rounds of two members, 50 blocks each: three rounds in place 0, two in place 1. */
Test(bench_stats, places_weigh_alike_whatever_their_rounds)
{
	struct bench_summary all;

	add(0, 0.8, 150);
	add(1, 1.25, 100);
	bench_summarize(gains.g, gains.n, &all);
	cr_assert(near(all.median, 0.8), "the median of every block leans to the place with more rounds");
	cr_assert(near(bench_placed_median(&gains), 1.0), "sqrt(0.8 * 1.25) is 1: got %f",
			   bench_placed_median(&gains));
}

Test(bench_stats, a_place_gives_the_median_of_its_own_blocks)
{
	add(1, 0.9, 3);
	add(1, 1.1, 2);
	add(1, 5.0, 2);   /* a burst: the median shrugs it off */
	add(3, 2.0, 1);
	cr_assert(near(bench_placed_median(&gains), sqrt(1.1 * 2.0)), "got %f", bench_placed_median(&gains));
}

Test(bench_stats, one_place_is_its_median_and_none_is_no_figure)
{
	cr_assert(isnan(bench_placed_median(&gains)), "no gains gave %f", bench_placed_median(&gains));
	add(0, 1.02, 5);
	add(0, 0.97, 4);
	cr_assert(near(bench_placed_median(&gains), 1.02), "got %f", bench_placed_median(&gains));
}
