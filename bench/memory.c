/* SPDX-License-Identifier: MIT */
/*
 * bench/memory.c -- how each configuration gets its memory.
 *
 * hpshm: hpshm_segment_create() with exactly one provider, huge_pages=on for a huge page
 * size (off for plain pages), populate=on, and reattach=exec when workers are spawned.  The
 * page size in the row is the one the segment's report read back from the kernel.
 *
 * raw: the same system calls without hpshm, as a server would write them by hand, to show
 * what hpshm itself costs: memfd, a hugetlbfs file, SysV shm or anonymous mmap on POSIX (memory_posix.c), a section on
 * Windows (memory_windows.c).  It maps as many bytes as the hpshm segment did (a
 * re-attachable segment carries a header page at its tail) and at the same address, so both
 * have the same page-table layout: a 2 MiB-page region's page tables are a handful of 4 KiB
 * pages, and one more PMD page from a different alignment would be a 25 % difference that
 * has nothing to do with hpshm.  Its backing is verified the way hpshm verifies its own
 * (ports/facts.h).
 *
 * thp and apr: the peers that exist on POSIX only (memory_posix.c, apr.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/facts.h"

/* ---- hpshm ------------------------------------------------------------------------------- */

/* Every attempt's reason, then the hint: what the "could not use" list shows. */
static void hpshm_why(const hpshm_report *rep, const hpshm_error *err, char *why, size_t len)
{
	size_t used = 0;

	why[0] = '\0';
	for (unsigned i = 0; i < rep->nattempts && i < HPSHM_MAX_ATTEMPTS && used < len; i++) {
		const hpshm_attempt *a = &rep->attempts[i];
		int n = snprintf(why + used, len - used, "%s%s (%s): %s", used ? "; " : "", a->provider,
				 a->call[0] ? a->call : "create", a->reason[0] ? a->reason : hpshm_strerror(a->result));

		used += n > 0 ? (size_t)n : 0;
	}
	if (used == 0)
		snprintf(why, len, "%s", err->message[0] ? err->message : hpshm_strerror(err->code));
	if (err->hint[0] && used < len)
		snprintf(why + used, len - used, " (hint: %s)", err->hint);
}

static int hpshm_region(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			size_t len)
{
	hpshm_config *cfg = NULL;
	hpshm_report rep;
	hpshm_error err;
	char kv[256], ps[64];
	int rc;

	if (hpshm_config_new(&cfg) < 0) {
		snprintf(why, len, "out of memory for a configuration");
		return -1;
	}
	if (c->page_size)
		snprintf(ps, sizeof(ps), "huge_pages=on,huge_page_size=%zuk", c->page_size >> 10);
	else
		snprintf(ps, sizeof(ps), "huge_pages=off");
	snprintf(kv, sizeof(kv), "provider=%s,%s,populate=on,reattach=%s", c->provider, ps,
		 c->start == BENCH_START_SPAWN ? "exec" : "off");
	if (addr) {
		size_t n = strlen(kv);

		/* Not %p: its text is the C library's own (no 0x from the Microsoft runtime's). */
		snprintf(kv + n, sizeof(kv) - n, ",base_address=0x%llx", (unsigned long long)(uintptr_t)addr);
	}
	memset(&err, 0, sizeof(err));
	memset(&rep, 0, sizeof(rep));
	rc = hpshm_config_parse(cfg, kv, &err);
	if (rc == 0)
		rc = hpshm_segment_create_ex(&r->seg, size, cfg, &rep, &err);
	hpshm_config_free(cfg);
	if (rc < 0) {
		hpshm_why(&rep, &err, why, len);
		return -1;
	}
	rep = *hpshm_segment_report(r->seg);
	r->addr = hpshm_segment_address(r->seg);
	/*
	 * The report's mapped size, not /proc/self/maps: reading that is the bench's cost, and
	 * inside the timed create it was counted as hpshm's (a raw create reads nothing).
	 */
	r->len = rep.mapped_size;
	if (r->len < size)
		r->len = hpshm_segment_size(r->seg);
	r->page_size = rep.page_size;
	r->huge = rep.huge;
	if (rep.create_ns >= rep.populate_ns && rep.create_ns > 0) {
		r->populate_s = (double)rep.populate_ns / 1e9;
		r->rest_s = (double)(rep.create_ns - rep.populate_ns) / 1e9;
	}
	snprintf(r->verified_by, sizeof(r->verified_by), "%s", rep.verified ? rep.verified_by : "unverified");
	return 0;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

int bench_region_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			size_t len)
{
	memset(r, 0, sizeof(*r));
	r->handle = BENCH_OS_NONE;
	r->size = size;
	r->populate_s = r->rest_s = NAN;
	switch (c->kind) {
	case BENCH_HPSHM:
		return hpshm_region(c, addr, size, r, why, len);
	case BENCH_RAW_MEMFD:
	case BENCH_RAW_ANON:
	case BENCH_RAW_FILE:
	case BENCH_RAW_SHM:
	case BENCH_RAW_SECTION:
		return bench_os_raw_create(c, addr, size, r, why, len);
	case BENCH_THP:
		return bench_os_thp_create(c, addr, size, r, why, len);
	case BENCH_APR:
		return bench_apr_create(size, r, why, len);
	}
	snprintf(why, len, "unknown configuration kind");
	return -1;
}

int bench_region_destroy(struct bench_region *r)
{
	int rc = 0;

	if (r->seg)
		rc = hpshm_segment_destroy(r->seg) < 0 ? -1 : 0;
	else if (r->apr)
		rc = bench_apr_destroy(r);
	else if (r->addr)
		rc = bench_os_region_release(r);
	memset(r, 0, sizeof(*r));
	r->handle = BENCH_OS_NONE;
	return rc;
}
