/* SPDX-License-Identifier: MIT */
/*
 * bench/resize_out.c -- the resize rows (resize.c) in the table and in JSON, beside
 * output.c's rows: a resize row is not one configuration's workload but one provider's
 * resize against the raw calls and against a new segment with a copy, so it has columns of
 * its own.  Its ratios are hpshm's time over the other's (costs: below 1 hpshm is faster),
 * not the gains of the other rows, and say so in their names.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "base/json.h"

static void rs_text_ratio(FILE *out, const char *name, const struct bench_summary *s)
{
	if (s->n)
		fprintf(out, "   %s %.3f [%.3f-%.3f]", name, s->median, s->min, s->max);
}

void bench_print_resize(FILE *out, const struct bench_result *res)
{
	char ps[32], a[32], b[32];

	if (res->nrs == 0 && res->rs_note[0] == '\0')
		return;
	fprintf(out, "\nresize (wall, median [min-max] of %d cycles, members alternated; hpshm/raw and hpshm/copy: "
		"its time over theirs per cycle, < 1 is faster)\n", BENCH_RS_RUNS);
	for (unsigned i = 0; i < res->nrs; i++) {
		const struct bench_resize *r = &res->rs[i];

		fprintf(out, "  %-6s %-14s %-6s %s -> %s: %.4g %s [%.4g-%.4g]", r->what, r->provider,
			hpshm_size_format(r->page_size, ps, sizeof(ps)), hpshm_size_format(r->from, a, sizeof(a)),
			hpshm_size_format(r->to, b, sizeof(b)), r->v.median, r->unit, r->v.min, r->v.max);
		if (strcmp(r->what, "sync") == 0)
			fprintf(out, " (a process attached by fork(), nothing to do, %d x %u calls)", BENCH_RS_SYNC_BATCHES,
				BENCH_RS_SYNC_CALLS);
		if (r->raw.n)
			fprintf(out, "   %s %.4g", r->raw_label, r->raw.median);
		rs_text_ratio(out, "hpshm/raw", &r->over_raw);
		if (r->copy.n)
			fprintf(out, "   new segment + copy %.4g", r->copy.median);
		rs_text_ratio(out, "hpshm/copy", &r->over_copy);
		fputc('\n', out);
	}
	if (res->rs_note[0])
		fprintf(out, "  note: %s\n", res->rs_note);
}

static void rs_json_summary(struct json *j, const char *key, const struct bench_summary *s, int decimals)
{
	char k[64];

	if (!s->n) {
		json_kv_null(j, key);
		return;
	}
	json_kv_double(j, key, s->median, decimals);
	snprintf(k, sizeof(k), "%s_min", key);
	json_kv_double(j, k, s->min, decimals);
	snprintf(k, sizeof(k), "%s_max", key);
	json_kv_double(j, k, s->max, decimals);
}

void bench_json_resize(struct json *j, const struct bench_result *res)
{
	json_key(j, "resize");
	json_array_open(j);
	for (unsigned i = 0; i < res->nrs; i++) {
		const struct bench_resize *r = &res->rs[i];

		json_object_open(j);
		json_kv_string(j, "what", r->what);
		json_kv_string(j, "segment_provider", r->provider);
		json_kv_uint(j, "page_size", r->page_size);
		json_kv_uint(j, "from", r->from);
		json_kv_uint(j, "to", r->to);
		json_kv_string(j, "unit", r->unit);
		json_kv_double(j, "median", r->v.median, 4);
		json_kv_double(j, "min", r->v.min, 4);
		json_kv_double(j, "max", r->v.max, 4);
		json_kv_uint(j, "samples", r->v.n);
		if (r->raw.n)
			json_kv_string(j, "raw", r->raw_label);
		else
			json_kv_null(j, "raw");
		rs_json_summary(j, "raw_median", &r->raw, 4);
		rs_json_summary(j, "hpshm_over_raw", &r->over_raw, 4);
		rs_json_summary(j, "copy_median", &r->copy, 4);
		rs_json_summary(j, "hpshm_over_copy", &r->over_copy, 4);
		json_object_close(j);
	}
	json_array_close(j);
	if (res->rs_note[0])
		json_kv_string(j, "resize_note", res->rs_note);
	else
		json_kv_null(j, "resize_note");
}
