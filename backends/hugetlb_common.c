/*
 * backends/hugetlb_common.c -- the checks and the advice every hugetlb provider shares: is there a
 * pool of this page size, does it hold enough pages, does a hugetlb cgroup leave room, and
 * what should the operator change when it does not.
 *
 * What an operator sets up, and what we check, in the order the kernel would fail:
 *   1. The page size must be an hstate the kernel offers (/sys/kernel/mm/hugepages/
 *      hugepages-<kB>kB).  1GiB pages, for instance, exist only where the CPU has them and
 *      the kernel was built or booted for them.
 *   2. The pool must hold the pages: free - resv, plus overcommit room.  The default size is
 *      sized by vm.nr_hugepages; any other size only by its own sysfs nr_hugepages, which is
 *      what we name in the advice (sysctl cannot reach it).
 *   3. A hugetlb cgroup (see cgroup.c) may limit reservations (rsvd, failing mmap cleanly)
 *      or faults (SIGBUS long after mmap succeeded).  Either leaves room = limit - usage,
 *      ancestors included; less room than the segment means it cannot work here.
 * All of it is advisory: pages can be taken between probe and create, so create still
 * handles ENOMEM/ENOSPC, with the hint from hpshm__hugetlb_hint().
 *
 * Every reason is one sentence that names the knob and the number to set it to.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hpshm/provider.h"
#include "port.h"

/* The knob that sizes the pool of page_size: the sysctl for the default size, else sysfs. */
static void hugetlb_knob(size_t page_size, char *buf, size_t len)
{
	if (page_size == hpshm__default_huge_page_size())
		snprintf(buf, len, "vm.nr_hugepages");
	else
		snprintf(buf, len, "/sys/kernel/mm/hugepages/hugepages-%zukB/nr_hugepages", page_size / 1024);
}

/* Room left under a cgroup limit. */
static uint64_t hugetlb_room(uint64_t limit, uint64_t usage)
{
	if (limit == HPSHM__UNLIMITED)
		return HPSHM__UNLIMITED;
	return limit > usage ? limit - usage : 0;
}

/* Pages of page_size that hold size bytes; at least one, so "any size" still needs a page. */
static unsigned long hugetlb_pages(size_t size, size_t page_size)
{
	size_t n = size / page_size + (size % page_size != 0);

	if (n == 0)
		n = 1;
	return n > ULONG_MAX ? ULONG_MAX : (unsigned long)n;
}

/* The sizes the kernel offers, "2MiB, 1GiB", or "none". */
static void hugetlb_size_list(char *buf, size_t len)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES];
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__pools(pools, HPSHM__MAX_PAGE_SIZES);

	for (int i = 0; i < n; i++)
		sizes[i] = pools[i].page_size;
	hpshm__size_list(sizes, n, buf, len);
}

/*
 * The cgroup verdict for size bytes of page_size pages: 0 if it leaves room, else 1 with
 * reason (or hint) written.  advice selects the wording: 0 a probe reason, 1 a hint.
 */
static int hugetlb_cgroup_check(size_t size, size_t page_size, int advice, char *buf, size_t len)
{
	struct hpshm__cgroup cg;
	char psz[32], lim[32], used[32], need[32], target[32], sname[16];
	uint64_t froom, rroom, limit, usage;
	const char *file;
	int rsvd, n;

	if (hpshm__cgroup_get(page_size, &cg) < 0 || cg.version == 0)
		return 0;
	froom = hugetlb_room(cg.limit, cg.usage);
	rroom = hugetlb_room(cg.rsvd_limit, cg.rsvd_usage);
	if ((froom < rroom ? froom : rroom) >= size)
		return 0;

	/* Name the limit that binds: the reservation one fails mmap, the other the faults. */
	rsvd = rroom < froom;
	limit = rsvd ? cg.rsvd_limit : cg.limit;
	usage = rsvd ? cg.rsvd_usage : cg.usage;
	hpshm__hugetlb_cgroup_size(page_size, sname, sizeof(sname));
	if (cg.version == 1)
		file = rsvd ? "rsvd.limit_in_bytes" : "limit_in_bytes";
	else
		file = rsvd ? "rsvd.max" : "max";
	hpshm_size_format(page_size, psz, sizeof(psz));
	hpshm_size_format((size_t)limit, lim, sizeof(lim));
	hpshm_size_format((size_t)usage, used, sizeof(used));
	hpshm_size_format(size, need, sizeof(need));
	hpshm_size_format(usage > SIZE_MAX - size ? SIZE_MAX : (size_t)usage + size, target, sizeof(target));

	if (advice)
		n = snprintf(buf, len, "raise hugetlb.%s.%s to at least %s in cgroup %s", sname, file, target,
			     cg.path);
	else
		n = snprintf(buf, len, "hugetlb cgroup %s allows %s of %s pages (%s %s), below the %s needed: "
			     "raise hugetlb.%s.%s to at least %s", cg.path, lim, psz, used,
			     rsvd ? "reserved" : "used", need, sname, file, target);
	if (n >= 0 && (size_t)n < len)
		return 1;
	/* A long cgroup path: drop it rather than cut the sentence. */
	if (advice)
		snprintf(buf, len, "raise hugetlb.%s.%s of this process's cgroup to at least %s", sname, file,
			 target);
	else
		snprintf(buf, len, "this process's hugetlb cgroup allows %s of %s pages (%s %s), below the %s "
			 "needed: raise hugetlb.%s.%s to at least %s", lim, psz, used, rsvd ? "reserved" : "used",
			 need, sname, file, target);
	return 1;
}

int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct hpshm__pool pool;
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	unsigned long need, avail, target;

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

	need = hugetlb_pages(rq->size, rq->page_size);
	avail = hpshm__pool_available(&pool);
	if (avail < need) {
		hugetlb_knob(rq->page_size, knob, sizeof(knob));
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

	if (hugetlb_cgroup_check(rq->size, rq->page_size, 0, out->reason, sizeof(out->reason)))
		return HPSHM_EUNAVAILABLE;
	return 0;
}

char *hpshm__hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len)
{
	struct hpshm__pool pool;
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	unsigned long need, avail, target;

	if (buf == NULL || len == 0)
		return buf;
	if (page_size == 0 || hpshm__pool_get(page_size, &pool) < 0) {
		hugetlb_size_list(sizes, sizeof(sizes));
		snprintf(buf, len, "set huge_page_size to a size the kernel offers (sizes: %s)", sizes);
		return buf;
	}
	hpshm_size_format(page_size, psz, sizeof(psz));
	hugetlb_knob(page_size, knob, sizeof(knob));
	need = hugetlb_pages(size, page_size);
	avail = hpshm__pool_available(&pool);
	if (avail < need) {
		target = pool.total > ULONG_MAX - (need - avail) ? ULONG_MAX : pool.total + (need - avail);
		snprintf(buf, len, "raise %s to at least %lu (needs %lu more %s page%s)", knob, target, need - avail,
			 psz, need - avail == 1 ? "" : "s");
		return buf;
	}
	if (hugetlb_cgroup_check(size, page_size, 1, buf, len))
		return buf;
	/* The pool looks big enough now: the pages went meanwhile, or sit on NUMA nodes this
	 * process may not use.  Room for the whole segment on top of today's pool covers both. */
	target = pool.total > ULONG_MAX - need ? ULONG_MAX : pool.total + need;
	snprintf(buf, len, "raise %s to at least %lu (the %lu %s page%s needed may have been taken meanwhile, or "
		 "sit on NUMA nodes this process may not use)", knob, target, need, psz, need == 1 ? "" : "s");
	return buf;
}

int hpshm__hugetlb_fault_risk(size_t size, size_t page_size)
{
	struct hpshm__cgroup cg;

	/* The size does not matter: even with room now, other processes can use it up between
	 * mmap and the first touch, and nothing reserved it for us. */
	(void)size;
	if (page_size == 0 || hpshm__cgroup_get(page_size, &cg) < 0)
		return 0;
	return cg.version != 0 && cg.limit != HPSHM__UNLIMITED && cg.rsvd_limit == HPSHM__UNLIMITED;
}
