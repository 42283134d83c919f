/* SPDX-License-Identifier: MIT */
/*
 * core/place.c -- where a candidate's segment goes: an address a token can name (chosen on
 * the grid, or base_address), the header's companion after it, the create retried when
 * something else took a range the core chose, and a refused base_address explained.  Part of
 * the create walk (core/segment.c, core/walk.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/walk.h"
#include "port.h"

/*
 * The top of the user address range on this architecture, as the kernel sets it by default
 * (TASK_SIZE): 47 bits on x86-64 and most 64-bit ports, 48 on arm64 with 4 KiB pages.  It is
 * only used to explain a failure the kernel already reported, never to refuse an address up
 * front: a kernel with a wider range (x86-64 with 5-level paging) maps higher addresses on
 * request, and then there is no failure to explain.  0 where the build cannot know it: a
 * 32-bit program gets 3 GiB under a 32-bit kernel's default split, another split where that
 * kernel was configured so, and all 4 GiB but a page under a 64-bit kernel.
 */
static uintptr_t walk_user_top(void)
{
#if defined(__aarch64__)
	return (uintptr_t)1 << 48;
#elif defined(__x86_64__) && !defined(__ILP32__)
	return ((uintptr_t)1 << 47) - 4096;   /* the last page below 2^47 is never mapped */
#elif UINTPTR_MAX > 0xffffffffu
	return (uintptr_t)1 << 47;
#else
	return 0;
#endif
}

/*
 * A fixed address the kernel refused with ENOMEM or EINVAL, where the segment would end past
 * the top of the user range, is a bad base_address, not a shortage of memory: say which
 * address and where the range ends.  Where the top is unknown (0), only a segment that would
 * run past the end of the address space itself is explained so.  1 if so (why filled), else 0.
 */
int hpshm__walk_address_outside(const struct hpshm_request *rq, int sys_errno, char *why, size_t len)
{
	uintptr_t at = (uintptr_t)rq->address, top = walk_user_top();

	if (!at || (sys_errno != ENOMEM && sys_errno != EINVAL))
		return 0;
	if (top == 0) {
		if (rq->size - 1 <= UINTPTR_MAX - at)
			return 0;
		snprintf(why, len, "base_address %#llx leaves no room for a segment that long before the end of the "
			 "address space", (unsigned long long)at);
		return 1;
	}
	if (at < top && rq->size <= top - at)
		return 0;
	snprintf(why, len, "base_address %#llx is outside the user address range (top %#llx)%s",
		 (unsigned long long)at, (unsigned long long)top, at < top ? " for a segment that long" : "");
	return 1;
}

/*
 * The address of a segment a token can name, and its header's companion when it has one: the
 * address is chosen (unless base_address gave it) with room for the companion's granule
 * after the segment, the companion made there.  When no companion can be had (no plain
 * provider that re-attaches, the granule is taken), the header goes back to the tail and
 * rq->size grows by it.  0, or a negative code with the attempt recorded.
 */
static int walk_place(struct hpshm__walk *w, const struct hpshm_instance *p, const struct hpshm_config *cfg,
			 size_t size, struct hpshm_request *rq, enum hpshm__header_place *place,
			 struct hpshm__companion *companion)
{
	/* HPSHM__ADDRESS_GRANULE at least: Windows' granularity, so the same addresses work everywhere. */
	size_t align = rq->page_size > HPSHM__ADDRESS_GRANULE ? rq->page_size : HPSHM__ADDRESS_GRANULE;
	int chosen = 0, rc;
	void *at;

	memset(companion, 0, sizeof(*companion));
	for (;;) {
		/* Every segment a token can name (reattach=exec, or a name another process opens)
		 * gets an address on the grid, high and away from the kernel's choices, so the
		 * other process can map it there too; a named one used to take the kernel's
		 * address, which its own token then refused as off the grid. */
		if (hpshm__wants_header(cfg) && (!rq->address || chosen)) {
			rc = hpshm__port_pick_address(rq->size + hpshm__header_extent(*place), align, &at);
			if (rc < 0) {
				hpshm__walk_attempt(w, p, rq->page_size, rc, 0, "mmap", "no free address range for the segment");
				return rc;
			}
			rq->address = at;
			chosen = 1;
		}
		if (*place != HPSHM__HEADER_COMPANION)
			return 0;
		if (hpshm__companion_create(companion, rq->address, rq->size, cfg, NULL) == 0)
			return 0;
		*place = HPSHM__HEADER_TAIL;
		rc = hpshm__segment_sizes_at(*place, size, rq->page_size, &rq->size, NULL);
		if (rc < 0) {
			hpshm__walk_attempt(w, p, rq->page_size, HPSHM_EOVERFLOW, 0, "round",
					"size overflows when rounded to the page size");
			return HPSHM_EOVERFLOW;
		}
		if (!chosen)
			return 0;
	}
}

/* How often a create at an address the core chose is tried when something else took the range. */
#define WALK_MAP_TRIES 4

/*
 * Place the segment (walk_place()) and have the provider create it there.  A range
 * hpshm__port_pick_address() found is free only until someone maps there.  hpshm's creates in
 * other threads wait for the address lock, held from the choice until the segment and its
 * companion are mapped; what else the process maps meanwhile (another thread's malloc arena,
 * a library being loaded), create() meets as HPSHM_EEXIST, and a range the core chose is then
 * chosen again (a base_address the configuration gave is not).  *placed says whether the
 * segment was placed (a placement failure has its attempt recorded already); the return is
 * create()'s code, with perr filled on failure and the companion released.
 */
int hpshm__walk_map(struct hpshm__walk *w, const struct hpshm_instance *p, size_t size,
		       struct hpshm_request *rq, enum hpshm__header_place *place, struct hpshm__companion *companion,
		       struct hpshm_header *held, char *tag, struct hpshm_mapping *m, hpshm_error *perr, int *placed)
{
	const struct hpshm_config *cfg = w->cfg;
	const struct hpshm_request asked = *rq;
	const enum hpshm__header_place asked_place = *place;
	int locked = hpshm__wants_header(cfg), rc;

	*placed = 0;
	if (locked)
		hpshm__port_address_lock();
	for (int tries = 1;; tries++) {
		rc = walk_place(w, p, cfg, size, rq, place, companion);
		if (rc < 0)
			break;
		*placed = 1;
		/* The held header is written before the object exists: its nonce and address are
		 * the label the provider gives the object. */
		if (*place == HPSHM__HEADER_TAG) {
			hpshm__header_hold(held, rq->size, hpshm__port_random64(), (uint64_t)(uintptr_t)rq->address, p->name,
					   rq->page_size);
			rq->tag = hpshm__header_tag(held->nonce, held->creator_address, tag);
		}
		memset(m, 0, sizeof(*m));
		m->handle = HPSHM_NO_HANDLE;
		memset(perr, 0, sizeof(*perr));
		rc = p->ops->create(p, m, rq, perr);
		if (rc < 0)
			hpshm__companion_release(companion, 1);
		if (rc != HPSHM_EEXIST || !locked || asked.address || tries == WALK_MAP_TRIES)
			break;
		hpshm__log(cfg, HPSHM_LOG_DEBUG, "%s: the range at %p was taken before the segment was mapped there: "
			   "choosing another", p->name, rq->address);
		*rq = asked;
		*place = asked_place;
	}
	if (locked)
		hpshm__port_address_unlock();
	return rc;
}
