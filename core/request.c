/* SPDX-License-Identifier: MIT */
/*
 * core/request.c -- what the core asks a provider before anything is made: the request for a
 * size under a configuration, which providers the configuration admits, the sizes a segment
 * maps, and the answers of probe() and requirements() for `hpshm probe` and `hpshm plan`.
 * Layers: doc/architecture.md.  Creating a segment (core/segment.c) asks the same way, so
 * the plan, the probe and the create cannot disagree.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

int hpshm_huge_page_sizes(size_t *sizes, int max)
{
	size_t offered[HPSHM__MAX_PAGE_SIZES];
	int n = hpshm__port_huge_page_sizes(offered, HPSHM__MAX_PAGE_SIZES);

	for (int i = 0; i < n && i < max; i++)
		sizes[i] = offered[i];
	return n;
}

size_t hpshm_base_page_size(void)
{
	return hpshm__port_base_page_size();
}

int hpshm__segment_sizes_at(enum hpshm__header_place place, size_t size, size_t page_size, size_t *mapped,
			    size_t *usable)
{
	size_t header = place == HPSHM__HEADER_TAIL ? HPSHM_HEADER_REGION : 0;
	int rc;

	/* A header at the tail is one more region there, so the caller's pointer is the
	 * mapping's first byte and the header never sits in front of it.  The place was chosen
	 * so that this costs a page only on base pages or for a named segment. */
	if (size > SIZE_MAX - header)
		return HPSHM_EOVERFLOW;
	rc = hpshm__round_up(size + header, page_size, mapped);
	if (rc < 0)
		return rc;
	if (usable)
		*usable = *mapped - header;
	return 0;
}

int hpshm__segment_sizes(const struct hpshm_config *cfg, size_t size, size_t page_size, size_t *mapped,
			 size_t *usable)
{
	return hpshm__segment_sizes_at(hpshm__header_place(cfg, size, page_size), size, page_size, mapped, usable);
}

int hpshm_segment_footprint(size_t size, size_t page_size, const hpshm_config *cfg_in, size_t *mapped,
			    size_t *usable)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;

	if (size == 0 || page_size == 0 || (page_size & (page_size - 1)) || !mapped)
		return HPSHM_EINVAL;
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	return hpshm__segment_sizes(cfg, size, page_size, mapped, usable);
}

/*
 * The request as probe() sees it: the size asked for (with the header region a named
 * segment keeps at its tail; an unnamed one keeps its header where it costs no huge page)
 * and, for a huge page provider, the page size the configuration wishes for; a provider
 * without huge pages picks its own.
 */
void hpshm__segment_request(struct hpshm_request *rq, const struct hpshm_config *cfg, const struct hpshm_instance *p,
			    size_t size)
{
	memset(rq, 0, sizeof(*rq));
	rq->size = size;
	if (cfg->name[0])
		rq->size = size > SIZE_MAX - HPSHM_HEADER_REGION ? SIZE_MAX : size + HPSHM_HEADER_REGION;
	rq->page_size = HPSHM_PAGE_SIZE_DEFAULT;
	if (p->ops->caps & HPSHM_CAP_HUGE)
		rq->page_size = cfg->huge_page_size == HPSHM__LARGEST ? HPSHM_PAGE_SIZE_LARGEST : cfg->huge_page_size;
	rq->name = cfg->name[0] ? cfg->name : NULL;
	rq->mode = cfg->mode;
	rq->address = (void *)cfg->base_address;
	rq->flags = cfg->reattach == HPSHM__REATTACH_EXEC ? HPSHM_REQ_REATTACH : 0;
	rq->config = cfg;
	rq->option = hpshm__request_option;
}

/* Does probe's answer keep the contract (a page size that is a power of two)?  NULL, or why not. */
const char *hpshm__probe_broken(const struct hpshm_probe *pr)
{
	if (pr->page_size == 0 || (pr->page_size & (pr->page_size - 1)))
		return "probe() chose no page size, or one that is not a power of two (a provider bug)";
	return NULL;
}

/* Is provider p a candidate under this configuration?  NULL if yes, else why not. */
const char *hpshm__segment_excluded(const struct hpshm_config *cfg, const struct hpshm_instance *p)
{
	for (unsigned i = 0; i < cfg->nexcluded; i++)
		if (strcmp(cfg->excluded[i], p->name) == 0)
			return "left out by provider=auto,-name";
	if (cfg->huge_pages == HPSHM_HUGE_ON && !(p->ops->caps & HPSHM_CAP_HUGE))
		return "huge_pages=on admits only huge page providers";
	if (cfg->huge_pages == HPSHM_HUGE_OFF && (p->ops->caps & HPSHM_CAP_HUGE))
		return "huge_pages=off admits only plain pages";
	if (cfg->reattach == HPSHM__REATTACH_EXEC && !(p->ops->caps & HPSHM_CAP_REATTACH))
		return "reattach=exec: a child started by exec cannot re-attach this provider's segments";
	return NULL;
}

int hpshm_provider_probe(const char *name, size_t size, const hpshm_config *cfg_in, size_t *page_size, char *reason,
			 size_t len)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm_instance p;
	struct hpshm_request rq;
	struct hpshm_probe pr;
	int rc;

	if (reason && len)
		reason[0] = '\0';
	if (page_size)
		*page_size = 0;
	if (!name)
		return HPSHM_EINVAL;
	if (hpshm__provider_find(name, &p) < 0)
		return HPSHM_ENOPROVIDER;
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	hpshm__segment_request(&rq, cfg, &p, size ? size : 1);
	memset(&pr, 0, sizeof(pr));
	rc = p.ops->probe(&p, &rq, &pr);
	if (page_size)
		*page_size = pr.page_size;
	if (rc < 0 && reason)
		hpshm__strlcpy(reason, pr.reason[0] ? pr.reason : "unavailable", len);
	if (rc == 0 && hpshm__probe_broken(&pr)) {
		if (reason)
			hpshm__strlcpy(reason, hpshm__probe_broken(&pr), len);
		return HPSHM_EINVAL;
	}
	return rc;
}

/*
 * Ask one provider what a segment needs: the page size it would use for the plan's size
 * (probe's answer, whether or not it could work now), the mapped length create would ask
 * for, then its requirements().  1 if asked, 0 if it does not offer that page size or
 * needs nothing, or a negative code.
 */
static int requirements_of(const struct hpshm_instance *p, size_t size, size_t page_size,
			   const struct hpshm_config *cfg, hpshm_requirement_fn fn, void *user)
{
	struct hpshm_request rq;
	struct hpshm_probe pr;
	int rc;

	if (!p->ops->requirements)
		return 0;
	hpshm__segment_request(&rq, cfg, p, size);
	if (page_size)
		rq.page_size = page_size;
	memset(&pr, 0, sizeof(pr));
	(void)p->ops->probe(p, &rq, &pr);
	if (pr.page_size == 0 || (page_size && pr.page_size != page_size) || hpshm__probe_broken(&pr))
		return 0;
	rq.page_size = pr.page_size;
	if (hpshm__segment_sizes(cfg, size, rq.page_size, &rq.size, NULL) < 0)
		return HPSHM_EOVERFLOW;
	rc = p->ops->requirements(p, &rq, hpshm__requirement_relay,
				  &(struct hpshm__requirement_relay){fn, user, p->name});
	return rc < 0 ? rc : 1;
}

int hpshm__requirement_relay(void *user, const struct hpshm_requirement *r)
{
	const struct hpshm__requirement_relay *relay = user;

	return relay->fn(relay->user, relay->provider, r);
}

int hpshm__requirements(size_t size, size_t page_size, const hpshm_config *cfg_in, hpshm_requirement_fn fn,
			void *user, hpshm_error *err)
{
	struct hpshm_config defaults;
	const struct hpshm_config *cfg = cfg_in;
	struct hpshm__provider_list all;
	struct hpshm_instance p;
	int asked = 0, rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (size == 0 || !fn || (page_size & (page_size - 1)))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "hpshm_requirements: size 0, no callback, or a page size that is not a power of two");
	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	if (cfg->huge_pages == HPSHM_HUGE_OFF)
		return 0;
	if (cfg->nproviders == 0) {
		hpshm__providers(&all);
	} else {
		all.n = 0;
		for (unsigned i = 0; i < cfg->nproviders; i++) {
			if (hpshm__provider_find(cfg->providers[i], &p) < 0)
				return hpshm_error_set(err, HPSHM_ENOPROVIDER, 0, NULL, "run `hpshm providers` for the list",
						       "provider \"%s\" is not registered", cfg->providers[i]);
			all.p[all.n++] = p;
		}
	}
	for (unsigned i = 0; i < all.n; i++) {
		if (!(all.p[i].ops->caps & HPSHM_CAP_HUGE) || hpshm__segment_excluded(cfg, &all.p[i]))
			continue;
		rc = requirements_of(&all.p[i], size, page_size, cfg, fn, user);
		if (rc < 0)
			return hpshm_error_set(err, rc, 0, NULL, NULL, "provider %s could not say what it needs: %s",
					       all.p[i].name, hpshm_strerror(rc));
		asked += rc;
	}
	return asked;
}
