/* SPDX-License-Identifier: MIT */
/*
 * preload/mmap.c -- mmap, mmap64, munmap and mremap: a server's large shared anonymous
 * mappings become hpshm segments.
 *
 * mmap(MAP_SHARED | MAP_ANONYMOUS, PROT_READ | PROT_WRITE) of at least the threshold
 * (HPSHM_PRELOAD_MIN_SIZE, default 32 MiB) is taken: that is how PostgreSQL (9.3 on) makes
 * its main segment, nginx its shared zones and APR (Apache's scoreboard) its anonymous shm.
 * Each becomes an hpshm segment chosen by the usual configuration (HPSHM_<KEY> variables:
 * provider, huge_pages, huge_page_size, populate, ...), so the caller gets the same walk,
 * verification, populate and fallback record as a program written for hpshm.  The semantics
 * the caller relies on hold because every provider maps MAP_SHARED: a fork()ed child shares
 * the memory; it starts zeroed; munmap() of the whole region ends it.  Not taken, and passed
 * on unchanged: private or file-backed mappings, MAP_FIXED and MAP_FIXED_NOREPLACE (the
 * caller owns that range), MAP_HUGETLB (the caller already chose), MAP_NORESERVE (a sparse
 * reservation must not become a full hugetlb reservation), other protections, and anything
 * below the threshold.
 *
 * munmap() and mremap() look up the regions taken (region.c).  Unmapping a whole region (its
 * start, and at least the length the caller asked for) destroys the segment, slack included;
 * unmapping part of one is refused with EINVAL, as hugetlb itself refuses unaligned cuts; a
 * range that also covers other mappings has those unmapped too.  mremap() of a whole region
 * may resize it within the mapping it already has (the slack of the last huge page) and
 * fails with ENOMEM beyond that: moving it would break the sharing with children that
 * already hold it.  MAP_FIXED or MREMAP_FIXED onto a region fails with EINVAL rather than
 * silently replace part of a huge page mapping.
 *
 * The policy's failures: with huge_pages=on, a request that gets no huge pages fails with
 * ENOMEM, the error the server already handles, and the reason goes to stderr (a PostgreSQL
 * log then shows hpshm's reason right above its own FATAL).  With try, a fallback is said
 * on stderr too, once per region: PostgreSQL's silent fallback is what its users complain
 * about.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ports/linux/flags.h"

static size_t round_base(size_t len)
{
	size_t b = preload_cfg.base_page;

	return len > SIZE_MAX - (b - 1) ? 0 : (len + b - 1) / b * b;
}

static int mmap_wanted(size_t len, int prot, int flags)
{
	return (flags & MAP_TYPE) == MAP_SHARED && (flags & MAP_ANONYMOUS) &&
	       !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_HUGETLB | MAP_NORESERVE)) &&
	       prot == (PROT_READ | PROT_WRITE) && len > 0;
}

/*
 * Why a walk found no provider, each reason said once: "memfd_hugetlb, mmap_hugetlb,
 * sysv_hugetlb, hugetlbfs: only 0 huge pages of 2MiB available (need 138)...".  The core's
 * message repeats a pool's reason for every provider that draws on the pool, which makes a
 * server's log line of a kilobyte; providers the configuration left out (huge_pages=on leaves
 * out plain) are no reason at all.  Empty when the report has no reason to give.
 */
static int attempt_failed(const hpshm_attempt *a)
{
	return a->result != 0 && a->reason[0] && !(a->page_size == 0 && strcmp(a->call, "config") == 0);
}

static void why_refused(const hpshm_report *r, char *buf, size_t len)
{
	unsigned n = r->nattempts < HPSHM_MAX_ATTEMPTS ? r->nattempts : HPSHM_MAX_ATTEMPTS;
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && used < len; i++) {
		const hpshm_attempt *a = &r->attempts[i];
		int said = 0;

		if (!attempt_failed(a))
			continue;
		for (unsigned j = 0; j < i && !said; j++)
			said = attempt_failed(&r->attempts[j]) && strcmp(r->attempts[j].reason, a->reason) == 0;
		if (said)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "; " : "", a->provider);
		for (unsigned j = i + 1; j < n && used < len; j++)
			if (attempt_failed(&r->attempts[j]) && strcmp(r->attempts[j].reason, a->reason) == 0)
				used += (size_t)snprintf(buf + used, len - used, ", %s", r->attempts[j].provider);
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, ": %s", a->reason);
	}
}

/* The hint, unless the reasons already end with it ("...: raise vm.nr_hugepages to at least 138"). */
static const char *hint_unsaid(const char *why, const char *hint)
{
	char head[HPSHM_TEXT_MAX];
	size_t n = strcspn(hint, "(");

	while (n > 0 && hint[n - 1] == ' ')
		n--;
	if (n == 0 || n >= sizeof(head))
		return hint;
	memcpy(head, hint, n);
	head[n] = '\0';
	return strstr(why, head) ? "" : hint;
}

/*
 * An hpshm segment of at least len bytes (s says len for people), or NULL with the failure
 * in the report and on stderr, as the policy words it.
 */
static hpshm_segment *mmap_segment(size_t len, const char *s)
{
	hpshm_segment *seg = NULL;
	hpshm_report rep;
	hpshm_error err;
	char why[HPSHM_MESSAGE_MAX];
	const char *hint;
	int rc;

	memset(&rep, 0, sizeof(rep));
	memset(&err, 0, sizeof(err));
	rc = hpshm_segment_create_ex(&seg, len, preload_cfg.cfg, &rep, &err);
	if (rc == 0 && hpshm_segment_size(seg) < len) {
		/* Not the library's contract: never hand out a region shorter than asked. */
		(void)hpshm_segment_destroy(seg);
		seg = NULL;
		rc = HPSHM_EINVAL;
		snprintf(err.message, sizeof(err.message), "the segment is shorter than the %s asked for", s);
		err.code = rc;
	}
	if (rc == 0)
		return seg;
	why_refused(&rep, why, sizeof(why));
	if (!why[0])
		snprintf(why, sizeof(why), "%s", err.message[0] ? err.message : hpshm_strerror(rc));
	hint = hint_unsaid(why, err.hint);
	snprintf(err.message, sizeof(err.message), "%s", why);
	preload_report("mmap", NULL, &rep, &err, NULL);
	if (preload_cfg.policy == HPSHM_HUGE_ON)
		preload_say("mmap of %s refused (huge_pages=on): %s%s%s; the call fails with ENOMEM", s, why,
			    hint[0] ? "; hint: " : "", hint);
	else
		preload_say("mmap of %s: hpshm could not make a segment (%s); the C library maps it instead", s, why);
	return NULL;
}

/*
 * Record seg, made for a request of len bytes, as a region, and report it: its address, or
 * NULL when the table is full (then seg is destroyed, and stderr says so).
 */
static void *mmap_record(hpshm_segment *seg, size_t len, const char *s)
{
	hpshm_report rep = *hpshm_segment_report(seg);
	void *addr = hpshm_segment_address(seg);
	char why[HPSHM_MESSAGE_MAX];

	if (region_insert(seg, len, round_base(len), rep.mapped_size) < 0) {
		(void)hpshm_segment_destroy(seg);
		if (preload_cfg.policy == HPSHM_HUGE_ON)
			preload_say("mmap of %s refused: %d intercepted regions are already alive, the most one process "
				    "may hold; the call fails with ENOMEM", s, PRELOAD_MAX_REGIONS);
		else
			preload_say("mmap of %s: %d intercepted regions are already alive; the C library maps it instead",
				    s, PRELOAD_MAX_REGIONS);
		return NULL;
	}
	preload_report("mmap", addr, &rep, NULL, NULL);
	why_refused(&rep, why, sizeof(why));
	if (preload_cfg.policy == HPSHM_HUGE_TRY && !rep.huge && why[0])
		preload_say("mmap of %s: huge pages not used, fell back to %s (%s)", s, rep.provider, why);
	return addr;
}

/*
 * Make the region from an hpshm segment.  1 with *out set (MAP_FAILED with ENOMEM when
 * huge_pages=on gets none), or 0 to pass the call on.
 */
static int take_mmap(size_t len, void **out)
{
	hpshm_segment *seg;
	void *addr = NULL;
	char s[32];
	int taken = 1;

	if (!preload_ready_for(len) || round_base(len) == 0)
		return 0;
	preload_size_text(len, s, sizeof(s));
	preload_inside++;
	seg = mmap_segment(len, s);
	if (seg)
		addr = mmap_record(seg, len, s);
	if (addr) {
		*out = addr;
	} else if (preload_cfg.policy == HPSHM_HUGE_ON) {
		errno = ENOMEM;
		*out = MAP_FAILED;
	} else {
		taken = 0;
	}
	preload_inside--;
	return taken;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!preload_inside) {
		void *p;

		if (mmap_wanted(len, prot, flags) && take_mmap(len, &p))
			return p;
		if ((flags & MAP_FIXED) && region_fixed_clash("mmap(MAP_FIXED)", addr, len)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	return next_mmap(addr, len, prot, flags, fd, off);
}

/*
 * On 64-bit systems mmap64 is the same call; on 32-bit ones off_t is the narrower type.  musl
 * has no mmap64 of its own: its header makes the name a macro for mmap (which is defined
 * above), so there is nothing more to interpose.
 */
#ifndef mmap64
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (sizeof(off_t) < sizeof(off64_t) && (off64_t)(off_t)off != off) {
		/* Only file mappings have offsets, and those are never taken: pass the call on whole. */
		void *sym = dlsym(RTLD_NEXT, "mmap64");
		void *(*f)(void *, size_t, int, int, int, off64_t);

		if (!sym) {
			errno = EOVERFLOW;
			return MAP_FAILED;
		}
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len, prot, flags, fd, off);
	}
	return mmap(addr, len, prot, flags, fd, (off_t)off);
}
#endif

/* ---- munmap ---- */

/*
 * Claim each of hit[0..n) for this thread (a region another thread is unmapping right now is
 * theirs to finish), and sort the claimed by address, so the gaps between them can be
 * unmapped in one pass.  Returns how many were claimed, first in hit[].
 */
static int unmap_claim(struct region **hit, int n)
{
	int kept = 0;

	for (int i = 0; i < n; i++)
		if (region_claim(hit[i]))
			hit[kept++] = hit[i];
	for (int i = 1; i < kept; i++)
		for (int j = i; j > 0 && hit[j - 1]->start > hit[j]->start; j--) {
			struct region *t = hit[j];

			hit[j] = hit[j - 1];
			hit[j - 1] = t;
		}
	return kept;
}

/*
 * munmap(addr, len) of [lo, hi) over the claimed regions hit[0..n), in address order: each
 * region's segment is destroyed, and what lies between and around them is unmapped.
 * 0, or -1 when an unmap failed.
 */
static int unmap_destroy(void *addr, size_t len, uintptr_t lo, uintptr_t hi, struct region **hit, int n)
{
	uintptr_t cur = lo;
	int rc = 0;

	for (int i = 0; i < n; i++) {
		struct region *r = hit[i];
		void *start = (void *)r->start;
		size_t mapped = r->mapped;

		if (r->start > cur && next_munmap((void *)cur, r->start - cur) < 0)
			rc = -1;
		region_report_end(r, "munmap");
		if (hpshm_segment_destroy(r->seg) < 0)
			preload_say("munmap(%p, %zu): the OS refused to release the hpshm segment at %p (%zu bytes)", addr,
				    len, start, mapped);
		cur = r->start + mapped > cur ? r->start + mapped : cur;
		region_free(r);
	}
	if (cur < hi && next_munmap((void *)cur, hi - cur) < 0)
		rc = -1;
	return rc;
}

/*
 * munmap() over regions.  1 with *rc set when it touched one (whole: destroyed; part:
 * refused), 0 when no region is in the range and the call goes on unchanged.
 */
static int unmap_regions(void *addr, size_t len, int *rc)
{
	uintptr_t lo = (uintptr_t)addr, hi;
	struct region *hit[PRELOAD_MAX_REGIONS], *r = NULL;
	size_t rounded = round_base(len);
	int n;

	/* Bad arguments are the kernel's to refuse, with its own errno. */
	if (len == 0 || rounded == 0 || lo % preload_cfg.base_page != 0 || lo > UINTPTR_MAX - rounded)
		return 0;
	hi = lo + rounded;
	n = region_collect(lo, hi, hit, &r);
	if (n < 0) {
		preload_say("munmap(%p, %zu) covers part of the hpshm segment at %p (%zu bytes asked, %zu mapped): "
			    "refused with EINVAL; unmap the whole region", addr, len, (void *)r->start, r->length,
			    r->mapped);
		errno = EINVAL;
		*rc = -1;
		return 1;
	}
	if (n == 0)
		return 0;
	preload_inside++;
	*rc = unmap_destroy(addr, len, lo, hi, hit, unmap_claim(hit, n));
	preload_inside--;
	return 1;
}

int munmap(void *addr, size_t len)
{
	int rc;

	if (!preload_inside && region_any() && unmap_regions(addr, len, &rc))
		return rc;
	return next_munmap(addr, len);
}

/* ---- mremap ---- */

/* mremap() of a region.  1 with *out set, or 0 when no region is involved. */
static int remap_region(void *old, size_t old_size, size_t new_size, int flags, void **out)
{
	uintptr_t lo = (uintptr_t)old;
	size_t old_r = round_base(old_size ? old_size : 1), new_r = round_base(new_size);
	struct region *r;

	if (lo > UINTPTR_MAX - old_r)
		return 0;
	r = region_overlapping(lo, lo + old_r);
	if (!r)
		return 0;
	*out = MAP_FAILED;
	if (lo != r->start || old_size == 0 || old_r < r->length || old_r > r->mapped ||
	    (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) || new_r == 0) {
		preload_say("mremap(%p, %zu, %zu, %#x) of the hpshm segment at %p (%zu bytes asked, %zu mapped) is "
			    "refused with EINVAL: only the whole region may be resized, in place", old, old_size,
			    new_size, (unsigned)flags, (void *)r->start, r->length, r->mapped);
		errno = EINVAL;
		return 1;
	}
	if (new_r > r->mapped) {
		preload_say("mremap(%p, %zu, %zu): the hpshm segment has %zu bytes mapped and cannot grow or move "
			    "(its children share it); the call fails with ENOMEM", old, old_size, new_size, r->mapped);
		errno = ENOMEM;
		return 1;
	}
	if (!region_claim(r)) {
		errno = EINVAL; /* unmapped by another thread at this moment */
		return 1;
	}
	r->length = new_r;
	region_unclaim(r);
	*out = old;
	return 1;
}

void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL, *p;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!preload_inside && region_any()) {
		if (remap_region(old, old_size, new_size, flags, &p))
			return p;
		if ((flags & MREMAP_FIXED) && region_fixed_clash("mremap(MREMAP_FIXED)", new_addr, new_size)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	return next_mremap(old, old_size, new_size, flags, new_addr);
}

