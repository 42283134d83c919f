/* SPDX-License-Identifier: MIT */
/*
 * bench/pool.c -- --reserve: size a huge page pool for the run, and put it back afterwards.
 *
 * The pool is machine-wide state that other programs use, so the bench never touches it
 * unless asked, and when asked it adds pages on top of what it found (someone else's pages
 * stay theirs) and at the end takes back exactly what it added.  If the pool changed under
 * us meanwhile, restore subtracts our pages from the current size rather than writing the
 * old number over someone else's change.  The kernel may give fewer pages than asked
 * (fragmented memory): the run goes on with what there is, and the providers that then
 * cannot get their pages say so.
 *
 * The pool is read through ports/facts.h and written through ports/admin.h, which know where
 * the OS keeps it (on Linux the size's sysfs nr_hugepages file, which exists for every size).
 *
 * For a run, pool_reserve() adds the pages of the huge regions a group has alive at once,
 * within what memory allows, and warms the new pages once so the first group does not
 * measure the host.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/admin.h"
#include "ports/facts.h"
#include "run.h"

static int pool_read(size_t page_size, unsigned long *pages, char *why, size_t len)
{
	struct hpshm__pool p;

	if (hpshm__os_pool(page_size, &p) < 0) {
		snprintf(why, len, "the kernel has no pool of %zu KiB pages", page_size >> 10);
		return -1;
	}
	*pages = p.total;
	return 0;
}

int bench_pool_reserve(struct bench_pool *p, size_t page_size, unsigned long pages, char *why, size_t len)
{
	unsigned long got;

	memset(p, 0, sizeof(*p));
	p->page_size = page_size;
	if (bench_os_pool_writable(why, len) < 0)
		return -1;
	if (pool_read(page_size, &p->before, why, len) < 0)
		return -1;
	if (hpshm__os_pool_resize(page_size, p->before + pages, why, len) < 0)
		return -1;
	p->changed = 1;
	if (pool_read(page_size, &got, why, len) < 0)
		got = p->before + pages;
	p->set = got;
	if (got < p->before + pages)
		snprintf(why, len, "the kernel gave %lu of the %lu pages asked for", got - p->before, pages);
	else
		why[0] = '\0';
	return 0;
}

int bench_pool_restore(struct bench_pool *p, char *why, size_t len)
{
	unsigned long now, target;

	if (!p->changed)
		return 0;
	if (pool_read(p->page_size, &now, why, len) < 0)
		return -1;
	target = now == p->set ? p->before : (now > p->set - p->before ? now - (p->set - p->before) : 0);
	if (hpshm__os_pool_resize(p->page_size, target, why, len) < 0)
		return -1;
	p->changed = 0;
	return 0;
}

/* ---- --reserve for a run --------------------------------------------------------------------- */

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

/*
 * Huge page regions of one page size alive at once when the members of a group live
 * together in the rounds (group.c): one per hpshm provider on huge pages the list names
 * (auto counting as one), and one for the raw peer.  Where the pool cannot have them all,
 * the members take turns with one region alive at a time.
 */
static unsigned huge_regions(const struct bench_options *opt)
{
	const char *list = opt->providers ? opt->providers : DEFAULT_LIST;
	const char *name;
	unsigned caps, n = (unsigned)plan_has(list, "auto");

	for (unsigned i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++)
		if ((caps & HPSHM_CAP_HUGE) && plan_has(list, name))
			n++;
	return n > 0 && plan_has(list, "raw") ? n + 1 : n;
}

/*
 * --reserve: add to each pool the pages of the huge regions alive at once (huge_regions()),
 * within 60 % of MemAvailable less the plain region of the run.  What does not fit is said:
 * with room for one region the members take turns, and with none the groups split
 * (fit_run).  0, or -1 with why.
 */
int pool_reserve(struct run *run, struct bench_pool *pools, char *why, size_t len)
{
	const struct bench_options *opt = run->opt;
	struct bench_result *res = run->res;
	unsigned want = huge_regions(opt);
	double room = 0.6 * (double)hpshm__os_mem_available() - (double)opt->size;
	char pwhy[BENCH_WHY_MAX], a[32], b[32];

	for (unsigned s = 0; s < opt->npage_sizes && !bench_stop && want; s++) {
		size_t ps = opt->page_sizes[s];
		unsigned long per = (unsigned long)fit_region_pages(run, ps);
		unsigned k = want;
		size_t used = strlen(res->pool_note);

		while (k > 0 && (double)k * (double)per * (double)ps > room)
			k--;
		if (k < want) {
			bench_progress(opt, "--reserve: room for %u of the %u %s regions alive at once (%s each; 60%% of "
				       "MemAvailable less the plain region leaves %s)", k, want, hpshm_size_format(ps, a, sizeof(a)),
				       hpshm_size_format(per * ps, b, sizeof(b)), room > 0 ? run_bytes((uint64_t)room,
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

