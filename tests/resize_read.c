/* SPDX-License-Identifier: MIT */
/*
 * tests/resize_read.c -- one loop of a process that keeps a resizable segment open while its
 * owner grows and shrinks it (resize_storm.h): the storms' forked reader and reattach_child's
 * resize-read mode, started by exec, run the same checks.  Public API only: reattach_child
 * links it without the test support library.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hpshm.h"
#include "resize_storm.h"

size_t rstorm_check_pages(const volatile uint64_t *base, size_t size, size_t page)
{
	for (size_t off = 0; off < size; off += page) {
		uint64_t w = __atomic_load_n(&base[off / sizeof(uint64_t)], __ATOMIC_RELAXED);

		if (w != 0 && w != RSTORM_STAMP(off / page))
			return off + 1;
	}
	return 0;
}

int rstorm_read_loop(hpshm_segment *seg, size_t page, unsigned char *stamped, int sync, int *bad_page,
		     hpshm_error *err)
{
	const volatile uint64_t *base = hpshm_segment_address(seg);
	size_t size;

	/* A process syncs at its safe points, not at every read: between them it keeps its size. */
	if (sync) {
		if (hpshm_segment_sync(seg, err) < 0)
			return RSTORM_ESYNC;
		/*
		 * A sync applies every size published since the last one.  Past the smallest of
		 * them the owner may have given the pages back and taken new ones before this
		 * process reached the last size (doc/resize.md), and the process cannot tell which
		 * size that was: what it saw stamped holds from one sync to the next, no further.
		 */
		memset(stamped, 0, RSTORM_MAX_PAGES);
	}
	size = hpshm_segment_size(seg);
	if (size == 0 || size % page != 0 || size > hpshm_segment_max_size(seg) || size / page > RSTORM_MAX_PAGES)
		return RSTORM_ESIZE;
	/* unguarded: a fault kills the process, and whoever waits for it sees the signal */
	if (rstorm_check_pages(base, size, page))
		return RSTORM_ESTAMP;
	/* Below it, a page once stamped stays so: nothing gives it back under this process. */
	for (size_t off = 0; off < size; off += page) {
		if (__atomic_load_n(&base[off / sizeof(uint64_t)], __ATOMIC_RELAXED) != 0) {
			stamped[off / page] = 1;
		} else if (stamped[off / page]) {
			*bad_page = (int)(off / page);
			return RSTORM_ELOST;
		}
	}
	return 0;
}
