/* SPDX-License-Identifier: MIT */
/*
 * bench/run.c -- the controller: which configurations run, which of them are alive together,
 * in which order, and what is measured.
 *
 * Configurations run in groups whose members are alive at the same time, so every ratio
 * is taken between regions that stayed put, seconds apart, under the same load: per huge
 * page size {the hpshm providers, their raw peer, plain}, then {raw 4 KiB, plain},
 * {thp, plain}, {apr, plain}.  A group goes through:
 *   cycles    one untimed, then BENCH_SETUP_CYCLES times (BENCH_POOL_CYCLES for the members on
 *             a huge page pool), each member in turn (order reversed on odd cycles):
 *             create and populate (controller's thread CPU time, per GiB; hpshm before its
 *             raw peer on the first, which then maps as many bytes), attach by its N workers
 *             (map and touch every base page, per worker), teardown (workers first, then the
 *             release); the gains of a cycle are taken between its members.  Page tables the
 *             first time a configuration runs, since they are exact: VmPTE and minor faults
 *             per worker with 1, 2 and 4 workers attached;
 *   create    every member again, now all alive at once (untimed), and its workers;
 *   build     the chase is written in each (untimed: the same sequential pass everywhere);
 *   warm-up   one untimed chase and rmw phase per member;
 *   rounds    every member's chase, then every member's rmw, the member order reversed on
 *             odd rounds (A B C, C B A, ...) so a slow drift favours no one; the gains of a
 *             round are taken right away, between members of the group;
 *   re-create halfway through the rounds, every member torn down and created, built,
 *             attached and warmed up again, raw peers first this time (group_up says why);
 *   end       every worker exits, then the controller releases each member's memory.
 * Then, once per run, the latencies: create + destroy of one huge page and of 1 GiB against
 * the raw calls, and the probes.
 *
 * A group holds all its regions at once: before creating one, its 4 KiB memory is checked
 * against 60 % of MemAvailable and its huge pages against what each pool can give, and
 * what does not fit runs in a further group with plain (run_wanted), an hpshm provider and
 * its raw peer always together, with the gains that then have no common group left
 * unmeasured rather than taken across groups.
 *
 * Member i of a group is mapped at slot i of an address space reservation (os.h), 1 GiB-aligned,
 * and the slot is reserved again after teardown: page-table figures depend on alignment (a
 * 4 GiB region can span 4 or 5 PMD pages), and hpshm and its raw peer must be compared on
 * identical layouts.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP (Ctrl-C and Ctrl-Break on Windows) only set
 * bench_stop (os.h).  Every wait wakes up or polls it (on Windows a controller waiting for a
 * reply sees it when the phase ends, within four budgets), and the ordinary unwinding path
 * then kills and reaps the workers, destroys every member's memory and puts the pool back:
 * one cleanup path, run whether the bench ends well or not.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/introspect.h"

#define GIB ((size_t)1 << 30)
#define PEERS "raw,thp,apr"   /* the peers, as --providers names them */

volatile sig_atomic_t bench_stop;

/* The state of one run. */
struct run {
	const struct bench_options *opt;
	struct bench_result        *res;
	unsigned char              *slot[BENCH_GROUP_MAX]; /* where member i of a group lives; NULL: anywhere */
	size_t                      slot_len;   /* bytes of one slot: a region, rounded up to whole GiB */
	unsigned                    nslots;     /* slots in the reservation */
	int                         plain;      /* the plain configuration, every vs-plain reference */
	unsigned                    groups_ran; /* groups in which something ran */
	uint64_t                    budget;     /* CPU budget of a timed phase, ns */
	uint64_t                    t0;         /* wall clock at the start */
};

void bench_progress(const struct bench_options *opt, const char *fmt, ...)
{
	va_list ap;

	if (opt && opt->quiet)
		return;
	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

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
	c->usable = 1;
	c->workers = res->opt.workers;
	for (int i = 0; i < 3; i++)
		c->pt_kib[i] = c->pt_faults[i] = NAN;
	snprintf(c->provider, sizeof(c->provider), "%s", provider);
	snprintf(c->label, sizeof(c->label), "%s", provider);
	return c;
}

static void unusable(struct bench_config *c, const char *fmt, ...)
	HPSHM__PRINTF(2, 3)
	;

static void unusable(struct bench_config *c, const char *fmt, ...)
{
	va_list ap;

	c->usable = 0;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static int list_has(const char *list, const char *name)
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
		unusable(c, "%s", why[0] ? why : err.message);
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
		unusable(c, "a child started by exec cannot re-attach %s segments: run with %s", name,
			 bench_os_no_fork() ? "--threads" : "--fork or --threads");
		return;
	}
	if (!(caps & HPSHM_CAP_HUGE) || hpshm_config_new(&cfg) < 0)
		return;
	snprintf(kv, sizeof(kv), "huge_page_size=%zuk", ps >> 10);
	(void)hpshm_config_parse(cfg, kv, NULL);
	if (hpshm_provider_probe(name, run->opt->size, cfg, NULL, reason, sizeof(reason)) < 0)
		unusable(c, "%s", reason);
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
		unusable(c, "%s", no);
}

static void plan(struct run *run)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	enum bench_start start = opt->fork_mode ? BENCH_START_FORK : opt->thread_mode ? BENCH_START_THREAD :
				 BENCH_START_SPAWN;
	const char *list = opt->providers ? opt->providers : "auto,plain," PEERS;
	int want_raw = list_has(list, "raw");
	int plain = -1, raw_plain = -1;
	const char *name, *mode;
	unsigned caps;
	struct bench_config *c;

	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		size_t ps = opt->page_sizes[s];
		unsigned first = res->ncfg;

		if (list_has(list, "auto"))
			add_auto(run, ps, start);
		for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
			if ((caps & HPSHM_CAP_HUGE) && list_has(list, name))
				add_named(run, name, ps, start);
		/*
		 * A raw peer for every set of system calls the providers of this size use (memfd
		 * and anonymous MAP_HUGETLB), so each hpshm row is judged against its own calls;
		 * providers with the same calls share one peer, and one group holds them all.
		 */
		if (want_raw && res->ncfg > first) {
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
	}
	/* plain is every ratio's reference: always measured. */
	c = add_config(res, BENCH_HPSHM, start, "plain", 0);
	if (c)
		plain = (int)(c - res->cfg);
	run->plain = plain;
	if (want_raw && plain >= 0) {
		add_raw(run, (unsigned)plain, start);
		raw_plain = res->cfg[plain].raw_ref;
	}
	if (list_has(list, "thp")) {
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
	if (list_has(list, "apr")) {
		if (bench_os_no_fork())
			snprintf(res->apr_why, sizeof(res->apr_why), "APR's anonymous shm reaches workers by fork only, "
				 "and %s", bench_os_no_fork());
		else if (!opt->fork_mode)
			snprintf(res->apr_why, sizeof(res->apr_why),
				 "APR's anonymous shm reaches workers by fork only: run with --fork");
		else if (bench_apr_available(res->apr_why, sizeof(res->apr_why)))
			add_config(res, BENCH_APR, BENCH_START_FORK, "apr", 0);
	}
	for (unsigned i = 0; i < res->ncfg; i++) {
		res->cfg[i].plain_ref = plain;
		if (res->cfg[i].page_size == 0 && res->cfg[i].kind != BENCH_THP && res->cfg[i].kind != BENCH_APR &&
		    res->cfg[i].raw_ref < 0)
			res->cfg[i].raw_ref = raw_plain;
	}
}

/* ---- placement ---------------------------------------------------------------------------- */

/*
 * One address space reservation holds a slot per member of the largest group (os.h): member
 * i of any group is created at slot i, 1 GiB-aligned, and the slot is reserved again after
 * its teardown.  A slot is as large as the biggest region rounded up to whole GiB, so every
 * region starts on a 1 GiB boundary and has the same page-table layout as its peers.
 */
static void place_init(struct run *run, unsigned nslots)
{
	const struct bench_options *opt = run->opt;
	size_t largest = GIB, span;
	char why[BENCH_WHY_MAX] = "";

	for (unsigned s = 0; s < opt->npage_sizes; s++)
		if (opt->page_sizes[s] > largest)
			largest = opt->page_sizes[s];
	/* The size, a header page a re-attachable segment may carry, rounded to the largest page. */
	span = (opt->size + 2 * largest) / largest * largest;
	run->slot_len = (span + GIB - 1) / GIB * GIB;
	run->nslots = nslots;
	/*
	 * Without slots every region goes where the system puts it: the ratios stay right, only
	 * page tables may differ by a page between peers.  So a reservation that cannot be had
	 * (four 2 GiB slots are more than a 32-bit process has) is said, not fatal.
	 */
	if (run->slot_len > (SIZE_MAX / 2 - GIB) / nslots) {
		snprintf(why, sizeof(why), "%u slots of %zu MiB do not fit this process's address space", nslots,
			 run->slot_len >> 20);
	} else if (bench_os_slots_reserve(run->slot, nslots, run->slot_len, GIB, why, sizeof(why)) == 0) {
		return;
	}
	bench_progress(opt, "members are mapped where the system puts them: %s", why);
	for (unsigned i = 0; i < nslots; i++)
		run->slot[i] = NULL;
}

/* Open slot i for a region, or reserve it again after teardown. */
static void *slot_open(struct run *run, unsigned i)
{
	if (run->slot[i])
		bench_os_slot_open(run->slot[i], run->slot_len);
	return run->slot[i];
}

static void slot_close(struct run *run, unsigned i)
{
	/* Something else took part of it: regions there go where the system says. */
	if (run->slot[i] && bench_os_slot_close(run->slot[i], run->slot_len) < 0)
		run->slot[i] = NULL;
}

/* Give up what is still ours: the slots still reserved. */
static void place_free(struct run *run)
{
	bench_os_slots_free(run->slot, run->nslots, run->slot_len);
	run->nslots = 0;
}

/* ---- groups ------------------------------------------------------------------------------- */

/* Configurations alive at the same time, the plain reference last when it is one of them. */
struct group {
	unsigned n;                    /* members */
	int      m[BENCH_GROUP_MAX];   /* indices into res->cfg */
};

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
static unsigned plan_groups(struct run *run, struct group *want, unsigned max)
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

		if (!c->usable || (int)i == run->plain || c->page_size != 0 || (c->kind == BENCH_HPSHM &&
		    strcmp(c->provider, "plain") == 0))
			continue;
		g = &want[n++];
		memset(g, 0, sizeof(*g));
		group_add(g, (int)i);
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

static uint64_t region_pages(const struct run *run, size_t ps)
{
	/* An unnamed segment keeps its header in a companion of base pages: the size alone. */
	return (run->opt->size + ps - 1) / ps;
}

/*
 * A byte count of the machine (MemAvailable, the sum of live regions) for a message.  It is
 * 64 bits wide because a 32-bit build runs on machines with more memory than size_t counts;
 * hpshm_size_format() takes a size_t, so a count beyond it is written in GiB here instead of
 * being cut.
 */
static char *bench_bytes(uint64_t v, char *buf, size_t len)
{
	if (v <= SIZE_MAX)
		return hpshm_size_format((size_t)v, buf, len);
	snprintf(buf, len, "%.1fGiB", (double)v / (1024.0 * 1024.0 * 1024.0));
	return buf;
}

/*
 * Whether members m[0..n) can be alive at once right now: their 4 KiB memory (with room
 * for the workers' page tables) within 60 % of MemAvailable, and their huge pages within
 * what each pool can still give.  0, or -1 with why.
 */
static int group_fits(struct run *run, const int *m, unsigned n, char *why, size_t len)
{
	const struct bench_options *opt = run->opt;
	uint64_t base = 0, avail = hpshm__os_mem_available();
	char a[32], b[32], ps[32];

	for (unsigned i = 0; i < n; i++) {
		const struct bench_config *c = &run->res->cfg[m[i]];

		if (c->page_size == 0)
			base += opt->size + opt->size / 512 * (1 + BENCH_PT_WORKERS);
	}
	if (avail && (double)base > 0.6 * (double)avail) {
		snprintf(why, len, "%s of 4 KiB memory alive at once is more than 60%% of MemAvailable (%s)",
			 bench_bytes(base, a, sizeof(a)), bench_bytes(avail, b, sizeof(b)));
		return -1;
	}
	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		size_t size = opt->page_sizes[s];
		uint64_t need = 0;
		unsigned k = 0;
		struct hpshm__os_pool p;

		for (unsigned i = 0; i < n; i++)
			if (run->res->cfg[m[i]].page_size == size)
				k++;
		if (k == 0)
			continue;
		need = k * region_pages(run, size);
		if (hpshm__os_pool(size, &p) == 0 && hpshm__os_pool_available(&p) < need) {
			unsigned long have = hpshm__os_pool_available(&p);

			snprintf(why, len, "the %s pool can give %lu pages, %u region%s alive at once need %llu: %llu "
				 "pages short (add them to the pool, or run with --reserve)",
				 hpshm_size_format(size, ps, sizeof(ps)), have, k, k == 1 ? "" : "s",
				 (unsigned long long)need, (unsigned long long)(need - have));
			return -1;
		}
	}
	return 0;
}

static const char *short_size(size_t v, char *buf, size_t len)
{
	return v ? hpshm_size_format(v, buf, len) : "4KiB";
}

static void note_add(char *note, size_t size, const char *fmt, ...)
	HPSHM__PRINTF(3, 4)
	;

static void note_add(char *note, size_t size, const char *fmt, ...)
{
	size_t used = strlen(note);
	va_list ap;

	if (used + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(note + used, size - used, fmt, ap);
	va_end(ap);
}

/* ---- one group ----------------------------------------------------------------------------- */

/* A member of the live group. */
struct member {
	int                  idx;                 /* its configuration, in res->cfg */
	struct bench_config *c;                   /* the same */
	struct bench_region  reg;                 /* its memory while created */
	int                  created;             /* reg holds memory */
	int                  live;                /* still measured */
	struct bench_worker  w[BENCH_MAX_WORKERS]; /* its workers */
	unsigned             nw;                  /* workers started */
	long                 pte_kib;             /* the controller's VmPTE growth at create, -1 unknown */
	uint64_t             faults;              /* the controller's faults at create, BENCH_FAULTS_UNKNOWN */
	double               cur[BENCH_NW];       /* this round's (or this group's) figure, CPU based */
	uint8_t              have[BENCH_NW];      /* cur measured */
};

static struct member members[BENCH_GROUP_MAX];   /* the controller runs one group at a time */

static uint64_t round_seed(unsigned r)
{
	return 0x243f6a8885a308d3u * (r + 1) ^ 0x13198a2e03707344u;
}

static void sample(struct member *m, enum bench_workload w, double cpu, double wall)
{
	struct bench_series *s = &m->c->s[w];

	if (s->n < BENCH_MAX_SAMPLES) {
		s->cpu[s->n] = cpu;
		s->wall[s->n] = wall;
		s->n++;
	}
	m->cur[w] = cpu;
	m->have[w] = 1;
}

/* The gains of workload w between members measured in the same round (or group). */
static void gains(struct member *mem, unsigned n, enum bench_workload w)
{
	for (unsigned i = 0; i < n; i++) {
		struct member *a = &mem[i];
		struct bench_series *s = &a->c->s[w];

		if (!a->live || !a->have[w] || a->cur[w] <= 0)
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct member *b = &mem[j];

			if (j == i || !b->live || !b->have[w] || b->cur[w] <= 0)
				continue;
			if (b->idx == a->c->plain_ref && s->n_plain < BENCH_MAX_SAMPLES)
				s->vs_plain[s->n_plain++] = bench_gain(w, a->cur[w], b->cur[w]);
			if (b->idx == a->c->raw_ref && s->n_raw < BENCH_MAX_SAMPLES)
				s->vs_raw[s->n_raw++] = bench_gain(w, a->cur[w], b->cur[w]);
		}
	}
}

static void member_fail(struct member *m, const char *why)
{
	if (!bench_stop)
		unusable(m->c, "%s", why);
	bench_workers_stop(m->w, m->nw);
	m->nw = 0;
	m->live = 0;
}

/* Pages tables per worker with 1, 2, 4 workers: the mean over the first k attaches. */
static void pagetables(struct bench_config *c, const struct bench_reply *rep, unsigned n)
{
	static const unsigned counts[3] = { 1, 2, BENCH_PT_WORKERS };

	for (int i = 0; i < 3; i++) {
		double kib = 0, flt = 0;

		if (counts[i] > n)
			continue;
		for (unsigned k = 0; k < counts[i]; k++) {
			kib = rep[k].vmpte_kib == BENCH_PTE_UNKNOWN || bench_isnan(kib) ? NAN : kib + (double)rep[k].vmpte_kib;
			flt = rep[k].minflt == BENCH_FAULTS_UNKNOWN || bench_isnan(flt) ? NAN : flt + (double)rep[k].minflt;
		}
		c->pt_sampled |= 1u << i;
		c->pt_kib[i] = kib / counts[i];   /* NAN where the OS offers no figure (output.c says why) */
		c->pt_faults[i] = flt / counts[i];
	}
	c->pt_done = 1;
}

static double elapsed(const struct run *run)
{
	return (double)(bench_wall_ns() - run->t0) / 1e9;
}

/* Create member i's memory at slot i: a setup sample when timed.  0, or -1 when stopping. */
static int member_create(struct run *run, struct member *m, unsigned i, unsigned gi, int timed)
{
	const struct bench_options *opt = run->opt;
	struct bench_config *c = m->c;
	double gib = (double)opt->size / (double)GIB;
	uint64_t cpu0, wall0, flt0;
	char why[BENCH_WHY_MAX] = "", ps[32];
	long pte0;
	void *at;

	at = slot_open(run, i);
	pte0 = hpshm__os_page_table_kib();
	flt0 = bench_minflt();
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	if (bench_region_create(c, at, opt->size, &m->reg, why, sizeof(why)) < 0) {
		unusable(c, "%s", why);
		slot_close(run, i);
		bench_progress(opt, "[%6.1fs] group %u: cannot use %s: %s", elapsed(run), gi, c->label, why);
		return bench_stop ? -1 : 0;
	}
	m->created = 1;
	if (timed) {
		sample(m, BENCH_W_SETUP, (double)(bench_cpu_ns() - cpu0) / 1e9 / gib,
		       (double)(bench_wall_ns() - wall0) / 1e9 / gib);
		/* The create's two parts, where the mechanism says (by wall time, as hpshm's report). */
		if (!bench_isnan(m->reg.populate_s) && !bench_isnan(m->reg.rest_s)) {
			sample(m, BENCH_W_POPULATE, m->reg.populate_s / gib, m->reg.populate_s / gib);
			sample(m, BENCH_W_SETUP_REST, m->reg.rest_s / gib, m->reg.rest_s / gib);
		}
	}
	m->pte_kib = pte0 < 0 || hpshm__os_page_table_kib() < 0 ? -1 : hpshm__os_page_table_kib() - pte0;
	m->faults = flt0 == 0 ? BENCH_FAULTS_UNKNOWN : bench_minflt() - flt0;
	if (!c->verified_by[0]) {
		c->verified_page_size = m->reg.page_size;
		c->huge = m->reg.huge;
		c->map_len = m->reg.len;
		snprintf(c->verified_by, sizeof(c->verified_by), "%s", m->reg.verified_by);
		/* The raw peer maps exactly what hpshm mapped (a header page included). */
		if (c->kind == BENCH_HPSHM && c->raw_ref >= 0 && run->res->cfg[c->raw_ref].map_len == 0)
			run->res->cfg[c->raw_ref].map_len = m->reg.len;
	}
	if (c->page_size && c->kind != BENCH_THP && (!m->reg.huge || m->reg.page_size != c->page_size)) {
		unusable(c, "asked for %s pages, the kernel (%s) reports %s pages", hpshm_size_format(c->page_size, ps,
			 sizeof(ps)), m->reg.verified_by, m->reg.huge ? "other huge" : "base");
		return 0;
	}
	m->live = 1;
	if (timed)
		bench_progress(opt, "[%6.1fs] group %u: created %-14s %-6s at %p: setup %.3f s/GiB (%s)", elapsed(run), gi,
			       c->label, short_size(m->reg.page_size, ps, sizeof(ps)), m->reg.addr, m->cur[BENCH_W_SETUP],
			       m->reg.verified_by);
	return 0;
}

/* Start the member's workers and attach them: an attach sample when timed, and page tables once. */
static void member_attach(struct run *run, struct member *m, int timed)
{
	const struct bench_options *opt = run->opt;
	struct bench_config *c = m->c;
	struct bench_reply att[BENCH_MAX_WORKERS > BENCH_PT_WORKERS ? BENCH_MAX_WORKERS : BENCH_PT_WORKERS];
	char why[BENCH_WHY_MAX] = "";
	unsigned want = c->workers;
	double sum = 0, wsum = 0;

	for (m->nw = 0; m->nw < want; m->nw++)
		if (bench_worker_start(&m->w[m->nw], c, &m->reg, opt->self_exe, why, sizeof(why)) < 0)
			goto failed;
	if (bench_workers_run(m->w, m->nw, BENCH_OP_ATTACH, run->budget, 0, att, why, sizeof(why)) < 0)
		goto failed;
	for (unsigned i = 0; i < m->nw; i++) {
		sum += (double)att[i].t.cpu_ns / 1e9;
		wsum += (double)att[i].t.wall_ns / 1e9;
	}
	if (timed)
		sample(m, BENCH_W_ATTACH, sum / m->nw, wsum / m->nw);
	if (c->pt_done)
		return;
	if (c->start == BENCH_START_THREAD) {
		/* One process: its page tables are the controller's, grown by create + populate. */
		c->pt_kib[0] = m->pte_kib < 0 ? NAN : (double)m->pte_kib;
		c->pt_faults[0] = m->faults == BENCH_FAULTS_UNKNOWN ? NAN : (double)m->faults;
		c->pt_sampled = 1;
		c->pt_done = 1;
		return;
	}
	/* Exact, so measured once: more workers attach one at a time, then leave again. */
	for (unsigned k = m->nw; k < BENCH_PT_WORKERS; k++) {
		if (bench_worker_start(&m->w[m->nw], c, &m->reg, opt->self_exe, why, sizeof(why)) < 0)
			goto failed;
		m->nw++;
		if (bench_workers_run(&m->w[k], 1, BENCH_OP_ATTACH, run->budget, 0, &att[k], why, sizeof(why)) < 0)
			goto failed;
	}
	pagetables(c, att, m->nw);
	if (m->nw > want) {
		bench_workers_stop(&m->w[want], m->nw - want);
		m->nw = want;
	}
	return;
failed:
	member_fail(m, why);
}

/* One timed phase in all of the member's workers at once; a warm-up (timed 0) keeps no sample. */
static void member_phase(struct run *run, struct member *m, enum bench_workload w, unsigned r, int timed)
{
	struct bench_reply rep[BENCH_MAX_WORKERS];
	char why[BENCH_WHY_MAX] = "";
	double sum = 0, wsum = 0, wmax = 0;
	unsigned n = m->nw;

	if (bench_workers_run(m->w, n, w == BENCH_W_CHASE ? BENCH_OP_CHASE : BENCH_OP_RMW, run->budget, round_seed(r),
			      rep, why, sizeof(why)) < 0) {
		member_fail(m, why);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (w == BENCH_W_CHASE) {
			sum += (double)rep[i].t.cpu_ns / (double)rep[i].t.ops;
			wsum += (double)rep[i].t.wall_ns / (double)rep[i].t.ops;
		} else {
			sum += (double)rep[i].t.ops / ((double)rep[i].t.cpu_ns / 1e9);
			wsum += (double)rep[i].t.ops;
			if ((double)rep[i].t.wall_ns > wmax)
				wmax = (double)rep[i].t.wall_ns;
		}
	}
	if (!timed)
		return;
	if (w == BENCH_W_CHASE)
		sample(m, w, sum / n, wsum / n);
	else
		sample(m, w, sum, wsum / (wmax / 1e9));
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
		n1 = snprintf(buf + used, len - used, "%s%.2fx %s", used ? ", " : " (", bench_gain(w, a->cur[w], b->cur[w]),
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
			       elapsed(run), gi, r + 1, run->opt->rounds, m->c->label,
			       short_size(m->c->verified_page_size, ps, sizeof(ps)), m->cur[BENCH_W_CHASE],
			       round_gains(mem, n, m, BENCH_W_CHASE, g1, sizeof(g1)), m->cur[BENCH_W_RMW] / 1e6,
			       round_gains(mem, n, m, BENCH_W_RMW, g2, sizeof(g2)));
	}
}

/* Release the member's memory, its workers gone first: a teardown sample when timed. */
static void member_release(struct run *run, struct member *m, unsigned i, int timed)
{
	uint64_t cpu0, wall0;
	int rc;

	bench_workers_stop(m->w, m->nw);
	m->nw = 0;
	if (!m->created)
		return;
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	rc = bench_region_destroy(&m->reg);
	if (rc < 0 && m->live)
		member_fail(m, "releasing the memory failed");
	if (timed && m->live && !bench_stop)
		sample(m, BENCH_W_TEARDOWN, (double)(bench_cpu_ns() - cpu0) / 1e9, (double)(bench_wall_ns() - wall0) / 1e9);
	m->created = 0;
	slot_close(run, i);
}

/* One setup cycle of member i: create and populate, attach its workers, tear down.  -1 when stopping. */
static int member_cycle(struct run *run, unsigned i, unsigned gi, int timed)
{
	struct member *m = &members[i];

	if (member_create(run, m, i, gi, timed) < 0)
		return -1;
	if (m->live)
		member_attach(run, m, timed);
	member_release(run, m, i, timed);
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
				note_add(line, sizeof(line), "%s%s %.3f/%.4f/%.4f", line[0] ? ", " : "", m->c->label,
					 m->cur[BENCH_W_SETUP], m->cur[BENCH_W_ATTACH], m->cur[BENCH_W_TEARDOWN]);
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
			       elapsed(run), gi, r + 1, BENCH_POOL_CYCLES, line);
	}
	for (unsigned i = 0; i < n; i++)
		if (members[i].c->usable)
			members[i].live = 0;   /* the rounds' create makes them live again */
	return bench_stop ? -1 : 0;
}

/*
 * Bring the group's members up for the rounds: create every one (hpshm before its raw peer,
 * or the other way round when raw_first), build the chase in each, start and attach the
 * workers, and run one untimed chase and rmw phase per member.  The members alive after it.
 *
 * The order is swapped halfway through the rounds because it is not neutral: on this kind
 * of machine (a guest whose memory the host backs lazily) the member created first was
 * measured 4-6 % slower at 4 KiB pages than the same calls created second, in either
 * role, so a fixed order would charge hpshm for the host's placement.  The warm-up phase
 * exists for the same host: memory it has just handed back to the guest stays slow to
 * touch for a while after populate (doc/bench.md), and round 1 would measure that instead
 * of the page size.
 */
static unsigned group_up(struct run *run, unsigned n, unsigned gi, int raw_first)
{
	const struct bench_options *opt = run->opt;
	unsigned live = 0;

	for (int pass = 0; pass < 2 && !bench_stop; pass++)
		for (unsigned i = 0; i < n && !bench_stop; i++)
			if (members[i].c->usable && (members[i].c->kind == BENCH_HPSHM) == (pass == raw_first) &&
			    member_create(run, &members[i], i, gi, 0) < 0)
				break;
	for (unsigned i = 0; i < n && !bench_stop; i++)
		if (members[i].live)
			bench_chase_build(members[i].reg.addr, opt->size, round_seed(0));
	for (unsigned i = 0; i < n && !bench_stop; i++) {
		struct member *m = &members[i];

		if (!m->live)
			continue;
		member_attach(run, m, 0);
		if (m->live && !raw_first)
			bench_progress(opt, "[%6.1fs] group %u: %-14s %u workers attached, page tables %.0f KiB/worker",
				       elapsed(run), gi, m->c->label, m->nw, m->c->pt_kib[0]);
	}
	for (unsigned i = 0; i < n; i++)
		live += members[i].live;
	for (unsigned i = 0; i < n && live && !bench_stop; i++)
		if (members[i].live) {
			member_phase(run, &members[i], BENCH_W_CHASE, 0, 0);
			if (members[i].live)
				member_phase(run, &members[i], BENCH_W_RMW, 0, 0);
		}
	return bench_stop ? 0 : live;
}

/* Stop every worker first, so the controller's release is the last reference, then tear
 * the memory down.  The setup cycles sampled teardown already, on memory populated alike. */
static void group_down(struct run *run, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		bench_workers_stop(members[i].w, members[i].nw);
		members[i].nw = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		member_release(run, &members[i], i, 0);
		members[i].live = 0;   /* group_up's create makes it live again */
	}
}

/*
 * Run members g[0..n) alive at the same time: create all, build the chase in each, start
 * and attach all workers, then the rounds (every member's chase, then every member's rmw,
 * the order reversed on odd rounds), then stop every worker and tear the memory down.
 * Returns the rounds completed, -2 if no member could run, or -1 when stopping; the rounds
 * every group completed go to res->rounds_done either way.
 */
static int run_group(struct run *run, const int *g, unsigned n, unsigned gi)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned live = 0, done = 0;
	int ran;
	char ps[32], line[BENCH_WHY_MAX] = "";

	memset(members, 0, sizeof(members));
	for (unsigned i = 0; i < n; i++) {
		members[i].idx = g[i];
		members[i].c = &res->cfg[g[i]];
		for (unsigned k = 0; k < BENCH_MAX_WORKERS; k++)
			members[i].w[k].chan = BENCH_OS_NONE;
		note_add(line, sizeof(line), "%s%s%s%s", i ? ", " : "", members[i].c->label,
			 members[i].c->kind == BENCH_THP || members[i].c->kind == BENCH_APR ? "" : " ",
			 members[i].c->kind == BENCH_THP || members[i].c->kind == BENCH_APR ? "" :
			 short_size(members[i].c->page_size, ps, sizeof(ps)));
	}
	note_add(res->groups_note, sizeof(res->groups_note), "%s{%s}", res->groups_note[0] ? " " : "", line);
	bench_progress(opt, "[%6.1fs] group %u: %s, alive at the same time", elapsed(run), gi, line);

	(void)group_cycles(run, n, gi);
	live = group_up(run, n, gi, 0);
	ran = live > 0;
	for (unsigned r = 0; r < opt->rounds && live && !bench_stop; r++) {
		/* Halfway, every member again, created in the other order (group_up says why). */
		if (r > 0 && r == opt->rounds / 2) {
			group_down(run, n);
			bench_progress(opt, "[%6.1fs] group %u: created again, raw peers first, for rounds %u-%u",
				       elapsed(run), gi, r + 1, opt->rounds);
			live = group_up(run, n, gi, 1);
			if (!live)
				break;
		}
		for (unsigned i = 0; i < n; i++)
			members[i].have[BENCH_W_CHASE] = members[i].have[BENCH_W_RMW] = 0;
		for (unsigned k = 0; k < n && !bench_stop; k++) {
			struct member *m = &members[r % 2 ? n - 1 - k : k];

			if (m->live)
				member_phase(run, m, BENCH_W_CHASE, r, 1);
		}
		for (unsigned k = 0; k < n && !bench_stop; k++) {
			struct member *m = &members[r % 2 ? n - 1 - k : k];

			if (m->live)
				member_phase(run, m, BENCH_W_RMW, r, 1);
		}
		if (bench_stop)
			break;
		gains(members, n, BENCH_W_CHASE);
		gains(members, n, BENCH_W_RMW);
		progress_round(run, members, n, gi, r);
		done = r + 1;
	}
	group_down(run, n);
	if (ran && (run->groups_ran++ == 0 || done < res->rounds_done))
		res->rounds_done = done;
	if (bench_stop)
		return -1;
	if (!ran)
		return -2;
	bench_progress(opt, "[%6.1fs] group %u: torn down", elapsed(run), gi);
	return (int)done;
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
 * Run the wanted group g, or as much of it as memory allows at once: members join while
 * they fit (with the reference), the others run in further groups with the reference.  A
 * member that does not fit even alone with it runs alone, and one that does not fit at all
 * is reported unusable.  Gains whose two sides end up in different groups are not measured,
 * and the split note says so.  Returns -1 when stopping.
 */
static int run_wanted(struct run *run, const struct group *want)
{
	struct bench_result *res = run->res;
	int pending[BENCH_GROUP_MAX], rest[BENCH_GROUP_MAX], g[BENCH_GROUP_MAX];
	unsigned np = 0, nr, ng;
	int ref = -1;
	char why[BENCH_WHY_MAX], ps[32];

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
		unsigned unit[BENCH_GROUP_MAX];
		int rc;

		pair_up(res, pending, np, unit);
		ng = nr = 0;
		for (unsigned i = 0; i < np; i += unit[i]) {
			unsigned k = unit[i];

			memcpy(&g[ng], &pending[i], k * sizeof(g[0]));
			if (ref >= 0)
				g[ng + k] = ref;
			if (group_fits(run, g, ng + k + (ref >= 0), why, sizeof(why)) == 0) {
				ng += k;
				continue;
			}
			memcpy(&rest[nr], &pending[i], k * sizeof(rest[0]));
			nr += k;
			if (ng == 0)
				continue;   /* not even with the reference alone: handled below */
			for (unsigned j = i; j < i + k; j++) {
				note_add(res->split_note, sizeof(res->split_note), "%s%s %s kept out of group %u: %s",
					 res->split_note[0] ? "; " : "", res->cfg[pending[j]].label,
					 short_size(res->cfg[pending[j]].page_size, ps, sizeof(ps)), res->groups + 1, why);
				bench_progress(run->opt, "%s %s kept out of group %u: %s", res->cfg[pending[j]].label,
					       short_size(res->cfg[pending[j]].page_size, ps, sizeof(ps)), res->groups + 1, why);
			}
		}
		if (ng == 0) {
			/* Not even with the reference: alone, without a gain over plain, or not at all. */
			char alone[BENCH_WHY_MAX];

			g[0] = rest[0];
			g[1] = ref;
			memmove(rest, rest + 1, --nr * sizeof(rest[0]));
			(void)group_fits(run, g, 1 + (ref >= 0), why, sizeof(why));   /* its own reason, for the note */
			if (group_fits(run, g, 1, alone, sizeof(alone)) < 0) {
				unusable(&res->cfg[g[0]], "not enough memory: %s", alone);
				bench_progress(run->opt, "cannot use %s: not enough memory: %s", res->cfg[g[0]].label, alone);
				memcpy(pending, rest, nr * sizeof(rest[0]));
				np = nr;
				continue;
			}
			ng = 1;
			note_add(res->split_note, sizeof(res->split_note), "%s%s %s ran alone (no gain over plain): %s",
				 res->split_note[0] ? "; " : "", res->cfg[g[0]].label,
				 short_size(res->cfg[g[0]].page_size, ps, sizeof(ps)), why);
		} else if (ref >= 0) {
			g[ng++] = ref;
		}
		rc = run_group(run, g, ng, ++res->groups);
		if (rc == -1)
			return -1;
		memcpy(pending, rest, nr * sizeof(rest[0]));
		np = nr;
	}
	return bench_stop ? -1 : 0;
}

/* ---- latency ------------------------------------------------------------------------------ */

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

/*
 * What a server waits for at start: the create + verify + destroy of a small segment (one
 * huge page) and of a large one (1 GiB, populated), for each hpshm configuration with huge
 * pages and its raw peer, alternated, BENCH_LAT_RUNS times; and the probe of each provider
 * (what `hpshm probe` and provider=auto ask first).  Only where the pool has the pages now.
 */
static void latency(struct run *run)
{
	struct bench_result *res = run->res;
	double a[BENCH_LAT_RUNS], b[BENCH_LAT_RUNS], g[BENCH_LAT_RUNS];
	char reason[HPSHM_TEXT_MAX];

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
			struct bench_latency *l = &res->lat[res->nlat];
			struct hpshm__os_pool p;
			unsigned n = 0, ng = 0;

			if (z == 1 && sizes[1] == sizes[0])
				continue;
			if (hpshm__os_pool(h.page_size, &p) == 0 &&
			    hpshm__os_pool_available(&p) < (sizes[z] + h.page_size - 1) / h.page_size)
				continue;
			for (unsigned r = 0; r < BENCH_LAT_RUNS && !bench_stop; r++) {
				double x, y = NAN;

				if (has_raw && r % 2)
					y = latency_once(&raw, sizes[z]);
				x = latency_once(&h, sizes[z]);
				if (has_raw && !(r % 2))
					y = latency_once(&raw, sizes[z]);
				if (bench_isnan(x))
					break;
				a[n] = x;
				b[n++] = y;
				if (!bench_isnan(y) && x > 0)
					g[ng++] = y / x;
			}
			if (n == 0)
				continue;
			memset(l, 0, sizeof(*l));
			snprintf(l->label, sizeof(l->label), "%s", h.label);
			if (ng)
				snprintf(l->raw_label, sizeof(l->raw_label), "%s", raw.label);
			l->page_size = h.page_size;
			l->size = sizes[z];
			bench_summarize(a, n, &l->us);
			if (ng) {
				bench_summarize(b, n, &l->raw_us);
				bench_summarize(g, ng, &l->vs_raw);
			}
			res->nlat++;
			bench_progress(run->opt, "[%6.1fs] latency %s %zu MiB: %.0f us%s", elapsed(run), l->label,
				       l->size >> 20, l->us.median, ng ? " (and its raw peer)" : "");
		}
	}
	/* The probes, as provider=auto makes them, at the default page size. */
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

/* ---- the run ------------------------------------------------------------------------------ */

/*
 * A pool just filled by --reserve hands out memory the hypervisor has to fault in first
 * (reference: cold pool, up to 4 s/GiB), which would make the first setup measure the host.
 * Faulting every new page in once, and giving it back, makes every group see a warm pool.
 */
static void pool_warm(struct run *run, size_t ps, unsigned long pages)
{
	struct bench_config c;
	struct bench_region reg;
	char why[BENCH_WHY_MAX];
	uint64_t t0 = bench_wall_ns();

	memset(&c, 0, sizeof(c));
	c.kind = BENCH_RAW_MEMFD;
	c.page_size = ps;
	if (bench_region_create(&c, NULL, pages * ps, &reg, why, sizeof(why)) == 0) {
		bench_region_destroy(&reg);
		bench_progress(run->opt, "warmed the %zu KiB pool (%lu pages) in %.2f s", ps >> 10, pages,
			       (double)(bench_wall_ns() - t0) / 1e9);
	}
}

/* Huge page regions of one page size that the wanted group holds at once. */
static unsigned huge_regions(const struct bench_options *opt)
{
	const char *list = opt->providers ? opt->providers : "auto,plain," PEERS;
	const char *name;
	unsigned caps, n = (unsigned)list_has(list, "auto");
	int anon = 0, fd = list_has(list, "auto");

	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if ((caps & HPSHM_CAP_HUGE) && list_has(list, name)) {
			n++;
			*(strcmp(name, "mmap_hugetlb") == 0 ? &anon : &fd) = 1;
		}
	/* One raw peer per set of calls (plan()): anonymous MAP_HUGETLB, and the descriptor kind. */
	if (list_has(list, "raw"))
		n += (unsigned)(anon + fd);
	return n;
}

/*
 * --reserve: add to each pool the pages of every huge region that will be alive at once
 * (an hpshm provider and its raw peer: two regions), within 60 % of MemAvailable less the
 * plain region that lives beside them.  What does not fit is said, and the groups then
 * split (run_wanted).  0, or -1 with why.
 */
static int reserve(struct run *run, struct bench_pool *pools, char *why, size_t len)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned want = huge_regions(opt);
	double room = 0.6 * (double)hpshm__os_mem_available() - (double)opt->size;
	char pwhy[BENCH_WHY_MAX], a[32], b[32];

	for (unsigned s = 0; s < opt->npage_sizes && !bench_stop && want; s++) {
		size_t ps = opt->page_sizes[s];
		unsigned long per = (unsigned long)region_pages(run, ps);
		unsigned k = want;
		size_t used = strlen(res->pool_note);

		while (k > 0 && (double)k * (double)per * (double)ps > room)
			k--;
		if (k < want) {
			bench_progress(opt, "--reserve: room for %u of the %u %s regions alive at once (%s each; 60%% of "
				       "MemAvailable less the plain region leaves %s)", k, want, hpshm_size_format(ps, a, sizeof(a)),
				       hpshm_size_format(per * ps, b, sizeof(b)), room > 0 ? bench_bytes((uint64_t)room,
				       pwhy, sizeof(pwhy)) : "nothing");
			if (k == 0)
				continue;
		}
		if (bench_pool_reserve(&pools[s], ps, k * per, pwhy, sizeof(pwhy)) < 0) {
			snprintf(why, len, "--reserve: %s", pwhy);
			return -1;
		}
		room -= (double)(pools[s].set - pools[s].before) * (double)ps;
		snprintf(res->pool_note + used, sizeof(res->pool_note) - used, "%s%zu KiB pool %lu -> %lu pages (%u region%s)%s%s",
			 used ? "; " : "", ps >> 10, pools[s].before, pools[s].set, k, k == 1 ? "" : "s", pwhy[0] ? ": " : "",
			 pwhy);
		if (pools[s].set > pools[s].before)
			pool_warm(run, ps, pools[s].set - pools[s].before);
	}
	if (res->pool_note[0])
		bench_progress(opt, "--reserve: %s (restored at exit)", res->pool_note);
	return 0;
}

int bench_run(const struct bench_options *opt, struct bench_result *res, char *why, size_t len)
{
	static struct group want[BENCH_MAX_CONFIGS];
	struct bench_pool pools[BENCH_MAX_SIZES];
	struct run run;
	unsigned nwant, nslots = 1;
	int rc = BENCH_OK;
	char pwhy[BENCH_WHY_MAX], thp_prev[32] = "";

	memset(res, 0, sizeof(*res));
	memset(pools, 0, sizeof(pools));
	memset(&run, 0, sizeof(run));
	res->opt = *opt;
	run.opt = &res->opt;
	run.res = res;
	run.plain = -1;
	run.t0 = bench_wall_ns();
	run.budget = (uint64_t)(opt->phase_seconds * 1e9);
	why[0] = '\0';
	bench_stop = 0;
	res->left_out = bench_os_left_out();
	res->pt_absent = hpshm__os_page_table_absent();
	bench_os_stop_catch();

	if (opt->reserve && reserve(&run, pools, why, len) < 0) {
		rc = BENCH_FAIL;
		goto out;
	}
	/* Shared THP is the peer a user would pick instead of hugetlb: --reserve lets it run. */
	if (opt->reserve && (!opt->providers || list_has(opt->providers, "thp"))) {
		if (bench_os_thp_advise(thp_prev, sizeof(thp_prev), pwhy, sizeof(pwhy)) < 0)
			bench_progress(opt, "--reserve: shared THP stays off: %s", pwhy);
		else if (thp_prev[0])
			note_add(res->pool_note, sizeof(res->pool_note), "%sshmem THP %s -> advise", res->pool_note[0] ? "; " : "",
				 thp_prev);
	}

	plan(&run);
	for (unsigned i = 0; i < res->ncfg; i++)
		if (!res->cfg[i].usable)
			bench_progress(opt, "cannot use %s: %s", res->cfg[i].label, res->cfg[i].why);
	if (res->thp_why[0])
		bench_progress(opt, "cannot use thp: %s", res->thp_why);
	if (res->apr_why[0])
		bench_progress(opt, "cannot use apr: %s", res->apr_why);
	if (res->left_out[0])
		bench_progress(opt, "left out: %s", res->left_out);
	nwant = plan_groups(&run, want, BENCH_MAX_CONFIGS);
	for (unsigned k = 0; k < nwant; k++)
		if (want[k].n > nslots)
			nslots = want[k].n;
	place_init(&run, nslots);
	for (unsigned k = 0; k < nwant && !bench_stop; k++)
		if (run_wanted(&run, &want[k]) < 0)
			break;
	/* No group could hold plain with anything else (or plain is all that was asked for):
	 * it is still measured, alone, so its own figures are there. */
	if (!bench_stop && run.plain >= 0 && res->cfg[run.plain].usable && res->cfg[run.plain].s[BENCH_W_CHASE].n == 0)
		(void)run_group(&run, &run.plain, 1, ++res->groups);
	if (!bench_stop)
		latency(&run);
	if (bench_stop) {
		snprintf(why, len, "interrupted in group %u: workers killed, memory released%s", res->groups,
			 opt->reserve ? ", pool restored" : "");
		rc = BENCH_INTERRUPTED;
	}
out:
	place_free(&run);
	for (unsigned s = 0; s < opt->npage_sizes; s++) {
		if (bench_pool_restore(&pools[s], pwhy, sizeof(pwhy)) < 0) {
			fprintf(stderr, "hpshm bench: could not restore the huge page pool: %s\n", pwhy);
			if (rc == BENCH_OK)
				rc = BENCH_FAIL;
		}
	}
	if (bench_os_thp_restore(thp_prev, pwhy, sizeof(pwhy)) < 0) {
		fprintf(stderr, "hpshm bench: could not put shmem THP back to %s: %s\n", thp_prev, pwhy);
		if (rc == BENCH_OK)
			rc = BENCH_FAIL;
	}
	bench_os_stop_release();
	res->seconds = (double)(bench_wall_ns() - run.t0) / 1e9;
	return rc;
}
