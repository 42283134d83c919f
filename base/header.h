/* SPDX-License-Identifier: MIT */
/*
 * base/header.h -- the segment header: what the core writes at the tail of a named or
 * re-attachable segment, so an attaching process, `hpshm ls` and `hpshm gc` can tell what an
 * object is and whose.
 *
 * Internal, and not part of the provider SDK since ABI 3: the core writes and decodes it; the
 * backends that keep named objects read its bytes for scan() (hpshm_found.header) and check
 * the magic and the creation mark, which is why it sits in the base layer they both use.  A
 * provider outside the tree gets the same classification from hpshm_header_classify()
 * (provider.h), without the layout.
 *
 * Fixed-width, in the machine's byte order: only processes on this machine read it.
 * Reading rules: the magic says the object is hpshm's, whatever the version.  Members are only
 * ever appended, so those of version 1 (up to name) are at the same place in every version and
 * a reader that needs only them (scan(), `hpshm ls`, `hpshm gc`) checks the magic alone.  A
 * member appended in version N may be read only when version >= N and header_size covers it
 * (HPSHM__HEADER_HAS()); attach needs creator_address, so it refuses a version 1 header, and
 * a header kept in a companion must say which object it describes, so attach refuses one
 * before version 3 there, naming the version.  A layout that cannot keep these rules gets
 * another magic.
 */
#ifndef HPSHM_BASE_HEADER_H
#define HPSHM_BASE_HEADER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hpshm/provider.h"

/* The header magic, at the start of struct hpshm_header. */
#define HPSHM_HEADER_MAGIC "HPSHMSEG"
/* The header's format version: 2 added creator_address, 3 added object, 4 the resize_ members. */
#define HPSHM_HEADER_VERSION 4

struct hpshm_header {
	char     magic[8];                 /* HPSHM_HEADER_MAGIC, not NUL-terminated */
	uint32_t version;                  /* HPSHM_HEADER_VERSION */
	uint32_t header_size;              /* sizeof(struct hpshm_header) when written */
	uint64_t usable_size;              /* bytes before the header region */
	uint64_t page_size;                /* page size the creator verified */
	uint64_t nonce;                    /* random; the token carries the same value */
	int64_t  creator_pid;              /* the creating process */
	uint64_t creator_start;            /* its start time (clock ticks since boot on Linux) */
	uint64_t created_unix;             /* creation time, seconds since the epoch */
	char     boot_id[40];              /* the boot it was created in (NUL-terminated) */
	char     provider[HPSHM_NAME_MAX]; /* provider name (NUL-terminated) */
	char     name[128];                /* segment name, or empty (NUL-terminated) */
	/* ---- version 2 ---- */
	uint64_t creator_address;          /* where the creator mapped the segment: a child maps it there too */
	/* ---- version 3 ---- */
	char     object[HPSHM_OBJECT_MAX]; /* the segment's hpshm_mapping.object at create (NUL-terminated),
	                                    * or empty: what a header kept outside the object describes */
	/* ---- version 4: a resizable segment (max_size, core/resize.c) ---- */
	uint64_t resize_max;               /* bytes it may grow to; 0: its size is fixed (usable_size) */
	uint64_t resize_word;              /* the published size and its generation in one word, read and
	                                    * written atomically (HPSHM__RESIZE_WORD in core/internal.h) */
	uint64_t resize_backed;            /* bytes from the start that hold pages: the owner's account */
	uint32_t resize_slots;             /* entries in the table of attached processes (struct
	                                    * hpshm_resize_slot) that ends where the header region starts */
	uint32_t resize_spare;             /* zero */
};

/*
 * One process that maps a resizable segment, in the table at its tail: what it has applied
 * of the published size.  The owner gives a shrink's pages back only when no live process in
 * the table may still touch them (core/resize.c).  Every member is read and written as an
 * atomic 64-bit word.
 */
struct hpshm_resize_slot {
	uint64_t pid;    /* the process; 0: the slot is free */
	uint64_t start;  /* its start time (hpshm__port_process_start()), 0 if unknown */
	uint64_t word;   /* the resize_word it applied last */
	uint64_t mapped; /* the bytes it may touch */
};

/* The words two processes share are 8-byte aligned, on 32-bit systems too. */
_Static_assert(offsetof(struct hpshm_header, resize_max) % 8 == 0, "resize_max is not 8-byte aligned");
_Static_assert(sizeof(struct hpshm_resize_slot) == 32, "a resize slot is 32 bytes");

/* May member (an offsetof() and a sizeof()) of version `since` be read in h (the reading rules)? */
#define HPSHM__HEADER_HAS(h, since, member)                                                       \
	((h)->version >= (since) &&                                                                \
	 (h)->header_size >= offsetof(struct hpshm_header, member) + sizeof((h)->member))

/* The bytes a provider hands over in hpshm_found.header hold a whole header. */
_Static_assert(sizeof(struct hpshm_header) <= HPSHM_HEADER_BYTES, "hpshm_found.header is too small");
_Static_assert(sizeof(struct hpshm_header) <= HPSHM_HEADER_REGION, "the header region is too small");

/* Is h (just read) hpshm's?  1 with its strings NUL-terminated, or 0. */
int hpshm__header_accept(struct hpshm_header *h);

/*
 * Whose is an object whose last len bytes (its header region) are region?  provider is the
 * name a header of the scanning provider carries, or NULL.  HPSHM_FOUND_HEADER with h filled;
 * HPSHM_FOUND_MARKED for a header of provider torn by a kill while it was written (every
 * field there but the magic); HPSHM_FOUND_BARE if the region is all zeros; else
 * HPSHM_FOUND_FOREIGN_HEADER.  h is zeroed but for HPSHM_FOUND_HEADER.  base/header.c; the
 * exported hpshm_header_classify() (provider.h) is this with the boot compared.
 */
int hpshm__header_class(const void *region, size_t len, const char *provider, struct hpshm_header *h);

/* The header a provider found (hpshm_found.header), as a struct. */
static inline void hpshm__header_of(const struct hpshm_found *f, struct hpshm_header *h)
{
	memcpy(h, f->header, sizeof(*h));
}

/* Hand a header read from an object over in hpshm_found.header. */
static inline void hpshm__header_to(struct hpshm_found *f, const struct hpshm_header *h)
{
	memset(f->header, 0, sizeof(f->header));
	memcpy(f->header, h, sizeof(*h));
}

#endif /* HPSHM_BASE_HEADER_H */
