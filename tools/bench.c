/* SPDX-License-Identifier: MIT */
/*
 * tools/bench.c -- `hpshm bench`: the command line of the stress benchmark (bench/).
 *
 * This file only turns arguments into bench_options, runs the bench and picks the output
 * format; what is measured and how is in bench/, and doc/bench.md says how to read it.
 * Usage errors exit 2 before anything is created.  The bench changes no system setting
 * unless --reserve asks it to, and then puts the pool back, also when interrupted.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bench.h"
#include "ports/facts.h"
#include "ports/process.h"
#include "tool.h"

#define BENCH_DEFAULT_SIZE   ((size_t)1 << 30)   /* 1 GiB: where the page size starts to matter */
#define BENCH_QUICK_SIZE     ((size_t)256 << 20) /* --quick: well under a minute on 2 vCPUs */
#define BENCH_DEFAULT_PHASE  1.0                 /* CPU-s per timed phase and worker */
#define BENCH_QUICK_PHASE    0.25
#define BENCH_DEFAULT_ROUNDS 5
#define BENCH_PATH_MAX       4096                /* this program's path, for spawned workers */

static int bench_parse_uint(const char *what, const char *text, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	if (text[0] < '0' || text[0] > '9')
		return tool_usage_error("bench", "bad %s '%s': expected a whole number from %u to %u", what, text, lo, hi);
	v = strtoul(text, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return tool_usage_error("bench", "bad %s '%s': expected a whole number from %u to %u", what, text, lo, hi);
	*out = (unsigned)v;
	return 0;
}

static int bench_parse_seconds(const char *text, double *out)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || *end != '\0' || !(v >= 0.01 && v <= 60))
		return tool_usage_error("bench", "bad --phase-seconds '%s': expected seconds from 0.01 to 60, e.g. 1.5",
					text);
	*out = v;
	return 0;
}

/* --page-size LIST: sizes the kernel offers, or "all". */
static int bench_parse_page_sizes(const char *text, struct bench_options *o)
{
	size_t offered[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm_huge_page_sizes(offered, HPSHM__MAX_PAGE_SIZES);
	char it[64], list[128];
	size_t ps;
	int rc;

	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	o->npage_sizes = 0;
	if (strcmp(text, "all") == 0) {
		for (int i = 0; i < n && o->npage_sizes < BENCH_MAX_SIZES; i++)
			o->page_sizes[o->npage_sizes++] = offered[i];
		return 0;
	}
	for (const char *p = text; *p; p += *p == ',') {
		size_t l = strcspn(p, ",");
		int found = 0;

		snprintf(it, sizeof(it), "%.*s", (int)(l < sizeof(it) ? l : sizeof(it) - 1), p);
		p += l;
		if (l == 0)
			continue;

		if ((rc = tool_parse_size("bench", "--page-size", it, &ps)) != 0)
			return rc;
		for (int i = 0; i < n; i++)
			found |= offered[i] == ps;
		if (!found)
			return tool_usage_error("bench", "bad --page-size '%s': the kernel offers %s", it,
						tool_offered_sizes(list, sizeof(list)));
		if (o->npage_sizes >= BENCH_MAX_SIZES)
			return tool_usage_error("bench", "--page-size: at most %d sizes", BENCH_MAX_SIZES);
		o->page_sizes[o->npage_sizes++] = ps;
	}
	return 0;
}

/* What the command line asked besides bench_options. */
struct bench_cli {
	const char *size_text;  /* --size, or NULL */
	const char *ps_text;    /* --page-size, or NULL */
	const char *svg;        /* --svg, or NULL */
	int         json;       /* --json */
	int         csv;        /* --csv */
	int         quick;      /* --quick */
	int         have_phase; /* --phase-seconds given */
};

/* The options into o and c: 0, or the exit status of a usage error. */
static int bench_parse_args(int argc, char **argv, struct bench_options *o, struct bench_cli *c)
{
	const char *v;
	int rc, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

#define FLAG(name, var) if ((r = tool_opt_flag("bench", a, name)) != 0) { if (r < 0) return TOOL_EXIT_USAGE; var = 1; continue; }
#define VALUE(name) if ((r = tool_opt_value("bench", argc, argv, &i, name, &v)) != 0) { if (r < 0) return TOOL_EXIT_USAGE;
		FLAG("--json", c->json)
		FLAG("--csv", c->csv)
		FLAG("--fork", o->fork_mode)
		FLAG("--threads", o->thread_mode)
		FLAG("--quick", c->quick)
		FLAG("--reserve", o->reserve)
		FLAG("--quiet", o->quiet)
		VALUE("--size") c->size_text = v; continue; }
		VALUE("--page-size") c->ps_text = v; continue; }
		VALUE("--providers") o->providers = v; continue; }
		VALUE("--svg") c->svg = v; continue; }
		VALUE("--workers")
			if ((rc = bench_parse_uint("--workers", v, 1, BENCH_MAX_WORKERS, &o->workers)) != 0) return rc;
			continue; }
		VALUE("--rounds")
			if ((rc = bench_parse_uint("--rounds", v, 1, BENCH_MAX_ROUNDS, &o->rounds)) != 0) return rc;
			continue; }
		VALUE("--phase-seconds")
			if ((rc = bench_parse_seconds(v, &o->phase_seconds)) != 0) return rc;
			c->have_phase = 1;
			continue; }
#undef FLAG
#undef VALUE
		return tool_usage_error("bench", "unexpected argument '%s'", a);
	}
	return 0;
}

/*
 * Every size the kernel offers, the default first: 1 GiB pages are what a user would pick
 * instead of 2 MiB ones, so they belong in the same tables.  A size whose pool is empty
 * costs one line under "could not use".
 */
static void bench_default_page_sizes(struct bench_options *o)
{
	size_t offered[HPSHM__MAX_PAGE_SIZES];
	int k = hpshm_huge_page_sizes(offered, HPSHM__MAX_PAGE_SIZES);

	o->page_sizes[o->npage_sizes++] = hpshm__os_default_page_size();
	for (int i = 0; i < k && i < HPSHM__MAX_PAGE_SIZES && o->npage_sizes < BENCH_MAX_SIZES; i++)
		if (offered[i] != hpshm__os_default_page_size())
			o->page_sizes[o->npage_sizes++] = offered[i];
}

/* The options checked together and completed with their defaults: 0, or the exit status. */
static int bench_settle(struct bench_options *o, const struct bench_cli *c)
{
	char why[BENCH_WHY_MAX];
	int rc;

	if (c->json && c->csv)
		return tool_usage_error("bench", "--json and --csv both write to stdout: choose one");
	o->size = c->quick ? BENCH_QUICK_SIZE : BENCH_DEFAULT_SIZE;
	if (c->quick && !c->have_phase)
		o->phase_seconds = BENCH_QUICK_PHASE;
	if (c->size_text && (rc = tool_parse_size("bench", "--size", c->size_text, &o->size)) != 0)
		return rc;
	if (o->size < ((size_t)1 << 20))
		return tool_usage_error("bench", "bad --size '%s': at least 1MiB, so the region is larger than the caches",
					c->size_text);
	if (bench_check_start(o->fork_mode, o->thread_mode, why, sizeof(why)) < 0)
		return tool_usage_error("bench", "%s", why);
	if (o->providers && bench_check_providers(o->providers, o->fork_mode, why, sizeof(why)) < 0)
		return tool_usage_error("bench", "bad --providers: %s", why);
	if (c->ps_text) {
		if ((rc = bench_parse_page_sizes(c->ps_text, o)) != 0)
			return rc;
	} else if (hpshm__os_default_page_size()) {
		bench_default_page_sizes(o);
	}
	return 0;
}

/* The results in the format asked for, and the exit status of the run that made them. */
static int bench_report(const struct bench_result *res, const struct bench_cli *c, int rc, const char *why)
{
	if (c->json) {
		hpshm_error err;
		struct json j;
		int code = 0;

		/* The same verdict as the exit status below, in the envelope. */
		memset(&err, 0, sizeof(err));
		if (rc != BENCH_OK) {
			code = rc == BENCH_INTERRUPTED ? HPSHM_ESYS : HPSHM_EUNAVAILABLE;
			err.sys_errno = rc == BENCH_INTERRUPTED ? EINTR : 0;
			snprintf(err.message, sizeof(err.message), "%s", why);
		} else if (res->rounds_done == 0) {
			code = HPSHM_EUNAVAILABLE;
			snprintf(err.message, sizeof(err.message), "no configuration could run (see \"unavailable\")");
		}
		tool_json_open(&j, code == 0);
		bench_json_result(&j, res);
		if (tool_json_close(&j, code, &err) < 0)
			return tool_fail("bench", "internal error writing JSON");
	} else if (c->csv) {
		bench_print_csv(stdout, res);
	} else {
		bench_print_text(stdout, res);
	}
	fflush(stdout);
	if (c->svg && res->rounds_done > 0) {
		char swhy[BENCH_WHY_MAX];

		if (bench_write_svg(c->svg, res, swhy, sizeof(swhy)) < 0)
			return tool_fail("bench", "%s", swhy);
	}
	if (rc == BENCH_INTERRUPTED) {
		fprintf(stderr, "hpshm bench: %s\n", why);
		return BENCH_INTERRUPTED;
	}
	if (rc != BENCH_OK)
		return tool_fail("bench", "%s", why);
	if (res->rounds_done == 0)
		return tool_fail("bench", "no configuration could run (see \"could not use\")");
	return TOOL_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
	static struct bench_result res;
	struct bench_options o;
	struct bench_cli c;
	char why[BENCH_WHY_MAX], exe[BENCH_PATH_MAX];
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	o.workers = 2;
	o.rounds = BENCH_DEFAULT_ROUNDS;
	o.phase_seconds = BENCH_DEFAULT_PHASE;
	if ((rc = bench_parse_args(argc, argv, &o, &c)) != 0 || (rc = bench_settle(&o, &c)) != 0)
		return rc;
	if (hpshm__os_program_path(exe, sizeof(exe)) < 0) {
		if (!o.fork_mode && !o.thread_mode)
			return tool_fail("bench", "cannot find the file this program runs from, to spawn workers: use "
					 "--threads or --fork");
		exe[0] = '\0';
	}
	o.self_exe = exe;

	rc = bench_run(&o, &res, why, sizeof(why));
	return bench_report(&res, &c, rc, why);
}

int cmd_bench_worker(int argc, char **argv)
{
	return bench_worker_main(argc, argv);
}
