/* SPDX-License-Identifier: MIT */
/*
 * core/handle.c -- a segment's handle once it exists: who owns it, destroying or detaching
 * it, and what it reports.  Layers: doc/architecture.md.  Creating it is core/segment.c,
 * attaching and opening it core/attach.c and core/open.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"
#include "port.h"

int hpshm__segment_owned(const struct hpshm_segment *seg)
{
	uint64_t start;

	/* Our pid: the creator, unless the creator is gone and the kernel gave its pid to a
	 * process that inherited the handle by fork(), which started later.  A start time the
	 * OS does not tell (0) leaves the pid to decide. */
	if (seg->creator_pid == 0 || seg->creator_pid != hpshm__port_self(&start))
		return 0;
	return seg->creator_start == 0 || start == 0 || start == seg->creator_start;
}

/*
 * Unmap seg in this process and free the handle; with remove, the provider also removes the
 * object (its name, its SysV id).  A provider without detach() has neither HPSHM_CAP_REATTACH
 * nor HPSHM_CAP_NAMED (the registry refuses it otherwise): its destroy() releases nothing any
 * other process could still use, so it serves for both (hpshm/provider.h).
 */
static int segment_release(hpshm_segment *seg, int remove)
{
	/* The provider clears the mapping as it releases it: log what it was. */
	void *addr = seg->map.addr;
	size_t size = seg->map.size;
	int rc;

	hpshm__resize_leave(seg);
	if (remove || !seg->inst.ops->detach)
		rc = seg->inst.ops->destroy(&seg->inst, &seg->map);
	else
		rc = seg->inst.ops->detach(&seg->inst, &seg->map);
	hpshm__companion_release(&seg->companion, remove);
	hpshm__log(&seg->cfg, HPSHM_LOG_INFO, "%s %s segment at %p (%zu bytes)%s", remove ? "destroyed" : "detached",
		   seg->inst.name, addr, size, rc < 0 ? ": the OS refused to release it" : "");
	free(seg);
	return rc;
}

int hpshm_segment_destroy(hpshm_segment *seg)
{
	/* Only the owner removes: a worker made by fork() that runs its clean-up code, or a
	 * process that attached or opened the segment, only detaches. */
	return seg ? segment_release(seg, hpshm__segment_owned(seg)) : 0;
}

int hpshm_segment_detach(hpshm_segment *seg)
{
	return seg ? segment_release(seg, 0) : 0;
}

void *hpshm_segment_address(const hpshm_segment *seg)
{
	return seg ? seg->map.addr : NULL;
}

size_t hpshm_segment_size(const hpshm_segment *seg)
{
	return seg ? seg->usable : 0;
}

int hpshm_segment_is_owner(const hpshm_segment *seg)
{
	return seg ? hpshm__segment_owned(seg) : 0;
}

const hpshm_report *hpshm_segment_report(const hpshm_segment *seg)
{
	return seg ? &seg->report : NULL;
}

const char *hpshm_populate_name(unsigned methods)
{
	/* The methods are the port's, and so are their names. */
	return hpshm__port_populate_name(methods);
}

/* " nodes=0:512MiB,1:512MiB": where the pages landed, when the report has it. */
static void report_nodes(const hpshm_report *r, char *buf, size_t len)
{
	size_t used = 0;
	char sz[32];
	int n;

	buf[0] = '\0';
	for (unsigned i = 0; i < r->nnodes && i < HPSHM_REPORT_NODES; i++) {
		if (r->node_bytes[i] == 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%u:%s", used ? "," : " nodes=", i,
			     hpshm_size_format((size_t)r->node_bytes[i], sz, sizeof(sz)));
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

int hpshm_report_format(const hpshm_report *r, char *buf, size_t len)
{
	char req[32], mapped[32], ps[32], how[64], threads[32], nodes[160];
	/* A report of version 1 has no origin: it is a created segment's. */
	unsigned origin = r && r->version >= 2 ? r->origin : HPSHM_ORIGIN_CREATED;

	if (!r || (!buf && len))
		return HPSHM_EINVAL;
	/*
	 * A created segment's line ends with what the create took and how many providers it
	 * tried; an attached or opened one was created elsewhere, so its line says which it was,
	 * what that took, and whether it sits at the creator's address.
	 */
	if (origin == HPSHM_ORIGIN_CREATED)
		snprintf(how, sizeof(how), "create=%.1f ms attempts=%u", (double)r->create_ns / 1e6, r->nattempts);
	else
		snprintf(how, sizeof(how), "%s=%.1f ms address=%s", origin == HPSHM_ORIGIN_OPENED ? "open" : "attach",
			 (double)r->attach_ns / 1e6, r->relocated ? "elsewhere" : "creator");
	/* Threads and nodes are said only when there is something to say (a version 3 report). */
	threads[0] = nodes[0] = '\0';
	if (r->version >= 3 && r->populate_threads > 1)
		snprintf(threads, sizeof(threads), ", %u threads", r->populate_threads);
	if (r->version >= 3)
		report_nodes(r, nodes, sizeof(nodes));
	return snprintf(buf, len, "provider=%s size=%s mapped=%s page_size=%s (%s) huge=%s populate=%s (%.1f ms%s)%s %s",
			r->provider[0] ? r->provider : "none", hpshm_size_format(r->requested_size, req, sizeof(req)),
			hpshm_size_format(r->mapped_size, mapped, sizeof(mapped)),
			hpshm_size_format(r->page_size, ps, sizeof(ps)), r->verified ? r->verified_by : "unverified",
			r->huge ? "yes" : "no", hpshm_populate_name(r->populate), (double)r->populate_ns / 1e6, threads,
			nodes, how);
}

int hpshm_segment_nodes(const hpshm_segment *seg, uint64_t *bytes, unsigned max, hpshm_error *err)
{
	int n;

	if (!seg || !bytes || max == 0)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL,
				       "hpshm_segment_nodes: %s", !seg ? "NULL segment" : "no room for a node's count");
	memset(bytes, 0, (size_t)max * sizeof(*bytes));
	n = hpshm__port_numa_where(seg->map.addr, seg->map.size, seg->report.page_size ? seg->report.page_size
										    : hpshm__port_base_page_size(),
				   bytes, max > INT_MAX ? INT_MAX : (int)max);
	if (n == HPSHM_ENOTSUP)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, "move_pages", NULL,
				       "this system does not say on which NUMA node a page is");
	if (n < 0)
		return hpshm_error_set(err, n, 0, "move_pages", NULL, "cannot read where the segment's pages are");
	return n;
}
