/*
 * bench/pool.c -- --reserve: size a huge page pool for the run, and put it back afterwards.
 *
 * The pool is machine-wide state that other programs use, so the bench never touches it
 * unless asked, and when asked it adds pages on top of what it found (someone else's pages
 * stay theirs) and at the end takes back exactly what it added.  If the pool changed under
 * us meanwhile, restore subtracts our pages from the current size rather than writing the
 * old number over someone else's change.  The kernel may give fewer pages than asked
 * (fragmented memory): the run goes on with what there is, and the providers that then
 * cannot get their pages say so.
 *
 * Written through /sys/kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages, which exists for
 * every size, not /proc/sys/vm/nr_hugepages, which is the default size only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "linux/linux.h"

static void pool_path(size_t page_size, char *buf, size_t len)
{
	snprintf(buf, len, "/sys/kernel/mm/hugepages/hugepages-%zukB/nr_hugepages", page_size >> 10);
}

static int pool_write(size_t page_size, unsigned long pages, char *why, size_t len)
{
	char path[128];
	FILE *f;
	int rc;

	pool_path(page_size, path, sizeof(path));
	f = fopen(path, "w");
	if (!f) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	rc = fprintf(f, "%lu\n", pages) < 0;
	rc |= fclose(f) != 0;
	if (rc) {
		snprintf(why, len, "cannot write %lu to %s: %s", pages, path, strerror(errno));
		return -1;
	}
	return 0;
}

static int pool_read(size_t page_size, unsigned long *pages, char *why, size_t len)
{
	struct hpshm__pool p;

	if (hpshm__pool_get(page_size, &p) < 0) {
		snprintf(why, len, "the kernel has no pool of %zu KiB pages", page_size >> 10);
		return -1;
	}
	*pages = p.total;
	return 0;
}

int bench_pool_reserve(struct bench_pool *p, size_t page_size, unsigned long pages, char *why, size_t len)
{
	unsigned long got;

	memset(p, 0, sizeof(*p));
	p->page_size = page_size;
	if (geteuid() != 0) {
		snprintf(why, len, "--reserve needs root: it writes the huge page pool size");
		return -1;
	}
	if (pool_read(page_size, &p->before, why, len) < 0)
		return -1;
	if (pool_write(page_size, p->before + pages, why, len) < 0)
		return -1;
	p->changed = 1;
	if (pool_read(page_size, &got, why, len) < 0)
		got = p->before + pages;
	p->set = got;
	if (got < p->before + pages)
		snprintf(why, len, "the kernel gave %lu of the %lu pages asked for", got - p->before, pages);
	else
		why[0] = '\0';
	return 0;
}

int bench_pool_restore(struct bench_pool *p, char *why, size_t len)
{
	unsigned long now, target;

	if (!p->changed)
		return 0;
	if (pool_read(p->page_size, &now, why, len) < 0)
		return -1;
	target = now == p->set ? p->before : (now > p->set - p->before ? now - (p->set - p->before) : 0);
	if (pool_write(p->page_size, target, why, len) < 0)
		return -1;
	p->changed = 0;
	return 0;
}
