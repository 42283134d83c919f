/* SPDX-License-Identifier: MIT */
/*
 * bench/plan.c -- which configurations a run compares, and which of them it wants in one
 * group.
 *
 * For each huge page size: provider=auto and the providers named, each with the raw peer
 * that makes the same system calls (providers with the same calls share one); then plain,
 * every ratio's reference and always measured, with its raw 4 KiB peer; then THP and APR
 * where they can run.  A configuration that cannot run here stays in the list with the
 * reason, for the "could not use" lines.  The groups wanted are per huge page size {the
 * providers, their raw peers, plain}, then {raw 4 KiB, plain}, {thp, plain}, {apr, plain};
 * fit.c then splits what memory cannot hold at once.  doc/bench.md shows the result.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "run.h"

/* ---- configurations ---------------------------------------------------------------------- */

static int is_peer(const char *name)
{
	return strcmp(name, "raw") == 0 || strcmp(name, "thp") == 0 || strcmp(name, "apr") == 0;
}

static int provider_caps(const char *name, unsigned *caps)
{
	const char *p;

	for (unsigned i = 0; (p = hpshm_provider_name(i, caps)) != NULL; i++)
		if (strcmp(p, name) == 0)
			return 0;
	return -1;
}

/* Call fn for each non-empty item of a comma list; stops at the first that returns non-zero. */
static int each_item(const char *list, int (*fn)(const char *item, void *ctx), void *ctx)
{
	char buf[512];
	int rc = 0;

	for (const char *p = list; *p && rc == 0; p += *p == ',') {
		size_t n = strcspn(p, ",");

		if (n > 0) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), p);
			rc = fn(buf, ctx);
		}
		p += n;
	}
	return rc;
}

struct check_ctx { char *why; size_t len; };

static int check_item(const char *item, void *vctx)
{
	struct check_ctx *ctx = vctx;
	char names[256] = "";
	unsigned caps;
	const char *p;

	if (strcmp(item, "auto") == 0 || is_peer(item) || provider_caps(item, &caps) == 0)
		return 0;
	for (unsigned i = 0; (p = hpshm_provider_name(i, NULL)) != NULL; i++) {
		size_t n = strlen(names);

		snprintf(names + n, sizeof(names) - n, "%s, ", p);
	}
	snprintf(ctx->why, ctx->len, "unknown provider '%s': expected auto, %sraw, thp or apr", item, names);
	return -1;
}

int bench_check_start(int fork_mode, int thread_mode, char *why, size_t len)
{
	if (fork_mode && thread_mode) {
		snprintf(why, len, "--fork and --threads both say how workers start: choose one");
		return -1;
	}
	if (fork_mode && bench_os_no_fork()) {
		snprintf(why, len, "--fork: %s; workers are spawned (the default) or --threads", bench_os_no_fork());
		return -1;
	}
	return 0;
}

int bench_check_providers(const char *list, int fork_mode, char *why, size_t len)
{
	struct check_ctx ctx = { why, len };

	(void)fork_mode;
	if (!list || !list[0]) {
		snprintf(why, len, "empty provider list");
		return -1;
	}
	return each_item(list, check_item, &ctx);
}

static struct bench_config *add_config(struct bench_result *res, enum bench_kind kind, enum bench_start start,
				       const char *provider, size_t page_size)
{
	struct bench_config *c;

	if (res->ncfg >= BENCH_MAX_CONFIGS)
		return NULL;
	c = &res->cfg[res->ncfg++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->start = start;
	c->page_size = page_size;
	c->plain_ref = -1;
	c->raw_ref = -1;
	c->raw1_ref = -1;
	c->limit_ref = -1;
	c->threads = 1;
	c->usable = 1;
	c->workers = res->opt.workers;
	for (int i = 0; i < 3; i++)
		c->pt_kib[i] = c->pt_faults[i] = NAN;
	snprintf(c->provider, sizeof(c->provider), "%s", provider);
	snprintf(c->label, sizeof(c->label), "%s", provider);
	return c;
}

int plan_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/*
 * provider=auto for one page size: the first huge provider that probes fine (and can be
 * re-attached after exec, when workers are spawned).  When none does, a create with
 * huge_pages=on is attempted anyway -- it fails fast, in the probes -- so the row that says
 * why carries every provider's reason from the attempts, as a server's log would.
 */
static void add_auto(struct run *run, size_t ps, enum bench_start start)
{
	const struct bench_options *opt = run->opt;
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_report rep;
	hpshm_error err;
	struct bench_config *c;
	char kv[128], reason[HPSHM_TEXT_MAX], why[BENCH_WHY_MAX] = "";
	const char *name;
	unsigned caps;

	if (hpshm_config_new(&cfg) < 0)
		return;
	snprintf(kv, sizeof(kv), "huge_pages=on,huge_page_size=%zuk,reattach=%s,populate=off", ps >> 10,
		 start == BENCH_START_SPAWN ? "exec" : "off");
	(void)hpshm_config_parse(cfg, kv, NULL);
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		if (!(caps & HPSHM_CAP_HUGE) || (start == BENCH_START_SPAWN && !(caps & HPSHM_CAP_REATTACH)))
			continue;
		if (hpshm_provider_probe(name, opt->size, cfg, NULL, reason, sizeof(reason)) == 0) {
			hpshm_config_free(cfg);
			add_config(run->res, BENCH_HPSHM, start, name, ps);
			return;
		}
	}
	memset(&err, 0, sizeof(err));
	memset(&rep, 0, sizeof(rep));
	if (hpshm_segment_create_ex(&seg, opt->size, cfg, &rep, &err) == 0) {
		/* The pool filled up since the probes: take what the walk chose. */
		snprintf(why, sizeof(why), "%s", rep.provider);
		hpshm_segment_destroy(seg);
		hpshm_config_free(cfg);
		add_config(run->res, BENCH_HPSHM, start, why, ps);
		return;
	}
	hpshm_config_free(cfg);
	{
		size_t used = 0;

		for (unsigned i = 0; i < rep.nattempts && i < HPSHM_MAX_ATTEMPTS && used < sizeof(why); i++) {
			int n;

			if (strcmp(rep.attempts[i].call, "config") == 0)
				continue;   /* excluded by policy, not by the machine: not news */
			n = snprintf(why + used, sizeof(why) - used, "%s%s: %s", used ? "; " : "",
				     rep.attempts[i].provider, rep.attempts[i].reason);
			used += n > 0 ? (size_t)n : 0;
		}
		if (err.hint[0] && used < sizeof(why))
			snprintf(why + used, sizeof(why) - used, " (hint: %s)", err.hint);
	}
	c = add_config(run->res, BENCH_HPSHM, start, "auto", ps);
	if (c)
		run_unusable(c, "%s", why[0] ? why : err.message);
}

static void add_named(struct run *run, const char *name, size_t ps, enum bench_start start)
{
	struct bench_config *c;
	hpshm_config *cfg = NULL;
	char kv[128], reason[HPSHM_TEXT_MAX];
	unsigned caps = 0;

	(void)provider_caps(name, &caps);
	c = add_config(run->res, BENCH_HPSHM, start, name, (caps & HPSHM_CAP_HUGE) ? ps : 0);
	if (!c)
		return;
	if (start == BENCH_START_SPAWN && !(caps & HPSHM_CAP_REATTACH)) {
		run_unusable(c, "a child started by exec cannot re-attach %s segments: run with %s", name,
			     bench_os_no_fork() ? "--threads" : "--fork or --threads");
		return;
	}
	if (!(caps & HPSHM_CAP_HUGE) || hpshm_config_new(&cfg) < 0)
		return;
	snprintf(kv, sizeof(kv), "huge_page_size=%zuk", ps >> 10);
	(void)hpshm_config_parse(cfg, kv, NULL);
	if (hpshm_provider_probe(name, run->opt->size, cfg, NULL, reason, sizeof(reason)) < 0)
		run_unusable(c, "%s", reason);
	hpshm_config_free(cfg);
}

/* The raw peer of the hpshm configuration c: the same system calls, without hpshm. */
static void add_raw(struct run *run, unsigned hpshm_idx, enum bench_start start)
{
	struct bench_result *res = run->res;
	struct bench_config *h = &res->cfg[hpshm_idx], *c;
	enum bench_kind kind;
	char label[64];
	const char *no = bench_os_raw_peer(h->provider, start, &kind, label, sizeof(label));

	c = add_config(res, kind, start, "raw", h->page_size);
	if (!c)
		return;
	snprintf(c->label, sizeof(c->label), "%s", label);
	res->cfg[hpshm_idx].raw_ref = (int)(c - res->cfg);
	c->raw_ref = (int)(c - res->cfg);
	if (no)
		run_unusable(c, "%s", no);
}

/*
 * The setup-only members of page size ps (0: base pages), for the setup rows of hpshm's
 * populate_threads=auto: the raw calls of each raw peer with one populate thread (what a
 * program writes by hand; only where auto gives more than one), and the limit (memory.c).
 * The hpshm rows and their raw peers populate with as many threads as auto gives here, and
 * the same calls, so vs raw is the fair comparison; vs raw x1 is the gain of the threads and
 * of the order hpshm faults huge pages in (bench_os_by_hand()).
 */
static void plan_setup_peers(struct run *run, size_t ps, unsigned first)
{
	struct bench_result *res = run->res;
	unsigned n = res->ncfg, threads = hpshm_populate_threads(run->opt->size, ps, NULL);
	struct bench_config *c;
	int limit;

	for (unsigned i = first; i < n; i++)
		if (res->cfg[i].kind == BENCH_HPSHM || (int)i == res->cfg[i].raw_ref)
			res->cfg[i].threads = threads;
	c = add_config(res, BENCH_LIMIT, res->cfg[first].start, "limit", ps);
	if (!c)
		return;
	limit = (int)(c - res->cfg);
	c->threads = threads;
	c->setup_only = 1;
	snprintf(c->note, sizeof(c->note), "%u thread%s writing zeros over a populated region, 4 KiB at a time",
		 threads, threads == 1 ? "" : "s");
	for (unsigned i = first; i < n; i++) {
		struct bench_config *r = &res->cfg[i];

		r->limit_ref = limit;
		if ((int)i != r->raw_ref || threads < 2)
			continue;
		c = add_config(res, r->kind, r->start, "raw", ps);
		if (!c)
			return;
		snprintf(c->label, sizeof(c->label), "%.48s x1", r->label);
		c->setup_only = 1;
		c->by_hand = 1;
		snprintf(c->note, sizeof(c->note), "%s", bench_os_by_hand());
		c->limit_ref = limit;
		r->raw1_ref = (int)(c - res->cfg);
		c->raw1_ref = r->raw1_ref;
		if (!r->usable)
			run_unusable(c, "%s", r->why);
		for (unsigned k = first; k < n; k++)
			if (res->cfg[k].raw_ref == (int)i)
				res->cfg[k].raw1_ref = r->raw1_ref;
	}
}

/*
 * A raw peer for every set of system calls the providers of one size use (memfd and
 * anonymous MAP_HUGETLB), so each hpshm row is judged against its own calls; providers with
 * the same calls share one peer, and one group holds them all.  The providers are
 * res->cfg[first..].
 */
static void plan_raw_peers(struct run *run, unsigned first, enum bench_start start)
{
	struct bench_result *res = run->res;
	unsigned n = res->ncfg;

	for (unsigned i = first; i < n; i++) {
		enum bench_kind kind;
		char label[64];

		(void)bench_os_raw_peer(res->cfg[i].provider, start, &kind, label, sizeof(label));
		for (unsigned j = n; j < res->ncfg && res->cfg[i].raw_ref < 0; j++)
			if (res->cfg[j].kind == kind)
				res->cfg[i].raw_ref = (int)j;
		if (res->cfg[i].raw_ref < 0)
			add_raw(run, i, start);
	}
}

/* The configurations of huge page size ps: auto, the providers named, and their raw peers. */
static void plan_huge(struct run *run, const char *list, size_t ps, enum bench_start start)
{
	struct bench_result *res = run->res;
	unsigned first = res->ncfg, caps;
	const char *name;

	if (plan_has(list, "auto"))
		add_auto(run, ps, start);
	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if ((caps & HPSHM_CAP_HUGE) && plan_has(list, name))
			add_named(run, name, ps, start);
	if (plan_has(list, "raw") && res->ncfg > first) {
		plan_raw_peers(run, first, start);
		plan_setup_peers(run, ps, first);
	}
}

/* THP and APR, where the list asks for them and they can run; else why not. */
static void plan_peers(struct run *run, const char *list, enum bench_start start)
{
	struct bench_result *res = run->res;
	struct bench_config *c;
	const char *mode;

	if (plan_has(list, "thp")) {
		mode = bench_thp_mode(res->thp_why, sizeof(res->thp_why));
		if (mode) {
			int private_ = strcmp(mode, "private") == 0;

			c = add_config(res, BENCH_THP, private_ ? BENCH_START_THREAD : start, "thp", 0);
			if (c)
				snprintf(c->note, sizeof(c->note), "%s", private_ ?
					 "private anonymous: shmem THP is off, so workers are threads of one process" :
					 "shared memfd with MADV_HUGEPAGE");
		}
	}
	if (plan_has(list, "apr")) {
		if (bench_os_no_fork())
			snprintf(res->apr_why, sizeof(res->apr_why), "APR's anonymous shm reaches workers by fork only, "
				 "and %s", bench_os_no_fork());
		else if (!run->opt->fork_mode)
			snprintf(res->apr_why, sizeof(res->apr_why),
				 "APR's anonymous shm reaches workers by fork only: run with --fork");
		else if (bench_apr_available(res->apr_why, sizeof(res->apr_why)))
			add_config(res, BENCH_APR, BENCH_START_FORK, "apr", 0);
	}
}

void plan_configs(struct run *run)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	enum bench_start start = opt->fork_mode ? BENCH_START_FORK : opt->thread_mode ? BENCH_START_THREAD :
				 BENCH_START_SPAWN;
	const char *list = opt->providers ? opt->providers : DEFAULT_LIST;
	int plain = -1, raw_plain = -1;
	struct bench_config *c;

	for (unsigned s = 0; s < opt->npage_sizes; s++)
		plan_huge(run, list, opt->page_sizes[s], start);
	/* plain is every ratio's reference: always measured. */
	c = add_config(res, BENCH_HPSHM, start, "plain", 0);
	if (c)
		plain = (int)(c - res->cfg);
	run->plain = plain;
	if (plan_has(list, "raw") && plain >= 0) {
		add_raw(run, (unsigned)plain, start);
		raw_plain = res->cfg[plain].raw_ref;
		plan_setup_peers(run, 0, (unsigned)plain);
	}
	plan_peers(run, list, start);
	for (unsigned i = 0; i < res->ncfg; i++) {
		if (res->cfg[i].setup_only)
			continue;   /* compared with hpshm and raw of its own page size only */
		res->cfg[i].plain_ref = plain;
		if (res->cfg[i].page_size == 0 && res->cfg[i].kind != BENCH_THP && res->cfg[i].kind != BENCH_APR &&
		    res->cfg[i].raw_ref < 0)
			res->cfg[i].raw_ref = raw_plain;
	}
}

/* ---- the groups the run wants --------------------------------------------------------------- */

static void group_add(struct group *g, int idx)
{
	if (idx >= 0 && g->n < BENCH_GROUP_MAX)
		g->m[g->n++] = idx;
}

/*
 * The groups the run wants, before memory has its say: per huge page size, the hpshm
 * providers with their raw peer and plain (so both of their gains come from one group);
 * then the raw 4 KiB peer, THP and APR, each with plain.
 */
unsigned plan_groups(struct run *run, struct group *want, unsigned max)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned n = 0, with_plain = 0;
	struct group *g;

	for (unsigned s = 0; s < opt->npage_sizes && n < max; s++) {
		g = &want[n];
		memset(g, 0, sizeof(*g));
		for (unsigned i = 0; i < res->ncfg; i++)
			if (res->cfg[i].usable && res->cfg[i].kind == BENCH_HPSHM && res->cfg[i].page_size == opt->page_sizes[s])
				group_add(g, (int)i);
		for (unsigned i = 0; i < res->ncfg; i++)
			if (res->cfg[i].usable && res->cfg[i].kind != BENCH_HPSHM && res->cfg[i].kind != BENCH_THP &&
			    res->cfg[i].kind != BENCH_APR && res->cfg[i].page_size == opt->page_sizes[s])
				group_add(g, (int)i);
		if (g->n)
			n++;
	}
	for (unsigned i = 0; i < res->ncfg && n < max; i++) {
		const struct bench_config *c = &res->cfg[i];

		if (!c->usable || (int)i == run->plain || c->page_size != 0 || c->setup_only || (c->kind == BENCH_HPSHM &&
		    strcmp(c->provider, "plain") == 0))
			continue;
		g = &want[n++];
		memset(g, 0, sizeof(*g));
		group_add(g, (int)i);
		/* The 4 KiB setup-only members go with the raw 4 KiB peer: plain's raw x1 and limit. */
		for (unsigned k = 0; k < res->ncfg && run->plain >= 0 && (int)i == res->cfg[run->plain].raw_ref; k++)
			if (res->cfg[k].usable && res->cfg[k].setup_only && res->cfg[k].page_size == 0)
				group_add(g, (int)k);
	}
	for (unsigned k = 0; k < n; k++)
		if (run->plain >= 0) {
			group_add(&want[k], run->plain);
			with_plain++;
		}
	if (with_plain == 0 && run->plain >= 0 && res->cfg[run->plain].usable && n < max) {
		g = &want[n++];
		memset(g, 0, sizeof(*g));
		group_add(g, run->plain);
	}
	return n;
}

