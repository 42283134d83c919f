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
 *   1. fallocate(fd, 0, 0, len) when the handle is a file of base pages (HPSHM__PORT_FILE: a
 *      memfd, a tmpfs file): it allocates every page into the file and fails with ENOSPC when
 *      the file system is full.  File systems without it answer EOPNOTSUPP and old kernels
 *      ENOSYS: we go on to madvise.  Huge pages skip it (tail first, below).
 *   2. madvise(MADV_POPULATE_WRITE) (Linux 5.14): faults every page in writable, and fails
 *      with EFAULT where the fault would have raised SIGBUS (hugetlb with no page, a cgroup
 *      limit), ENOMEM when out of memory, EHWPOISON on a poisoned page.  It also maps the
 *      pages fallocate allocated, so the first access costs no fault.  Kernels before 5.14
 *      answer EINVAL for the unknown advice.
 *   3. Only there, the guarded touch of ports/posix/touch.c: one read-then-write per page
 *      under a SIGBUS handler that longjmps out.
 *
 * Huge pages are faulted in tail first.  The kernel clears a new huge page before it maps it
 * (folio_zero_user), and for pages up to the buddy allocator's largest order it clears the
 * base pages in an order that leaves the faulting one for last, to keep its cache lines hot:
 * a fault in the first half of the page clears from the last base page down, a fault at the
 * last base page clears from the first one up.  MADV_POPULATE_WRITE over a range faults each
 * huge page at its start, and fallocate names the start too, so both get the descending
 * walk; on the machines measured (6.18, x86-64 under KVM) that clears 2 MiB pages at half the
 * speed of the ascending one: 1 GiB in 0.100 s against 0.044 s with one thread, 0.059 s
 * against 0.037 s with two.  So populate_advise() faults each huge page in at its last base
 * page, one call per page, and then calls once more over the whole range, which maps what the
 * first pass did not (nothing, for hugetlb: 0.1-0.2 ms per GiB).  Gigantic pages (1 GiB on
 * x86-64) are cleared from the first base page up whatever the address; the pass costs them
 * one call per page.  A kernel that clears in one order for every address loses nothing.
 *
 * With populate_threads above 1 the range is split, one contiguous part per thread, each
 * faulted in with MADV_POPULATE_WRITE alone (populate_split() says why).
 *
 * The mapping is left as it is on failure: the caller destroys it.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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
const char *hpshm__linux_shortage_hint(size_t len, size_t page_size, char *buf, size_t buflen)
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

/*
 * The error of a failed MADV_POPULATE_WRITE (errno e) over [addr, addr+len): a page the kernel
 * would not give (EFAULT, ENOMEM, EHWPOISON) with the operator's fix, or any other errno as it
 * is.  threads 0 for a populate in the calling thread; else the offset where the failing part
 * was and how many threads there were.
 */
static int madvise_failed(void *addr, size_t len, size_t page_size, int e, size_t off, unsigned threads,
			  hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX], sz[32], psz[32], near[64] = "", at[48] = "";
	int risk;

	hpshm_size_format(len, sz, sizeof(sz));
	hpshm_size_format(page_size, psz, sizeof(psz));
	if (threads > 0) {
		snprintf(near, sizeof(near), " (near offset %zu, %u threads)", off, threads);
		snprintf(at, sizeof(at), " at offset %zu", off);
	}
	if (e == EFAULT || e == ENOMEM || e == EHWPOISON) {
		risk = page_size > hpshm__port_base_page_size() && hpshm__linux_hugetlb_fault_risk(len, page_size);
		return hpshm_error_set(err, HPSHM_EPOPULATE, e, "madvise", hpshm__linux_shortage_hint(len, page_size, hint, sizeof(hint)),
				       "the kernel could not supply the %s pages to fault in %s at %p%s%s", psz, sz, addr, near,
				       e == EHWPOISON ? " (a page is hardware-poisoned)" :
				       risk ? " (a hugetlb cgroup limit applies at fault time)" : "");
	}
	return hpshm_error_set(err, HPSHM_EPOPULATE, e, "madvise", NULL,
			       "madvise(MADV_POPULATE_WRITE) of %s at %p failed%s: %s", sz, addr, at, strerror(e));
}

/*
 * MADV_POPULATE_WRITE over [addr, addr + len), whole pages of page_size, huge pages tail first
 * (the head comment says why), retried on EINTR.  0, or -1 with errno set and *fail the offset
 * of the call that failed.
 */
static int populate_advise(char *addr, size_t len, size_t page_size, size_t *fail)
{
	size_t base = hpshm__port_base_page_size();
	int rc;

	for (size_t at = 0; page_size > base && at < len; at += page_size) {
		*fail = at;
		do
			rc = hpshm__linux_sys.madvise(addr + at + page_size - base, base, MADV_POPULATE_WRITE);
		while (rc < 0 && errno == EINTR);
		if (rc < 0)
			return -1;
	}
	*fail = 0;
	do
		rc = hpshm__linux_sys.madvise(addr, len, MADV_POPULATE_WRITE);
	while (rc < 0 && errno == EINTR);
	return rc;
}

static int populate_one(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h, unsigned *methods,
			hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX], sz[32], psz[32];
	size_t bad = 0, at;
	int rc, e, risk;

	/* port.h's guarantees: the caller's mapping, in whole pages; never checked again here. */
	assert(addr != NULL && len > 0 && page_size > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_NONE;
	hpshm_size_format(len, sz, sizeof(sz));
	hpshm_size_format(page_size, psz, sizeof(psz));

	if ((h.flags & HPSHM__PORT_FILE) && page_size <= hpshm__port_base_page_size()) {
		do
			rc = hpshm__linux_sys.fallocate((int)h.value, 0, 0, (off_t)len);
		while (rc < 0 && errno == EINTR);
		e = rc < 0 ? errno : 0;
		if (rc == 0)
			*methods |= HPSHM_POPULATE_FALLOCATE;
		else if (e == ENOSPC || e == ENOMEM)
			return hpshm_error_set(err, HPSHM_EPOPULATE, e, "fallocate",
					       hpshm__linux_shortage_hint(len, page_size, hint, sizeof(hint)),
					       "the kernel could not allocate %s of %s pages for the segment", sz, psz);
		else if (e != EOPNOTSUPP && e != ENOSYS)
			return hpshm_error_set(err, HPSHM_EPOPULATE, e, "fallocate", NULL,
					       "fallocate of %s on the segment's descriptor failed: %s", sz, strerror(e));
	}

	rc = populate_advise(addr, len, page_size, &at);
	if (rc == 0) {
		*methods |= HPSHM_POPULATE_MADVISE;
		return 0;
	}
	e = errno;
	if (e != EINVAL)
		return madvise_failed(addr, len, page_size, e, 0, 0, err);

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
				       hpshm__linux_shortage_hint(len, page_size, hint, sizeof(hint)),
				       "the kernel could not supply a %s page at offset %zu of %s at %p (SIGBUS on touch)%s",
				       psz, bad, sz, addr, risk ? "; a hugetlb cgroup limit applies at fault time" : "");
	}
	return 0;
}

/*
 * A populate split over threads.  Each thread faults its own contiguous range in with
 * MADV_POPULATE_WRITE (huge pages tail first), a chunk at a time, and stops at the next chunk
 * once any thread has failed.  No fallocate here: hugetlbfs and tmpfs allocate a file's pages under the inode's
 * lock, so threads calling it would wait for each other; the mapping's reservation (made by
 * mmap) already holds the pages, and MADV_POPULATE_WRITE fails with an error, not SIGBUS,
 * where a page is refused.  A kernel without MADV_POPULATE_WRITE (before 5.14) is found by an
 * empty call before any thread starts, and gets the single-threaded populate.
 */
#define POPULATE_CHUNK ((size_t)32 << 20) /* a thread checks for a failure between chunks */

struct populate_part {
	size_t off;   /* where the failure was, from the segment's start */
	int    e;     /* errno of the failed madvise; 0: this part succeeded */
};

struct populate_job {
	char                             *addr;
	size_t                            len, page_size;
	const struct hpshm__populate_how *how;
	atomic_int                        stop;   /* set by the first part that fails */
	struct populate_part              part[HPSHM__POPULATE_THREADS_MAX];
};

static void populate_part_run(void *arg, unsigned i)
{
	struct populate_job *job = arg;
	struct populate_part *pt = &job->part[i];
	size_t off, len, step, at, fail;
	int rc;

	if (job->how->numa != NULL)
		hpshm__linux_numa_place(job->how->numa, i, job->how->threads);
	hpshm__posix_split(job->len, job->page_size, job->how->threads, i, &off, &len);
	step = POPULATE_CHUNK < job->page_size ? job->page_size : POPULATE_CHUNK - POPULATE_CHUNK % job->page_size;
	for (at = off; at < off + len; at += step) {
		size_t n = off + len - at < step ? off + len - at : step;

		if (atomic_load_explicit(&job->stop, memory_order_relaxed))
			return;
		rc = populate_advise(job->addr + at, n, job->page_size, &fail);
		if (rc < 0) {
			pt->e = errno;
			pt->off = at + fail;
			atomic_store_explicit(&job->stop, 1, memory_order_relaxed);
			return;
		}
	}
}

static int populate_split(void *addr, size_t len, size_t page_size, const struct hpshm__populate_how *how,
			  hpshm_error *err)
{
	struct populate_job *job = calloc(1, sizeof(*job));
	size_t off = 0;
	int e = 0;

	if (job == NULL)
		return hpshm_error_set(err, HPSHM_ENOMEM, ENOMEM, "malloc", NULL, "out of memory to start the populate");
	job->addr = addr;
	job->len = len;
	job->page_size = page_size;
	job->how = how;
	atomic_init(&job->stop, 0);
	hpshm__posix_parallel(how->threads, populate_part_run, job);
	/* The first part that failed names the failure: the others only stopped. */
	for (unsigned i = 0; i < how->threads && e == 0; i++)
		if (job->part[i].e != 0) {
			e = job->part[i].e;
			off = job->part[i].off;
		}
	free(job);
	return e == 0 ? 0 : madvise_failed(addr, len, page_size, e, off, how->threads, err);
}

static int populate_run(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err)
{
	int rc;

	if (how->threads == 1 || len / page_size < 2) {
		if (how->numa != NULL)
			hpshm__linux_numa_place(how->numa, 0, 1);
		return populate_one(addr, len, page_size, h, methods, err);
	}
	/*
	 * Is MADV_POPULATE_WRITE there?  Asked with an empty range, which faults nothing in: the
	 * kernel checks the advice before the range (EINVAL for one it does not know) and is done
	 * with an empty range.  Asking with the first page instead cleared that page here before
	 * any other thread started: with 1 GiB pages, a page's whole clearing in series.
	 */
	do
		rc = hpshm__linux_sys.madvise(addr, 0, MADV_POPULATE_WRITE);
	while (rc < 0 && errno == EINTR);
	if (rc < 0 && errno == EINVAL)
		return populate_one(addr, len, page_size, h, methods, err);
	*methods = HPSHM_POPULATE_MADVISE;
	return populate_split(addr, len, page_size, how, err);
}

/*
 * With a NUMA policy the populating threads run on the CPUs of the nodes they fill
 * (hpshm__linux_numa_place()), the calling thread among them: it runs part 0, and any part no
 * thread could be started for.  Its own CPUs are saved here and given back afterwards, so the
 * caller's thread leaves the create where it came in.  The policy is resolved here, in the
 * creating thread, as check and apply resolved it: local is this thread's node.
 */
int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			 const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err)
{
	struct hpshm__populate_how placed = *how;
	struct hpshm__numa numa;
	cpu_set_t saved;
	int rc, restore = 0;

	assert(addr != NULL && len > 0 && page_size > 0 && how != NULL && how->threads > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_NONE;
	if (how->numa != NULL) {
		hpshm__linux_numa_resolve(how->numa, &numa);
		placed.numa = &numa;
		restore = sched_getaffinity(0, sizeof(saved), &saved) == 0;
		if (!restore)
			placed.numa = NULL; /* no way back: leave the caller where it is */
	}
	rc = populate_run(addr, len, page_size, h, &placed, methods, err);
	if (restore)
		(void)hpshm__linux_sys.sched_setaffinity(0, sizeof(saved), &saved);
	return rc;
}

const char *hpshm__port_populate_name(unsigned methods)
{
	static const char *const names[] = {
		"none", "fallocate", "madvise", "fallocate+madvise",
		"touch", "fallocate+touch", "madvise+touch", "fallocate+madvise+touch",
	};

	return names[methods & 7];
}
