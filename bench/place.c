/* SPDX-License-Identifier: MIT */
/*
 * bench/place.c -- where the members of a group are mapped.
 *
 * Member i of a group is mapped at slot i of an address space reservation (os.h), 1 GiB-aligned,
 * and the slot is reserved again after teardown: page-table figures depend on alignment (a
 * 4 GiB region can span 4 or 5 PMD pages), and hpshm and its raw peer must be compared on
 * identical layouts.
 */
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "os.h"
#include "run.h"

/*
 * One address space reservation holds a slot per member of the largest group (os.h): member
 * i of any group is created at slot i, 1 GiB-aligned, and the slot is reserved again after
 * its teardown.  A slot is as large as the biggest region rounded up to whole GiB, so every
 * region starts on a 1 GiB boundary and has the same page-table layout as its peers.
 */
void place_init(struct run *run, unsigned nslots)
{
	const struct bench_options *opt = run->opt;
	size_t largest = GIB, span;
	char why[BENCH_WHY_MAX] = "";

	for (unsigned s = 0; s < opt->npage_sizes; s++)
		if (opt->page_sizes[s] > largest)
			largest = opt->page_sizes[s];
	/* The size, a header page a re-attachable segment may carry, rounded to the largest page. */
	span = (opt->size + 2 * largest) / largest * largest;
	run->slot_len = (span + GIB - 1) / GIB * GIB;
	run->nslots = nslots;
	/*
	 * Without slots every region goes where the system puts it: the ratios stay right, only
	 * page tables may differ by a page between peers.  So a reservation that cannot be had
	 * (four 2 GiB slots are more than a 32-bit process has) is said, not fatal.
	 */
	if (run->slot_len > (SIZE_MAX / 2 - GIB) / nslots) {
		snprintf(why, sizeof(why), "%u slots of %zu MiB do not fit this process's address space", nslots,
			 run->slot_len >> 20);
	} else if (bench_os_slots_reserve(run->slot, nslots, run->slot_len, GIB, why, sizeof(why)) == 0) {
		return;
	}
	bench_progress(opt, "members are mapped where the system puts them: %s", why);
	for (unsigned i = 0; i < nslots; i++)
		run->slot[i] = NULL;
}

/* Open slot i for a region, or reserve it again after teardown. */
void *place_open(struct run *run, unsigned i)
{
	if (run->slot[i])
		bench_os_slot_open(run->slot[i], run->slot_len);
	return run->slot[i];
}

void place_close(struct run *run, unsigned i)
{
	/* Something else took part of it: regions there go where the system says. */
	if (run->slot[i] && bench_os_slot_close(run->slot[i], run->slot_len) < 0)
		run->slot[i] = NULL;
}

/* Give up what is still ours: the slots still reserved. */
void place_free(struct run *run)
{
	bench_os_slots_free(run->slot, run->nslots, run->slot_len);
	run->nslots = 0;
}

