/* SPDX-License-Identifier: MIT */
/*
 * ports/linux/populate.c -- faulting a whole segment in at create time, so that a missing page
 * is an error now instead of a SIGBUS later.
 *
 * A hugetlb mapping can succeed and still fail at fault time: a hugetlb cgroup limit is
 * charged at fault, MAP_NORESERVE skips the reservation, a NUMA policy can leave no page on
 * the allowed nodes.  The touch of a plain loop then raises SIGBUS, which kills a server that
 * thought its memory was in hand.  So we populate with calls that return an error, in order:
 *
 *   1. fallocate(fd, 0, 0, len) when the handle is a file (HPSHM__PORT_FILE: a hugetlbfs
 *      file, a memfd): it
 *      allocates every page into the file and fails with ENOSPC when the pool runs out
 *      (observed on 6.18 with an empty pool).  File systems without it answer EOPNOTSUPP
 *      and old kernels ENOSYS: we go on to madvise.
 *   2. madvise(MADV_POPULATE_WRITE) (Linux 5.14): faults every page in writable, and fails
 *      with EFAULT where the fault would have raised SIGBUS (hugetlb with no page, a cgroup
 *      limit), ENOMEM when out of memory, EHWPOISON on a poisoned page.  It also maps the
 *      pages fallocate allocated, so the first access costs no fault.  Kernels before 5.14
 *      answer EINVAL for the unknown advice.
 *   3. Only there, the guarded touch of ports/posix/touch.c: one read-then-write per page
 *      under a SIGBUS handler that longjmps out.
 *
 * The mapping is left as it is on failure: the caller destroys it.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "linux/linux.h"
#include "posix/posix.h"

#ifndef EHWPOISON
#define EHWPOISON 133
#endif

/*
 * The hint for pages the kernel would not give.  The segment's own reservation is already
 * counted in resv_hugepages, so the pool looks short even when it is not: a hugetlb cgroup
 * fault limit without room for the segment is the likelier cause and is named first.
 */
static const char *populate_hint(size_t len, size_t page_size, char *buf, size_t buflen)
{
	struct hpshm__limit cg;
	char lim[32], need[32], sname[16];
	int n;

	if (page_size <= hpshm__port_base_page_size())
		return "free memory, or raise the memory limit of this process's cgroup";
	if (hpshm__linux_cgroup_get(page_size, &cg) == 0 && cg.version != 0 && cg.limit != HPSHM__UNLIMITED &&
	    (cg.limit <= cg.usage || cg.limit - cg.usage < len)) {
		hpshm__linux_hugetlb_cgroup_size(page_size, sname, sizeof(sname));
		hpshm_size_format((size_t)cg.limit, lim, sizeof(lim));
		hpshm_size_format(len, need, sizeof(need));
		n = snprintf(buf, buflen, "raise hugetlb.%s.%s (now %s) by at least %s in cgroup %s", sname,
			     cg.version == 1 ? "limit_in_bytes" : "max", lim, need, cg.path);
		if (n < 0 || (size_t)n >= buflen)   /* a long path: leave it out rather than cut it */
			snprintf(buf, buflen, "raise hugetlb.%s.%s (now %s) by at least %s in this process's cgroup",
				 sname, cg.version == 1 ? "limit_in_bytes" : "max", lim, need);
		return buf;
	}
	return hpshm__linux_hugetlb_hint(len, page_size, buf, buflen);
}

int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h, unsigned *methods,
		    hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX], sz[32], psz[32];
	size_t bad = 0;
	int rc, e, risk;

	/* port.h's guarantees: the caller's mapping, in whole pages; never checked again here. */
	assert(addr != NULL && len > 0 && page_size > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_NONE;
	hpshm_size_format(len, sz, sizeof(sz));
	hpshm_size_format(page_size, psz, sizeof(psz));

	if (h.flags & HPSHM__PORT_FILE) {
		do
			rc = hpshm__linux_sys.fallocate((int)h.value, 0, 0, (off_t)len);
		while (rc < 0 && errno == EINTR);
		e = rc < 0 ? errno : 0;
		if (rc == 0)
			*methods |= HPSHM_POPULATE_FALLOCATE;
		else if (e == ENOSPC || e == ENOMEM)
			return hpshm_error_set(err, HPSHM_EPOPULATE, e, "fallocate",
					       populate_hint(len, page_size, hint, sizeof(hint)),
					       "the kernel could not allocate %s of %s pages for the segment", sz, psz);
		else if (e != EOPNOTSUPP && e != ENOSYS)
			return hpshm_error_set(err, HPSHM_EPOPULATE, e, "fallocate", NULL,
					       "fallocate of %s on the segment's descriptor failed: %s", sz, strerror(e));
	}

	do
		rc = hpshm__linux_sys.madvise(addr, len, MADV_POPULATE_WRITE);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		*methods |= HPSHM_POPULATE_MADVISE;
		return 0;
	}
	e = errno;
	if (e == EFAULT || e == ENOMEM || e == EHWPOISON) {
		risk = page_size > hpshm__port_base_page_size() && hpshm__linux_hugetlb_fault_risk(len, page_size);
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "madvise",
				       populate_hint(len, page_size, hint, sizeof(hint)),
				       "the kernel could not supply the %s pages to fault in %s at %p%s", psz, sz, addr,
				       e == EHWPOISON ? " (a page is hardware-poisoned)" :
				       risk ? " (a hugetlb cgroup limit applies at fault time)" : "");
	}
	if (e != EINVAL)
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "madvise", NULL,
				       "madvise(MADV_POPULATE_WRITE) of %s at %p failed: %s", sz, addr, strerror(e));

	/* EINVAL: a kernel before 5.14, which does not know the advice. */
	*methods |= HPSHM_POPULATE_TOUCH;
	rc = hpshm__posix_touch(addr, len, page_size, &bad);
	if (rc < 0) {
		e = errno;
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "sigaction", NULL,
				       "cannot guard the touch of %s against SIGBUS: %s", sz, strerror(e));
	}
	if (rc > 0) {
		risk = page_size > hpshm__port_base_page_size() && hpshm__linux_hugetlb_fault_risk(len, page_size);
		return hpshm_error_set(err, HPSHM_EPOPULATE, 0, "touch",
				       populate_hint(len, page_size, hint, sizeof(hint)),
				       "the kernel could not supply a %s page at offset %zu of %s at %p (SIGBUS on touch)%s",
				       psz, bad, sz, addr, risk ? "; a hugetlb cgroup limit applies at fault time" : "");
	}
	return 0;
}

const char *hpshm__port_populate_name(unsigned methods)
{
	static const char *const names[] = {
		"none", "fallocate", "madvise", "fallocate+madvise",
		"touch", "fallocate+touch", "madvise+touch", "fallocate+madvise+touch",
	};

	return names[methods & 7];
}
