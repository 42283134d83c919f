/* SPDX-License-Identifier: MIT */
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
 * The pool is read and written through ports/introspect.h, which knows where the OS keeps
 * it (on Linux the size's sysfs nr_hugepages file, which exists for every size).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/introspect.h"

static int pool_read(size_t page_size, unsigned long *pages, char *why, size_t len)
{
	struct hpshm__os_pool p;

	if (hpshm__os_pool(page_size, &p) < 0) {
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
	if (bench_os_pool_writable(why, len) < 0)
		return -1;
	if (pool_read(page_size, &p->before, why, len) < 0)
		return -1;
	if (hpshm__os_pool_resize(page_size, p->before + pages, why, len) < 0)
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
	if (hpshm__os_pool_resize(p->page_size, target, why, len) < 0)
		return -1;
	p->changed = 0;
	return 0;
}
