/* SPDX-License-Identifier: MIT */
/*
 * core/populate.c -- making a new segment's pages real: where they go (numa=), who faults
 * them in (populate_threads=), and where they landed, read back from the kernel.
 *
 * Order, for one candidate of the create walk (core/segment.c):
 *   1. hpshm__placement_check() before the provider creates anything: nodes that do not
 *      exist are the configuration's error, and nodes whose huge page pools cannot hold the
 *      segment rule the candidate out (the kernel reserves huge pages globally, so a bind to
 *      a node without free pages would map and then SIGBUS at the first touch);
 *   2. the policy is applied to the new mapping (mbind) before any page is touched, so the
 *      first touch lands where asked;
 *   3. the populate, by as many threads as populate_threads gives, each faulting one
 *      contiguous range in with the port's clean-failing calls (ports/<os>/populate.c);
 *   4. when a policy was asked for, the pages' nodes are read back into the report: what the
 *      kernel did, never what was asked.
 * A failure in 2 or 3 leaves the mapping for the caller to destroy, as before.
 */
#include <string.h>

#include "core/internal.h"
#include "port.h"

/*
 * The least a thread of populate_threads=auto is given.  Starting and joining a thread costs
 * tens of microseconds; clearing 64 MiB takes milliseconds even where memory is fast, so a
 * share this large keeps the threads' cost in the noise, and a small segment (the common
 * case) is populated by the calling thread alone, as before.
 */
#define POPULATE_SHARE ((size_t)64 << 20)

unsigned hpshm__populate_threads(const struct hpshm_config *cfg, size_t len, size_t page_size)
{
	size_t n = cfg->populate_threads;

	if (n == 0) {
		n = hpshm__port_cpus_usable();
		if (n > len / POPULATE_SHARE)
			n = len / POPULATE_SHARE;
		if (n > HPSHM__POPULATE_THREADS_MAX)
			n = HPSHM__POPULATE_THREADS_MAX;
	}
	/* Never more threads than pages: a thread with no range would have nothing to do. */
	if (page_size > 0 && n > len / page_size)
		n = len / page_size;
	return n > 0 ? (unsigned)n : 1u;
}

unsigned hpshm_populate_threads(size_t size, size_t page_size, const hpshm_config *cfg)
{
	struct hpshm_config defaults;
	size_t ps = page_size ? page_size : hpshm__port_base_page_size();
	size_t len;

	if (!cfg) {
		hpshm__config_init(&defaults);
		cfg = &defaults;
	}
	if (hpshm__round_up(size, ps, &len) < 0 || len == 0)
		return 1;
	return hpshm__populate_threads(cfg, len, ps);
}

int hpshm__placement_check(const struct hpshm_config *cfg, size_t len, size_t page_size, hpshm_error *err)
{
	if (cfg->numa.mode == HPSHM__NUMA_DEFAULT)
		return 0;
	return hpshm__port_numa_check(&cfg->numa, len, page_size, err);
}

int hpshm__populate(const struct hpshm_config *cfg, void *addr, size_t len, size_t page_size,
		    struct hpshm__port_handle h, int want, hpshm_report *r, hpshm_error *err)
{
	struct hpshm__populate_how how;
	uint64_t t0;
	int rc, n;

	r->populate = HPSHM_POPULATE_NONE;
	r->populate_ns = 0;
	r->populate_threads = 0;
	r->nnodes = 0;
	memset(r->node_bytes, 0, sizeof(r->node_bytes));
	if (cfg->numa.mode != HPSHM__NUMA_DEFAULT) {
		rc = hpshm__port_numa_apply(addr, len, &cfg->numa, err);
		if (rc < 0)
			return rc;
	}
	if (want) {
		how.threads = hpshm__populate_threads(cfg, len, page_size);
		how.numa = cfg->numa.mode != HPSHM__NUMA_DEFAULT ? &cfg->numa : NULL;
		t0 = hpshm__port_now_ns();
		rc = hpshm__port_populate(addr, len, page_size, h, &how, &r->populate, err);
		r->populate_ns = hpshm__port_now_ns() - t0;
		if (rc < 0)
			return rc;
		r->populate_threads = how.threads;
	}
	if (cfg->numa.mode != HPSHM__NUMA_DEFAULT) {
		n = hpshm__port_numa_where(addr, len, page_size, r->node_bytes, HPSHM_REPORT_NODES);
		r->nnodes = n > 0 ? (unsigned)n : 0;
	}
	return 0;
}
