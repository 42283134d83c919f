/* SPDX-License-Identifier: MIT */
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
 * handles ENOMEM/ENOSPC, with the hint from hpshm__linux_hugetlb_hint() (ports/linux/advice.c).
 *
 * Every reason is one sentence that names the knob and the number to set it to.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/hugetlb_common.h"
#include "hpshm/provider.h"
#include "linux/linux.h"
#include "port.h"

/*
 * The page size for the wish in rq->page_size among the n > 0 pools the kernel has: the
 * default huge page size, the largest that holds the segment now (else the largest offered: a
 * 1 GiB pool is rarely filled at run time, and an operator who wrote "largest" wants the best
 * that works), or exactly the size asked for.  0 if the kernel offers no such size.
 */
static size_t hugetlb_choose(const struct hpshm_request *rq, const struct hpshm__pool *pools, int n)
{
	size_t d;

	if (rq->page_size == HPSHM_PAGE_SIZE_DEFAULT) {
		d = hpshm__port_default_huge_page_size();
		return d ? d : pools[0].page_size;
	}
	if (rq->page_size == HPSHM_PAGE_SIZE_LARGEST) {
		for (int i = n - 1; i >= 0; i--) {
			size_t pages = rq->size / pools[i].page_size + (rq->size % pools[i].page_size != 0);

			if (hpshm__linux_pool_available(&pools[i]) >= pages)
				return pools[i].page_size;
		}
		return pools[n - 1].page_size;
	}
	for (int i = 0; i < n; i++)
		if (pools[i].page_size == rq->page_size)
			return rq->page_size;
	return 0;
}

/* Copy the pool of page_size among pools[0..n) to out: 0, or -1 if it is not there. */
static int hugetlb_pool_pick(const struct hpshm__pool *pools, int n, size_t page_size, struct hpshm__pool *out)
{
	for (int i = 0; i < n; i++)
		if (pools[i].page_size == page_size) {
			*out = pools[i];
			return 0;
		}
	return -1;
}

int hpshm__hugetlb_probe(const struct hpshm_request *rq, struct hpshm_probe *out, struct hpshm_request *at)
{
	struct hpshm__pool pools[HPSHM__MAX_PAGE_SIZES], pool;
	char psz[32], sizes[128], knob[72]; /* the longest sysfs knob is 70 bytes */
	char cg_why[sizeof(out->reason)];
	unsigned long need, avail, target;
	size_t pages;
	int n, risk, short_cg;

	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->page_size = 0;
	out->available = 0;
	out->advice = 0;
	*at = *rq;

	n = hpshm__linux_pools(pools, HPSHM__MAX_PAGE_SIZES);
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
	/*
	 * The chosen pool was read a moment ago with all the others: reading its five sysfs
	 * files again cost every create (whose probe this is) about a fifth of its fixed cost
	 * and told nothing new, since probe is advice anyway and create handles a pool that
	 * emptied since.
	 */
	if (hugetlb_pool_pick(pools, n, at->page_size, &pool) < 0 && hpshm__linux_pool_get(at->page_size, &pool) < 0) {
		snprintf(out->reason, sizeof(out->reason), "cannot read the pool of %s huge pages", psz);
		return HPSHM_EUNAVAILABLE;
	}
	avail = hpshm__linux_pool_available(&pool);
	out->available = avail;
	/* The cgroup is read once for both of its questions; a short pool is named first. */
	short_cg = hpshm__linux_hugetlb_cgroup_probe(at->size, at->page_size, &risk, cg_why, sizeof(cg_why));
	if (risk > 0)
		out->advice |= HPSHM_ADVISE_POPULATE;

	/* At least one page, so "any size" still needs a page. */
	pages = at->size / at->page_size + (at->size % at->page_size != 0);
	need = pages > ULONG_MAX ? ULONG_MAX : (unsigned long)(pages ? pages : 1);
	if (avail < need) {
		hpshm__linux_pool_knob(at->page_size, knob, sizeof(knob));
		target = pool.total > ULONG_MAX - (need - avail) ? ULONG_MAX : pool.total + (need - avail);
		if (pool.total == 0 && avail == 0)
			snprintf(out->reason, sizeof(out->reason),
				 "%s is 0 for %s pages (need %lu): raise it to at least %lu", knob, psz, need, target);
		else
			snprintf(out->reason, sizeof(out->reason),
				 "only %lu huge page%s of %s available (need %lu): raise %s to at least %lu", avail,
				 avail == 1 ? "" : "s", psz, need, knob, target);
		hpshm__linux_hugetlb_hint(at->size, at->page_size, out->fix, sizeof(out->fix));
		return HPSHM_EUNAVAILABLE;
	}

	if (short_cg) {
		snprintf(out->reason, sizeof(out->reason), "%s", cg_why);
		return HPSHM_EUNAVAILABLE;
	}
	return 0;
}

/* ---- requirements(): what `hpshm plan` tells an operator to set up ---- */

char *hpshm__hugetlbfs_size(size_t page_size, char *buf, size_t len)
{
	if (page_size >= ((size_t)1 << 30) && page_size % ((size_t)1 << 30) == 0)
		snprintf(buf, len, "%zuG", page_size >> 30);
	else if (page_size >= ((size_t)1 << 20) && page_size % ((size_t)1 << 20) == 0)
		snprintf(buf, len, "%zuM", page_size >> 20);
	else
		snprintf(buf, len, "%zuK", page_size >> 10);
	return buf;
}

void hpshm__requirement_init(struct hpshm_requirement *r, const char *what)
{
	memset(r, 0, sizeof(*r));
	hpshm__strlcpy(r->what, what, sizeof(r->what));
}

/* Format into one requirement text (a path in it may make it long: cut, never overrun). */
void hpshm__requirement_text(char *dst, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, HPSHM_REQUIREMENT_TEXT, fmt, ap);
	va_end(ap);
}

/* Append a formatted line to one of a requirement's three command slots. */
void hpshm__requirement_add(char (*slots)[HPSHM_REQUIREMENT_TEXT], const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < 3; i++) {
		if (slots[i][0])
			continue;
		va_start(ap, fmt);
		vsnprintf(slots[i], HPSHM_REQUIREMENT_TEXT, fmt, ap);
		va_end(ap);
		return;
	}
}

/*
 * The pool: "vm.nr_hugepages" (a sysctl) sizes the default page size, the size's sysfs file
 * any other.  Writing "current total + shortfall" always covers the shortfall, because the
 * total counts surplus pages, which the write turns into persistent ones.  Sizes other than
 * the default, and 1 GiB pages of any kind, are reserved at boot: they need contiguous
 * memory the kernel rarely still has later.
 */
static int hugetlb_pool_need(const struct hpshm_request *rq, hpshm_need_fn fn, void *user)
{
	struct hpshm__pool pool;
	struct hpshm_requirement r;
	char ps[32], ks[24], knob[96]; /* ks: "%zuK" of any size_t >> 10 fits (gcc -O3 checks) */
	unsigned long avail, short_by, target;
	size_t pages = rq->size / rq->page_size + (rq->size % rq->page_size != 0);
	int is_default = rq->page_size == hpshm__port_default_huge_page_size();

	if (hpshm__linux_pool_get(rq->page_size, &pool) < 0)
		return 0;
	hpshm__requirement_init(&r, "pool");
	avail = hpshm__linux_pool_available(&pool);
	r.met = pages <= avail;
	if (r.met)
		return fn(user, &r);
	short_by = (unsigned long)(pages - avail);
	target = pool.total + short_by;
	hpshm_size_format(rq->page_size, ps, sizeof(ps));
	hpshm__hugetlbfs_size(rq->page_size, ks, sizeof(ks));
	hpshm__requirement_text(r.detail,
		 "the %s pool has %lu pages available (%lu total, %lu free, %lu reserved), %zu needed: short by %lu", ps,
		 avail, pool.total, pool.free, pool.resv, pages, short_by);
	hpshm__linux_pool_knob(rq->page_size, knob, sizeof(knob));
	if (is_default) {
		hpshm__requirement_add(r.now, "sysctl -w %s=%lu", knob, target);
		hpshm__requirement_add(r.persist, "echo '%s = %lu' >> /etc/sysctl.d/60-hpshm.conf", knob, target);
	} else {
		hpshm__requirement_add(r.now, "echo %lu > %s", target, knob);
		hpshm__requirement_add(r.persist, "kernel command line: hugepagesz=%s hugepages=%lu", ks, target);
	}
	if (is_default && rq->page_size >= ((size_t)1 << 30))
		hpshm__requirement_add(r.persist, "kernel command line: default_hugepagesz=%s hugepagesz=%s hugepages=%lu",
				       ks, ks, target);
	if (rq->page_size >= ((size_t)1 << 30))
		hpshm__requirement_text(r.note,
			 "%s pages rarely allocate at run time once memory is fragmented: prefer the kernel command "
			 "line and reboot; the kernel may allocate fewer pages than asked, `hpshm probe` shows the pool "
			 "it got", ps);
	else
		hpshm__requirement_text(r.note,
			 "the kernel may allocate fewer pages than asked; `hpshm probe` shows the pool it got");
	return fn(user, &r);
}

/* Room left under a cgroup limit; a limit below usage leaves none. */
static uint64_t hugetlb_room(uint64_t limit, uint64_t usage)
{
	if (limit == HPSHM__UNLIMITED)
		return HPSHM__UNLIMITED;
	return limit > usage ? limit - usage : 0;
}

static const char *hugetlb_bytes(uint64_t v, char *buf, size_t len)
{
	if (v == HPSHM__UNLIMITED)
		snprintf(buf, len, "unlimited");
	else if ((uint64_t)(size_t)v != v)
		snprintf(buf, len, "%lluB", (unsigned long long)v);
	else
		hpshm_size_format((size_t)v, buf, len);
	return buf;
}

/*
 * The hugetlb cgroup: its fault-time limit and its reservation limit must each leave room for
 * the mapped length.  A fault-time limit without a reservation limit is advice, not a
 * shortfall: a fault past it would SIGBUS, which is why hpshm populates at create time.
 */
static int hugetlb_cgroup_need(const struct hpshm_request *rq, hpshm_need_fn fn, void *user)
{
	struct hpshm__limit cg;
	struct hpshm_requirement r;
	char ps[32], cs[16], a[32], b[32], m[32];
	const char *file;
	int rc;

	if (hpshm__linux_cgroup_get(rq->page_size, &cg) < 0 || cg.version == 0)
		return 0;
	hpshm_size_format(rq->page_size, ps, sizeof(ps));
	hpshm__linux_hugetlb_cgroup_size(rq->page_size, cs, sizeof(cs));
	hpshm_size_format(rq->size, m, sizeof(m));
	file = cg.version == 1 ? "limit_in_bytes" : "max";

	hpshm__requirement_init(&r, "cgroup");
	r.met = hugetlb_room(cg.limit, cg.usage) >= rq->size;
	if (!r.met) {
		hpshm__requirement_text(r.detail,
			 "hugetlb cgroup %s allows %s more of %s pages at fault time (limit %s), below %s", cg.path,
			 hugetlb_bytes(hugetlb_room(cg.limit, cg.usage), a, sizeof(a)), ps,
			 hugetlb_bytes(cg.limit, b, sizeof(b)), m);
		hpshm__requirement_add(r.now, "echo %llu > %s/hugetlb.%s.%s",
				       (unsigned long long)(cg.usage + rq->size), cg.path, cs, file);
		hpshm__requirement_add(r.persist, "set the same hugetlb limit where the cgroup is made (systemd unit, "
						  "container runtime)");
	}
	if (hpshm__linux_hugetlb_fault_risk(rq->size, rq->page_size) > 0)
		hpshm__requirement_text(r.note,
			 "hugetlb cgroup %s limits %s pages at fault time but not reservations: a fault could SIGBUS, so "
			 "hpshm populates at create time; setting hugetlb.%s.rsvd.%s to the same limit makes the "
			 "reservation itself fail instead",
			 cg.path, ps, cs, file);
	if ((rc = fn(user, &r)) != 0)
		return rc;

	if (hugetlb_room(cg.rsvd_limit, cg.rsvd_usage) >= rq->size)
		return 0;
	hpshm__requirement_init(&r, "cgroup");
	hpshm__requirement_text(r.detail,
		 "hugetlb cgroup %s allows %s more %s pages to be reserved (rsvd limit %s), below %s", cg.path,
		 hugetlb_bytes(hugetlb_room(cg.rsvd_limit, cg.rsvd_usage), a, sizeof(a)), ps,
		 hugetlb_bytes(cg.rsvd_limit, b, sizeof(b)), m);
	hpshm__requirement_add(r.now, "echo %llu > %s/hugetlb.%s.rsvd.%s",
			       (unsigned long long)(cg.rsvd_usage + rq->size), cg.path, cs, file);
	hpshm__requirement_add(r.persist, "set the same hugetlb limit where the cgroup is made (systemd unit, "
					  "container runtime)");
	return fn(user, &r);
}

int hpshm__hugetlb_requirements(const struct hpshm_request *rq, hpshm_need_fn fn, void *user)
{
	int rc = hugetlb_pool_need(rq, fn, user);

	return rc != 0 ? rc : hugetlb_cgroup_need(rq, fn, user);
}

int hpshm__hugetlb_requirements_member(const struct hpshm_instance *self, const struct hpshm_request *rq,
				       hpshm_need_fn fn, void *user)
{
	(void)self;
	(void)hpshm__hugetlb_requirements(rq, fn, user); /* non-zero: fn asked to stop */
	return 0;
}
