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

/* The sizes the kernel offers, "2MiB, 1GiB", or "none". */
static void hugetlb_size_list(char *buf, size_t len)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);

	hpshm__size_list(sizes, n, buf, len);
}

int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm__pool pool;
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	unsigned long need, avail, target;
	size_t pages;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	hpshm_size_format(rq->page_size, psz, sizeof(psz));

	if (hpshm__pool_get(rq->page_size, &pool) < 0) {
		hugetlb_size_list(sizes, sizeof(sizes));
		if (strcmp(sizes, "none") == 0)
			snprintf(out->reason, sizeof(out->reason),
				 "the kernel offers no huge pages (no /sys/kernel/mm/hugepages): it lacks hugetlb "
				 "support, or /sys is not mounted");
		else
			snprintf(out->reason, sizeof(out->reason),
				 "the kernel offers no %s huge pages (sizes: %s)", psz, sizes);
		return HPSHM_EUNAVAILABLE;
	}

	/* At least one page, so "any size" still needs a page. */
	pages = rq->size / rq->page_size + (rq->size % rq->page_size != 0);
	need = pages > ULONG_MAX ? ULONG_MAX : (unsigned long)(pages ? pages : 1);
	avail = hpshm__pool_available(&pool);
	if (avail < need) {
		hpshm__pool_knob(rq->page_size, knob, sizeof(knob));
		target = pool.total > ULONG_MAX - (need - avail) ? ULONG_MAX : pool.total + (need - avail);
		if (pool.total == 0 && avail == 0)
			snprintf(out->reason, sizeof(out->reason),
				 "%s is 0 for %s pages (need %lu): raise it to at least %lu", knob, psz, need, target);
		else
			snprintf(out->reason, sizeof(out->reason),
				 "only %lu huge page%s of %s available (need %lu): raise %s to at least %lu", avail,
				 avail == 1 ? "" : "s", psz, need, knob, target);
		return HPSHM_EUNAVAILABLE;
	}

	if (hpshm__hugetlb_cgroup_short(rq->size, rq->page_size, 0, out->reason, sizeof(out->reason)))
		return HPSHM_EUNAVAILABLE;
	return 0;
}
