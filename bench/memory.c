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
 *
 * limit: what this machine's memory allows a populate at best, measured beside it.  Every
 * new page is cleared before it is mapped (the kernel zeroes hugetlb and shmem pages at
 * allocation), so no populate, however many threads share it, can beat the time the same
 * threads take to write zeros over a region of the same size and page size.  The limit's
 * region is made by the raw calls with the same threads (untimed: its pages are then mapped
 * and cleared once), and the timed part is the threads writing zeros over their ranges,
 * 4 KiB at a time: memset of 4 KiB uses the cached stores the kernel's clear_page uses
 * (rep stosb, on x86), where a memset of the whole range would switch to non-temporal
 * stores, which the kernel does not use for this, and measure another limit.  The clearing
 * the kernel does within a populate is the larger part of its time (the rest is the fault
 * path and the page tables), so a populate reaches a share of this limit, never more than 1
 * but for noise.
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
	snprintf(kv, sizeof(kv), "provider=%s,%s,populate=on,populate_threads=auto,reattach=%s", c->provider, ps,
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
	r->threads = rep.populate_threads;
	if (rep.create_ns >= rep.populate_ns && rep.create_ns > 0) {
		r->populate_s = (double)rep.populate_ns / 1e9;
		r->rest_s = (double)(rep.create_ns - rep.populate_ns) / 1e9;
	}
	snprintf(r->verified_by, sizeof(r->verified_by), "%s", rep.verified ? rep.verified_by : "unverified");
	return 0;
}

/* ---- limit ------------------------------------------------------------------------------- */

#define LIMIT_STEP ((size_t)4 << 10)   /* the kernel clears a page 4 KiB at a time */

struct limit_job { unsigned char *addr; size_t len, page; unsigned n; };

/* Zeros over part i of n, page-aligned as the populate's parts are. */
BENCH_UNINSTRUMENTED static void limit_part(void *arg, unsigned i)
{
	struct limit_job *j = arg;
	size_t pages = j->len / j->page, each = pages / j->n, extra = pages % j->n;
	size_t off = ((size_t)i * each + (i < extra ? i : extra)) * j->page;
	size_t end = off + (each + (i < extra ? 1 : 0)) * j->page;

	for (; off < end; off += LIMIT_STEP)
		memset(j->addr + off, 0, end - off < LIMIT_STEP ? end - off : LIMIT_STEP);
}

/* The limit's region (the raw calls, populated untimed), and its threads' zeroing timed as populate_s. */
static int limit_region(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			size_t len)
{
	struct bench_config raw = *c;
	struct limit_job j;
	uint64_t t0;

	raw.kind = BENCH_RAW_MEMFD;
	if (bench_os_raw_create(&raw, addr, size, r, why, len) < 0)
		return -1;
	j.addr = r->addr;
	j.len = r->len;
	j.page = r->page_size ? r->page_size : hpshm_base_page_size();
	j.n = c->threads > 1 && j.len / j.page > 1 ? c->threads : 1;
	j.n = j.n > BENCH_THREADS_MAX ? BENCH_THREADS_MAX : j.n;
	t0 = bench_wall_ns();
	bench_os_parallel(j.n, limit_part, &j);
	r->populate_s = (double)(bench_wall_ns() - t0) / 1e9;
	r->rest_s = NAN;
	r->threads = j.n;
	bench_sink += r->addr ? ((volatile unsigned char *)r->addr)[0] : 0;
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
	case BENCH_LIMIT:
		return limit_region(c, addr, size, r, why, len);
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
