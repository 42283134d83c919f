/* SPDX-License-Identifier: MIT */
/*
 * bench/output.c -- the results as rows, and the rows as a table, CSV or JSON.
 *
 * All three formats come from one list of rows (bench_rows), so they cannot disagree.  A
 * row is one configuration's figure for one workload: the median over its samples by thread
 * CPU time with its min and max (one sample per round for chase and rmw, one per group for
 * setup, attach and teardown), the wall-time median beside it, and the gains over plain
 * 4 KiB pages and over the raw system calls, each the median [min, max] of the ratios group.c
 * took within one group and round.  A gain is oriented so that above 1 is better whatever
 * the unit: value / ref for rates, ref / value for times and sizes.  Ratios that were not
 * measured (the two sides never in one group) are null in JSON and "-" in the table.
 *
 * The page size shown is the verified one (the segment's report, or smaps for the peers),
 * never the one asked for.
 *
 * JSON goes through the writer of base/ (base/json.h), which keeps the output valid when a
 * kernel-supplied reason carries odd bytes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "base/json.h"
#include "os.h"

static const struct {
	enum bench_workload w;   /* which series */
	const char *workload;    /* JSON workload */
	const char *metric;      /* what of it */
	const char *unit;        /* the figure's unit */
} bench_kinds[] = {
	{ BENCH_W_CHASE,    "chase",    "chase",    "ns/access"  },
	{ BENCH_W_RMW,      "rmw",      "rmw",      "accesses/s" },
	{ BENCH_W_SETUP,    "setup",    "create",   "s/GiB"      },
	{ BENCH_W_ATTACH,   "setup",    "attach",   "s/worker"   },
	{ BENCH_W_TEARDOWN, "teardown", "teardown", "s"          },
	{ BENCH_W_POPULATE, "setup",    "populate", "s/GiB"      },
	{ BENCH_W_SETUP_REST, "setup",  "rest",     "s/GiB"      },
};

/* The gains of c over its reference for series w, taken per round in their group, summarized. */
static int ratios(const double *g, unsigned n, struct bench_summary *out)
{
	bench_summarize(g, n, out);
	return n > 0;
}

/* An access row's gain: the median block of turns of each place of the run, the places
 * weighed alike (group.c, "Blocks" and "Places"), with the rounds' range; else the median of
 * the rounds. */
static int access_ratios(const double *rounds, unsigned n, const struct bench_block_gains *blocks,
			 struct bench_summary *out)
{
	int have = ratios(rounds, n, out);

	if (have && blocks && blocks->n > 0) {
		out->median = bench_placed_median(blocks);
		out->blocks = blocks->n;
	}
	return have;
}

/* The reference configuration idx, if it ran and is not c itself (a ratio to itself says nothing). */
static const struct bench_config *ref_of(const struct bench_result *res, const struct bench_config *c, int idx)
{
	return idx >= 0 && res->cfg[idx].usable && &res->cfg[idx] != c ? &res->cfg[idx] : NULL;
}

static void one_value(struct bench_summary *s, double v)
{
	s->median = s->min = s->max = v;
	s->n = 1;
}

unsigned bench_rows(const struct bench_result *res, struct bench_row *rows, unsigned max)
{
	static const unsigned pt_workers[3] = { 1, 2, BENCH_PT_WORKERS };
	unsigned n = 0;

	for (size_t k = 0; k < sizeof(bench_kinds) / sizeof(bench_kinds[0]); k++) {
		for (unsigned i = 0; i < res->ncfg && n < max; i++) {
			const struct bench_config *c = &res->cfg[i];
			const struct bench_config *plain = ref_of(res, c, c->plain_ref), *raw = ref_of(res, c, c->raw_ref);
			const struct bench_series *s = &c->s[bench_kinds[k].w];
			const struct bench_blocks *blk = bench_kinds[k].w <= BENCH_W_RMW ? &c->blk[bench_kinds[k].w] : NULL;
			struct bench_summary ws;
			struct bench_row *row = &rows[n];

			if (!c->usable || s->n == 0)
				continue;
			memset(row, 0, sizeof(*row));
			row->c = c;
			row->workload = bench_kinds[k].workload;
			row->metric = bench_kinds[k].metric;
			row->unit = bench_kinds[k].unit;
			row->higher_is_better = bench_higher_is_better(bench_kinds[k].w);
			row->per_group = bench_kinds[k].w != BENCH_W_CHASE && bench_kinds[k].w != BENCH_W_RMW;
			row->workers = bench_kinds[k].w == BENCH_W_ATTACH || !row->per_group ? c->workers : 1;
			bench_summarize(s->cpu, s->n, &row->v);
			bench_summarize(s->wall, s->n, &ws);
			row->wall_median = ws.median;
			row->faults = NAN;
			if (plain)
				row->has_plain = access_ratios(s->vs_plain, s->n_plain, blk ? &blk->vs_plain : NULL,
							       &row->vs_plain);
			if (raw)
				row->has_raw = access_ratios(s->vs_raw, s->n_raw, blk ? &blk->vs_raw : NULL, &row->vs_raw);
			if (ref_of(res, c, c->raw1_ref))
				row->has_raw1 = ratios(s->vs_raw1, s->n_raw1, &row->vs_raw1);
			if (ref_of(res, c, c->limit_ref))
				row->has_limit = ratios(s->of_limit, s->n_limit, &row->of_limit);
			n++;
		}
	}
	for (unsigned i = 0; i < res->ncfg; i++) {
		const struct bench_config *c = &res->cfg[i];
		const struct bench_config *plain = ref_of(res, c, c->plain_ref), *raw = ref_of(res, c, c->raw_ref);

		if (!c->usable || !c->pt_done)
			continue;
		for (int k = 0; k < 3 && n < max; k++) {
			struct bench_row *row = &rows[n];

			/* A count that was sampled keeps its row even where the OS offers no page-table
			 * figure (Windows): the row then says so, and JSON has null. */
			if (!(c->pt_sampled & (1u << k)))
				continue;
			memset(row, 0, sizeof(*row));
			row->c = c;
			row->workload = row->metric = "pagetables";
			row->unit = "KiB/worker";
			row->workers = pt_workers[k];
			row->deterministic = 1;
			one_value(&row->v, c->pt_kib[k]);
			row->wall_median = NAN;
			row->faults = c->pt_faults[k];
			if (plain && !bench_isnan(plain->pt_kib[k]) && !bench_isnan(c->pt_kib[k])) {
				row->has_plain = 1;
				one_value(&row->vs_plain, c->pt_kib[k] > 0 ? plain->pt_kib[k] / c->pt_kib[k] : INFINITY);
			}
			if (raw && !bench_isnan(raw->pt_kib[k]) && !bench_isnan(c->pt_kib[k])) {
				row->has_raw = 1;
				one_value(&row->vs_raw, c->pt_kib[k] > 0 ? raw->pt_kib[k] / c->pt_kib[k] :
					  raw->pt_kib[k] > 0 ? INFINITY : 1.0);
			}
			n++;
		}
	}
	return n;
}

/* ---- the headline ------------------------------------------------------------------------ */

/*
 * What hpshm keeps of what the hardware gives, per workload and huge page size: an hpshm
 * row's gain over plain next to the gain of its raw peer (the same system calls, the same
 * page size, in the same group) over plain.  The page size gain is the host's and swings
 * from day to day; the part hpshm owns is the share of it that it keeps.
 */
struct headline {
	const struct bench_row *h;   /* the hpshm row */
	const struct bench_row *r;   /* its raw peer's row of the same workload, NULL if none ran */
	double kept;                 /* h's gain over plain / r's, NAN when either is missing */
};

static unsigned headlines(const struct bench_result *res, const struct bench_row *rows, unsigned n,
			  struct headline *out, unsigned max)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n && k < max; i++) {
		const struct bench_row *h = &rows[i];

		if ((strcmp(h->workload, "chase") != 0 && strcmp(h->workload, "rmw") != 0) || h->c->kind != BENCH_HPSHM ||
		    !h->c->huge)
			continue;
		out[k].h = h;
		out[k].r = NULL;
		for (unsigned j = 0; j < n; j++)
			if (h->c->raw_ref >= 0 && rows[j].c == &res->cfg[h->c->raw_ref] &&
			    strcmp(rows[j].workload, h->workload) == 0)
				out[k].r = &rows[j];
		/* Only when hpshm and raw shared a group (has_raw): gains from two groups are not one comparison. */
		out[k].kept = out[k].r && h->has_raw && h->has_plain && out[k].r->has_plain && out[k].r->vs_plain.median > 0 ?
			      h->vs_plain.median / out[k].r->vs_plain.median : NAN;
		k++;
	}
	return k;
}

static void print_headlines(FILE *out, const struct bench_result *res, const struct bench_row *rows, unsigned n)
{
	struct headline hl[BENCH_MAX_CONFIGS * 2];
	unsigned k = headlines(res, rows, n, hl, sizeof(hl) / sizeof(hl[0]));
	char ps[32];

	for (unsigned i = 0; i < k; i++) {
		const struct headline *x = &hl[i];

		fprintf(out, "headline: %s %s: %s ", x->h->workload, hpshm_size_format(x->h->c->verified_page_size, ps,
			sizeof(ps)), x->h->c->label);
		if (x->h->has_plain)
			fprintf(out, "%.3gx plain", x->h->vs_plain.median);
		else
			fprintf(out, "- plain");
		if (bench_isnan(x->kept)) {
			fprintf(out, ", %s: not measured in one group with it\n", x->r ? x->r->c->label : "raw");
			continue;
		}
		fprintf(out, ", %s %.3gx plain: hpshm keeps %.0f %% of what the hardware gives", x->r->c->label,
			x->r->vs_plain.median, 100 * x->kept);
		if (x->h->has_raw)
			fprintf(out, " (hpshm/raw %.3gx, rounds [%.3g-%.3g])", x->h->vs_raw.median, x->h->vs_raw.min,
				x->h->vs_raw.max);
		fputc('\n', out);
	}
}

static const char *start_name(enum bench_start s)
{
	return s == BENCH_START_SPAWN ? "spawn" : s == BENCH_START_FORK ? "fork" : "threads";
}

/* How the run started its workers, as --fork and --threads chose. */
static const char *run_start(const struct bench_options *o)
{
	return o->fork_mode ? "fork" : o->thread_mode ? "threads" : "spawn";
}

static char *page_text(const struct bench_config *c, char *buf, size_t len)
{
	char s[32];

	snprintf(buf, len, "%s", c->verified_page_size ? hpshm_size_format(c->verified_page_size, s, sizeof(s)) :
		 "unknown");
	return buf;
}

/* A figure in 4 significant digits, readable for ns, rates and tiny times alike. */
static char *num(double v, char *buf, size_t len)
{
	if (bench_isnan(v))
		snprintf(buf, len, "-");
	else if (bench_isinf(v))
		snprintf(buf, len, "inf");
	else if (fabs(v) >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else
		snprintf(buf, len, "%.4g", v);
	return buf;
}

static char *ratio_text(int have, const struct bench_summary *s, int exact, char *buf, size_t len)
{
	char a[24];

	if (!have)
		snprintf(buf, len, "-");
	else if (exact || s->n == 1)
		snprintf(buf, len, "%sx", num(s->median, a, sizeof(a)));
	else
		snprintf(buf, len, "%.3gx [%.3g-%.3g]", s->median, s->min, s->max);
	return buf;
}

static void print_unusable(FILE *out, const struct bench_result *res)
{
	int any = res->thp_why[0] || res->apr_why[0];
	char ps[32];

	for (unsigned i = 0; i < res->ncfg; i++)
		any |= !res->cfg[i].usable;
	if (!any)
		return;
	fprintf(out, "\ncould not use:\n");
	for (unsigned i = 0; i < res->ncfg; i++) {
		const struct bench_config *c = &res->cfg[i];

		if (!c->usable)
			fprintf(out, "  %s %s: %s\n", c->label, c->page_size ? hpshm_size_format(c->page_size, ps, sizeof(ps)) :
				"4KiB", c->why);
	}
	if (res->thp_why[0])
		fprintf(out, "  thp: %s\n", res->thp_why);
	if (res->apr_why[0])
		fprintf(out, "  apr: %s\n", res->apr_why);
}

/* Under a create row: its populate threads, its gain over the raw calls with one thread,
 * and its share of the limit (the limit's time over its own), where measured. */
static void print_threads(FILE *out, const struct bench_row *row)
{
	char a[48], b[48];

	if (row->c->kind == BENCH_LIMIT) {
		fprintf(out, "  %-14s %u thread%s: %s\n", "", row->c->threads, row->c->threads == 1 ? "" : "s", row->c->note);
		return;
	}
	if (!row->has_raw1 && !row->has_limit)
		return;
	fprintf(out, "  %-14s %u populate thread%s%s%s%s; vs raw x1 %s; share of limit %s\n", "", row->c->threads,
		row->c->threads == 1 ? "" : "s", row->c->by_hand ? " (" : "", row->c->by_hand ? row->c->note : "",
		row->c->by_hand ? ")" : "", ratio_text(row->has_raw1, &row->vs_raw1, 0, a, sizeof(a)),
		ratio_text(row->has_limit, &row->of_limit, 0, b, sizeof(b)));
}

/*
 * The bench's own noise floor: plain and its raw peer at 4 KiB make the same system calls
 * (memfd on Linux, a paging-file section on Windows), so their ratio would be 1.00 on a
 * perfect machine, and how far it strays is how far any other ratio of the run can be
 * trusted.  The chase and rmw rows of plain's vs raw.
 */
static const struct bench_row *noise_row(const struct bench_result *res, const struct bench_row *rows, unsigned n,
					 const char *workload)
{
	(void)res;
	for (unsigned i = 0; i < n; i++)
		if (rows[i].c->kind == BENCH_HPSHM && strcmp(rows[i].c->provider, "plain") == 0 && rows[i].has_raw &&
		    strcmp(rows[i].workload, workload) == 0)
			return &rows[i];
	return NULL;
}

/*
 * The pair's other side, named as the OS's raw peer of plain is ("raw memfd" on Linux, "raw
 * section" on Windows), also when the run measured neither row (JSON names the pair anyway).
 */
static const char *noise_peer(const struct bench_result *res, const struct bench_row *c, const struct bench_row *r,
			      char *buf, size_t len)
{
	const struct bench_row *row = c ? c : r;
	enum bench_kind kind;

	if (row && row->c->raw_ref >= 0 && (unsigned)row->c->raw_ref < res->ncfg)
		return res->cfg[row->c->raw_ref].label;
	(void)bench_os_raw_peer("plain", BENCH_START_SPAWN, &kind, buf, len);
	return buf;
}

static void print_noise(FILE *out, const struct bench_result *res, const struct bench_row *rows, unsigned n)
{
	const struct bench_row *c = noise_row(res, rows, n, "chase"), *r = noise_row(res, rows, n, "rmw");
	char a[48], b[48], peer[64];

	if (!c && !r)
		return;
	fprintf(out, "noise floor: plain / %s at 4 KiB (the same system calls): chase %s, rmw %s",
		noise_peer(res, c, r, peer, sizeof(peer)), ratio_text(c != NULL, c ? &c->vs_raw : NULL, 0, a, sizeof(a)),
		ratio_text(r != NULL, r ? &r->vs_raw : NULL, 0, b, sizeof(b)));
	if (c && r && c->vs_raw.blocks && r->vs_raw.blocks)
		fprintf(out, " (medians of %u and %u blocks of turns)", c->vs_raw.blocks, r->vs_raw.blocks);
	fputc('\n', out);
}

void bench_print_text(FILE *out, const struct bench_result *res)
{
	static struct bench_row rows[BENCH_MAX_CONFIGS * 8];
	unsigned n = bench_rows(res, rows, sizeof(rows) / sizeof(rows[0]));
	const char *last = "";
	char size[32], ps[32], a[16], b[16], c[16], w[16], p[64], r[48], rr[48];
	char populate_title[96];
	int pt_said = 0;

	fprintf(out, "hpshm bench: %s, %u worker%s (%s), %u of %u rounds in each of %u group%s, %.2g CPU-s per phase, "
		"%.0f s\n", hpshm_size_format(res->opt.size, size, sizeof(size)), res->opt.workers,
		res->opt.workers == 1 ? "" : "s", run_start(&res->opt), res->rounds_done, res->opt.rounds,
		res->groups, res->groups == 1 ? "" : "s", res->opt.phase_seconds, res->seconds);
	fprintf(out, "figures: median [min-max] by thread CPU time, over rounds (chase, rmw) or fresh setup cycles (setup, teardown);\n"
		"wall: median by wall clock; vs plain / vs raw: median [min-max] of the gains taken within one group\n"
		"and round (chase, rmw together: the median of every block of turns, the rounds' range), > 1 is better\n");
	if (res->groups_note[0])
		fprintf(out, "groups (together: alive together, in short turns; in turn: one region alive at a time): %s\n",
			res->groups_note);
	if (res->split_note[0])
		fprintf(out, "kept apart by memory: %s\n", res->split_note);
	if (res->pool_note[0])
		fprintf(out, "pool: %s\n", res->pool_note);
	if (res->left_out && res->left_out[0])
		fprintf(out, "left out: %s\n", res->left_out);
	if (res->caveat && res->caveat[0])
		fprintf(out, "caveat: %s\n", res->caveat);
	print_noise(out, res, rows, n);
	print_headlines(out, res, rows, n);
	snprintf(populate_title, sizeof(populate_title), "setup, part 1: populate (%s), wall",
		 res->populate_how ? res->populate_how : "?");
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *row = &rows[i];
		const char *title = strcmp(row->workload, "setup") == 0 ? row->metric : row->workload;

		if (strcmp(title, last) != 0) {
			fprintf(out, "\n%s (%s%s)\n", strcmp(title, "create") == 0 ? "setup: create + populate, by wall time (the wall column: the controller's CPU)" :
				strcmp(title, "attach") == 0 ? "setup: attach = map + touch, per worker" :
				strcmp(title, "populate") == 0 ? populate_title :
				strcmp(title, "rest") == 0 ? "setup, part 2: the rest of the create (map, probe, verify, header), wall" :
				title, row->unit, row->deterministic ? ", exact" : row->per_group ? ", fresh setup cycles" : "");
			fprintf(out, "  %-14s %-6s %-20s %3s  %-30s %-9s %-24s %s\n", "provider", "page", "verified by", "wk",
				"median [min-max]", "wall", "vs plain", "vs raw");
			last = title;
		}
		if (row->deterministic && bench_isnan(row->v.median))
			snprintf(p, sizeof(p), "- (%s faults)", num(row->faults, b, sizeof(b)));
		else if (row->deterministic)
			snprintf(p, sizeof(p), "%s (%s faults)", num(row->v.median, a, sizeof(a)), num(row->faults, b, sizeof(b)));
		else
			snprintf(p, sizeof(p), "%s [%s-%s]", num(row->v.median, a, sizeof(a)), num(row->v.min, b, sizeof(b)),
				 num(row->v.max, c, sizeof(c)));
		fprintf(out, "  %-14s %-6s %-20s %3u  %-30s %-9s %-24s %s\n", row->c->label,
			page_text(row->c, ps, sizeof(ps)), row->c->verified_by, row->workers, p,
			num(row->wall_median, w, sizeof(w)),
			ratio_text(row->has_plain, &row->vs_plain, row->deterministic, r, sizeof(r)),
			ratio_text(row->has_raw, &row->vs_raw, row->deterministic, rr, sizeof(rr)));
		if (strcmp(row->metric, "create") == 0)
			print_threads(out, row);
		/* Why there is no figure, once: it is the system's, the same for every row. */
		if (row->deterministic && bench_isnan(row->v.median) && res->pt_absent && res->pt_absent[0] && !pt_said) {
			fprintf(out, "  %-14s page tables %s\n", "", res->pt_absent);
			pt_said = 1;
		}
	}
	if (res->nlat)
		fprintf(out, "\nlatency (us, wall, median [min-max] of %d runs; create + populate + verify + destroy, "
			"or one probe)\n", BENCH_LAT_RUNS);
	for (unsigned i = 0; i < res->nlat; i++) {
		const struct bench_latency *l = &res->lat[i];

		fprintf(out, "  %-24s %-6s %-8s %s [%s-%s]", l->label, hpshm_size_format(l->page_size, ps, sizeof(ps)),
			hpshm_size_format(l->size, size, sizeof(size)), num(l->us.median, a, sizeof(a)),
			num(l->us.min, b, sizeof(b)), num(l->us.max, c, sizeof(c)));
		if (l->vs_raw.n)
			fprintf(out, "   %s %s: vs raw %.3gx [%.3g-%.3g]", l->raw_label, num(l->raw_us.median, w, sizeof(w)),
				l->vs_raw.median, l->vs_raw.min, l->vs_raw.max);
		fputc('\n', out);
	}
	bench_print_resize(out, res);
	if (n == 0)
		fprintf(out, "\nno configuration completed a round\n");
	for (unsigned i = 0; i < res->ncfg; i++)
		if (res->cfg[i].usable && res->cfg[i].note[0] && res->cfg[i].kind != BENCH_LIMIT)
			fprintf(out, "\nnote: %s: %s\n", res->cfg[i].label, res->cfg[i].note);
	print_unusable(out, res);
}

static void csv_num(FILE *out, double v)
{
	if (bench_isnan(v) || bench_isinf(v))
		fputs(",", out);
	else
		fprintf(out, ",%.6g", v);
}

void bench_print_csv(FILE *out, const struct bench_result *res)
{
	static struct bench_row rows[BENCH_MAX_CONFIGS * 8];
	unsigned n = bench_rows(res, rows, sizeof(rows) / sizeof(rows[0]));

	fputs("provider,peer,page_size,verified_by,workload,metric,workers,unit,median,min,max,wall_median,"
	      "ratio_vs_plain,ratio_vs_plain_min,ratio_vs_plain_max,ratio_vs_raw,ratio_vs_raw_min,ratio_vs_raw_max,"
	      "deterministic,minor_faults,threads,ratio_vs_raw1,ratio_vs_raw1_min,ratio_vs_raw1_max,share_of_limit,"
	      "share_of_limit_min,share_of_limit_max\n", out);
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];

		fprintf(out, "%s,%d,%zu,%s,%s,%s,%u,%s", r->c->label, r->c->kind != BENCH_HPSHM, r->c->verified_page_size,
			r->c->verified_by, r->workload, r->metric, r->workers, r->unit);
		csv_num(out, r->v.median);
		csv_num(out, r->v.min);
		csv_num(out, r->v.max);
		csv_num(out, r->wall_median);
		csv_num(out, r->has_plain ? r->vs_plain.median : NAN);
		csv_num(out, r->has_plain ? r->vs_plain.min : NAN);
		csv_num(out, r->has_plain ? r->vs_plain.max : NAN);
		csv_num(out, r->has_raw ? r->vs_raw.median : NAN);
		csv_num(out, r->has_raw ? r->vs_raw.min : NAN);
		csv_num(out, r->has_raw ? r->vs_raw.max : NAN);
		fprintf(out, ",%d", r->deterministic);
		csv_num(out, r->faults);
		fprintf(out, ",%u", r->c->threads);
		csv_num(out, r->has_raw1 ? r->vs_raw1.median : NAN);
		csv_num(out, r->has_raw1 ? r->vs_raw1.min : NAN);
		csv_num(out, r->has_raw1 ? r->vs_raw1.max : NAN);
		csv_num(out, r->has_limit ? r->of_limit.median : NAN);
		csv_num(out, r->has_limit ? r->of_limit.min : NAN);
		csv_num(out, r->has_limit ? r->of_limit.max : NAN);
		fputc('\n', out);
	}
}

static void json_ratio(struct json *j, const char *key, int have, const struct bench_summary *s)
{
	static const char *const suffix[3] = { "", "_min", "_max" };
	char k[48];

	for (int i = 0; i < 3; i++) {
		snprintf(k, sizeof(k), "%s%s", key, suffix[i]);
		if (have)
			json_kv_double(j, k, i == 0 ? s->median : i == 1 ? s->min : s->max, 4);
		else
			json_kv_null(j, k);
	}
}

/* The run: its options, groups, timing and what it changed or left out. */
static void json_run(struct json *j, const struct bench_result *res)
{
	json_kv_string(j, "version", hpshm_version());
	json_kv_uint(j, "size", res->opt.size);
	json_kv_uint(j, "workers", res->opt.workers);
	json_kv_string(j, "start", run_start(&res->opt));
	json_kv_uint(j, "rounds", res->opt.rounds);
	json_kv_uint(j, "rounds_done", res->rounds_done);
	json_kv_uint(j, "groups", res->groups);
	json_kv_string(j, "group_members", res->groups_note);
	json_kv_string(j, "kept_apart", res->split_note);
	json_kv_double(j, "phase_seconds", res->opt.phase_seconds, 3);
	json_kv_double(j, "seconds", res->seconds, 1);
	json_kv_string(j, "timing", bench_cpu_clock_name());
	json_kv_string(j, "ratios", "median of the gains taken within one group and one round (or setup cycle), "
		       "its members alive together in short turns, or in turn on the same pages; "
		       "> 1 means better than the reference");
	/* Text: "" when there is nothing to say, as everywhere in the tool's JSON. */
	json_kv_string(j, "pool", res->pool_note);
	json_kv_string(j, "left_out", res->left_out ? res->left_out : "");
	json_kv_string(j, "caveat", res->caveat ? res->caveat : "");
}

/* "noise_floor": plain / its raw peer at 4 KiB, the same system calls (print_noise). */
static void json_noise(struct json *j, const struct bench_result *res, const struct bench_row *rows, unsigned n)
{
	char pair[160], peer[64];

	snprintf(pair, sizeof(pair), "plain / %s at 4 KiB: the same system calls, so 1.00 but for the bench's noise",
		 noise_peer(res, noise_row(res, rows, n, "chase"), noise_row(res, rows, n, "rmw"), peer, sizeof(peer)));
	json_key(j, "noise_floor");
	json_object_open(j);
	json_kv_string(j, "pair", pair);
	for (int k = 0; k < 2; k++) {
		const struct bench_row *r = noise_row(res, rows, n, k ? "rmw" : "chase");

		json_ratio(j, k ? "rmw" : "chase", r != NULL, r ? &r->vs_raw : NULL);
		json_kv_uint(j, k ? "rmw_blocks" : "chase_blocks", r ? r->vs_raw.blocks : 0);
	}
	json_object_close(j);
}

/* "headline": hpshm against plain and against its raw peer, per workload and page size. */
static void json_headline(struct json *j, const struct bench_result *res, const struct bench_row *rows, unsigned n)
{
	static struct headline hl[BENCH_MAX_CONFIGS * 2];
	unsigned k = headlines(res, rows, n, hl, sizeof(hl) / sizeof(hl[0]));

	json_key(j, "headline");
	json_array_open(j);
	for (unsigned i = 0; i < k; i++) {
		const struct headline *x = &hl[i];

		json_object_open(j);
		json_kv_string(j, "workload", x->h->workload);
		json_kv_uint(j, "page_size", x->h->c->verified_page_size);
		json_kv_string(j, "hpshm", x->h->c->label);
		if (x->r)
			json_kv_string(j, "raw", x->r->c->label);
		else
			json_kv_null(j, "raw");
		json_ratio(j, "hpshm_vs_plain", x->h->has_plain, &x->h->vs_plain);
		json_ratio(j, "raw_vs_plain", x->r && x->r->has_plain, x->r ? &x->r->vs_plain : NULL);
		json_ratio(j, "hpshm_vs_raw", x->h->has_raw, &x->h->vs_raw);
		if (bench_isnan(x->kept))
			json_kv_null(j, "kept");
		else
			json_kv_double(j, "kept", x->kept, 4);
		json_object_close(j);
	}
	json_array_close(j);
}

/* "results": every row, as the table has them. */
static void json_results(struct json *j, const struct bench_result *res, const struct bench_row *rows, unsigned n)
{
	json_key(j, "results");
	json_array_open(j);
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];

		json_object_open(j);
		json_kv_string(j, "provider", r->c->label);
		json_kv_bool(j, "peer", r->c->kind != BENCH_HPSHM);
		json_kv_uint(j, "page_size", r->c->verified_page_size);
		json_kv_string(j, "verified_by", r->c->verified_by);
		json_kv_bool(j, "huge", r->c->huge);
		json_kv_string(j, "workload", r->workload);
		json_kv_string(j, "metric", r->metric);
		json_kv_uint(j, "workers", r->workers);
		json_kv_string(j, "start", start_name(r->c->start));
		json_kv_string(j, "unit", r->unit);
		json_kv_bool(j, "higher_is_better", r->higher_is_better);
		json_kv_bool(j, "deterministic", r->deterministic);
		json_kv_double(j, "median", r->v.median, 6);
		json_kv_double(j, "min", r->v.min, 6);
		json_kv_double(j, "max", r->v.max, 6);
		json_kv_uint(j, "samples", r->v.n);
		json_kv_string(j, "sampled", r->deterministic ? "once" : r->per_group ? "per setup cycle" : "per round");
		json_kv_double(j, "wall_median", r->wall_median, 6);
		json_ratio(j, "ratio_vs_plain", r->has_plain, &r->vs_plain);
		json_ratio(j, "ratio_vs_raw", r->has_raw, &r->vs_raw);
		if (strcmp(r->workload, "setup") == 0 && strcmp(r->metric, "attach") != 0) {
			json_kv_uint(j, "threads", r->c->threads);
			json_ratio(j, "ratio_vs_raw1", r->has_raw1, &r->vs_raw1);
			json_ratio(j, "share_of_limit", r->has_limit, &r->of_limit);
		}
		if (r->deterministic)
			json_kv_double(j, "minor_faults", r->faults, 0);
		if (r->deterministic && bench_isnan(r->v.median))
			json_kv_string(j, "reason", res->pt_absent && res->pt_absent[0] ? res->pt_absent : "not measured");
		if (r->c->note[0])
			json_kv_string(j, "note", r->c->note);
		json_object_close(j);
	}
	json_array_close(j);
}

/* "latency": the creates and the probes. */
static void json_latency(struct json *j, const struct bench_result *res)
{
	json_key(j, "latency");
	json_array_open(j);
	for (unsigned i = 0; i < res->nlat; i++) {
		const struct bench_latency *l = &res->lat[i];

		json_object_open(j);
		json_kv_string(j, "what", l->label);
		json_kv_uint(j, "page_size", l->page_size);
		json_kv_uint(j, "size", l->size);
		json_kv_string(j, "unit", "us");
		json_kv_double(j, "median", l->us.median, 1);
		json_kv_double(j, "min", l->us.min, 1);
		json_kv_double(j, "max", l->us.max, 1);
		json_kv_uint(j, "samples", l->us.n);
		if (l->vs_raw.n) {
			json_kv_string(j, "raw", l->raw_label);
			json_kv_double(j, "raw_median", l->raw_us.median, 1);
		} else {
			json_kv_null(j, "raw");
			json_kv_null(j, "raw_median");
		}
		json_ratio(j, "ratio_vs_raw", l->vs_raw.n > 0, &l->vs_raw);
		json_object_close(j);
	}
	json_array_close(j);
}

/* One "unavailable" entry; without has_size its page_size is null. */
static void json_unavailable_one(struct json *j, const char *provider, size_t page_size, int has_size,
				 const char *reason)
{
	json_object_open(j);
	json_kv_string(j, "provider", provider);
	if (has_size)
		json_kv_uint(j, "page_size", page_size);
	else
		json_kv_null(j, "page_size");
	json_kv_string(j, "reason", reason);
	json_object_close(j);
}

/* "unavailable": what could not run, and why. */
static void json_unavailable(struct json *j, const struct bench_result *res)
{
	json_key(j, "unavailable");
	json_array_open(j);
	for (unsigned i = 0; i < res->ncfg; i++)
		if (!res->cfg[i].usable)
			json_unavailable_one(j, res->cfg[i].label, res->cfg[i].page_size, 1, res->cfg[i].why);
	if (res->thp_why[0])
		json_unavailable_one(j, "thp", 0, 0, res->thp_why);
	if (res->apr_why[0])
		json_unavailable_one(j, "apr", 0, 0, res->apr_why);
	json_array_close(j);
}

void bench_json_result(struct json *j, const struct bench_result *res)
{
	static struct bench_row rows[BENCH_MAX_CONFIGS * 8];
	unsigned n = bench_rows(res, rows, sizeof(rows) / sizeof(rows[0]));

	json_object_open(j);
	json_run(j, res);
	json_noise(j, res, rows, n);
	json_headline(j, res, rows, n);
	json_results(j, res, rows, n);
	json_latency(j, res);
	bench_json_resize(j, res);
	json_unavailable(j, res);
	json_object_close(j);
}
