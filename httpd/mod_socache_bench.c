/* SPDX-License-Identifier: MIT */
/*
 * httpd/mod_socache_bench.c -- a handler that times socache providers inside httpd, under the
 * locking their real callers use (built beside mod_socache_hpshm, never installed).
 *
 *   LoadModule socache_bench_module <build>/httpd/mod_socache_bench.so
 *   SocacheBench shmcb:/tmp/bench-shmcb(67108864)
 *   SocacheBench hpshm:size=64MiB,huge_pages=try
 *   <Location /bench> SetHandler socache-bench </Location>
 *
 *   GET /bench?provider=hpshm&seconds=2&size=4096&keys=1000
 *   -> ops=<n> seconds=<s> ops_per_s=<r> provider=<name> hits=<n> misses=<n>
 *
 * Each SocacheBench line (one per provider, in the main server) makes an instance of that
 * provider in post_config, as mod_cache_socache does.  A request loops for `seconds`: it stores
 * an object of `size` bytes under key i % keys, then retrieves key (i * 7919 + 1) % keys (a
 * hit once the keys were stored); every store and retrieve counts as one op.  Around each call
 * it takes a global mutex only when the provider says AP_SOCACHE_FLAG_NOTMPSAFE, exactly as
 * mod_cache_socache and mod_ssl do, so the numbers compare what a server would see.  Several
 * concurrent requests (ab -c, curl in parallel) measure contention between workers.
 */
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_provider.h>
#include <ap_socache.h>
#include <apr_strings.h>
#include <apr_global_mutex.h>
#include <util_mutex.h>

#include <stdlib.h>
#include <string.h>

module AP_MODULE_DECLARE_DATA socache_bench_module;

static const char bench_mutex_id[] = "socache-bench";
static apr_global_mutex_t *bench_mutex; /* made only for a provider that needs it */

struct bench_cache {
	const char *name;                  /* provider name */
	const char *args;                  /* its argument, after the colon */
	const ap_socache_provider_t *prov; /* looked up in post_config */
	ap_socache_instance_t *inst;       /* created and initialised in post_config */
	server_rec *s;                     /* the server it was made for (destroy logs there) */
};

struct bench_conf {
	apr_array_header_t *caches; /* struct bench_cache, one per SocacheBench line */
};

static void *bench_server_config(apr_pool_t *p, server_rec *s)
{
	struct bench_conf *conf = apr_pcalloc(p, sizeof(*conf));

	(void)s;
	conf->caches = apr_array_make(p, 2, sizeof(struct bench_cache));
	return conf;
}

static const char *bench_directive(cmd_parms *cmd, void *dconf, const char *arg)
{
	struct bench_conf *conf = ap_get_module_config(cmd->server->module_config, &socache_bench_module);
	struct bench_cache *c = apr_array_push(conf->caches);
	const char *colon = strchr(arg, ':');

	(void)dconf;
	c->name = colon ? apr_pstrmemdup(cmd->pool, arg, (apr_size_t)(colon - arg)) : arg;
	c->args = colon ? colon + 1 : "";
	c->prov = NULL;
	c->inst = NULL;
	return NULL;
}

static const command_rec bench_cmds[] = {
	AP_INIT_TAKE1("SocacheBench", bench_directive, NULL, RSRC_CONF,
		      "a socache provider to time, as provider:args (one line per provider)"),
	{ .name = NULL }, /* the end */
};

static int bench_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
	(void)plog;
	(void)ptemp;
	return ap_mutex_register(pconf, bench_mutex_id, NULL, APR_LOCK_DEFAULT, 0) == APR_SUCCESS ? OK : 500;
}

static apr_status_t bench_destroy(void *data)
{
	struct bench_cache *c = data;

	if (c->inst)
		c->prov->destroy(c->inst, c->s);
	c->inst = NULL;
	return APR_SUCCESS;
}

static int bench_make(struct bench_cache *c, server_rec *s, apr_pool_t *pconf, apr_pool_t *ptemp)
{
	static const struct ap_socache_hints hints = { 16, 4096, 60000000 };
	const char *msg;
	apr_status_t rv;

	c->prov = ap_lookup_provider(AP_SOCACHE_PROVIDER_GROUP, c->name, AP_SOCACHE_PROVIDER_VERSION);
	if (!c->prov) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, "SocacheBench: no socache provider \"%s\": load its module "
			     "(mod_socache_%s)", c->name, c->name);
		return 500;
	}
	if ((c->prov->flags & AP_SOCACHE_FLAG_NOTMPSAFE) && !bench_mutex &&
	    ap_global_mutex_create(&bench_mutex, NULL, bench_mutex_id, NULL, s, pconf, 0) != APR_SUCCESS)
		return 500;
	msg = c->prov->create(&c->inst, c->args, ptemp, pconf);
	if (msg) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, "SocacheBench %s: %s", c->name, msg);
		return 500;
	}
	rv = c->prov->init(c->inst, apr_pstrcat(ptemp, "bench-", c->name, NULL), &hints, s, pconf);
	if (rv != APR_SUCCESS) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "SocacheBench %s: init failed", c->name);
		return 500;
	}
	c->s = s;
	apr_pool_cleanup_register(pconf, c, bench_destroy, apr_pool_cleanup_null);
	return OK;
}

static int bench_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
	struct bench_conf *conf = ap_get_module_config(s->module_config, &socache_bench_module);

	(void)plog;
	bench_mutex = NULL;
	for (int i = 0; i < conf->caches->nelts; i++) {
		int rc = bench_make(&APR_ARRAY_IDX(conf->caches, i, struct bench_cache), s, pconf, ptemp);

		if (rc != OK)
			return rc;
	}
	return OK;
}

static void bench_child_init(apr_pool_t *p, server_rec *s)
{
	if (bench_mutex && apr_global_mutex_child_init(&bench_mutex, apr_global_mutex_lockfile(bench_mutex), p) !=
			       APR_SUCCESS)
		ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, "SocacheBench: the mutex failed in a child");
}

struct bench_query {
	const char *provider; /* provider= */
	double seconds;       /* seconds=, default 2 */
	unsigned size;        /* size=, default 4096 */
	unsigned keys;        /* keys=, default 1000 */
};

static void bench_parse(request_rec *r, struct bench_query *q)
{
	char *args = apr_pstrdup(r->pool, r->args ? r->args : ""), *last = NULL, *item;

	q->provider = "hpshm";
	q->seconds = 2;
	q->size = 4096;
	q->keys = 1000;
	for (item = apr_strtok(args, "&", &last); item; item = apr_strtok(NULL, "&", &last)) {
		if (strncmp(item, "provider=", 9) == 0)
			q->provider = item + 9;
		else if (strncmp(item, "seconds=", 8) == 0)
			q->seconds = atof(item + 8);
		else if (strncmp(item, "size=", 5) == 0)
			q->size = (unsigned)strtoul(item + 5, NULL, 10);
		else if (strncmp(item, "keys=", 5) == 0)
			q->keys = (unsigned)strtoul(item + 5, NULL, 10);
	}
	if (q->seconds <= 0 || q->seconds > 60)
		q->seconds = 2;
	if (q->size == 0 || q->size > 1024 * 1024)
		q->size = 4096;
	if (q->keys == 0)
		q->keys = 1000;
}

static apr_status_t bench_call(struct bench_cache *c, request_rec *r, int store, unsigned key, unsigned char *buf,
			       unsigned size, apr_time_t expiry)
{
	unsigned char id[16];
	unsigned len = size + 64;
	apr_status_t rv;
	int locked = bench_mutex && (c->prov->flags & AP_SOCACHE_FLAG_NOTMPSAFE);

	/* The key's bytes first: shmcb picks a subcache by the id's first byte (it expects random
	 * session ids), and a common prefix would put every object in one subcache. */
	memcpy(id, &key, sizeof(key));
	memcpy(id + sizeof(key), "bench-", 6);
	if (locked && apr_global_mutex_lock(bench_mutex) != APR_SUCCESS)
		return APR_EGENERAL;
	if (store)
		rv = c->prov->store(c->inst, r->server, id, 10, expiry, buf, size, r->pool);
	else
		rv = c->prov->retrieve(c->inst, r->server, id, 10, buf, &len, r->pool);
	if (locked)
		apr_global_mutex_unlock(bench_mutex);
	return rv;
}

static int bench_handler(request_rec *r)
{
	struct bench_conf *conf = ap_get_module_config(r->server->module_config, &socache_bench_module);
	struct bench_cache *c = NULL;
	struct bench_query q;
	apr_time_t start, end, now, expiry;
	apr_uint64_t ops = 0, hits = 0, misses = 0;
	unsigned char *obj, *out;
	double took;

	if (!r->handler || strcmp(r->handler, "socache-bench") != 0)
		return DECLINED;
	bench_parse(r, &q);
	for (int i = 0; i < conf->caches->nelts; i++)
		if (strcmp(APR_ARRAY_IDX(conf->caches, i, struct bench_cache).name, q.provider) == 0)
			c = &APR_ARRAY_IDX(conf->caches, i, struct bench_cache);
	if (!c || !c->inst) {
		ap_set_content_type(r, "text/plain");
		ap_rprintf(r, "error=no SocacheBench line for provider %s\n", q.provider);
		return OK;
	}
	obj = apr_palloc(r->pool, q.size);
	out = apr_palloc(r->pool, q.size + 64);
	memset(obj, 'x', q.size);
	start = now = apr_time_now();
	end = start + (apr_time_t)(q.seconds * (double)APR_USEC_PER_SEC);
	expiry = start + apr_time_from_sec(600);
	for (apr_uint64_t i = 0; now < end; now = apr_time_now()) {
		for (int k = 0; k < 64; k++, i++) {
			bench_call(c, r, 1, (unsigned)(i % q.keys), obj, q.size, expiry);
			if (bench_call(c, r, 0, (unsigned)((i * 7919 + 1) % q.keys), out, q.size, expiry) == APR_SUCCESS)
				hits++;
			else
				misses++;
			ops += 2;
		}
	}
	took = (double)(now - start) / (double)APR_USEC_PER_SEC;
	ap_set_content_type(r, "text/plain");
	/* Never a cached reply: mod_cache would answer the next run without running it. */
	apr_table_setn(r->headers_out, "Cache-Control", "no-store");
	ap_rprintf(r, "ops=%" APR_UINT64_T_FMT " seconds=%.3f ops_per_s=%.0f provider=%s hits=%" APR_UINT64_T_FMT
		   " misses=%" APR_UINT64_T_FMT "\n", ops, took, (double)ops / took, c->name, hits, misses);
	return OK;
}

static void bench_register_hooks(apr_pool_t *p)
{
	(void)p;
	ap_hook_pre_config(bench_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_post_config(bench_post_config, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_child_init(bench_child_init, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_handler(bench_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(socache_bench) = {
	STANDARD20_MODULE_STUFF,
	NULL,                /* per-directory config creator */
	NULL,                /* dir config merger */
	bench_server_config, /* server config creator */
	NULL,                /* server config merger */
	bench_cmds,          /* command table */
	bench_register_hooks,
#ifdef AP_MODULE_FLAG_NONE
	AP_MODULE_FLAG_NONE, /* flags (httpd 2.4.21 on) */
#endif
};
