/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/advice.c -- what an operator should change when huge pages fall short, and whether
 * a hugetlb cgroup turns a late fault into SIGBUS.
 *
 * The advice names the knob and the number: "raise vm.nr_hugepages to at least 520 (needs 8
 * more 2MiB pages)", "raise hugetlb.2MB.max to at least 64MiB in cgroup /x".  The pool of the
 * default size is sized by the sysctl vm.nr_hugepages; any other size only by its own sysfs
 * file (hpshm__linux_pool_knob()).  A hugetlb cgroup (cgroup.c) may limit reservations (rsvd,
 * failing mmap cleanly) or faults (SIGBUS long after mmap succeeded); either leaves room =
 * limit - usage, and the limit that binds is the one named.
 *
 * It is here, in the port, because populate (populate.c) words its failures with it; the
 * hugetlb backends word their probe reasons with it too (backends/hugetlb_common.c).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "linux/linux.h"

/* Room left under a cgroup limit. */
static uint64_t advice_room(uint64_t limit, uint64_t usage)
{
	if (limit == HPSHM__UNLIMITED)
		return HPSHM__UNLIMITED;
	return limit > usage ? limit - usage : 0;
}

/* Pages of page_size that hold size bytes; at least one, so "any size" still needs a page. */
static unsigned long advice_pages(size_t size, size_t page_size)
{
	size_t n = size / page_size + (size % page_size != 0);

	if (n == 0)
		n = 1;
	return n > ULONG_MAX ? ULONG_MAX : (unsigned long)n;
}

/* hpshm__linux_hugetlb_cgroup_short() on a cgroup already read (cg->version != 0). */
static int advice_cgroup_short(const struct hpshm__limit *c, size_t size, size_t page_size, int advice, char *buf,
			       size_t len)
{
	const struct hpshm__limit cg = *c;
	char psz[32], lim[32], used[32], need[32], target[32], sname[16];
	uint64_t froom, rroom, limit, usage;
	const char *file;
	int rsvd, n;

	froom = advice_room(cg.limit, cg.usage);
	rroom = advice_room(cg.rsvd_limit, cg.rsvd_usage);
	if ((froom < rroom ? froom : rroom) >= size)
		return 0;

	/* Name the limit that binds: the reservation one fails mmap, the other the faults. */
	rsvd = rroom < froom;
	limit = rsvd ? cg.rsvd_limit : cg.limit;
	usage = rsvd ? cg.rsvd_usage : cg.usage;
	hpshm__linux_hugetlb_cgroup_size(page_size, sname, sizeof(sname));
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

char *hpshm__linux_hugetlb_hint(size_t size, size_t page_size, char *buf, size_t len)
{
	struct hpshm__pool pool;
	size_t offered[HPSHM__MAX_PAGE_SIZES];
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	unsigned long need, avail, target;

	if (buf == NULL || len == 0)
		return buf;
	if (page_size == 0 || hpshm__linux_pool_get(page_size, &pool) < 0) {
		hpshm__size_list(offered, hpshm__port_huge_page_sizes(offered, HPSHM__MAX_PAGE_SIZES), sizes, sizeof(sizes));
		snprintf(buf, len, "set huge_page_size to a size the kernel offers (sizes: %s)", sizes);
		return buf;
	}
	hpshm_size_format(page_size, psz, sizeof(psz));
	hpshm__linux_pool_knob(page_size, knob, sizeof(knob));
	need = advice_pages(size, page_size);
	avail = hpshm__linux_pool_available(&pool);
	if (avail < need) {
		target = pool.total > ULONG_MAX - (need - avail) ? ULONG_MAX : pool.total + (need - avail);
		snprintf(buf, len, "raise %s to at least %lu (needs %lu more %s page%s)", knob, target, need - avail,
			 psz, need - avail == 1 ? "" : "s");
		return buf;
	}
	if (hpshm__linux_hugetlb_cgroup_short(size, page_size, 1, buf, len))
		return buf;
	/* The pool looks big enough now: the pages went meanwhile, or sit on NUMA nodes this
	 * process may not use.  Room for the whole segment on top of today's pool covers both. */
	target = pool.total > ULONG_MAX - need ? ULONG_MAX : pool.total + need;
	snprintf(buf, len, "raise %s to at least %lu (the %lu %s page%s needed may have been taken meanwhile, or "
		 "sit on NUMA nodes this process may not use)", knob, target, need, psz, need == 1 ? "" : "s");
	return buf;
}

int hpshm__linux_hugetlb_cgroup_short(size_t size, size_t page_size, int advice, char *buf, size_t len)
{
	struct hpshm__limit cg;

	if (hpshm__linux_cgroup_get(page_size, &cg) < 0 || cg.version == 0)
		return 0;
	return advice_cgroup_short(&cg, size, page_size, advice, buf, len);
}

/* A fault-time limit with no reservation limit: reservations then do not protect faults. */
static int advice_fault_risk(const struct hpshm__limit *cg)
{
	return cg->version != 0 && cg->limit != HPSHM__UNLIMITED && cg->rsvd_limit == HPSHM__UNLIMITED;
}

int hpshm__linux_hugetlb_fault_risk(size_t size, size_t page_size)
{
	struct hpshm__limit cg;

	/* The size does not matter: even with room now, other processes can use it up between
	 * mmap and the first touch, and nothing reserved it for us. */
	(void)size;
	if (page_size == 0 || hpshm__linux_cgroup_get(page_size, &cg) < 0)
		return 0;
	return advice_fault_risk(&cg);
}

int hpshm__linux_hugetlb_cgroup_probe(size_t size, size_t page_size, int *fault_risk, char *buf, size_t len)
{
	struct hpshm__limit cg;

	*fault_risk = 0;
	if (page_size == 0 || hpshm__linux_cgroup_get(page_size, &cg) < 0)
		return 0;
	*fault_risk = advice_fault_risk(&cg);
	return cg.version != 0 && advice_cgroup_short(&cg, size, page_size, 0, buf, len);
}
