/* SPDX-License-Identifier: MIT */
/*
 * bench/apr.c -- the APR peer: apr_shm_create(), what APR-based servers (Apache httpd's
 * scoreboard and caches) use for shared memory today.
 *
 * An anonymous apr_shm (filename NULL) is mmap(MAP_SHARED | MAP_ANONYMOUS) on Linux: base
 * pages, no huge page option, and a child only gets it by fork(), so this peer runs in fork
 * mode only.  APR does not populate; the bench faults it in with madvise(MADV_POPULATE_WRITE)
 * as hpshm does for its own segments, so setup compares like with like.  The first bytes
 * of an APR segment hold APR's own header, so the region starts at apr_shm_baseaddr_get().
 *
 * Built with APR only when configured with -DHPSHM_BENCH_APR=ON (CMake then defines
 * HPSHM_BENCH_APR and links apr-1); otherwise the peer says so and the run compares the rest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "ports/facts.h"

#ifdef HPSHM_BENCH_APR
#include <sys/mman.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_shm.h>

#include "ports/linux/flags.h"

struct apr_peer {
	apr_pool_t *pool;   /* owns the shm */
	apr_shm_t  *shm;    /* the segment */
};

static struct apr_peer apr_live;   /* one APR segment at a time, like every configuration */
static int apr_started;

int bench_apr_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	if (!apr_started) {
		if (apr_initialize() != APR_SUCCESS) {
			snprintf(why, len, "apr_initialize() failed");
			return 0;
		}
		apr_started = 1;
	}
	return 1;
}

int bench_apr_create(size_t size, struct bench_region *r, char *why, size_t len)
{
	struct hpshm__backing b;
	size_t page = hpshm_base_page_size();
	uintptr_t base, first, last;
	char msg[128];
	apr_status_t st;
	int rc;

	if (!bench_apr_available(why, len))
		return -1;
	memset(&apr_live, 0, sizeof(apr_live));
	if (apr_pool_create(&apr_live.pool, NULL) != APR_SUCCESS) {
		snprintf(why, len, "apr_pool_create() failed");
		return -1;
	}
	/* APR's header sits in front of the base address: ask for a line more and align. */
	st = apr_shm_create(&apr_live.shm, size + BENCH_LINE, NULL, apr_live.pool);
	if (st != APR_SUCCESS) {
		snprintf(why, len, "apr_shm_create: %s", apr_strerror(st, msg, sizeof(msg)));
		apr_pool_destroy(apr_live.pool);
		return -1;
	}
	base = (uintptr_t)apr_shm_baseaddr_get(apr_live.shm);
	r->addr = (void *)((base + BENCH_LINE - 1) / BENCH_LINE * BENCH_LINE);
	r->len = size;
	first = base & ~(uintptr_t)(page - 1);
	last = ((uintptr_t)r->addr + size + page - 1) & ~(uintptr_t)(page - 1);
	do
		rc = madvise((void *)first, last - first, MADV_POPULATE_WRITE);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		snprintf(why, len, "madvise(MADV_POPULATE_WRITE) on the APR segment: %s", strerror(errno));
		apr_shm_destroy(apr_live.shm);
		apr_pool_destroy(apr_live.pool);
		return -1;
	}
	r->apr = &apr_live;
	memset(&b, 0, sizeof(b));
	if (hpshm__os_backing(r->addr, r->len, -1, &b) == 0 && b.page_size) {
		r->page_size = b.page_size;
		r->huge = b.huge;
		snprintf(r->verified_by, sizeof(r->verified_by), "%s", b.source);
	} else {
		r->page_size = hpshm_base_page_size();
		snprintf(r->verified_by, sizeof(r->verified_by), "unverified");
	}
	return 0;
}

int bench_apr_destroy(struct bench_region *r)
{
	struct apr_peer *a = r->apr;
	int rc = apr_shm_destroy(a->shm) == APR_SUCCESS ? 0 : -1;

	apr_pool_destroy(a->pool);
	r->apr = NULL;
	return rc;
}

#else /* !HPSHM_BENCH_APR */

int bench_apr_available(char *why, size_t len)
{
	snprintf(why, len, "built without APR (configure with -DHPSHM_BENCH_APR=ON, with libapr1-dev installed)");
	return 0;
}

int bench_apr_create(size_t size, struct bench_region *r, char *why, size_t len)
{
	(void)size;
	(void)r;
	return bench_apr_available(why, len) - 1;
}

int bench_apr_destroy(struct bench_region *r)
{
	r->apr = NULL;
	return 0;
}

#endif
