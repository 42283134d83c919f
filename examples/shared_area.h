/* SPDX-License-Identifier: MIT */
/*
 * examples/shared_area.h -- what the two examples agree to keep in the segment.
 *
 * A real server puts its own structures at the start of the segment; these examples put a
 * small one there so that a child started by exec can prove three things to itself:
 *
 *   - it sees the creator's object: a word at the start of every 4KiB of the segment holds
 *     a value computed from a seed the creator chose;
 *   - it sees it at the creator's address: area->seed_ptr is a raw pointer the creator
 *     stored, and the child follows it (the reason re-attach maps at the same address);
 *   - the creator sees what the child writes: child i stores area_reply(seed, i) in
 *     area->reply[i], which the creator checks after the child has exited.
 *
 * Only the public API and plain C11 are used, so this file is what a server author copies.
 */
#ifndef HPSHM_EXAMPLES_SHARED_AREA_H
#define HPSHM_EXAMPLES_SHARED_AREA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AREA_MAGIC  "hpshm-example-1"  /* 15 characters and the NUL fill magic[16] */
#define AREA_SLOTS  64                 /* most children the creator waits for */
#define AREA_STRIDE 4096               /* one pattern word per 4KiB: every page is checked */

struct area {
	char      magic[16];          /* AREA_MAGIC once the creator has written everything */
	uint64_t  seed;               /* chosen by the creator; the pattern derives from it */
	uint64_t *seed_ptr;           /* &seed, as a pointer: valid only at the creator's address */
	uint64_t  nwords;             /* pattern words, at AREA_STRIDE, 1 .. nwords */
	uint64_t  reply[AREA_SLOTS];  /* child i writes area_reply(seed, i) in reply[i] */
};

/* The pattern word at offset k * AREA_STRIDE (k >= 1; k = 0 is the area itself). */
static inline uint64_t area_word(uint64_t seed, uint64_t k)
{
	return seed ^ (k * UINT64_C(0x9e3779b97f4a7c15));
}

/* What child slot writes back: differs from every pattern word and from zero. */
static inline uint64_t area_reply(uint64_t seed, unsigned slot)
{
	return ~seed ^ ((uint64_t)(slot + 1) << 40) ^ UINT64_C(0x5eed);
}

/* How many pattern words fit in usable bytes (each word lies wholly inside them). */
static inline uint64_t area_nwords(size_t usable)
{
	return usable >= AREA_STRIDE + sizeof(uint64_t) ? (usable - sizeof(uint64_t)) / AREA_STRIDE : 0;
}

static inline uint64_t *area_word_at(void *base, uint64_t k)
{
	return (uint64_t *)((char *)base + k * AREA_STRIDE);
}

#endif /* HPSHM_EXAMPLES_SHARED_AREA_H */
