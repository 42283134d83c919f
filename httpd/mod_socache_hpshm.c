/* SPDX-License-Identifier: MIT */
/*
 * httpd/mod_socache_hpshm.c -- the "hpshm" small-object cache provider for Apache httpd 2.4:
 * mod_socache_shmcb's job (TLS sessions, mod_cache_socache's objects, OCSP stapling) on a
 * segment of huge pages, with the decision hpshm made shown on the status page.
 *
 *   LoadModule socache_hpshm_module modules/mod_socache_hpshm.so
 *   CacheSocache hpshm:size=512MiB,huge_pages=try
 *   SSLSessionCache hpshm:size=64MiB
 *
 * The argument is size=<bytes> (default 16MiB), optionally subcaches=<power of two> (default:
 * chosen from the size), and any hpshm configuration keys (doc/configuration.md), in one
 * comma list.  create() checks it; init() (post_config, in the parent) creates the segment,
 * which the workers inherit by fork.
 *
 * Restarts: httpd clears its configuration pool at every restart and runs create() and init()
 * again.  The segment is kept in httpd's retained data, by the consumer's name and the place of
 * its server's definition, and re-created only if its size or keys changed, so a graceful
 * restart keeps the cache's objects.  Segments no instance asked for in a generation are
 * destroyed after post_config, and all of them when the process pool goes at a real stop: every
 * huge page returns to the pool.  httpd's first pass over the configuration (before it
 * detaches) creates the segment once and destroys it at once, so a segment that cannot be had
 * (huge_pages=on, empty pool) stops `apachectl start` on the terminal rather than in the log.
 *
 * The cache is safe for processes and threads (httpd/store.h): the provider does not set
 * AP_SOCACHE_FLAG_NOTMPSAFE, so its callers take no global mutex around it.
 */
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_mpm.h>
#include <ap_provider.h>
#include <ap_socache.h>
#include <apr_strings.h>
#include <mod_status.h>

#include <stdlib.h>
#include <string.h>

#include "hpshm.h"
#include "hpshm/apr.h"
#include "store.h"

#define HP_PREFIX "mod_socache_hpshm: "
#define HP_DEFAULT_SIZE ((apr_size_t)16 * 1024 * 1024)
#define HP_SLOTS 64 /* caches one server may hold: every vhost's and every consumer's */
#define HP_RETAINED "mod_socache_hpshm-registry"

module AP_MODULE_DECLARE_DATA socache_hpshm_module;

/* A segment kept across restarts, in retained data (malloc'd strings: the pools go). */
struct hp_slot {
	char *key;             /* the consumer's name and its server's definition */
	char *sig;             /* what made the segment: a change re-creates it */
	hpshm_segment *seg;    /* NULL when the slot is free */
	hpshm_report *report;  /* the create's report, for the status page */
	unsigned gen;          /* the generation that last asked for it */
};

struct hp_registry {
	unsigned gen;                   /* one more at every pass over the configuration */
	int stop_cleanup;               /* the process pool's clean-up is registered */
	struct hp_slot slot[HP_SLOTS];  /* the kept segments */
};

struct ap_socache_instance_t {
	apr_size_t size;      /* size= */
	unsigned subcaches;   /* subcaches=, 0 to choose */
	const char *keys;     /* the rest: hpshm keys */
	hpshm_config *cfg;    /* parsed from keys, freed with the configuration pool */
	struct hp_slot *slot; /* the kept segment, after init() */
	hstore *store;        /* the store in it, after init() */
};

static struct hp_registry *registry(void)
{
	struct hp_registry *reg = ap_retained_data_get(HP_RETAINED);

	return reg ? reg : ap_retained_data_create(HP_RETAINED, sizeof(*reg));
}

/* Take size= and subcaches= out of the argument; the rest goes to hpshm. */
static const char *split_arg(ap_socache_instance_t *ctx, const char *arg, apr_pool_t *p)
{
	char *copy = apr_pstrdup(p, arg ? arg : ""), *last = NULL, *item;
	const char *rest = "";

	for (item = apr_strtok(copy, ",", &last); item; item = apr_strtok(NULL, ",", &last)) {
		if (strncmp(item, "size=", 5) == 0) {
			size_t n;

			if (hpshm_size_parse(item + 5, &n) != 0 || n == 0)
				return apr_psprintf(p, HP_PREFIX "bad size \"%s\" in \"%s\": give bytes with an "
						    "optional unit, e.g. hpshm:size=512MiB", item + 5, arg);
			ctx->size = n;
		} else if (strncmp(item, "subcaches=", 10) == 0) {
			char *end;
			unsigned long n = strtoul(item + 10, &end, 10);

			if (*end || n == 0 || n > 65536 || (n & (n - 1)))
				return apr_psprintf(p, HP_PREFIX "bad subcaches \"%s\" in \"%s\": give a power of "
						    "two from 1 to 65536, e.g. subcaches=64", item + 10, arg);
			ctx->subcaches = (unsigned)n;
		} else {
			rest = *rest ? apr_pstrcat(p, rest, ",", item, NULL) : item;
		}
	}
	ctx->keys = rest;
	return NULL;
}

static const char *hp_create(ap_socache_instance_t **instance, const char *arg, apr_pool_t *tmp, apr_pool_t *p)
{
	ap_socache_instance_t *ctx = apr_pcalloc(p, sizeof(*ctx));
	const char *bad;
	hpshm_error err;

	(void)tmp;
	ctx->size = HP_DEFAULT_SIZE;
	bad = split_arg(ctx, arg, p);
	if (bad)
		return bad;
	/* The configuration lives as long as httpd's configuration pool (libhpshm_apr). */
	if (hpshm_apr_config_parse(&ctx->cfg, ctx->keys, p, &err) != APR_SUCCESS)
		return apr_psprintf(p, HP_PREFIX "bad argument \"%s\": %s%s%s; the argument is size=<bytes> "
				    "and hpshm configuration keys, e.g. hpshm:size=512MiB,huge_pages=try",
				    arg, err.message, err.hint[0] ? "; " : "", err.hint);
	*instance = ctx;
	return NULL;
}

static void log_failure(server_rec *s, const char *cname, apr_size_t size, const hpshm_error *err)
{
	char sz[32];

	ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, HP_PREFIX "cannot create the %s cache's segment of %s: %s",
		     cname, hpshm_size_format(size, sz, sizeof(sz)), err->message);
	if (err->hint[0])
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, HP_PREFIX "hint: %s", err->hint);
}

/* The providers tried before the one used, and why each failed: "a: why; b: why". */
static const char *fallbacks(const hpshm_report *r, apr_pool_t *p)
{
	const char *out = "";

	for (unsigned i = 0; i < r->nattempts && i < HPSHM_MAX_ATTEMPTS; i++) {
		const hpshm_attempt *a = &r->attempts[i];

		if (a->result == 0)
			continue;
		out = apr_psprintf(p, "%s%s%s: %s", out, *out ? "; " : "", a->provider,
				   a->reason[0] ? a->reason : hpshm_strerror(a->result));
	}
	return out;
}

static void log_created(server_rec *s, const char *cname, const hpshm_report *r, apr_pool_t *p)
{
	char line[1024];

	hpshm_report_format(r, line, sizeof(line));
	if (!r->huge && r->policy != HPSHM_HUGE_OFF)
		ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, HP_PREFIX "the %s cache is on base pages: huge_pages=try "
			     "fell back (%s); %s", cname, fallbacks(r, p), line);
	else
		ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, HP_PREFIX "the %s cache: %s", cname, line);
}

static void slot_release(struct hp_slot *slot)
{
	hpshm_segment_destroy(slot->seg); /* in a forked child it only detaches (doc/lifecycle.md) */
	free(slot->key);
	free(slot->sig);
	free(slot->report);
	memset(slot, 0, sizeof(*slot));
}

/* At a real stop the process pool goes: every kept segment goes with it. */
static apr_status_t release_all(void *data)
{
	struct hp_registry *reg = data;

	for (unsigned i = 0; i < HP_SLOTS; i++)
		if (reg->slot[i].seg)
			slot_release(&reg->slot[i]);
	reg->stop_cleanup = 0;
	return APR_SUCCESS;
}

static struct hp_slot *slot_find(struct hp_registry *reg, const char *key)
{
	struct hp_slot *free_slot = NULL;

	for (unsigned i = 0; i < HP_SLOTS; i++) {
		if (reg->slot[i].seg && strcmp(reg->slot[i].key, key) == 0)
			return &reg->slot[i];
		if (!reg->slot[i].seg && !free_slot)
			free_slot = &reg->slot[i];
	}
	return free_slot;
}

/* Make the segment and the empty store in it. */
static apr_status_t slot_fill(ap_socache_instance_t *ctx, struct hp_slot *slot, const char *cname, size_t avg,
			      server_rec *s, apr_pool_t *p)
{
	hpshm_error err;
	hpshm_report *report = calloc(1, sizeof(*report));
	int rc;

	if (!report)
		return APR_ENOMEM;
	if ((rc = hpshm_segment_create_ex(&slot->seg, ctx->size, ctx->cfg, report, &err)) != 0) {
		log_failure(s, cname, ctx->size, &err);
		free(report);
		slot->seg = NULL;
		return hpshm_apr_status(rc); /* httpd logs it as APR status text (doc/apr.md) */
	}
	slot->report = report;
	if (hstore_format(hpshm_segment_address(slot->seg), hpshm_segment_size(slot->seg), ctx->subcaches, avg) !=
	    HSTORE_OK) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, HP_PREFIX "size=%" APR_SIZE_T_FMT " is too small for "
			     "the %s cache's subcaches: give at least size=1MiB", ctx->size, cname);
		slot_release(slot);
		return APR_ENOSPC;
	}
	log_created(s, cname, report, p);
	return APR_SUCCESS;
}

/* httpd's first pass: create once, to fail where the operator sees it, and let go. */
static apr_status_t trial_create(ap_socache_instance_t *ctx, const char *cname, server_rec *s)
{
	hpshm_segment *seg;
	hpshm_error err;
	int rc;

	if ((rc = hpshm_segment_create(&seg, ctx->size, ctx->cfg, &err)) != 0) {
		log_failure(s, cname, ctx->size, &err);
		return hpshm_apr_status(rc);
	}
	hpshm_segment_destroy(seg);
	return APR_SUCCESS;
}

static apr_status_t hp_init(ap_socache_instance_t *ctx, const char *cname, const struct ap_socache_hints *hints,
			    server_rec *s, apr_pool_t *p)
{
	struct hp_registry *reg;
	struct hp_slot *slot;
	size_t avg = hints ? hints->avg_id_len + hints->avg_obj_size : 0;
	const char *key, *name, *sig;
	apr_status_t rv;

	if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
		return trial_create(ctx, cname, s);
	reg = registry();
	key = apr_psprintf(p, "%s|%s|%u", cname, s->defn_name ? s->defn_name : "", s->defn_line_number);
	sig = apr_psprintf(p, "size=%" APR_SIZE_T_FMT ",subcaches=%u,avg=%" APR_SIZE_T_FMT ",%s", ctx->size,
			   ctx->subcaches, (apr_size_t)avg, ctx->keys);
	slot = slot_find(reg, name = key);
	/* A second instance under the same name in one generation (a consumer that initialises
	 * twice) must not take the first one's segment away: it gets a name of its own. */
	for (unsigned n = 2; slot && slot->seg && slot->gen == reg->gen && strcmp(slot->sig, sig) != 0; n++)
		slot = slot_find(reg, name = apr_psprintf(p, "%s#%u", key, n));
	if (!slot) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, HP_PREFIX "more than %d hpshm caches in one server: "
			     "share one cache between virtual hosts", HP_SLOTS);
		return APR_ENOSPC;
	}
	if (slot->seg && strcmp(slot->sig, sig) == 0 &&
	    (ctx->store = hstore_open(hpshm_segment_address(slot->seg), hpshm_segment_size(slot->seg))) != NULL) {
		ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, HP_PREFIX "the %s cache keeps its segment and objects "
			     "across the restart", cname);
	} else {
		if (slot->seg)
			slot_release(slot); /* size or keys changed: a new segment */
		rv = slot_fill(ctx, slot, cname, avg, s, p);
		if (rv != APR_SUCCESS)
			return rv;
		slot->key = strdup(name);
		slot->sig = strdup(sig);
		if (!slot->key || !slot->sig) {
			slot_release(slot);
			return APR_ENOMEM;
		}
		ctx->store = hstore_open(hpshm_segment_address(slot->seg), hpshm_segment_size(slot->seg));
	}
	slot->gen = reg->gen;
	ctx->slot = slot;
	if (!reg->stop_cleanup) {
		apr_pool_cleanup_register(s->process->pool, reg, release_all, apr_pool_cleanup_null);
		reg->stop_cleanup = 1;
	}
	return APR_SUCCESS;
}

/* On every restart as at a stop: the segment stays for the next generation (or release_all). */
static void hp_destroy(ap_socache_instance_t *ctx, server_rec *s)
{
	(void)s;
	ctx->store = NULL;
	ctx->slot = NULL;
}

static apr_status_t hp_store(ap_socache_instance_t *ctx, server_rec *s, const unsigned char *id, unsigned int idlen,
			     apr_time_t expiry, unsigned char *data, unsigned int datalen, apr_pool_t *pool)
{
	(void)s;
	(void)pool;
	if (!ctx->store)
		return APR_EGENERAL;
	if (hstore_put(ctx->store, id, idlen, expiry, data, datalen, apr_time_now()) == HSTORE_TOOBIG)
		return APR_ENOSPC;
	return APR_SUCCESS;
}

static apr_status_t hp_retrieve(ap_socache_instance_t *ctx, server_rec *s, const unsigned char *id,
				unsigned int idlen, unsigned char *data, unsigned int *datalen, apr_pool_t *pool)
{
	(void)s;
	(void)pool;
	if (!ctx->store)
		return APR_EGENERAL;
	return hstore_get(ctx->store, id, idlen, data, datalen, apr_time_now()) == HSTORE_OK ? APR_SUCCESS
											       : APR_NOTFOUND;
}

static apr_status_t hp_remove(ap_socache_instance_t *ctx, server_rec *s, const unsigned char *id,
			      unsigned int idlen, apr_pool_t *pool)
{
	(void)s;
	(void)pool;
	if (!ctx->store)
		return APR_EGENERAL;
	return hstore_remove(ctx->store, id, idlen, apr_time_now()) == HSTORE_OK ? APR_SUCCESS : APR_NOTFOUND;
}

/* One status line: plain for ?auto (AP_STATUS_SHORT), escaped and broken for the HTML page. */
static void status_line(request_rec *r, int flags, const char *text)
{
	if (flags & AP_STATUS_SHORT)
		ap_rprintf(r, "hpshm: %s\n", text);
	else
		ap_rprintf(r, "hpshm: %s<br>\n", ap_escape_html(r->pool, text));
}

static void hp_status(ap_socache_instance_t *ctx, request_rec *r, int flags)
{
	const hpshm_report *rep;
	struct hstore_stats st;
	char page[32], mapped[32], usable[32], line[1024];
	const char *fell;

	if (!ctx->store || !ctx->slot || !ctx->slot->report) {
		status_line(r, flags, "no segment (the cache was not initialised)");
		return;
	}
	rep = ctx->slot->report;
	fell = fallbacks(rep, r->pool);
	status_line(r, flags, apr_psprintf(r->pool, "provider %s, page size %s (%s), %s%s%s", rep->provider,
					   hpshm_size_format(rep->page_size, page, sizeof(page)),
					   rep->verified ? "verified" : "unverified", rep->huge ? "huge pages" : "base pages",
					   *fell ? ", fell back from " : "", fell));
	hstore_stats_get(ctx->store, &st);
	status_line(r, flags, apr_psprintf(r->pool, "segment %s mapped, %s usable, %u subcaches of %u index entries "
					   "and %" APR_SIZE_T_FMT " data bytes (the largest object with its id)",
					   hpshm_size_format(rep->mapped_size, mapped, sizeof(mapped)),
					   hpshm_size_format(hpshm_segment_size(ctx->slot->seg), usable, sizeof(usable)),
					   st.subcaches, st.index_per, (apr_size_t)st.data_per));
	status_line(r, flags, apr_psprintf(r->pool, "entries %" APR_UINT64_T_FMT ", stores %" APR_UINT64_T_FMT
					   ", hits %" APR_UINT64_T_FMT ", misses %" APR_UINT64_T_FMT
					   ", evictions %" APR_UINT64_T_FMT ", expired %" APR_UINT64_T_FMT
					   ", removes %" APR_UINT64_T_FMT ", lock takeovers %" APR_UINT64_T_FMT
					   ", resets %" APR_UINT64_T_FMT, st.entries, st.stores, st.hits, st.misses,
					   st.evictions, st.expired, st.removes, st.takeovers, st.resets));
	hpshm_report_format(rep, line, sizeof(line));
	status_line(r, flags, apr_psprintf(r->pool, "report: %s", line));
}

struct hp_walk {
	ap_socache_instance_t *ctx;       /* the instance iterated */
	server_rec *s;                    /* passed through */
	void *userctx;                    /* the caller's */
	ap_socache_iterator_t *iterator;  /* the caller's callback */
	apr_pool_t *pool;                 /* passed through */
};

static int walk_one(void *user, const unsigned char *id, unsigned idlen, const unsigned char *data,
		    unsigned datalen, int64_t expiry)
{
	struct hp_walk *w = user;
	apr_status_t rv;

	(void)expiry;
	rv = w->iterator(w->ctx, w->s, w->userctx, id, idlen, data, datalen, w->pool);
	return rv == APR_SUCCESS ? 0 : (int)rv;
}

static apr_status_t hp_iterate(ap_socache_instance_t *ctx, server_rec *s, void *userctx,
			       ap_socache_iterator_t *iterator, apr_pool_t *pool)
{
	struct hp_walk w = { ctx, s, userctx, iterator, pool };

	if (!ctx->store)
		return APR_EGENERAL;
	return (apr_status_t)hstore_iterate(ctx->store, apr_time_now(), apr_palloc(pool, hstore_scratch_size(ctx->store)),
					    walk_one, &w);
}

static const ap_socache_provider_t hp_provider = {
	.name = "hpshm",
	.flags = 0, /* MP-safe: per-subcache locks in the segment, no caller mutex needed */
	.create = hp_create,
	.init = hp_init,
	.destroy = hp_destroy,
	.store = hp_store,
	.retrieve = hp_retrieve,
	.remove = hp_remove,
	.status = hp_status,
	.iterate = hp_iterate,
};

static int hp_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
	(void)pconf;
	(void)plog;
	(void)ptemp;
	registry()->gen++;
	return OK;
}

/* After every consumer's init(): the segments this generation did not ask for go. */
static int hp_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
	struct hp_registry *reg = registry();

	(void)pconf;
	(void)plog;
	(void)ptemp;
	if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
		return OK;
	for (unsigned i = 0; i < HP_SLOTS; i++) {
		if (reg->slot[i].seg && reg->slot[i].gen != reg->gen) {
			ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, HP_PREFIX "releasing the segment no cache uses any "
				     "more (%s)", reg->slot[i].key);
			slot_release(&reg->slot[i]);
		}
	}
	return OK;
}

static void hp_register_hooks(apr_pool_t *p)
{
	ap_register_provider(p, AP_SOCACHE_PROVIDER_GROUP, "hpshm", AP_SOCACHE_PROVIDER_VERSION, &hp_provider);
	ap_hook_pre_config(hp_pre_config, NULL, NULL, APR_HOOK_REALLY_FIRST);
	ap_hook_post_config(hp_post_config, NULL, NULL, APR_HOOK_REALLY_LAST);
}

AP_DECLARE_MODULE(socache_hpshm) = {
	STANDARD20_MODULE_STUFF,
	NULL, /* per-directory config creator */
	NULL, /* dir config merger */
	NULL, /* server config creator */
	NULL, /* server config merger */
	NULL, /* command table */
	hp_register_hooks,
#ifdef AP_MODULE_FLAG_NONE
	AP_MODULE_FLAG_NONE, /* flags (httpd 2.4.21 on) */
#endif
};
