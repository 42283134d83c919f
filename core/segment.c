/* SPDX-License-Identifier: MIT */
/*
 * core/segment.c -- creating a segment: choosing providers, the huge_pages policy, rounding,
 * verifying from the kernel, populating, and recording every decision.  Layers:
 * doc/architecture.md; what a provider is asked is in core/request.c, the handle in
 * core/handle.c.
 *
 * The walk is one loop over candidates.  Each candidate is probed, then created; the result
 * is verified from the kernel (a huge provider whose mapping the kernel does not report as
 * huge has failed, whatever the flags said), then populated if asked or if a hugetlb cgroup
 * could refuse pages at fault time.  Every candidate leaves one line in the report, in order,
 * whether it was ruled out by configuration, by probe, by create, by verification or by
 * populate.  Policy (PostgreSQL's, made loud):
 *   on   only huge providers are candidates; if none works, the error names each one's
 *        reason and carries one actionable hint;
 *   try  huge providers first, plain last; falling back is logged once at warning level;
 *   off  only plain.
 * Sizes are rounded up per candidate to the page size it uses, so a fallback gets the
 * original size rounded to base pages, and map and unmap lengths are always the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/walk.h"
#include "port.h"

/* Make sure the mapping is what the provider promised; fills the report's page facts. */
static int segment_verify(struct hpshm__walk *w, const struct hpshm_instance *p, const struct hpshm_request *rq,
			  const struct hpshm_mapping *m)
{
	struct hpshm__backing b;
	hpshm_report *r = w->r;
	char want[32], got[32], why[HPSHM_TEXT_MAX];

	memset(&b, 0, sizeof(b));
	if (hpshm__port_verify_backing(m->addr, m->size, hpshm__port_handle_of(m->handle, m->flags & HPSHM_MAP_DESCRIPTOR),
				  &b) < 0 || b.page_size == 0) {
		/* The port has nothing to read the truth from (this OS, or its facts hidden): say so. */
		r->page_size = rq->page_size;
		r->verified = 0;
		r->huge = (p->ops->caps & HPSHM_CAP_HUGE) != 0;
		hpshm__strlcpy(r->verified_by, "unverified", sizeof(r->verified_by));
		return 0;
	}
	r->page_size = b.page_size;
	r->verified = 1;
	r->huge = b.huge;
	hpshm__strlcpy(r->verified_by, b.source, sizeof(r->verified_by));
	if ((p->ops->caps & HPSHM_CAP_HUGE) && (!b.huge || b.page_size != rq->page_size)) {
		snprintf(why, sizeof(why), "asked for %s pages, the kernel (%s) reports %s%s pages",
			 hpshm_size_format(rq->page_size, want, sizeof(want)), b.source,
			 hpshm_size_format(b.page_size, got, sizeof(got)), b.huge ? " huge" : "");
		hpshm__walk_attempt(w, p, rq->page_size, HPSHM_ENOHUGE, 0, "verify", why);
		return HPSHM_ENOHUGE;
	}
	return 0;
}

static int segment_want_populate(const struct hpshm_config *cfg, const struct hpshm_instance *p,
				 const struct hpshm_probe *pr)
{
	if (cfg->populate == HPSHM__POPULATE_ON)
		return 1;
	if (cfg->populate == HPSHM__POPULATE_OFF)
		return 0;
	/* A NUMA policy is carried out by the first touch (on Windows only by it), and the report
	 * says where the pages are: under auto they are all touched now. */
	if (cfg->numa.mode != HPSHM__NUMA_DEFAULT)
		return 1;
	if (!(p->ops->caps & HPSHM_CAP_HUGE))
		return 0;
	/* The provider knows when a late fault could be refused (a hugetlb cgroup's fault-time
	 * limit without a reservation limit): then take every page now, while a failure is
	 * still an error code. */
	return (pr->advice & HPSHM_ADVISE_POPULATE) != 0;
}

/* One candidate while it is tried: what it is asked, what it made, where its header went. */
struct segment_try {
	const struct hpshm_instance *p;         /* the candidate */
	size_t                       size;      /* the caller's size */
	struct hpshm_request         rq;        /* what the candidate is asked for */
	struct hpshm_probe           pr;        /* its probe()'s answer */
	enum hpshm__header_place     place;     /* where the header goes */
	struct hpshm_mapping         m;         /* what create() made */
	struct hpshm__companion      companion; /* the header's companion, when it has one */
	struct hpshm_header          held;      /* the header a labelled segment keeps in its handle */
	struct hpshm_header         *header;    /* where the header was written; NULL if none */
	char                         tag[HPSHM_TAG_MAX]; /* a labelled segment's label */
	size_t                       initial;   /* max_size: the first size, whole pages; 0 if fixed */
	size_t                       max;       /* max_size: what it may grow to, whole pages */
};

/* Is the candidate admitted, and what does its probe() answer?  0, or a code (recorded). */
static int try_probe(struct hpshm__walk *w, struct segment_try *c)
{
	const struct hpshm_instance *p = c->p;
	const char *why;
	size_t wish;
	int rc;

	why = hpshm__segment_excluded(w->cfg, p);
	if (why) {
		hpshm__walk_attempt(w, p, 0, HPSHM_EUNAVAILABLE, 0, "config", why);
		return HPSHM_EUNAVAILABLE;
	}
	hpshm__segment_request(&c->rq, w->cfg, p, c->size);
	wish = c->rq.page_size;

	/* The provider says which pages it would use, how many it has, and what an operator
	 * can do when it cannot: the core reads no pool itself. */
	memset(&c->pr, 0, sizeof(c->pr));
	rc = p->ops->probe(p, &c->rq, &c->pr);
	if (rc < 0) {
		if (!w->hint[0] && c->pr.fix[0])
			w->hint_of_setup = 1;
		hpshm__walk_keep_hint(w, c->pr.fix);
		if (c->pr.page_size == 0 && wish != HPSHM_PAGE_SIZE_DEFAULT && wish != HPSHM_PAGE_SIZE_LARGEST) {
			/* A size the mechanism does not offer is the configuration's fault. */
			hpshm__strlcpy(w->key, "huge_page_size", sizeof(w->key));
			hpshm__walk_attempt(w, p, wish, HPSHM_EUNAVAILABLE, c->pr.sys_errno, "config",
					c->pr.reason[0] ? c->pr.reason : "no such page size here");
			return HPSHM_EUNAVAILABLE;
		}
		hpshm__walk_attempt(w, p, c->pr.page_size, rc, c->pr.sys_errno, "probe",
				c->pr.reason[0] ? c->pr.reason : "unavailable");
		return rc;
	}
	why = hpshm__probe_broken(&c->pr);
	if (why) {
		hpshm__walk_attempt(w, p, c->pr.page_size, HPSHM_EINVAL, 0, "probe", why);
		return HPSHM_EINVAL;
	}
	return 0;
}

/* base_address, when given, must be a multiple of the candidate's pages.  0, or a code (recorded). */
static int try_address_aligned(struct hpshm__walk *w, struct segment_try *c)
{
	struct hpshm_request *rq = &c->rq;
	char why[HPSHM_TEXT_MAX], psz[32];

	if (rq->address && (uintptr_t)rq->address % rq->page_size != 0) {
		snprintf(why, sizeof(why), "base_address %p is not aligned to %s pages", rq->address,
			 hpshm_size_format(rq->page_size, psz, sizeof(psz)));
		hpshm__strlcpy(w->key, "base_address", sizeof(w->key));
		hpshm__walk_keep_hint(w, "give a base_address that is a multiple of the page size");
		hpshm__walk_attempt(w, c->p, rq->page_size, HPSHM_EINVAL, 0, "config", why);
		return HPSHM_EINVAL;
	}
	return 0;
}

/*
 * The layout of a resizable segment (max_size): the whole reservation is asked for, without
 * its pages (HPSHM_REQ_RESERVE), and the header is at its tail, where every process finds
 * the published size and the table of processes (core/resize.c).  0, or a code (recorded).
 */
static int try_layout_resizable(struct hpshm__walk *w, struct segment_try *c)
{
	struct hpshm_request *rq = &c->rq;
	char names[128], why[HPSHM_TEXT_MAX];
	hpshm_error e;
	int rc;

	if (!(c->p->ops->caps & HPSHM_CAP_RESIZE)) {
		hpshm__resize_providers(names, sizeof(names));
		snprintf(why, sizeof(why), "cannot grow or shrink a segment in place, but max_size is set (the "
			 "providers that can: %s)", names);
		hpshm__walk_attempt(w, c->p, rq->page_size, HPSHM_EUNAVAILABLE, 0, "config", why);
		return HPSHM_EUNAVAILABLE;
	}
	memset(&e, 0, sizeof(e));
	rc = hpshm__resize_layout(c->size, w->cfg->max_size, rq->page_size, &rq->size, &c->initial, &c->max, &e);
	if (rc < 0) {
		/* The same for every provider: the configuration's to fix. */
		hpshm__strlcpy(w->key, "max_size", sizeof(w->key));
		hpshm__strlcpy(w->hint, e.hint, sizeof(w->hint));
		w->stop = 1;
		hpshm__walk_attempt(w, c->p, rq->page_size, rc, 0, "config", e.message);
		return rc;
	}
	c->place = HPSHM__HEADER_TAIL;
	rq->flags |= HPSHM_REQ_RESERVE;
	return try_address_aligned(w, c);
}

/* The contract checks, once for every provider: sizes rounded to whole pages, the address
 * aligned to them, and where the header goes.  0, or a code (recorded). */
static int try_layout(struct hpshm__walk *w, struct segment_try *c)
{
	struct hpshm_request *rq = &c->rq;

	rq->page_size = c->pr.page_size;
	if (w->cfg->max_size)
		return try_layout_resizable(w, c);
	c->place = hpshm__header_place(w->cfg, c->size, rq->page_size);
	/* A label the kernel keeps with the object proves it as well as a header in a
	 * companion, and costs no second object to make, inherit and release. */
	if (c->place == HPSHM__HEADER_COMPANION && (c->p->ops->caps & HPSHM_CAP_TAG))
		c->place = HPSHM__HEADER_TAG;
	if (hpshm__segment_sizes_at(c->place, c->size, rq->page_size, &rq->size, NULL) < 0) {
		hpshm__walk_attempt(w, c->p, rq->page_size, HPSHM_EOVERFLOW, 0, "round",
				"size overflows when rounded to the page size");
		return HPSHM_EOVERFLOW;
	}
	return try_address_aligned(w, c);
}

/* Have the candidate create the segment (hpshm__walk_map()).  0 with c->m made, or a code
 * (recorded) with nothing left to undo. */
static int try_create(struct hpshm__walk *w, struct segment_try *c)
{
	const struct hpshm_instance *p = c->p;
	hpshm_error perr;
	char why[HPSHM_TEXT_MAX];
	int rc, placed;

	/* Nodes whose pools cannot hold the segment rule it out before anything is made. */
	memset(&perr, 0, sizeof(perr));
	rc = hpshm__placement_check(w->cfg, c->max ? c->initial + hpshm__resize_area(c->rq.page_size) : c->rq.size,
				    c->rq.page_size, &perr);
	if (rc < 0) {
		if (rc == HPSHM_EVALUE || rc == HPSHM_ENOTSUP) {
			/* The configuration's error, the same for every provider: its fix is the one
			 * hint, over any provider's setup advice seen before. */
			hpshm__strlcpy(w->key, "numa", sizeof(w->key));
			if (perr.hint[0])
				hpshm__strlcpy(w->hint, perr.hint, sizeof(w->hint));
			/* A node that is not there is refused for every provider alike: one line says it.
			 * ENOTSUP may be one provider's (Windows: large pages cannot be placed later). */
			w->stop = rc == HPSHM_EVALUE;
		}
		hpshm__walk_keep_hint(w, perr.hint);
		hpshm__walk_attempt(w, p, c->rq.page_size, rc, perr.sys_errno, perr.call[0] ? perr.call : "numa", perr.message);
		return rc;
	}
	rc = hpshm__walk_map(w, p, c->size, &c->rq, &c->place, &c->companion, &c->held, c->tag, &c->m, &perr, &placed);
	if (rc >= 0 || !placed)
		return rc;
	if (hpshm__walk_address_outside(&c->rq, perr.sys_errno, why, sizeof(why))) {
		/* Every provider will fail the same way: this hint replaces any earlier one. */
		w->bad_address = 1;
		hpshm__strlcpy(w->key, "base_address", sizeof(w->key));
		hpshm__strlcpy(w->hint, "choose a lower base_address, or auto", sizeof(w->hint));
		hpshm__walk_attempt(w, p, c->rq.page_size, HPSHM_EVALUE, perr.sys_errno, perr.call[0] ? perr.call : "create",
				why);
		return HPSHM_EVALUE;
	}
	hpshm__walk_request_hint(w, rc, perr.hint);
	/* A provider that refuses a key's value for its mechanism (mode on Windows) names it. */
	if (perr.key[0] != '\0' && w->key[0] == '\0')
		hpshm__strlcpy(w->key, perr.key, sizeof(w->key));
	hpshm__walk_attempt(w, p, c->rq.page_size, rc, perr.sys_errno, perr.call[0] ? perr.call : "create", perr.message);
	return rc;
}

/*
 * A provider may narrow its capabilities for one segment (plain on anonymous memory where it
 * has no shareable object).  A segment asked for with reattach=exec that a child could not
 * re-attach would break the caller's children later, far from the cause: it is refused here,
 * and the walk goes on to the next provider.  0, or a code (recorded).
 */
static int try_keep(struct hpshm__walk *w, const struct segment_try *c)
{
	if (w->cfg->reattach != HPSHM__REATTACH_EXEC || (hpshm__mapping_caps(&c->m, c->p->ops) & HPSHM_CAP_REATTACH))
		return 0;
	hpshm__strlcpy(w->key, "reattach", sizeof(w->key));
	hpshm__walk_keep_hint(w, "use a provider whose segments a child started by exec can map, or reattach=off "
			     "if the children are started by fork() alone");
	hpshm__walk_attempt(w, c->p, c->rq.page_size, HPSHM_EUNAVAILABLE, 0, "create",
			"the segment it made here cannot be re-attached after exec (no descriptor or name "
			"for a child to map), but reattach=exec");
	return HPSHM_EUNAVAILABLE;
}

/*
 * A resizable segment's first pages, before anything touches them: the NUMA policy first
 * (the pages are taken where it says), then [0, initial) allocated and the rest of the
 * reservation closed (core/resize.c).  A provider whose segment here has no file to allocate
 * in (plain on anonymous memory) is refused.  0, or a code (recorded).
 */
static int try_reserve(struct hpshm__walk *w, struct segment_try *c)
{
	const struct hpshm_mapping *m = &c->m;
	hpshm_error perr;
	int rc = 0;

	memset(&perr, 0, sizeof(perr));
	if (!(hpshm__mapping_caps(m, c->p->ops) & HPSHM_CAP_RESIZE)) {
		rc = HPSHM_EUNAVAILABLE;
		hpshm_error_set(&perr, rc, 0, NULL, NULL, "the segment it made here has no file to grow in (max_size)");
	}
	if (rc == 0 && w->cfg->numa.mode != HPSHM__NUMA_DEFAULT)
		rc = hpshm__port_numa_apply(m->addr, c->initial, &w->cfg->numa, &perr);
	if (rc == 0)
		rc = hpshm__resize_prepare(m, c->initial, c->max, c->rq.page_size, &perr);
	if (rc < 0) {
		hpshm__walk_request_hint(w, rc, perr.hint);
		hpshm__walk_attempt(w, c->p, c->rq.page_size, rc, perr.sys_errno, perr.call[0] ? perr.call : "create",
				perr.message);
	}
	return rc;
}

/* The header goes in first of all: a named object that a crash leaves behind must already
 * say whose it is, or `hpshm gc` could never tell it from a foreign one. */
static void try_write_header(const struct hpshm__walk *w, struct segment_try *c)
{
	const struct hpshm_mapping *m = &c->m;

	c->header = NULL;
	if (c->max)
		c->header = hpshm__header_write_resizable((char *)m->addr + m->size - HPSHM_HEADER_REGION,
							  m->size - HPSHM_HEADER_REGION, m->addr, c->p->name,
							  w->cfg->name, c->rq.page_size, m->object, c->max, c->initial,
							  (unsigned)HPSHM__RESIZE_SLOTS);
	else if (c->place == HPSHM__HEADER_TAIL)
		c->header = hpshm__header_write((char *)m->addr + m->size - HPSHM_HEADER_REGION,
						m->size - HPSHM_HEADER_REGION, m->addr, c->p->name, w->cfg->name,
						c->rq.page_size, m->object);
	else if (c->place == HPSHM__HEADER_COMPANION)
		c->header = hpshm__header_write(c->companion.map.addr, m->size, m->addr, c->p->name, w->cfg->name,
						c->rq.page_size, m->object);
}

/* Place the pages and fault them in when the configuration or the provider's advice asks
 * (core/populate.c).  0, or a code (recorded). */
static int try_populate(struct hpshm__walk *w, struct segment_try *c)
{
	const struct hpshm_mapping *m = &c->m;
	hpshm_error perr;
	int rc;

	memset(&perr, 0, sizeof(perr));
	/* A resizable segment's pages are those of its first size (and its tail, the provider's). */
	rc = hpshm__populate(w->cfg, m->addr, c->max ? c->initial : m->size, c->rq.page_size,
			     hpshm__port_handle_of(m->handle, m->flags & HPSHM_MAP_DESCRIPTOR),
			     segment_want_populate(w->cfg, c->p, &c->pr), w->r, &perr);
	if (rc < 0) {
		hpshm__walk_keep_hint(w, perr.hint);
		hpshm__walk_attempt(w, c->p, c->rq.page_size, rc, perr.sys_errno,
				perr.call[0] ? perr.call : "populate", perr.message);
		return rc;
	}
	return 0;
}

/* The handle of the candidate's segment, and its lines of the report.  0, or HPSHM_ENOMEM (recorded). */
static int try_handle(struct hpshm__walk *w, struct segment_try *c, struct hpshm_segment **out)
{
	struct hpshm_segment *seg = calloc(1, sizeof(*seg));

	if (!seg) {
		hpshm__walk_attempt(w, c->p, c->rq.page_size, HPSHM_ENOMEM, 0, "malloc", "out of memory for the segment handle");
		return HPSHM_ENOMEM;
	}
	seg->inst = *c->p;
	seg->map = c->m;
	/* The owner is this process, by pid and start time: not a flag that fork() would copy. */
	seg->creator_pid = hpshm__port_self(&seg->creator_start);
	seg->header = c->header;
	if (c->place == HPSHM__HEADER_TAG) {
		seg->held = c->held;
		seg->header = &seg->held;
	}
	seg->companion = c->companion;
	seg->usable = c->max ? c->initial : c->place == HPSHM__HEADER_TAIL ? c->m.size - HPSHM_HEADER_REGION : c->m.size;
	hpshm__strlcpy(w->r->provider, c->p->name, sizeof(w->r->provider));
	w->r->mapped_size = c->m.size;
	w->r->usable_size = seg->usable;
	w->r->requested_page_size = c->rq.page_size;
	seg->rs.slot = -1;
	if (c->max) {
		hpshm_error e;
		int rc;

		seg->report.requested_page_size = c->rq.page_size;
		memset(&e, 0, sizeof(e));
		rc = hpshm__resize_adopt(seg, 1, &e);
		if (rc < 0) {
			free(seg);
			hpshm__walk_attempt(w, c->p, c->rq.page_size, rc, e.sys_errno, "create", e.message);
			return rc;
		}
	}
	hpshm__walk_attempt(w, c->p, c->rq.page_size, 0, 0, "", "");
	*out = seg;
	return 0;
}

/* Try one candidate.  0 with *seg made, or a negative code (recorded) to move on. */
static int segment_try(struct hpshm__walk *w, const struct hpshm_instance *p, size_t size,
		       struct hpshm_segment **seg)
{
	struct segment_try c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.size = size;
	rc = try_probe(w, &c);
	if (rc == 0)
		rc = try_layout(w, &c);
	if (rc == 0)
		rc = try_create(w, &c);
	if (rc < 0)
		return rc;
	/* From here the segment exists: every failure destroys it, and its companion, below. */
	rc = try_keep(w, &c);
	if (rc == 0 && c.max)
		rc = try_reserve(w, &c);
	if (rc < 0)
		goto fail;
	try_write_header(w, &c);
	rc = segment_verify(w, p, &c.rq, &c.m);
	if (rc < 0)
		goto fail;
	rc = try_populate(w, &c);
	if (rc < 0)
		goto fail;
	rc = try_handle(w, &c, seg);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	(void)p->ops->destroy(p, &c.m);
	hpshm__companion_release(&c.companion, 1);
	return rc;
}

/* The whole failure, for the caller: every reason, one hint. */
static int segment_fail(struct hpshm__walk *w, size_t size, hpshm_error *err)
{
	const hpshm_report *r = w->r;
	const hpshm_attempt *cause = NULL;
	int code = w->cfg->huge_pages == HPSHM_HUGE_ON ? HPSHM_ENOHUGE : w->last_code;
	char msg[HPSHM_MESSAGE_MAX], s[32];
	size_t used;

	/* A name in use is the caller's conflict, not a shortage of huge pages: say so.  So is
	 * an address no process can map at. */
	for (unsigned i = 0; i < r->nattempts; i++)
		if (r->attempts[i].result == HPSHM_EEXIST)
			code = HPSHM_EEXIST;
	if (w->bad_address)
		code = HPSHM_EVALUE;
	if (code == 0)
		code = HPSHM_EUNAVAILABLE;
	used = (size_t)snprintf(msg, sizeof(msg), "no provider could create a %s segment%s",
				hpshm_size_format(size, s, sizeof(s)),
				w->cfg->huge_pages == HPSHM_HUGE_ON ? " with huge pages (huge_pages=on)" : "");
	for (unsigned i = 0; i < r->nattempts && used < sizeof(msg); i++)
		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s %s: %s", i ? ";" : ":",
					 r->attempts[i].provider, r->attempts[i].reason);
	/* The errno and call worth showing: the first real system failure, not a config exclusion. */
	for (unsigned i = 0; i < r->nattempts; i++) {
		if (strcmp(r->attempts[i].call, "config") == 0)
			continue;
		if (!cause || (!cause->sys_errno && r->attempts[i].sys_errno))
			cause = &r->attempts[i];
	}
	hpshm_error_set(err, code, cause ? cause->sys_errno : 0, cause ? cause->call : NULL,
			w->hint[0] ? w->hint : "run `hpshm probe` to see what this machine offers", "%s", msg);
	if (err) {
		err->provider[0] = '\0';
		hpshm__strlcpy(err->key, w->key, sizeof(err->key));
	}
	hpshm__log(w->cfg, HPSHM_LOG_ERROR, "%s (hint: %s)", msg, w->hint[0] ? w->hint : "run `hpshm probe`");
	return code;
}

/* A caller error in the configuration itself (not a machine limitation). */
static int segment_config_error(hpshm_error *err, const char *key, const char *name, const char *conflict)
{
	hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, "change provider= or the other key so they agree",
			"provider %s %s", name, conflict);
	if (err)
		hpshm__strlcpy(err->key, key, sizeof(err->key));
	return HPSHM_EVALUE;
}

/*
 * The providers provider= names, found in the registry and checked against the other keys: a
 * provider the policy, reattach or max_size rules out is a contradiction in the configuration,
 * told before anything is tried.  0 with chosen[] filled, or the error.
 */
static int segment_named(const struct hpshm_config *cfg, struct hpshm_instance *chosen, hpshm_error *err)
{
	char names[128], why[HPSHM_TEXT_MAX];

	for (unsigned i = 0; i < cfg->nproviders; i++) {
		const struct hpshm_instance *p = &chosen[i];

		if (hpshm__provider_find(cfg->providers[i], &chosen[i]) < 0) {
			hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "run `hpshm providers` for the list",
					"provider \"%s\" is not registered", cfg->providers[i]);
			if (err)
				hpshm__strlcpy(err->key, "provider", sizeof(err->key));
			return HPSHM_ENOPROVIDER;
		}
		if (cfg->huge_pages == HPSHM_HUGE_OFF && (p->ops->caps & HPSHM_CAP_HUGE))
			return segment_config_error(err, "huge_pages", p->name, "uses huge pages but huge_pages=off");
		if (cfg->huge_pages == HPSHM_HUGE_ON && !(p->ops->caps & HPSHM_CAP_HUGE))
			return segment_config_error(err, "huge_pages", p->name, "cannot give huge pages but huge_pages=on");
		if (cfg->reattach == HPSHM__REATTACH_EXEC && !(p->ops->caps & HPSHM_CAP_REATTACH))
			return segment_config_error(err, "reattach", p->name,
						    "cannot be re-attached after exec but reattach=exec");
		if (cfg->max_size && !(p->ops->caps & HPSHM_CAP_RESIZE)) {
			snprintf(why, sizeof(why), "cannot grow or shrink a segment in place but max_size is set (the "
				 "providers that can: %s)", hpshm__resize_providers(names, sizeof(names)));
			return segment_config_error(err, "max_size", p->name, why);
		}
	}
	return 0;
}

int hpshm__segment_create_ex(hpshm_segment **out, size_t size, const hpshm_config *cfg_in, hpshm_report *report,
			     hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm_instance chosen[HPSHM__MAX_PROVIDERS];
	struct hpshm__walk w;
	struct hpshm_segment *seg = NULL;
	hpshm_report r;
	size_t rounded;
	uint64_t t0 = hpshm__port_now_ns();
	int rc = HPSHM_EUNAVAILABLE;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	memset(&r, 0, sizeof(r));
	r.requested_size = size;
	r.policy = cfg->huge_pages;
	if (report)
		*report = r;
	if (!out)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_segment_create: out is NULL");
	*out = NULL;
	if (size == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "ask for at least one byte",
				       "segment size must be greater than 0");
	if (hpshm__round_up(size, hpshm__port_base_page_size(), &rounded) < 0)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, "ask for a size the address space can hold",
				       "segment size %zu overflows when rounded to the page size", size);

	memset(&w, 0, sizeof(w));
	w.cfg = cfg;
	w.r = &r;

	if (cfg->nproviders == 0) {
		struct hpshm__provider_list all;

		/* Providers the policy excludes are recorded too: the report lists every one. */
		hpshm__providers(&all);
		for (unsigned i = 0; i < all.n; i++) {
			rc = segment_try(&w, &all.p[i], size, &seg);
			if (rc == 0 || w.stop)
				break;
		}
	} else {
		rc = segment_named(cfg, chosen, err);
		if (rc < 0)
			return rc;
		for (unsigned i = 0; i < cfg->nproviders; i++) {
			rc = segment_try(&w, &chosen[i], size, &seg);
			if (rc == 0 || w.stop)
				break;
		}
	}
	r.create_ns = hpshm__port_now_ns() - t0;

	if (!seg) {
		if (report)
			*report = r;
		return segment_fail(&w, size, err);
	}

	seg->report = r;
	seg->cfg = *cfg;
	if (report)
		*report = r;
	if (r.nattempts > 1 && !r.huge && cfg->huge_pages == HPSHM_HUGE_TRY)
		hpshm__log(cfg, HPSHM_LOG_WARNING, "huge pages not used, fell back to %s: %s: %s", r.provider,
			   r.attempts[0].provider, r.attempts[0].reason);
	{
		char line[HPSHM_MESSAGE_MAX];

		hpshm_report_format(&seg->report, line, sizeof(line));
		hpshm__log(cfg, HPSHM_LOG_INFO, "created %s", line);
	}
	*out = seg;
	return 0;
}
