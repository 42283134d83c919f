/* SPDX-License-Identifier: MIT */
/*
 * core/header.c -- a segment's header: where it lives, what it holds, and the companion that
 * keeps it when the tail would cost a huge page.  Layers: doc/architecture.md.
 *
 * The header lives in the last HPSHM_HEADER_REGION bytes of the mapping, after the caller's
 * usable bytes, so the caller's pointer is the mapping's first byte (huge-page aligned); or,
 * when that would cost a huge page, in a companion of base pages mapped right after the
 * segment (core/internal.h, enum hpshm__header_place).  A provider that can label its object
 * where the kernel keeps it (HPSHM_CAP_TAG: the label is kept with the object itself) needs
 * neither: the label is "<nonce>@0x<address>" (hpshm__header_tag()), given at create, and its
 * attach() maps only an object that carries the label the token's nonce and address make, so
 * the label does what the header's nonce and creator_address do, and the header itself is
 * kept in the handles.  Tokens name the header's place (core/token.c); attach checks it
 * (core/attach.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "port.h"

int hpshm__wants_header(const struct hpshm_config *cfg)
{
	return cfg->reattach == HPSHM__REATTACH_EXEC || cfg->name[0] != '\0';
}

enum hpshm__header_place hpshm__header_place(const struct hpshm_config *cfg, size_t size, size_t page_size)
{
	size_t bare, with_tail;

	if (!hpshm__wants_header(cfg))
		return HPSHM__HEADER_NONE;
	/* Named: the header must be in the object.  Base pages: the tail costs a base page,
	 * which is what a companion would cost too. */
	if (cfg->name[0] || page_size <= hpshm__port_base_page_size())
		return HPSHM__HEADER_TAIL;
	/* The tail is free when the last page has a header region to spare. */
	if (size <= SIZE_MAX - HPSHM_HEADER_REGION && hpshm__round_up(size, page_size, &bare) == 0 &&
	    hpshm__round_up(size + HPSHM_HEADER_REGION, page_size, &with_tail) == 0 && bare == with_tail)
		return HPSHM__HEADER_TAIL;
	return HPSHM__HEADER_COMPANION;
}

size_t hpshm__header_extent(enum hpshm__header_place place)
{
	/* The companion is mapped in the address granule after the segment: every base page
	 * size hpshm runs on divides HPSHM__ADDRESS_GRANULE, so its pages fit in one. */
	return place == HPSHM__HEADER_COMPANION ? HPSHM__ADDRESS_GRANULE : 0;
}

const char *hpshm__header_tag(uint64_t nonce, uint64_t address, char *buf)
{
	snprintf(buf, HPSHM_TAG_MAX, "%016llx@0x%llx", (unsigned long long)nonce, (unsigned long long)address);
	return buf;
}

void hpshm__header_hold(struct hpshm_header *h, size_t usable, uint64_t nonce, uint64_t at, const char *provider,
			size_t page_size)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic));
	h->version = HPSHM_HEADER_VERSION;
	h->header_size = (uint32_t)sizeof(*h);
	h->usable_size = usable;
	h->page_size = page_size;
	h->nonce = nonce;
	h->creator_address = at;
	hpshm__strlcpy(h->provider, provider, sizeof(h->provider));
}

struct hpshm_header *hpshm__header_write(void *dst_region, size_t usable, const void *at, const char *provider,
					 const char *name, size_t page_size, const char *object)
{
	return hpshm__header_write_resizable(dst_region, usable, at, provider, name, page_size, object, 0, 0, 0);
}

struct hpshm_header *hpshm__header_write_resizable(void *dst_region, size_t usable, const void *at,
						   const char *provider, const char *name, size_t page_size,
						   const char *object, size_t max, size_t initial, unsigned nslots)
{
	struct hpshm_header *dst = dst_region;
	struct hpshm_header h;

	/* What a token carries, then who made it and in which boot, for an object that can
	 * outlive its creator (hpshm gc, a stale token after a reboot). */
	hpshm__header_hold(&h, usable, hpshm__port_random64(), (uint64_t)(uintptr_t)at, provider, page_size);
	memset(h.magic, 0, sizeof(h.magic));
	h.creator_pid = hpshm__port_self(&h.creator_start);
	h.created_unix = (uint64_t)time(NULL);
	if (hpshm__port_boot_id(h.boot_id, sizeof(h.boot_id)) < 0)
		h.boot_id[0] = '\0';
	hpshm__strlcpy(h.name, name, sizeof(h.name));
	/* The provider's text may fill its field: copied up to the last byte, which stays NUL. */
	memcpy(h.object, object, strnlen(object, sizeof(h.object) - 1));
	/* A resizable segment's first published size is generation 1 (0 is never published). */
	h.resize_max = max;
	h.resize_word = max ? HPSHM__RESIZE_WORD(1, initial) : 0;
	h.resize_backed = max ? initial : 0;
	h.resize_slots = nslots;
	/* Magic last: a reader that sees it sees a complete header (PostgreSQL's rule too). */
	*dst = h;
	hpshm__port_release_fence();
	memcpy(dst->magic, HPSHM_HEADER_MAGIC, sizeof(dst->magic));
	return dst;
}

/* ---- the companion that holds the header of an unnamed huge segment ---- */

int hpshm__companion_request(struct hpshm_request *rq, void *addr, const struct hpshm_config *cfg)
{
	memset(rq, 0, sizeof(*rq));
	if (hpshm__round_up(HPSHM_HEADER_REGION, hpshm__port_base_page_size(), &rq->size) < 0 ||
	    rq->size > HPSHM__ADDRESS_GRANULE)
		return HPSHM_EOVERFLOW;
	rq->page_size = hpshm__port_base_page_size();
	rq->address = addr;
	rq->mode = cfg->mode;
	rq->flags = HPSHM_REQ_REATTACH;
	rq->config = cfg;
	rq->option = hpshm__request_option;
	return 0;
}

int hpshm__companion_create(struct hpshm__companion *c, void *seg_at, size_t mapped, const struct hpshm_config *cfg,
			    hpshm_error *err)
{
	struct hpshm_request rq;
	struct hpshm_probe pr;
	unsigned caps;
	int rc;

	memset(c, 0, sizeof(*c));
	c->map.handle = HPSHM_NO_HANDLE;
	if (hpshm__provider_find("plain", &c->inst) < 0 || !(c->inst.ops->caps & HPSHM_CAP_REATTACH))
		return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, NULL,
				       "no plain provider that can re-attach to keep the header in");
	rc = hpshm__companion_request(&rq, (char *)seg_at + mapped, cfg);
	if (rc < 0)
		return hpshm_error_set(err, rc, 0, NULL, NULL, "base pages too large for a header companion");
	memset(&pr, 0, sizeof(pr));
	rc = c->inst.ops->probe(&c->inst, &rq, &pr);
	if (rc < 0)
		return hpshm_error_set(err, rc, pr.sys_errno, "probe", NULL, "plain: %s", pr.reason);
	rc = c->inst.ops->create(&c->inst, &c->map, &rq, err);
	if (rc < 0) {
		c->map.addr = NULL;
		return rc;
	}
	caps = hpshm__mapping_caps(&c->map, c->inst.ops);
	if (c->map.addr != rq.address || !(caps & HPSHM_CAP_REATTACH)) {
		(void)c->inst.ops->destroy(&c->inst, &c->map);
		c->map.addr = NULL;
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
				       "plain gave a header companion a child cannot re-attach");
	}
	return 0;
}

void hpshm__companion_release(struct hpshm__companion *c, int remove)
{
	struct hpshm_header *h = c->map.addr;

	if (!c->map.addr)
		return;
	/*
	 * A child that inherited the companion keeps it, and the header in it, after the
	 * creator is gone.  Were the header left whole, a child attaching later would find the
	 * segment's nonce there and take whatever object has the segment's id by then for it (a
	 * SysV id given to a new segment, by the same creator in the same second).  So the
	 * owner's destroy clears the magic, which every attach checks first; the rest stays, for
	 * the message.  Only the owner's: a process it forked shares the companion's pages, and
	 * its clean-up must not retire the creator's segment.  The caller says which it is by
	 * hpshm__segment_owned(), the one test of ownership, so a forked child that calls
	 * hpshm_segment_destroy() detaches here as it does from the segment.
	 */
	if (remove && memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic)) == 0)
		memset(h->magic, 0, sizeof(h->magic));
	if (remove)
		(void)c->inst.ops->destroy(&c->inst, &c->map);
	else
		(void)c->inst.ops->detach(&c->inst, &c->map);
	c->map.addr = NULL;
}
