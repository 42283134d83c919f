/* SPDX-License-Identifier: MIT */
/*
 * bench/resize.c -- the resize rows, once per run after the latencies: what growing and
 * shrinking a segment in place costs next to the raw calls doing the same, and next to what
 * a server does without it; and what hpshm_segment_sync() costs a process when nothing
 * changed.
 *
 * One hpshm provider with HPSHM_CAP_RESIZE is measured: the first huge one of the run at
 * the first page size whose pool can hold the rows, else plain at 4 KiB (the note says
 * which, and why).  A segment of S (64 MiB, less for a small --size) with max_size S + D
 * grows to S + D and shrinks back (D: 1 GiB, or --size when smaller, halved until the pool
 * or 40 % of MemAvailable holds the rows).  Three members take turns in each of
 * BENCH_RS_RUNS cycles, in alternating order, one region at a time as the groups do:
 *   hpshm   hpshm_segment_resize(S + D), then hpshm_segment_resize(S), which gives the pages
 *           back at once (no other process is attached); created with populate=off, so a
 *           grow is mprotect + fallocate, as the raw calls;
 *   raw     the same by hand (resize_posix.c): fallocate + mprotect, then mprotect PROT_NONE
 *           + fallocate(PUNCH_HOLE);
 *   copy    grow only: a new segment of S + D (populate=on, as a server makes its segment:
 *           every page taken before use, as a grow takes them), memcpy of S, destroy of the
 *           old one.
 * Each is timed by the wall clock (a server waits for it so), and each cycle gives the
 * ratios hpshm / raw and hpshm / copy: the members ran seconds apart on the pages the one
 * before had just given back.  The sync row: a child made by fork() (registered by hpshm's
 * fork handler, as any forked worker of a server) calls hpshm_segment_sync() in batches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/facts.h"
#include "run.h"

#define RS_BASE ((size_t)64 << 20)  /* S */

/* What the rows run on. */
struct rs_plan {
	char   provider[HPSHM_NAME_MAX];
	size_t page_size;   /* asked: 0 for base pages */
	size_t s, d;        /* from S to S + D */
};

/* A segment of provider at p's page size: size bytes, max_size max (0: none). */
static hpshm_segment *rs_segment(const struct rs_plan *p, size_t size, size_t max, int populate, char *why,
				 size_t len)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;
	char kv[192];

	if (hpshm_config_new(&cfg) < 0) {
		snprintf(why, len, "out of memory for a configuration");
		return NULL;
	}
	if (p->page_size)
		snprintf(kv, sizeof(kv), "provider=%s,huge_pages=on,huge_page_size=%zuk,populate=%s", p->provider,
			 p->page_size >> 10, populate ? "on" : "off");
	else
		snprintf(kv, sizeof(kv), "provider=%s,huge_pages=off,populate=%s", p->provider, populate ? "on" : "off");
	if (hpshm_config_parse(cfg, kv, &err) < 0 || hpshm_config_set_max_size(cfg, max, &err) < 0 ||
	    hpshm_segment_create(&seg, size, cfg, &err) < 0) {
		/* The message and the hint within a "could not use" line's room. */
		snprintf(why, len, "%.300s%s%.180s%s", err.message, err.hint[0] ? " (hint: " : "", err.hint,
			 err.hint[0] ? ")" : "");
		seg = NULL;
	}
	hpshm_config_free(cfg);
	return seg;
}

/* The last byte of a grown range can be written and read back. */
static int rs_touch(void *base, size_t size)
{
	volatile unsigned char *last = (unsigned char *)base + size - 1;

	*last = 0xa5;
	return *last == 0xa5 ? 0 : -1;
}

static double rs_ms(uint64_t t0, uint64_t t1)
{
	return (double)(t1 - t0) / 1e6;
}

/* hpshm's turn: grow and shrink times, ms. */
static int rs_turn_hpshm(const struct rs_plan *p, double *grow, double *shrink, size_t *verified, char *why,
			 size_t len)
{
	hpshm_segment *seg = rs_segment(p, p->s, p->s + p->d, 0, why, len);
	hpshm_error err;
	uint64_t t0, t1, t2;
	int rc;

	if (!seg)
		return -1;
	*verified = hpshm_segment_report(seg)->page_size;
	memset(hpshm_segment_address(seg), 0x5a, p->s);
	t0 = bench_wall_ns();
	rc = hpshm_segment_resize(seg, p->s + p->d, &err);
	t1 = bench_wall_ns();
	if (rc == 0 && (hpshm_segment_size(seg) < p->s + p->d || rs_touch(hpshm_segment_address(seg), p->s + p->d) < 0)) {
		snprintf(err.message, sizeof(err.message), "the grown segment is %zu bytes", hpshm_segment_size(seg));
		rc = -1;
	}
	t2 = bench_wall_ns();
	if (rc == 0)
		rc = hpshm_segment_resize(seg, p->s, &err);
	*grow = rs_ms(t0, t1);
	*shrink = rs_ms(t2, bench_wall_ns());
	if (rc < 0)
		snprintf(why, len, "hpshm_segment_resize: %.400s", err.message);
	(void)hpshm_segment_destroy(seg);
	return rc < 0 ? -1 : 0;
}

/* The raw calls' turn. */
static int rs_turn_raw(const struct rs_plan *p, double *grow, double *shrink, char *why, size_t len)
{
	struct bench_region r;
	uint64_t t0, t1, t2;
	int rc;

	if (bench_os_rs_create(p->page_size, p->s, p->s + p->d, &r, why, len) < 0)
		return -1;
	memset(r.addr, 0x5a, p->s);
	t0 = bench_wall_ns();
	rc = bench_os_rs_grow(&r, p->s + p->d, why, len);
	t1 = bench_wall_ns();
	if (rc == 0)
		rc = rs_touch(r.addr, p->s + p->d);
	t2 = bench_wall_ns();
	if (rc == 0)
		rc = bench_os_rs_shrink(&r, p->s, why, len);
	*grow = rs_ms(t0, t1);
	*shrink = rs_ms(t2, bench_wall_ns());
	(void)bench_os_region_release(&r);
	return rc;
}

/* What a server does without resize: a new segment of the new size, the old contents copied. */
static int rs_turn_copy(const struct rs_plan *p, double *copy, char *why, size_t len)
{
	hpshm_segment *old = rs_segment(p, p->s, 0, 1, why, len), *seg;
	uint64_t t0;

	if (!old)
		return -1;
	memset(hpshm_segment_address(old), 0x5a, p->s);
	t0 = bench_wall_ns();
	seg = rs_segment(p, p->s + p->d, 0, 1, why, len);
	if (seg) {
		memcpy(hpshm_segment_address(seg), hpshm_segment_address(old), p->s);
		(void)hpshm_segment_destroy(old);
		old = NULL;
		*copy = rs_ms(t0, bench_wall_ns());
		(void)hpshm_segment_destroy(seg);
	}
	if (old)
		(void)hpshm_segment_destroy(old);
	return seg ? 0 : -1;
}

/* Fill row from hpshm's samples a, the raw's b and the copy's c (each NAN where missing). */
static void rs_row(struct bench_resize *row, const char *what, const struct rs_plan *p, size_t verified,
		   const double *a, const double *b, const double *c, unsigned n, int grow)
{
	double ra[BENCH_RS_RUNS], rc[BENCH_RS_RUNS], vb[BENCH_RS_RUNS], vc[BENCH_RS_RUNS];
	unsigned na = 0, nc = 0, nb = 0, ncc = 0;

	memset(row, 0, sizeof(*row));
	snprintf(row->what, sizeof(row->what), "%s", what);
	snprintf(row->provider, sizeof(row->provider), "%s", p->provider);
	snprintf(row->unit, sizeof(row->unit), "ms");
	row->page_size = verified;
	row->from = grow ? p->s : p->s + p->d;
	row->to = grow ? p->s + p->d : p->s;
	for (unsigned i = 0; i < n; i++) {
		if (!bench_isnan(b[i])) {
			vb[nb++] = b[i];
			if (b[i] > 0)
				ra[na++] = a[i] / b[i];
		}
		if (c && !bench_isnan(c[i])) {
			vc[ncc++] = c[i];
			if (c[i] > 0)
				rc[nc++] = a[i] / c[i];
		}
	}
	bench_summarize(a, n, &row->v);
	if (nb) {
		snprintf(row->raw_label, sizeof(row->raw_label), "raw memfd%s", p->page_size ? "" : " 4KiB");
		bench_summarize(vb, nb, &row->raw);
	}
	if (na)
		bench_summarize(ra, na, &row->over_raw);
	if (ncc)
		bench_summarize(vc, ncc, &row->copy);
	if (nc)
		bench_summarize(rc, nc, &row->over_copy);
}

/* The cycles of grow and shrink, members in turn; the order reversed every other cycle. */
static int rs_cycles(struct run *run, const struct rs_plan *p, char *why, size_t len)
{
	struct bench_result *res = run->res;
	double hg[BENCH_RS_RUNS], hs[BENCH_RS_RUNS], rg[BENCH_RS_RUNS], rsh[BENCH_RS_RUNS], cp[BENCH_RS_RUNS];
	size_t verified = 0;
	unsigned n = 0;

	for (unsigned k = 0; k < BENCH_RS_RUNS && !bench_stop; k++, n++) {
		rg[k] = rsh[k] = cp[k] = NAN;
		for (unsigned t = 0; t < 3; t++) {
			unsigned m = k % 2 ? 2 - t : t;
			char mwhy[BENCH_WHY_MAX];

			if (m == 0 && rs_turn_hpshm(p, &hg[k], &hs[k], &verified, why, len) < 0)
				return -1;
			/* The others only lose their ratio when they cannot run. */
			if (m == 1 && rs_turn_raw(p, &rg[k], &rsh[k], mwhy, sizeof(mwhy)) < 0)
				rg[k] = rsh[k] = NAN;
			if (m == 2 && rs_turn_copy(p, &cp[k], mwhy, sizeof(mwhy)) < 0)
				cp[k] = NAN;
		}
	}
	if (n == 0)
		return -1;
	rs_row(&res->rs[res->nrs++], "grow", p, verified, hg, rg, cp, n, 1);
	rs_row(&res->rs[res->nrs++], "shrink", p, verified, hs, rsh, NULL, n, 0);
	return 0;
}

/* In the forked child: ns per hpshm_segment_sync() with nothing to do, per batch. */
static void rs_sync_child(void *arg, double *out, unsigned n)
{
	hpshm_segment *seg = arg;

	for (unsigned b = 0; b < n; b++) {
		uint64_t t0 = bench_wall_ns();
		int bad = 0;

		for (unsigned i = 0; i < BENCH_RS_SYNC_CALLS; i++)
			bad |= hpshm_segment_sync(seg, NULL);
		out[b] = bad ? NAN : (double)(bench_wall_ns() - t0) / BENCH_RS_SYNC_CALLS;
	}
}

static int rs_sync(struct run *run, const struct rs_plan *p, char *why, size_t len)
{
	struct bench_result *res = run->res;
	struct bench_resize *row = &res->rs[res->nrs];
	double out[BENCH_RS_SYNC_BATCHES];
	hpshm_segment *seg = rs_segment(p, p->s, p->s + p->d, 0, why, len);
	int rc;

	if (!seg)
		return -1;
	rc = bench_os_forked(rs_sync_child, seg, out, BENCH_RS_SYNC_BATCHES, why, len);
	if (rc == 0) {
		for (unsigned i = 0; i < BENCH_RS_SYNC_BATCHES; i++)
			if (bench_isnan(out[i]))
				rc = -1;
		if (rc < 0)
			snprintf(why, len, "hpshm_segment_sync failed in the forked process");
	}
	if (rc == 0) {
		memset(row, 0, sizeof(*row));
		snprintf(row->what, sizeof(row->what), "sync");
		snprintf(row->provider, sizeof(row->provider), "%s", p->provider);
		snprintf(row->unit, sizeof(row->unit), "ns/call");
		row->page_size = hpshm_segment_report(seg)->page_size;
		row->from = row->to = hpshm_segment_size(seg);
		bench_summarize(out, BENCH_RS_SYNC_BATCHES, &row->v);
		res->nrs++;
	}
	(void)hpshm_segment_destroy(seg);
	return rc;
}

/* Does provider resize in place? */
static int rs_can(const char *provider)
{
	unsigned caps = 0;
	const char *name;

	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if (strcmp(name, provider) == 0)
			return (caps & HPSHM_CAP_RESIZE) != 0;
	return 0;
}

/* Halve D (and S with it when S is larger) until need(S, D) bytes fit in room; 0 if they never do. */
static int rs_fit(struct rs_plan *p, uint64_t room, size_t unit)
{
	while ((uint64_t)(2 * p->s + p->d) + 4 * (uint64_t)unit > room) {
		if (p->d <= 8 * unit)
			return 0;
		p->d /= 2;
		if (p->s > p->d)
			p->s = p->d;
	}
	return 1;
}

/* The provider and sizes: the first huge one whose pool holds the rows, else plain at 4 KiB. */
static int rs_plan_pick(struct run *run, struct rs_plan *p, char *note, size_t len)
{
	const struct bench_result *res = run->res;
	size_t d = run->opt->size < GIB ? run->opt->size : GIB;
	char ps[32], b[32];

	note[0] = '\0';
	for (unsigned i = 0; i < res->ncfg; i++) {
		const struct bench_config *c = &res->cfg[i];
		struct hpshm__pool pool;

		if (c->kind != BENCH_HPSHM || !c->usable || !c->huge || !rs_can(c->provider) ||
		    hpshm__os_pool(c->page_size, &pool) < 0)
			continue;
		snprintf(p->provider, sizeof(p->provider), "%s", c->provider);
		p->page_size = c->page_size;
		p->d = d / c->page_size * c->page_size;
		p->s = p->d < RS_BASE ? p->d : RS_BASE;
		if (p->d && rs_fit(p, (uint64_t)hpshm__os_pool_available(&pool) * c->page_size, c->page_size))
			return 0;
		run_note_add(note, len, "the %s pool can give %lu pages, too few for %s's rows; ",
			     run_short_size(c->page_size, ps, sizeof(ps)), hpshm__os_pool_available(&pool), c->provider);
	}
	if (run->plain < 0 || !rs_can("plain")) {
		run_note_add(note, len, "no provider of this run resizes in place");
		return -1;
	}
	snprintf(p->provider, sizeof(p->provider), "plain");
	p->page_size = 0;
	p->d = d;
	p->s = p->d < RS_BASE ? p->d : RS_BASE;
	if (!rs_fit(p, hpshm__os_mem_available() / 10 * 4, 4096)) {
		run_note_add(note, len, "40%% of MemAvailable (%s) holds no resize rows", run_bytes(hpshm__os_mem_available(),
			     b, sizeof(b)));
		return -1;
	}
	run_note_add(note, len, "%sat 4 KiB pages (plain)", note[0] ? "so " : "no huge page provider that resizes: ");
	return 0;
}

void resize_run(struct run *run)
{
	struct bench_result *res = run->res;
	struct rs_plan p;
	char why[BENCH_WHY_MAX] = "", a[32], b[32];

	res->nrs = 0;
	if (rs_plan_pick(run, &p, res->rs_note, sizeof(res->rs_note)) < 0)
		return;
	bench_progress(run->opt, "[%6.1fs] resize %s: %s -> %s, %u cycles", run_elapsed(run), p.provider,
		       hpshm_size_format(p.s, a, sizeof(a)), hpshm_size_format(p.s + p.d, b, sizeof(b)), BENCH_RS_RUNS);
	if (rs_cycles(run, &p, why, sizeof(why)) < 0 && !bench_stop)
		run_note_add(res->rs_note, sizeof(res->rs_note), "%sgrow and shrink not measured: %s",
			     res->rs_note[0] ? "; " : "", why);
	if (!bench_stop && rs_sync(run, &p, why, sizeof(why)) < 0)
		run_note_add(res->rs_note, sizeof(res->rs_note), "%ssync not measured: %s", res->rs_note[0] ? "; " : "",
			     why);
}
