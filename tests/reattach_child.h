/* SPDX-License-Identifier: MIT */
/*
 * tests/reattach_child.h -- what test_reattach.c, test_crash.c and reattach_child.c agree on:
 * the pattern the parent writes, where the children write back, and the child's exit codes.
 */
#ifndef HPSHM_TESTS_REATTACH_CHILD_H
#define HPSHM_TESTS_REATTACH_CHILD_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of reattach_child: which check failed (0: all passed). */
enum {
	CHILD_EATTACH   = 10, /* hpshm_segment_attach_env() failed */
	CHILD_EADDRESS  = 11, /* attached at another address than the parent's */
	CHILD_EPATTERN  = 12, /* the parent's pattern is not there */
	CHILD_EKERNELPS = 13, /* smaps KernelPageSize is not the parent's page size */
	CHILD_EREPORTPS = 14, /* the report's verified page size is not the parent's */
	CHILD_EDETACH   = 15, /* detach failed or left the range mapped */
	CHILD_EOWNER    = 16, /* hpshm_segment_is_owner() said 1 in the child */
	CHILD_EREPORTV  = 17, /* the attached segment's report lacks its version or zeroed reserved space */
	CHILD_ECLASH    = 20, /* attach over a taken range did not fail with HPSHM_EEXIST */
	CHILD_EHOLDER   = 21, /* ... or its message does not name the holder's maps line */
	CHILD_ELEAK     = 22, /* ... or it left a mapping or a descriptor behind */
	CHILD_EACCEPTED = 23, /* refuse: a token that names another object (or none) attached */
	CHILD_EREFUSAL  = 24, /* refuse: it was refused, but not with HPSHM_EINVAL (refuse-open: the code asked) */
	CHILD_EINHERIT  = 25, /* fd: the descriptor is open (or closed) against what the test said */
	CHILD_EUSAGE    = 30, /* bad arguments, or the test's own setup failed */
	CHILD_ERESIZE   = 40  /* resize-read: plus the RSTORM_E* code of the check that failed (resize_storm.h) */
};

/* The word the parent writes at index i of the segment. */
static inline uint64_t reattach_pattern(size_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ 0x5a5a5a5a0f0f0f0fULL;
}

/* Child k's write-back word: the slots are spread over the segment, one per 1/nslots. */
static inline size_t reattach_slot_word(size_t k, size_t words, size_t nslots)
{
	return k * (words / nslots) + (k * 7 % (words / nslots));
}

/* Is word i some child's write-back slot (so other children must not check it)? */
static inline int reattach_is_slot(size_t i, size_t words, size_t nslots)
{
	size_t k = i / (words / nslots);

	return k < nslots && reattach_slot_word(k, words, nslots) == i;
}

#endif /* HPSHM_TESTS_REATTACH_CHILD_H */
