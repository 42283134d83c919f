/* SPDX-License-Identifier: MIT */
/*
 * backends/plain_windows.c -- shared memory in base pages on Windows: the fallback that always
 * works.
 *
 * Mechanism: a section backed by the paging file, CreateFileMappingW(INVALID_HANDLE_VALUE,
 * PAGE_READWRITE | SEC_COMMIT), mapped with MapViewOfFileEx() (backends/winsection.c has the
 * details shared with windows_large).  Unnamed segments are sections without a name, which a
 * child started by hpshm_child_spawn() inherits by handle; named ones are Local\hpshm.<name>, with a
 * DACL that admits the current user alone.
 *
 * Operator setup: none.  The size is charged against the commit limit (physical memory plus
 * the paging files) at creation: a machine short of it says so then (ERROR_COMMITMENT_LIMIT),
 * never at first touch.
 *
 * Quirks: the view's address must be a multiple of 64 KiB, the allocation granularity, which
 * is why the core aligns every re-attachable address to it (HPSHM__ADDRESS_GRANULE) on every
 * OS.  Pages are 4 KiB and may be trimmed from the working set and paged out: unlike
 * large pages they are not locked.
 *
 * Namespace: Local\.  Global\ (visible to every session, for a service and the programs of
 * logged-on users) needs SeCreateGlobalPrivilege; the shared code supports it, but the
 * configuration has no key to choose it yet (one would be read here with
 * rq->option(rq, ...)), so named segments are always Local\.
 *
 * Liveness: a section exists exactly while some process holds it, so a name that opens is
 * alive, and a crash leaves nothing behind.  scan() lists the sections under hpshm's prefix
 * in the session's Local\ and the Global\ namespace from the object manager's directories
 * (every one alive, with the creator's header), for `hpshm ls`; remove() deletes nothing,
 * because Windows deletes a section with its last handle and hpshm never closes another
 * process's: it says the section is gone, or who still holds it.  So `hpshm gc` on Windows
 * lists and keeps.  windows_large lists the sections whose header names it, and this provider
 * every other object under the prefix, so each is listed once.
 *
 * Capabilities: REATTACH, NAMED; not HUGE, not FD (a HANDLE, not a descriptor).  probe()
 * always says yes, offering the base page size (4 KiB): this provider ends every
 * huge_pages=try walk on Windows.
 *
 * Re-attach: "handle=<n>" (inherited) or "name=Local\hpshm.<name>", at the creator's address.
 * A named segment outlives its creator's destroy() while children still map it: Windows
 * removes the name with the last handle, never on request.
 */
#include <string.h>

#include "backends/winsection.h"
#include "hpshm/provider.h"
#include "port.h"

static int plain_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	(void)rq;
	/* Base pages, always there: no pool to count, nothing for an operator to fix. */
	out->sys_errno = 0;
	out->reason[0] = '\0';
	out->fix[0] = '\0';
	out->nsizes = 1;
	out->sizes[0] = hpshm__base_page_size();
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	out->advice = 0;
	return 0;
}

static const struct hpshm__winsection_kind plain_kind = {
	.provider        = "plain",
	.section_flags   = 0,
	.view_flags      = 0,
	.mechanism_error = NULL, /* base pages have no mechanism of their own to fail */
	.lists_rest      = 1,
};

static int plain_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
			hpshm_error *err)
{
	(void)self;
	return hpshm__winsection_create(&plain_kind, m, rq, HPSHM__WINSECTION_LOCAL, err);
}

static int plain_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	return hpshm__winsection_unmap(m);
}

static int plain_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	(void)self;
	return hpshm__winsection_identify(m, id, len);
}

static int plain_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
			const char *id, hpshm_error *err)
{
	(void)self;
	return hpshm__winsection_attach(&plain_kind, m, rq, id, err);
}

static int plain_detach(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	return hpshm__winsection_unmap(m);
}

static int plain_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	(void)self;
	return hpshm__winsection_scan(&plain_kind, fn, user);
}

static int plain_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
			hpshm_error *err)
{
	(void)self;
	return hpshm__winsection_lookup(&plain_kind, rq, f, err);
}

static int plain_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	(void)self;
	return hpshm__winsection_remove(f, err);
}

const struct hpshm_provider hpshm__provider_plain = {
	.abi_version  = HPSHM_PROVIDER_ABI,
	.name         = "plain",
	.summary      = "base pages from a section backed by the paging file; always available",
	.caps         = HPSHM_CAP_REATTACH | HPSHM_CAP_NAMED,
	.probe        = plain_probe,
	.create       = plain_create,
	.destroy      = plain_destroy,
	.identify     = plain_identify,
	.attach       = plain_attach,
	.detach       = plain_detach,
	.scan         = plain_scan,
	.remove       = plain_remove,
	.lookup       = plain_lookup,
	.requirements = NULL, /* base pages need nothing set up */
};
