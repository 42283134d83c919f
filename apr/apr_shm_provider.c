/* SPDX-License-Identifier: MIT */
/*
 * apr/apr_shm_provider.c -- the `apr` provider: plain shared memory through apr_shm_create().
 *
 * For a system hpshm has no port for but APR runs on, this gives hpshm's API (and a program
 * written on it) working shared memory, from APR's anonymous apr_shm: what it makes is shared
 * with children made by fork(), as APR's is.  Capabilities: none, honestly.
 *   - No HUGE: apr_shm maps base pages and has no way to ask for more.
 *   - No REATTACH: apr_shm_attach() maps where the system chooses, and re-attach needs the
 *     creator's exact address; anonymous apr_shm has nothing another program can attach.
 *   - No NAMED: APR's named shm is a filename whose object (a POSIX shm name hashed from it,
 *     or a SysV key from ftok(), per build) hpshm cannot list (scan), cannot tell alive from
 *     dead nor remove safely (remove), and whose key may collide (ftok), so lookup, scan and
 *     remove could not keep their contract.
 *   - No FD: apr_shm gives no descriptor.
 * apr_shm's base address sits after APR's own header (an apr_size_t, not page aligned): each
 * segment asks APR for one page more and hands the core the first page boundary inside.
 * Each segment has its own pool, made from APR's global pool (thread-safe), so destroy() can
 * release everything APR holds for it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <apr_general.h>
#include <apr_shm.h>
#include <apr_strings.h>

#include "hpshm/apr.h"
#include "hpshm/provider.h"

/* What one segment holds (m->priv), allocated from its own pool. */
struct apr_seg {
	apr_pool_t *pool;
	apr_shm_t  *shm;
};

static int aprp_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	/* Base pages, whatever the wish: apr_shm has no other size. */
	out->nsizes = 1;
	out->sizes[0] = hpshm_base_page_size();
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	/* No names (the head of this file says why): another provider takes a named segment. */
	if (rq->name) {
		snprintf(out->reason, sizeof(out->reason), "the apr provider makes unnamed segments only");
		snprintf(out->fix, sizeof(out->fix), "leave name unset, or use a provider that names segments (plain)");
		return HPSHM_EUNAVAILABLE;
	}
	if (rq->address) {
		snprintf(out->reason, sizeof(out->reason), "apr_shm maps where the system chooses, not at base_address");
		snprintf(out->fix, sizeof(out->fix), "leave base_address at auto for the apr provider");
		return HPSHM_EUNAVAILABLE;
	}
	return 0;
}

/* An APR status as an hpshm code with err filled. */
static int aprp_fail(hpshm_error *err, apr_status_t st, const char *call, size_t size)
{
	char text[128];
	int code = st == APR_ENOMEM ? HPSHM_ENOMEM : HPSHM_ESYS;

	apr_strerror(st, text, sizeof(text));
	return hpshm_error_set(err, code, st < APR_OS_START_ERROR ? (int)st : 0, call,
			       code == HPSHM_ENOMEM ? "ask for less, or raise the memory limits" : NULL,
			       "cannot make %zu bytes of APR shared memory: %s", size, text);
}

static int aprp_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		       hpshm_error *err)
{
	size_t ps = rq->page_size;
	struct apr_seg *s;
	apr_pool_t *pool;
	apr_status_t st;
	uintptr_t base;

	(void)self;
	if (rq->name || rq->address)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, 0, NULL, "leave name unset and base_address at auto",
				       "the apr provider makes unnamed segments where the system chooses");
	if (rq->size > SIZE_MAX - ps)
		return hpshm_error_set(err, HPSHM_EOVERFLOW, 0, NULL, NULL, "%zu bytes and a page overflow", rq->size);
	st = apr_pool_create(&pool, NULL);
	if (st != APR_SUCCESS)
		return aprp_fail(err, st, "apr_pool_create", rq->size);
	s = apr_pcalloc(pool, sizeof(*s));
	s->pool = pool;
	/* One page more: the base address is past APR's header, the segment starts at the next page. */
	st = apr_shm_create(&s->shm, rq->size + ps, NULL, pool);
	if (st != APR_SUCCESS) {
		apr_pool_destroy(pool);
		return aprp_fail(err, st, "apr_shm_create", rq->size);
	}
	base = (uintptr_t)apr_shm_baseaddr_get(s->shm);
	m->addr = (void *)((base + ps - 1) & ~(uintptr_t)(ps - 1));
	m->size = rq->size;
	m->handle = HPSHM_NO_HANDLE;
	m->priv = s;
	return 0;
}

/* The shm goes with its pool's cleanup (apr_shm_create registered it); destroy it first for its status. */
static int aprp_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	struct apr_seg *s = m->priv;
	apr_status_t st;

	(void)self;
	if (!s)
		return 0;
	st = apr_shm_destroy(s->shm);
	apr_pool_destroy(s->pool);
	m->priv = NULL;
	return st == APR_SUCCESS ? 0 : HPSHM_ESYS;
}

static const struct hpshm_provider apr_provider = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name = "apr",
	.summary = "APR's anonymous apr_shm: base pages, shared with fork() children (libhpshm_apr)",
	.caps = 0,
	.probe = aprp_probe,
	.create = aprp_create,
	.destroy = aprp_destroy,
};

/* APR must be initialized before a pool is made; apr_initialize() counts its callers. */
static int aprp_register(hpshm_error *err)
{
	apr_status_t st = apr_initialize();
	char text[128];

	if (st != APR_SUCCESS)
		return hpshm_error_set(err, HPSHM_EUNAVAILABLE, 0, "apr_initialize", NULL, "APR does not start: %s",
				       apr_strerror(st, text, sizeof(text)));
	return hpshm_provider_register(&apr_provider, NULL, NULL, err);
}

apr_status_t hpshm_apr_provider_register(hpshm_error *err)
{
	return hpshm_apr_status(aprp_register(err));
}

/* The entry point hpshm_provider_load() calls (HPSHM_PROVIDER_MODULES). */
HPSHM_APR_API int hpshm_provider_module(hpshm_error *err);

HPSHM_APR_API int hpshm_provider_module(hpshm_error *err)
{
	return aprp_register(err);
}
