/*
 * bench/run.c -- the controller: which configurations run, in which order, and what is
 * measured in each round.
 *
 * Rounds alternate the order of the configurations (A B C, then C B A, ...), so a slow drift
 * of the machine (a neighbour's compile starting, memory going cold) does not favour the
 * configuration that always runs first.  In each round every configuration goes through:
 *   setup     create and populate (controller's thread CPU time, per GiB);
 *   build     the chase is written (untimed: it is the same sequential pass everywhere);
 *   attach    N workers map the memory and touch every base page (per worker);
 *   chase     all workers follow the chase at once (ns per access, mean of the workers);
 *   rmw       all workers increment random slots at once (accesses per CPU second, summed);
 *   pagetables  in the first round only, since it is exact: VmPTE and minor faults per
 *             worker with 1, 2 and 4 workers attached;
 *   teardown  workers exit, then the controller releases the memory, the last reference,
 *             so the figure includes freeing it.
 *
 * Every configuration is mapped at the same 1 GiB-aligned address, kept reserved (PROT_NONE)
 * between configurations: page-table figures depend on alignment (a 4 GiB region can span
 * 4 or 5 PMD pages), and hpshm and its raw peer must be compared on identical layouts.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP only set bench_stop.  Every wait wakes up (the
 * handlers are installed without SA_RESTART) or polls it, and the ordinary unwinding path
 * then kills and reaps the workers, destroys the memory and puts the pool back: one cleanup
 * path, run whether the bench ends well or not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "port.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define GIB ((size_t)1 << 30)
#define PEERS "raw,thp,apr"   /* the peers, as --providers names them */

volatile sig_atomic_t bench_stop;

/* The state of one run. */
struct run {
	const struct bench_options *opt;
	struct bench_result        *res;
	unsigned char              *place;      /* the 1 GiB-aligned address every region uses */
	unsigned char              *resv;       /* the PROT_NONE reservation around it */
	size_t                      resv_len;   /* its length */
	size_t                      hole;       /* bytes from place to the reservation's end */
	uint64_t                    t0;         /* wall clock at the start */
};

static void on_stop(int sig)
{
	(void)sig;
	bench_stop = 1;
}

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

/* Call fn for each item of a comma list; stops at the first that returns non-zero. */
static int each_item(const char *list, int (*fn)(const char *item, void *ctx), void *ctx)
{
	char buf[512], *save = NULL, *it;
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (it = strtok_r(buf, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save))
		rc = fn(it, ctx);
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
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
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
		unusable(c, "a child started by exec cannot re-attach %s segments: run with --fork", name);
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
	int anon = strcmp(h->provider, "mmap_hugetlb") == 0;

	c = add_config(res, anon ? BENCH_RAW_ANON : BENCH_RAW_MEMFD, start, "raw", h->page_size);
	if (!c)
		return;
	snprintf(c->label, sizeof(c->label), "raw %s", anon ? "mmap" : "memfd");
	res->cfg[hpshm_idx].raw_ref = (int)(c - res->cfg);
	c->raw_ref = (int)(c - res->cfg);
	if (anon && start == BENCH_START_SPAWN)
		unusable(c, "anonymous MAP_HUGETLB memory is inherited by fork only: run with --fork");
}

static void plan(struct run *run)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	enum bench_start start = opt->fork_mode ? BENCH_START_FORK : BENCH_START_SPAWN;
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
		/* One raw peer per page size, shaped like the first hpshm provider of that size. */
		if (want_raw && res->ncfg > first) {
			unsigned n = res->ncfg;

			add_raw(run, first, start);
			for (unsigned i = first + 1; i < n; i++)
				res->cfg[i].raw_ref = res->cfg[first].raw_ref;
		}
	}
	/* plain is every ratio's reference: always measured. */
	c = add_config(res, BENCH_HPSHM, start, "plain", 0);
	if (c)
		plain = (int)(c - res->cfg);
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
		if (!opt->fork_mode)
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

static int place_init(struct run *run, char *why, size_t len)
{
	const struct bench_options *opt = run->opt;
	size_t largest = GIB, span;
	uintptr_t p, a;

	for (unsigned s = 0; s < opt->npage_sizes; s++)
		if (opt->page_sizes[s] > largest)
			largest = opt->page_sizes[s];
	/* The size, a header page a re-attachable segment may carry, rounded to the largest page. */
	span = (opt->size + 2 * largest) / largest * largest;
	run->resv_len = span + GIB;
	run->resv = mmap(NULL, run->resv_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (run->resv == MAP_FAILED) {
		run->resv = NULL;
		snprintf(why, len, "cannot reserve %zu bytes of address space: %s", run->resv_len, strerror(errno));
		return -1;
	}
	p = (uintptr_t)run->resv;
	a = (p + GIB - 1) & ~(uintptr_t)(GIB - 1);
	run->place = (unsigned char *)a;
	run->hole = run->resv_len - (a - p);
	return 0;
}

/* Open the hole at place for one region, or close it again after teardown. */
static void place_open(struct run *run)
{
	(void)munmap(run->place, run->hole);
}

static void place_close(struct run *run)
{
	void *p = mmap(run->place, run->hole, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)   /* something else took part of it: regions go where the kernel says */
		run->place = NULL;
}

static void place_free(struct run *run)
{
	if (run->resv)
		(void)munmap(run->resv, run->resv_len);
	run->resv = NULL;
}

/* ---- one configuration, one round --------------------------------------------------------- */

static uint64_t round_seed(unsigned r)
{
	return 0x243f6a8885a308d3u * (r + 1) ^ 0x13198a2e03707344u;
}

static void sample(struct bench_config *c, enum bench_workload w, unsigned r, double cpu, double wall)
{
	c->s[w].cpu[r] = cpu;
	c->s[w].wall[r] = wall;
	c->s[w].have[r] = 1;
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
			kib += (double)rep[k].vmpte_kib;
			flt += (double)rep[k].minflt;
		}
		c->pt_kib[i] = kib / counts[i];
		c->pt_faults[i] = flt / counts[i];
	}
	c->pt_done = 1;
}

/* Returns 0 (done, or the configuration marked unusable) or -1 when stopping. */
static int measure(struct run *run, struct bench_config *c, unsigned r)
{
	const struct bench_options *opt = run->opt;
	struct bench_worker w[BENCH_MAX_WORKERS];
	struct bench_reply rep[BENCH_MAX_WORKERS];
	struct bench_reply att[BENCH_MAX_WORKERS];   /* the attach replies, for page tables */
	struct bench_region reg;
	uint64_t budget = (uint64_t)(opt->phase_seconds * 1e9);
	uint64_t cpu0, wall0, cpu, wall;
	long pte0, pte1;
	uint64_t flt0;
	unsigned nw = 0, want = c->workers;
	char why[BENCH_WHY_MAX] = "", ps[32];
	double gib = (double)opt->size / (double)GIB, sum, wsum, wmax;
	int rc = 0;

	if (run->place)
		place_open(run);
	pte0 = bench_vmpte_kib();
	flt0 = bench_minflt();
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	if (bench_region_create(c, run->place, opt->size, &reg, why, sizeof(why)) < 0) {
		unusable(c, "%s", why);
		if (run->place)
			place_close(run);
		return bench_stop ? -1 : 0;
	}
	cpu = bench_cpu_ns() - cpu0;
	wall = bench_wall_ns() - wall0;
	pte1 = bench_vmpte_kib();
	sample(c, BENCH_W_SETUP, r, (double)cpu / 1e9 / gib, (double)wall / 1e9 / gib);

	if (!c->verified_by[0]) {
		c->verified_page_size = reg.page_size;
		c->huge = reg.huge;
		c->map_len = reg.len;
		snprintf(c->verified_by, sizeof(c->verified_by), "%s", reg.verified_by);
		/* The raw peer maps exactly what hpshm mapped (a header page included). */
		if (c->kind == BENCH_HPSHM && c->raw_ref >= 0 && run->res->cfg[c->raw_ref].map_len == 0)
			run->res->cfg[c->raw_ref].map_len = reg.len;
	}
	if (c->page_size && c->kind != BENCH_THP && (!reg.huge || reg.page_size != c->page_size)) {
		unusable(c, "asked for %s pages, the kernel (%s) reports %s pages", hpshm_size_format(c->page_size, ps,
			 sizeof(ps)), reg.verified_by, reg.huge ? "other huge" : "base");
		goto teardown;
	}

	bench_chase_build(reg.addr, opt->size, round_seed(r));
	if (bench_stop)
		goto teardown;

	for (nw = 0; nw < want; nw++)
		if (bench_worker_start(&w[nw], c, &reg, opt->self_exe, why, sizeof(why)) < 0)
			goto failed;
	if (bench_workers_run(w, nw, BENCH_OP_ATTACH, budget, round_seed(r), rep, why, sizeof(why)) < 0)
		goto failed;
	sum = wsum = 0;
	for (unsigned i = 0; i < nw; i++) {
		sum += (double)rep[i].t.cpu_ns / 1e9;
		wsum += (double)rep[i].t.wall_ns / 1e9;
	}
	sample(c, BENCH_W_ATTACH, r, sum / nw, wsum / nw);
	memcpy(att, rep, sizeof(att[0]) * nw);
	if (!c->pt_done && c->start == BENCH_START_THREAD) {
		/* One process: its page tables are the controller's, grown by create + populate. */
		c->pt_kib[0] = (double)(pte1 - pte0);
		c->pt_faults[0] = (double)(bench_minflt() - flt0);
		c->pt_done = 1;
	}

	if (bench_workers_run(w, nw, BENCH_OP_CHASE, budget, round_seed(r), rep, why, sizeof(why)) < 0)
		goto failed;
	sum = wsum = 0;
	for (unsigned i = 0; i < nw; i++) {
		sum += (double)rep[i].t.cpu_ns / (double)rep[i].t.ops;
		wsum += (double)rep[i].t.wall_ns / (double)rep[i].t.ops;
	}
	sample(c, BENCH_W_CHASE, r, sum / nw, wsum / nw);

	if (bench_workers_run(w, nw, BENCH_OP_RMW, budget, round_seed(r), rep, why, sizeof(why)) < 0)
		goto failed;
	sum = wsum = wmax = 0;
	for (unsigned i = 0; i < nw; i++) {
		sum += (double)rep[i].t.ops / ((double)rep[i].t.cpu_ns / 1e9);
		wsum += (double)rep[i].t.ops;
		if ((double)rep[i].t.wall_ns > wmax)
			wmax = (double)rep[i].t.wall_ns;
	}
	sample(c, BENCH_W_RMW, r, sum, wsum / (wmax / 1e9));

	if (!c->pt_done) {
		/* The first attaches were measured above; more workers attach one at a time. */
		for (; nw < BENCH_PT_WORKERS; nw++) {
			if (bench_worker_start(&w[nw], c, &reg, opt->self_exe, why, sizeof(why)) < 0)
				goto failed;
			if (bench_workers_run(&w[nw], 1, BENCH_OP_ATTACH, budget, 0, &att[nw], why, sizeof(why)) < 0) {
				nw++;
				goto failed;
			}
		}
		pagetables(c, att, nw);
	}
	goto stop;

failed:
	if (!bench_stop)
		unusable(c, "%s", why);
	rc = bench_stop ? -1 : 0;
stop:
	bench_workers_stop(w, nw);
teardown:
	cpu0 = bench_cpu_ns();
	wall0 = bench_wall_ns();
	if (bench_region_destroy(&reg) < 0 && c->usable)
		unusable(c, "releasing the memory failed");
	cpu = bench_cpu_ns() - cpu0;
	wall = bench_wall_ns() - wall0;
	if (c->usable && !bench_stop)
		sample(c, BENCH_W_TEARDOWN, r, (double)cpu / 1e9, (double)wall / 1e9);
	if (run->place)
		place_close(run);
	return bench_stop ? -1 : rc;
}

/* ---- the run ------------------------------------------------------------------------------ */

static const char *short_size(size_t v, char *buf, size_t len)
{
	return v ? hpshm_size_format(v, buf, len) : "4KiB";
}

static void progress_round(struct run *run, const struct bench_config *c, unsigned r)
{
	char ps[32];

	if (!c->usable) {
		bench_progress(run->opt, "[%6.1fs] round %u/%u %-14s cannot run: %s",
			       (double)(bench_wall_ns() - run->t0) / 1e9, r + 1, run->opt->rounds, c->label, c->why);
		return;
	}
	bench_progress(run->opt, "[%6.1fs] round %u/%u %-14s %-6s setup %.3f s/GiB  chase %.0f ns  rmw %.1f M/s  "
		       "teardown %.4f s", (double)(bench_wall_ns() - run->t0) / 1e9, r + 1, run->opt->rounds, c->label,
		       short_size(c->verified_page_size, ps, sizeof(ps)), c->s[BENCH_W_SETUP].cpu[r],
		       c->s[BENCH_W_CHASE].cpu[r], c->s[BENCH_W_RMW].cpu[r] / 1e6, c->s[BENCH_W_TEARDOWN].cpu[r]);
}

/*
 * A pool just filled by --reserve hands out memory the hypervisor has to fault in first
 * (reference: cold pool, up to 4 s/GiB), which would make round 1's setup measure the host.
 * Faulting every free page in once, and giving it back, makes every round see a warm pool.
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

int bench_run(const struct bench_options *opt, struct bench_result *res, char *why, size_t len)
{
	struct bench_pool pools[BENCH_MAX_SIZES];
	struct sigaction sa, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct run run;
	int rc = BENCH_OK;
	char pwhy[BENCH_WHY_MAX];

	memset(res, 0, sizeof(*res));
	memset(pools, 0, sizeof(pools));
	memset(&run, 0, sizeof(run));
	res->opt = *opt;
	run.opt = &res->opt;
	run.res = res;
	run.t0 = bench_wall_ns();
	why[0] = '\0';
	bench_stop = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;   /* no SA_RESTART: a blocked wait must wake up and look */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	if (opt->reserve) {
		for (unsigned s = 0; s < opt->npage_sizes && !bench_stop; s++) {
			size_t ps = opt->page_sizes[s];
			unsigned long pages = (unsigned long)((opt->size + 2 * ps - 1) / ps);   /* + a header page */
			size_t used = strlen(res->pool_note);

			if (bench_pool_reserve(&pools[s], ps, pages, pwhy, sizeof(pwhy)) < 0) {
				snprintf(why, len, "--reserve: %s", pwhy);
				rc = BENCH_FAIL;
				goto out;
			}
			snprintf(res->pool_note + used, sizeof(res->pool_note) - used, "%s%zu KiB pool %lu -> %lu pages%s%s",
				 used ? "; " : "", ps >> 10, pools[s].before, pools[s].set, pwhy[0] ? ": " : "", pwhy);
			if (pools[s].set > pools[s].before)
				pool_warm(&run, ps, pools[s].set - pools[s].before);
		}
		bench_progress(opt, "--reserve: %s (restored at exit)", res->pool_note);
	}

	plan(&run);
	if (place_init(&run, why, len) < 0) {
		rc = BENCH_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < res->ncfg; i++)
		if (!res->cfg[i].usable)
			bench_progress(opt, "cannot use %s: %s", res->cfg[i].label, res->cfg[i].why);
	if (res->thp_why[0])
		bench_progress(opt, "cannot use thp: %s", res->thp_why);
	if (res->apr_why[0])
		bench_progress(opt, "cannot use apr: %s", res->apr_why);

	for (unsigned r = 0; r < opt->rounds && !bench_stop; r++) {
		for (unsigned k = 0; k < res->ncfg && !bench_stop; k++) {
			struct bench_config *c = &res->cfg[r % 2 ? res->ncfg - 1 - k : k];

			if (!c->usable)
				continue;
			if (measure(&run, c, r) < 0)
				break;
			progress_round(&run, c, r);
		}
		if (!bench_stop)
			res->rounds_done = r + 1;
	}
	if (bench_stop) {
		snprintf(why, len, "interrupted after %u complete round%s: workers killed, memory released%s",
			 res->rounds_done, res->rounds_done == 1 ? "" : "s", opt->reserve ? ", pool restored" : "");
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
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	res->seconds = (double)(bench_wall_ns() - run.t0) / 1e9;
	return rc;
}
