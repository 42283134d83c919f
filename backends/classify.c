/* SPDX-License-Identifier: MIT */
/*
 * backends/classify.c -- hpshm_header_classify(), the provider SDK's door to the header
 * classification of base/header.c: what an out-of-tree provider needs to write scan() and
 * remove() without the header's layout (include/hpshm/provider.h; the layers:
 * doc/architecture.md).
 *
 * It sits above base/ only because telling another boot's header needs this boot's identity,
 * which the port knows.
 */
#include <string.h>

#include "base/base.h"
#include "base/header.h"
#include "hpshm/provider.h"
#include "port.h"

/* Was h (hpshm's, accepted) written in another boot?  1, or 0 when it was this one or either is unknown. */
static int classify_other_boot(const struct hpshm_header *h)
{
	char boot[sizeof(h->boot_id)];

	return h->boot_id[0] != '\0' && hpshm__port_boot_id(boot, sizeof(boot)) == 0 && boot[0] != '\0' &&
	       strcmp(boot, h->boot_id) != 0;
}

int hpshm_header_classify(const void *bytes, size_t len, const char *provider, struct hpshm_found *f,
			  struct hpshm_header_facts *facts)
{
	struct hpshm_header h;
	int cls;

	memset(&h, 0, sizeof(h));
	/* Nothing read proves nothing: never taken for an object's empty tail. */
	cls = bytes && len > 0 ? hpshm__header_class(bytes, len, provider, &h) : HPSHM_FOUND_FOREIGN_HEADER;
	if (f) {
		f->has_header = cls;
		hpshm__header_to(f, &h); /* h is all zeros but for HPSHM_FOUND_HEADER */
	}
	if (facts) {
		memset(facts, 0, sizeof(*facts));
		facts->version = HPSHM_HEADER_FACTS_VERSION;
		if (cls == HPSHM_FOUND_HEADER) {
			facts->other_boot = classify_other_boot(&h);
			facts->nonce = h.nonce;
			facts->creator_pid = (long long)h.creator_pid;
			hpshm__strlcpy(facts->provider, h.provider, sizeof(facts->provider));
			hpshm__strlcpy(facts->name, h.name, sizeof(facts->name));
		}
	}
	return cls;
}
