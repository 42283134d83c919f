/* SPDX-License-Identifier: MIT */
/*
 * bench/latency.c -- what a server waits for at start, once per run after the groups.
 *
 * The create + verify + destroy of a small segment (one huge page) and of a large one
 * (1 GiB, populated), for each hpshm configuration with huge pages and its raw peer,
 * alternated, BENCH_LAT_RUNS times; and the probe of each provider (what `hpshm probe` and
 * provider=auto ask first).  Only where the pool has the pages now.  Wall time: a server
 * waits in wall time, and nothing else runs meanwhile.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "ports/facts.h"
#include "run.h"

/* Wall microseconds of one create + destroy of c's memory of size bytes, or NAN if it failed. */
static double latency_once(const struct bench_config *c, size_t size)
{
	struct bench_region reg;
	char why[BENCH_WHY_MAX];
	uint64_t t0 = bench_wall_ns();

	if (bench_region_create(c, NULL, size, &reg, why, sizeof(why)) < 0)
		return NAN;
	(void)bench_region_destroy(&reg);
	return (double)(bench_wall_ns() - t0) / 1e3;
}

/* One figure: h's create + destroy of size bytes, alternated with raw's when raw is not NULL. */
static void latency_figure(struct run *run, const struct bench_config *h, const struct bench_config *raw,
			   size_t size)
{
	struct bench_result *res = run->res;
	struct bench_latency *l = &res->lat[res->nlat];
	double a[BENCH_LAT_RUNS], b[BENCH_LAT_RUNS], g[BENCH_LAT_RUNS];
	unsigned n = 0, ng = 0;

	for (unsigned r = 0; r < BENCH_LAT_RUNS && !bench_stop; r++) {
		double x, y = NAN;

		if (raw && r % 2)
			y = latency_once(raw, size);
		x = latency_once(h, size);
		if (raw && !(r % 2))
			y = latency_once(raw, size);
		if (bench_isnan(x))
			break;
		a[n] = x;
		b[n++] = y;
		if (!bench_isnan(y) && x > 0)
			g[ng++] = y / x;
	}
	if (n == 0)
		return;
	memset(l, 0, sizeof(*l));
	snprintf(l->label, sizeof(l->label), "%s", h->label);
	if (ng)
		snprintf(l->raw_label, sizeof(l->raw_label), "%s", raw->label);
	l->page_size = h->page_size;
	l->size = size;
	bench_summarize(a, n, &l->us);
	if (ng) {
		bench_summarize(b, n, &l->raw_us);
		bench_summarize(g, ng, &l->vs_raw);
	}
	res->nlat++;
	bench_progress(run->opt, "[%6.1fs] latency %s %zu MiB: %.0f us%s", run_elapsed(run), l->label,
		       l->size >> 20, l->us.median, ng ? " (and its raw peer)" : "");
}

/* The creates: one huge page and 1 GiB, for each hpshm configuration verified huge. */
static void latency_creates(struct run *run)
{
	struct bench_result *res = run->res;

	/* Copies, each with its own sizes; static, as a configuration carries every sample. */
	static struct bench_config h, raw;

	for (unsigned i = 0; i < res->ncfg && !bench_stop; i++) {
		int has_raw = res->cfg[i].raw_ref >= 0 && res->cfg[res->cfg[i].raw_ref].usable;
		size_t sizes[2] = { res->cfg[i].page_size, GIB };

		if (res->cfg[i].kind != BENCH_HPSHM || !res->cfg[i].usable || !res->cfg[i].huge)
			continue;
		h = res->cfg[i];
		h.map_len = 0;
		if (has_raw) {
			raw = res->cfg[h.raw_ref];
			raw.map_len = 0;   /* rounded to whole pages of its own, as hpshm rounds */
		}
		for (unsigned z = 0; z < 2 && res->nlat < BENCH_MAX_LAT && !bench_stop; z++) {
			struct hpshm__pool p;

			if (z == 1 && sizes[1] == sizes[0])
				continue;
			if (hpshm__os_pool(h.page_size, &p) == 0 &&
			    hpshm__os_pool_available(&p) < (sizes[z] + h.page_size - 1) / h.page_size)
				continue;
			latency_figure(run, &h, has_raw ? &raw : NULL, sizes[z]);
		}
	}
}

/* The probes, as provider=auto makes them, at the default page size. */
static void latency_probes(struct run *run)
{
	struct bench_result *res = run->res;
	double a[BENCH_LAT_RUNS];
	char reason[HPSHM_TEXT_MAX];

	for (unsigned i = 0; i < res->ncfg && res->nlat < BENCH_MAX_LAT && !bench_stop; i++) {
		const struct bench_config *c = &res->cfg[i];
		struct bench_latency *l = &res->lat[res->nlat];
		unsigned n = 0;

		if (c->kind != BENCH_HPSHM || !c->usable || !c->huge || c->page_size != run->opt->page_sizes[0])
			continue;
		for (unsigned r = 0; r < BENCH_LAT_RUNS; r++) {
			uint64_t t0 = bench_wall_ns();

			(void)hpshm_provider_probe(c->provider, run->opt->size, NULL, NULL, reason, sizeof(reason));
			a[n++] = (double)(bench_wall_ns() - t0) / 1e3;
		}
		memset(l, 0, sizeof(*l));
		snprintf(l->label, sizeof(l->label), "probe %s", c->provider);
		l->page_size = c->page_size;
		l->size = run->opt->size;
		bench_summarize(a, n, &l->us);
		res->nlat++;
	}
}

void latency_run(struct run *run)
{
	latency_creates(run);
	latency_probes(run);
}
