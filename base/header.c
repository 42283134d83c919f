/* SPDX-License-Identifier: MIT */
/*
 * base/header.c -- whose is an object, from the bytes of its header region: the one
 * classification the providers' scan() and remove() and the exported
 * hpshm_header_classify() share (base/header.h; the layers: doc/architecture.md).
 *
 * Plain C on bytes already read: how a provider reads its object's tail is its own business.
 */
#include <string.h>

#include "base/header.h"

int hpshm__header_accept(struct hpshm_header *h)
{
	if (memcmp(h->magic, HPSHM_HEADER_MAGIC, sizeof(h->magic)) != 0)
		return 0;
	h->boot_id[sizeof(h->boot_id) - 1] = '\0';
	h->provider[sizeof(h->provider) - 1] = '\0';
	h->name[sizeof(h->name) - 1] = '\0';
	return 1;
}

/* Is every byte of p[0, len) zero? */
static int header_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

int hpshm__header_class(const void *region, size_t len, const char *provider, struct hpshm_header *h)
{
	const unsigned char *magic;

	memset(h, 0, sizeof(*h));
	if (header_zero(region, len))
		return HPSHM_FOUND_BARE;
	if (len < sizeof(*h))
		return HPSHM_FOUND_FOREIGN_HEADER;
	memcpy(h, region, sizeof(*h));
	if (hpshm__header_accept(h))
		return HPSHM_FOUND_HEADER;
	/*
	 * A writer puts the magic last (the provisional header of backends/named_create.c, the
	 * core's header), so a process killed in the middle leaves every other field written and
	 * the magic zero or partly there: hpshm's, torn.  A header of this provider in all but the magic is that.
	 */
	magic = (const unsigned char *)h->magic;
	for (size_t i = 0; i < sizeof(h->magic); i++)
		if (magic[i] != 0 && magic[i] != (unsigned char)HPSHM_HEADER_MAGIC[i])
			provider = NULL;
	if (provider && h->version != 0 && h->header_size != 0 &&
	    strncmp(h->provider, provider, sizeof(h->provider)) == 0) {
		memset(h, 0, sizeof(*h));
		return HPSHM_FOUND_MARKED;
	}
	memset(h, 0, sizeof(*h));
	return HPSHM_FOUND_FOREIGN_HEADER;
}
