/* SPDX-License-Identifier: MIT */
/*
 * preload/region.c -- the table of regions mmap() gave out from hpshm segments.
 *
 * A fixed array of slots, each FREE, BUSY or LIVE; a thread moves a slot on only by
 * compare-and-swap and is then the only one to write it, so no lock is ever held (a fork()
 * or a signal at any point finds none) and munmap() or mremap() of one region never waits
 * for another.  nregions counts the slots not FREE, so the calls that have nothing to look
 * up skip the scan.
 *
 * A region's end goes into the report in the process that holds it: the one that made it,
 * until it exits while a child it forked still maps it (a daemon's first process, which
 * forks the server and exits); its exit line then hands the region over and names the
 * children, and the child it forked holds it from then on.  A process that inherited a
 * region from a holder still alive (a worker) writes nothing for it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ports/facts.h"

static struct region regions[PRELOAD_MAX_REGIONS];
static atomic_int nregions; /* slots LIVE or BUSY: 0 lets munmap() skip the scan */

int region_any(void)
{
	return atomic_load_explicit(&nregions, memory_order_acquire) > 0;
}

int region_insert(hpshm_segment *seg, size_t asked, size_t length, size_t mapped)
{
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		int expected = SLOT_FREE;

		if (!atomic_compare_exchange_strong(&regions[i].state, &expected, SLOT_BUSY))
			continue;
		atomic_fetch_add(&nregions, 1);
		regions[i].start = (uintptr_t)hpshm_segment_address(seg);
		regions[i].length = length;
		regions[i].asked = asked;
		regions[i].mapped = mapped;
		regions[i].seg = seg;
		regions[i].maker = (long)getpid();
		atomic_store(&regions[i].holder, regions[i].maker);
		atomic_store_explicit(&regions[i].state, SLOT_LIVE, memory_order_release);
		return 0;
	}
	return -1;
}

void region_free(struct region *r)
{
	r->seg = NULL;
	atomic_store_explicit(&r->state, SLOT_FREE, memory_order_release);
	atomic_fetch_sub(&nregions, 1);
}

int region_claim(struct region *r)
{
	int expected = SLOT_LIVE;

	return atomic_compare_exchange_strong(&r->state, &expected, SLOT_BUSY);
}

void region_unclaim(struct region *r)
{
	atomic_store_explicit(&r->state, SLOT_LIVE, memory_order_release);
}

/*
 * Does this process hold r for the server?  It does when it made r, or when the holder was
 * the process it was forked from and that process has exited (the kernel gave this one a new
 * parent): a daemon's first process maps the server's memory, forks the server and exits.
 * A child of a holder that still runs (a worker) does not.
 */
static int region_held_here(struct region *r)
{
	long me = (long)getpid(), holder = atomic_load(&r->holder), parent = preload_fork_parent();

	if (holder == me)
		return 1;
	if (holder != parent || parent == 0 || (long)getppid() == parent)
		return 0;
	atomic_store(&r->holder, me);
	return 1;
}

void region_report_end(struct region *r, const char *call)
{
	struct preload_end e;
	long children[32];

	if (!preload_cfg.report[0] || !region_held_here(r))
		return;
	memset(&e, 0, sizeof(e));
	e.call = call;
	e.event = "destroy";
	e.addr = (const void *)r->start;
	e.size = r->asked;
	e.mapped = r->mapped;
	e.provider = hpshm_segment_report(r->seg)->provider;
	e.created_by = r->maker;
	if (strcmp(call, "exit") == 0) {
		/* Children that map it keep it after this process; they are named, and hold it. */
		e.nheld = hpshm__os_children_mapping(e.addr, children, (int)(sizeof(children) / sizeof(children[0])));
		e.held_by = children;
		if (e.nheld > 0)
			e.event = "handover";
	}
	preload_report_end(&e);
}

struct region *region_overlapping(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];

		if (atomic_load_explicit(&r->state, memory_order_acquire) != SLOT_LIVE)
			continue;
		if (hi > r->start && lo < r->start + r->mapped)
			return r;
	}
	return NULL;
}

int region_collect(uintptr_t lo, uintptr_t hi, struct region **hit, struct region **part)
{
	int n = 0;

	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];

		if (atomic_load_explicit(&r->state, memory_order_acquire) != SLOT_LIVE)
			continue;
		if (hi <= r->start || lo >= r->start + r->mapped)
			continue;
		if (lo > r->start || hi < r->start + r->length) {
			*part = r;
			return -1;
		}
		hit[n++] = r;
	}
	return n;
}

int region_fixed_clash(const char *call, void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr;
	struct region *r;

	if (!region_any() || len == 0 || lo > UINTPTR_MAX - len)
		return 0;
	r = region_overlapping(lo, lo + len);
	if (!r)
		return 0;
	preload_say("%s at %p (%zu bytes) would replace part of the hpshm segment at %p (%zu bytes mapped): "
		    "refused with EINVAL; unmap the region first", call, addr, len, (void *)r->start, r->mapped);
	return 1;
}

/*
 * At exit (exit(), or a return from main), the regions this process holds end with it, or
 * live on in the children that map them: the report says which.  A process killed by a
 * signal, or ended by _exit(), runs no destructor and its regions get no end line.
 */
__attribute__((destructor)) static void preload_unload(void)
{
	if (!preload_cfg.report[0] || !region_any())
		return;
	preload_inside++;
	for (int i = 0; i < PRELOAD_MAX_REGIONS; i++) {
		struct region *r = &regions[i];

		if (!region_claim(r))
			continue;
		region_report_end(r, "exit");
		region_unclaim(r);
	}
	preload_inside--;
}
