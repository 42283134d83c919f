/* SPDX-License-Identifier: MIT */
/*
 * apr/shm.c -- apr_shm's calls on hpshm segments (doc/apr.md, "From apr_shm in a few lines").
 *
 * A module written for apr_shm_create()/apr_shm_attach() keeps its shape: a filename becomes
 * an hpshm name (hpshm_apr_shm_name()), the pool's cleanup destroys in the creator and
 * detaches elsewhere, and the base address is the segment's first byte, aligned to its page.
 * The configuration is hpshm's defaults under the environment (HPSHM_<KEY>), so an operator
 * can say huge_pages=on without the module knowing.
 */
#include <stdio.h>
#include <string.h>

#include "hpshm/apr.h"
#include "hpshm/provider.h" /* hpshm_error_set() */

struct hpshm_apr_shm_t {
	hpshm_segment *seg;
	apr_pool_t    *pool;
};

/* Longest part of the filename's last component a name keeps. */
#define SHM_STEM_MAX 64

char *hpshm_apr_shm_name(const char *filename, char *buf, apr_size_t len)
{
	unsigned long long h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
	const char *stem, *p;
	char part[SHM_STEM_MAX + 1];
	size_t n = 0;
	int w;

	if (!filename || !buf)
		return NULL;
	for (p = filename; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	stem = strrchr(filename, '/');
	stem = stem ? stem + 1 : filename;
	for (p = stem; *p && n < SHM_STEM_MAX; p++) {
		unsigned char c = (unsigned char)*p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			 c == '_' || c == '-';

		part[n++] = ok ? (char)c : '_';
	}
	part[n] = '\0';
	w = snprintf(buf, len, "apr-%s-%016llx", part, h);
	return w < 0 || (apr_size_t)w >= len ? NULL : buf;
}

/* The defaults, the environment over them, then config over both; freed by the caller. */
static int shm_config(hpshm_config **cfg, const char *config, hpshm_error *err)
{
	int rc;

	if (hpshm_config_new(cfg) < 0)
		return hpshm_error_set(err, HPSHM_ENOMEM, 0, NULL, NULL, "hpshm_apr_shm: no memory for a configuration");
	rc = hpshm_config_load_env(*cfg, err);
	if (rc == 0 && config && *config)
		rc = hpshm_config_parse(*cfg, config, err);
	return rc;
}

/* Fill *m with the segment the open or create call makes on pool. */
static apr_status_t shm_make(hpshm_apr_shm_t **m, apr_size_t reqsize, const char *filename, apr_pool_t *pool,
			     const char *config, hpshm_error *err)
{
	char name[HPSHM_APR_SHM_NAME_MAX];
	hpshm_config *cfg = NULL;
	hpshm_apr_shm_t *shm;
	apr_status_t st;
	int rc;

	if (!m || !pool || (filename && !hpshm_apr_shm_name(filename, name, sizeof(name))) || (!reqsize && !filename))
		return hpshm_apr_status(hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
							"hpshm_apr_shm: NULL argument or nothing to attach"));
	*m = NULL;
	rc = shm_config(&cfg, config, err);
	if (rc == 0 && reqsize && filename)
		rc = hpshm_config_set(cfg, "name", name, err);
	if (rc < 0) {
		hpshm_config_free(cfg);
		return hpshm_apr_status(rc);
	}
	shm = apr_pcalloc(pool, sizeof(*shm));
	shm->pool = pool;
	if (reqsize)
		st = hpshm_apr_segment_create(&shm->seg, reqsize, cfg, pool, err);
	else
		st = hpshm_apr_segment_open(&shm->seg, name, cfg, pool, err);
	/* The segment keeps its own copy of the configuration. */
	hpshm_config_free(cfg);
	if (st == APR_SUCCESS)
		*m = shm;
	return st;
}

apr_status_t hpshm_apr_shm_create(hpshm_apr_shm_t **m, apr_size_t reqsize, const char *filename, apr_pool_t *pool)
{
	return hpshm_apr_shm_create_ex(m, reqsize, filename, pool, NULL, NULL);
}

apr_status_t hpshm_apr_shm_create_ex(hpshm_apr_shm_t **m, apr_size_t reqsize, const char *filename,
				     apr_pool_t *pool, const char *config, hpshm_error *err)
{
	if (reqsize == 0)
		return hpshm_apr_status(hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "ask for at least one byte",
							"hpshm_apr_shm_create: reqsize is 0"));
	return shm_make(m, reqsize, filename, pool, config, err);
}

apr_status_t hpshm_apr_shm_attach(hpshm_apr_shm_t **m, const char *filename, apr_pool_t *pool)
{
	return hpshm_apr_shm_attach_ex(m, filename, pool, NULL, NULL);
}

apr_status_t hpshm_apr_shm_attach_ex(hpshm_apr_shm_t **m, const char *filename, apr_pool_t *pool,
				     const char *config, hpshm_error *err)
{
	return shm_make(m, 0, filename, pool, config, err);
}

apr_status_t hpshm_apr_shm_destroy(hpshm_apr_shm_t *m)
{
	apr_status_t st;

	if (!m || !m->seg)
		return APR_EINVAL;
	st = hpshm_apr_segment_destroy(m->seg, m->pool);
	m->seg = NULL;
	return st;
}

apr_status_t hpshm_apr_shm_detach(hpshm_apr_shm_t *m)
{
	apr_status_t st;

	if (!m || !m->seg)
		return APR_EINVAL;
	st = hpshm_apr_segment_detach(m->seg, m->pool);
	m->seg = NULL;
	return st;
}

void *hpshm_apr_shm_baseaddr_get(const hpshm_apr_shm_t *m)
{
	return m && m->seg ? hpshm_segment_address(m->seg) : NULL;
}

apr_size_t hpshm_apr_shm_size_get(const hpshm_apr_shm_t *m)
{
	return m && m->seg ? hpshm_segment_size(m->seg) : 0;
}

hpshm_segment *hpshm_apr_shm_segment(const hpshm_apr_shm_t *m)
{
	return m ? m->seg : NULL;
}
