/*
 * backends/hugetlb_common.c -- the probe every hugetlb provider shares: is there a pool of this
 * page size, does it hold enough pages, does a hugetlb cgroup leave room, and what should the
 * operator change when it does not.
 *
 * What an operator sets up, and what we check, in the order the kernel would fail:
 *   1. The page size must be an hstate the kernel offers (/sys/kernel/mm/hugepages/
 *      hugepages-<kB>kB).  1GiB pages, for instance, exist only where the CPU has them and
 *      the kernel was built or booted for them.
 *   2. The pool must hold the pages: free - resv, plus overcommit room.  The default size is
 *      sized by vm.nr_hugepages; any other size only by its own sysfs nr_hugepages, which is
 *      what we name in the advice (sysctl cannot reach it).
 *   3. A hugetlb cgroup (ports/linux/cgroup.c) may limit reservations (rsvd, failing mmap
 *      cleanly) or faults (SIGBUS long after mmap succeeded).  Either leaves room = limit -
 *      usage, ancestors included; less room than the segment means it cannot work here.
 * All of it is advisory: pages can be taken between probe and create, so create still
 * handles ENOMEM/ENOSPC, with the hint from hpshm__hugetlb_hint() (ports/linux/advice.c).
 *
 * Every reason is one sentence that names the knob and the number to set it to.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/hugetlb_common.h"
#include "hpshm/provider.h"
#include "linux/linux.h"

/*
 * The page size for the wish in rq->page_size among the pools the kernel has: the default
 * huge page size, the largest that holds the segment now (else the largest offered: a 1 GiB
 * pool is rarely filled at run time, and an operator who wrote "largest" wants the best that
 * works), or exactly the size asked for.  0 if the kernel offers no such size.
 */
static size_t hugetlb_choose(const struct hpshm_request *rq, const struct hpshm__pool *pools, int n)
{
	size_t d;

	if (n <= 0)
		return 0;
	if (rq->page_size == HPSHM_PAGE_DEFAULT) {
		d = hpshm__default_huge_page_size();
		return d ? d : pools[0].page_size;
	}
	if (rq->page_size == HPSHM_PAGE_LARGEST) {
		for (int i = n - 1; i >= 0; i--) {
			size_t pages = rq->size / pools[i].page_size + (rq->size % pools[i].page_size != 0);

			if (hpshm__pool_available(&pools[i]) >= pages)
				return pools[i].page_size;
		}
		return pools[n - 1].page_size;
	}
	for (int i = 0; i < n; i++)
		if (pools[i].page_size == rq->page_size)
			return rq->page_size;
	return 0;
}

int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out, struct hpshm_request *at)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES], pool;
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	unsigned long need, avail, target;
	size_t pages;
	int n;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->page_size = 0;
	out->available = 0;
	out->advice = 0;
	*at = *rq;

	n = hpshm__pools(pools, HPSHM__MAX_PAGE_SIZES);
	if (n > HPSHM__MAX_PAGE_SIZES)
		n = HPSHM__MAX_PAGE_SIZES;
	out->nsizes = 0;
	for (int i = 0; i < n && i < HPSHM_PROBE_SIZES; i++)
		out->sizes[out->nsizes++] = pools[i].page_size;
	if (n <= 0) {
		snprintf(out->reason, sizeof(out->reason),
			 "the kernel offers no huge pages: it lacks hugetlb support, or /sys is not mounted");
		snprintf(out->fix, sizeof(out->fix), "use a kernel built with CONFIG_HUGETLBFS, with /sys mounted");
		return HPSHM_EUNAVAILABLE;
	}
	out->page_size = hugetlb_choose(rq, pools, n);
	if (out->page_size == 0) {
		hpshm__size_list(out->sizes, (int)out->nsizes, sizes, sizeof(sizes));
		snprintf(out->reason, sizeof(out->reason),
			 "huge_page_size=%s: the kernel offers no such huge pages (offered: %s)",
			 hpshm_size_format(rq->page_size, psz, sizeof(psz)), sizes);
		snprintf(out->fix, sizeof(out->fix), "set huge_page_size to one of %s, or default", sizes);
		return HPSHM_EUNAVAILABLE;
	}
	at->page_size = out->page_size;
	if (hpshm__round_up(rq->size, at->page_size, &at->size) < 0)
		at->size = rq->size;
	hpshm_size_format(at->page_size, psz, sizeof(psz));
	if (hpshm__pool_get(at->page_size, &pool) < 0) {
		snprintf(out->reason, sizeof(out->reason), "cannot read the pool of %s huge pages", psz);
		return HPSHM_EUNAVAILABLE;
	}
	avail = hpshm__pool_available(&pool);
	out->available = avail;
	if (hpshm__hugetlb_fault_risk(at->size, at->page_size) > 0)
		out->advice |= HPSHM_ADVISE_POPULATE;

	/* At least one page, so "any size" still needs a page. */
	pages = at->size / at->page_size + (at->size % at->page_size != 0);
	need = pages > ULONG_MAX ? ULONG_MAX : (unsigned long)(pages ? pages : 1);
	if (avail < need) {
		hpshm__pool_knob(at->page_size, knob, sizeof(knob));
		target = pool.total > ULONG_MAX - (need - avail) ? ULONG_MAX : pool.total + (need - avail);
		if (pool.total == 0 && avail == 0)
			snprintf(out->reason, sizeof(out->reason),
				 "%s is 0 for %s pages (need %lu): raise it to at least %lu", knob, psz, need, target);
		else
			snprintf(out->reason, sizeof(out->reason),
				 "only %lu huge page%s of %s available (need %lu): raise %s to at least %lu", avail,
				 avail == 1 ? "" : "s", psz, need, knob, target);
		hpshm__hugetlb_hint(at->size, at->page_size, out->fix, sizeof(out->fix));
		return HPSHM_EUNAVAILABLE;
	}

	if (hpshm__hugetlb_cgroup_short(at->size, at->page_size, 0, out->reason, sizeof(out->reason)))
		return HPSHM_EUNAVAILABLE;
	return 0;
}
