/* SPDX-License-Identifier: MIT */
/*
 * tests/resize_child.h -- what test_resize.c and resize_child.c agree on: the pattern the
 * owner writes, and the exit code of a child that touched what it may not.
 */
#ifndef HPSHM_TESTS_RESIZE_CHILD_H
#define HPSHM_TESTS_RESIZE_CHILD_H

#include <stddef.h>
#include <stdint.h>

/* resize_child's exit code when a touch past its size faulted, as it must. */
#define RESIZE_CHILD_FAULTED 40

/* The word the owner writes at byte offset off (a multiple of 8) of the segment. */
static inline uint64_t resize_pattern(size_t off)
{
	return (uint64_t)off * 0x9e3779b97f4a7c15ULL ^ 0xc3a5c85c97cb3127ULL;
}

#endif /* HPSHM_TESTS_RESIZE_CHILD_H */
