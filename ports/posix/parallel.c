/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/parallel.c -- running one job's parts in threads, and splitting a segment into
 * one contiguous range per thread: what a populate over several threads is made of.
 *
 * One contiguous range per thread, not pages dealt out in turn: each thread then walks its
 * own page tables and its own part of the file, as QEMU's prealloc-threads do, and no two
 * threads ever fault on neighbouring pages.
 */
#include <pthread.h>
#include <stdlib.h>

#include "port.h"
#include "posix/posix.h"

struct parallel_part {
	void (*fn)(void *arg, unsigned i);
	void    *arg;
	unsigned i;
};

static void *parallel_main(void *p)
{
	struct parallel_part *part = p;

	part->fn(part->arg, part->i);
	return NULL;
}

void hpshm__posix_parallel(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
	struct parallel_part parts[HPSHM__POPULATE_THREADS_MAX];
	pthread_t threads[HPSHM__POPULATE_THREADS_MAX];
	int started[HPSHM__POPULATE_THREADS_MAX] = { 0 };

	if (n > HPSHM__POPULATE_THREADS_MAX)
		n = HPSHM__POPULATE_THREADS_MAX;
	for (unsigned i = 1; i < n; i++) {
		parts[i].fn = fn;
		parts[i].arg = arg;
		parts[i].i = i;
		started[i] = pthread_create(&threads[i], NULL, parallel_main, &parts[i]) == 0;
	}
	fn(arg, 0);
	for (unsigned i = 1; i < n; i++) {
		if (started[i])
			(void)pthread_join(threads[i], NULL);
		else
			fn(arg, i); /* no thread for it (EAGAIN under a thread limit): done here */
	}
}

void hpshm__posix_split(size_t len, size_t page_size, unsigned n, unsigned i, size_t *off, size_t *part)
{
	size_t pages = len / page_size, each = pages / n, extra = pages % n;
	/* The first `extra` parts take one page more, so the parts differ by one page at most. */
	size_t first = (size_t)i * each + (i < extra ? i : extra);

	*off = first * page_size;
	*part = (each + (i < extra ? 1 : 0)) * page_size;
}
