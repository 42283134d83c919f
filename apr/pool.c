/* SPDX-License-Identifier: MIT */
/*
 * apr/pool.c -- segments and configurations whose lifetime follows an apr_pool_t.
 *
 * A segment gets two cleanups on its pool.  The plain one runs hpshm_segment_destroy(),
 * which decides by itself whether this process may remove the object: the core's owner rule
 * (doc/lifecycle.md) makes the clear of a pool that a worker inherited by fork() a detach, so
 * a pre-fork server's children can tear their pools down as APR programs do.  The child
 * cleanup, which APR runs in a child of apr_proc_create() before exec, only detaches: that
 * process is about to become another program and must never remove its parent's segment.
 */
#include <apr_tables.h>

#include "hpshm/apr.h"
#include "hpshm/provider.h" /* hpshm_error_set() */

static apr_status_t seg_cleanup(void *data)
{
	return hpshm_apr_status(hpshm_segment_destroy(data));
}

static apr_status_t seg_child_cleanup(void *data)
{
	return hpshm_apr_status(hpshm_segment_detach(data));
}

static apr_status_t cfg_cleanup(void *data)
{
	hpshm_config_free(data);
	return APR_SUCCESS;
}

/* A segment just made or mapped: hand it to pool, or report rc as a status. */
static apr_status_t seg_adopt(hpshm_segment **out, hpshm_segment *seg, int rc, apr_pool_t *pool)
{
	if (rc < 0) {
		*out = NULL;
		return hpshm_apr_status(rc);
	}
	apr_pool_cleanup_register(pool, seg, seg_cleanup, seg_child_cleanup);
	*out = seg;
	return APR_SUCCESS;
}

/* The arguments every call checks; hpshm's own checks would not see pool. */
static apr_status_t bad_args(void *out, const void *arg, apr_pool_t *pool, hpshm_error *err)
{
	if (out && arg && pool)
		return APR_SUCCESS;
	return hpshm_apr_status(hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "pass the output, the argument and a pool",
						"hpshm_apr: NULL argument"));
}

apr_status_t hpshm_apr_segment_create(hpshm_segment **out, apr_size_t size, const hpshm_config *cfg,
				      apr_pool_t *pool, hpshm_error *err)
{
	hpshm_segment *seg = NULL;
	int rc;
	apr_status_t st = bad_args(out, out, pool, err);

	if (st != APR_SUCCESS)
		return st;
	rc = hpshm_segment_create(&seg, size, cfg, err); /* before seg is read: argument order is unspecified */
	return seg_adopt(out, seg, rc, pool);
}

apr_status_t hpshm_apr_segment_open(hpshm_segment **out, const char *name, const hpshm_config *cfg,
				    apr_pool_t *pool, hpshm_error *err)
{
	hpshm_segment *seg = NULL;
	int rc;
	apr_status_t st = bad_args(out, name, pool, err);

	if (st != APR_SUCCESS)
		return st;
	rc = hpshm_segment_open(&seg, name, cfg, err); /* before seg is read: argument order is unspecified */
	return seg_adopt(out, seg, rc, pool);
}

apr_status_t hpshm_apr_segment_attach(hpshm_segment **out, const char *token, const hpshm_config *cfg,
				      apr_pool_t *pool, hpshm_error *err)
{
	hpshm_segment *seg = NULL;
	int rc;
	apr_status_t st = bad_args(out, token, pool, err);

	if (st != APR_SUCCESS)
		return st;
	rc = hpshm_segment_attach(&seg, token, cfg, err); /* before seg is read: argument order is unspecified */
	return seg_adopt(out, seg, rc, pool);
}

/* apr_pool_cleanup_kill() takes off both the plain and the child cleanup of (seg, seg_cleanup). */
apr_status_t hpshm_apr_segment_destroy(hpshm_segment *seg, apr_pool_t *pool)
{
	if (!seg)
		return APR_SUCCESS;
	if (pool)
		apr_pool_cleanup_kill(pool, seg, seg_cleanup);
	return hpshm_apr_status(hpshm_segment_destroy(seg));
}

apr_status_t hpshm_apr_segment_detach(hpshm_segment *seg, apr_pool_t *pool)
{
	if (!seg)
		return APR_SUCCESS;
	if (pool)
		apr_pool_cleanup_kill(pool, seg, seg_cleanup);
	return hpshm_apr_status(hpshm_segment_detach(seg));
}

/* A new configuration on pool, or the status of why not. */
static apr_status_t cfg_new(hpshm_config **out, apr_pool_t *pool, hpshm_error *err)
{
	apr_status_t st = bad_args(out, out, pool, err);

	if (st != APR_SUCCESS)
		return st;
	*out = NULL;
	if (hpshm_config_new(out) < 0)
		return hpshm_apr_status(hpshm_error_set(err, HPSHM_ENOMEM, 0, NULL, NULL,
							"hpshm_apr: no memory for a configuration"));
	apr_pool_cleanup_register(pool, *out, cfg_cleanup, apr_pool_cleanup_null);
	return APR_SUCCESS;
}

/* The configuration failed: free it now rather than with the pool. */
static apr_status_t cfg_fail(hpshm_config **out, apr_pool_t *pool, int rc)
{
	apr_pool_cleanup_run(pool, *out, cfg_cleanup);
	*out = NULL;
	return hpshm_apr_status(rc);
}

apr_status_t hpshm_apr_config_parse(hpshm_config **out, const char *text, apr_pool_t *pool, hpshm_error *err)
{
	apr_status_t st = cfg_new(out, pool, err);
	int rc;

	if (st != APR_SUCCESS || !text || !*text)
		return st;
	rc = hpshm_config_parse(*out, text, err);
	return rc < 0 ? cfg_fail(out, pool, rc) : APR_SUCCESS;
}

apr_status_t hpshm_apr_config_table(hpshm_config **out, const apr_table_t *table, apr_pool_t *pool,
				    hpshm_error *err)
{
	const apr_array_header_t *arr;
	const apr_table_entry_t *e;
	apr_status_t st = cfg_new(out, pool, err);
	int i, rc;

	if (st != APR_SUCCESS || !table)
		return st;
	arr = apr_table_elts(table);
	e = (const apr_table_entry_t *)arr->elts;
	for (i = 0; i < arr->nelts; i++) {
		/* A table filled by hand through its array may hold an entry without a key. */
		if (!e[i].key)
			continue;
		rc = hpshm_config_set(*out, e[i].key, e[i].val ? e[i].val : "", err);
		if (rc < 0)
			return cfg_fail(out, pool, rc);
	}
	return APR_SUCCESS;
}
