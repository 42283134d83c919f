/* SPDX-License-Identifier: MIT */
/*
 * tools/numa.c -- the NUMA part of `hpshm probe`, `plan` and `check`: the nodes with their
 * share of each huge page pool, what each node needs for the configuration's numa= policy,
 * and where a checked segment's pages landed.
 *
 * The nodes come through ports/facts.h from the same readers the library's check uses
 * (ports/linux/numa.c), so plan's per-node figures are the ones a create is judged by.  A node's
 * share follows the policy: bind spreads the segment evenly over its nodes and a shortfall
 * fails the create (the kernel's huge page reservation is global, the bound faults are not);
 * preferred puts it all on its node and interleave spreads it evenly, and there a shortfall
 * only sends pages to other nodes.  local names no node ahead of time (it is the creating
 * thread's), so plan has nothing per node to say for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "ports/facts.h"
#include "tool.h"

static const char *const numa_words[] = { "default", "local", "interleave", "bind", "preferred" };

int tool_numa_policy(const hpshm_config *cfg, struct hpshm__numa *out, char *text, size_t len)
{
	const char *colon, *p;
	size_t wlen;

	memset(out, 0, sizeof(*out));
	if (hpshm_config_get(cfg, "numa", text, len) < 0)
		snprintf(text, len, "default");
	colon = strchr(text, ':');
	wlen = colon ? (size_t)(colon - text) : strlen(text);
	for (int i = 0; i < (int)(sizeof(numa_words) / sizeof(numa_words[0])); i++)
		if (strlen(numa_words[i]) == wlen && strncmp(text, numa_words[i], wlen) == 0)
			out->mode = i;
	/* The library formats the list as it parsed it ("0-1,3"): numbers and ranges only. */
	for (p = colon ? colon + 1 : ""; *p != '\0';) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (unsigned long n = lo; n <= hi && n < HPSHM__MAX_NODES; n++)
			out->nodes |= (uint64_t)1 << n;
		p = *end == ',' ? end + 1 : end + (*end != '\0');
	}
	return out->mode;
}

int tool_numa_needs(const hpshm_config *cfg, size_t pages, size_t page_size, struct tool_node_need *out, int max,
		    char *policy, size_t plen)
{
	struct hpshm__node nodes[HPSHM__MAX_NODES];
	struct hpshm__numa pol;
	uint64_t set;
	int n, k = 0, count = 0;

	tool_numa_policy(cfg, &pol, policy, plen);
	if (pol.mode == HPSHM__NUMA_DEFAULT || pol.mode == HPSHM__NUMA_LOCAL)
		return 0;
	n = hpshm__os_numa_nodes(page_size, nodes, HPSHM__MAX_NODES);
	set = pol.nodes;
	if (set == 0) /* interleave over every node with memory */
		for (int i = 0; i < n; i++)
			set |= nodes[i].has_memory ? (uint64_t)1 << nodes[i].id : 0;
	for (int id = 0; id < HPSHM__MAX_NODES; id++)
		k += (int)(set >> id & 1);
	for (int id = 0; id < HPSHM__MAX_NODES && count < max; id++) {
		struct tool_node_need *o = &out[count];

		if (!(set >> id & 1))
			continue;
		memset(o, 0, sizeof(*o));
		o->node = id;
		o->strict = pol.mode == HPSHM__NUMA_BIND;
		o->share = (unsigned long)(pol.mode == HPSHM__NUMA_PREFERRED ? pages : (pages + (size_t)k - 1) / (size_t)k);
		for (int i = 0; i < n; i++)
			if (nodes[i].id == id) {
				o->present = nodes[i].has_memory;
				o->free = nodes[i].pool_free;
				o->total = nodes[i].pool_total;
			}
		o->target = o->free >= o->share ? o->total : o->total + (o->share - o->free);
		hpshm__os_numa_pool_file(id, page_size, o->file, sizeof(o->file));
		count++;
	}
	return count;
}

/* Columns of the per-node pools: the pool sizes the tool shows. */
static int numa_sizes(const struct hpshm__pool *pools, int npools, size_t *sizes)
{
	int n = 0;

	for (int i = 0; i < npools && n < HPSHM__MAX_PAGE_SIZES; i++)
		sizes[n++] = pools[i].page_size;
	return n;
}

/* Free memory for people, "18.0GiB"; "?" if unknown. */
static char *numa_gib(uint64_t bytes, char *buf, size_t len)
{
	if (bytes == 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%.1fGiB", (double)bytes / (double)((uint64_t)1 << 30));
	return buf;
}

void tool_numa_probe_text(size_t size, const hpshm_config *cfg, const struct hpshm__pool *pools, int npools)
{
	static struct hpshm__node nodes[HPSHM__MAX_PAGE_SIZES + 1][HPSHM__MAX_NODES];
	size_t sizes[HPSHM__MAX_PAGE_SIZES], ps = tool_config_page_size(cfg);
	int nsizes = numa_sizes(pools, npools, sizes), n;
	char a[32], b[32];

	n = hpshm__os_numa_nodes(0, nodes[0], HPSHM__MAX_NODES);
	printf("\nNUMA nodes (%s):\n", hpshm__os_numa_source()[0] ? hpshm__os_numa_source() : "none on this system");
	if (n == 0)
		printf("  none: only numa=default applies here\n");
	else {
		printf("  %-6s %-7s %5s %10s", "node", "memory", "cpus", "mem free");
		for (int s = 0; s < nsizes; s++) {
			snprintf(b, sizeof(b), "%s free/total", hpshm_size_format(sizes[s], a, sizeof(a)));
			printf(" %17s", b);
			(void)hpshm__os_numa_nodes(sizes[s], nodes[s + 1], HPSHM__MAX_NODES);
		}
		printf("\n");
		for (int i = 0; i < n; i++) {
			printf("  %-6d %-7s %5u %10s", nodes[0][i].id, nodes[0][i].has_memory ? "yes" : "no",
			       nodes[0][i].cpus, numa_gib(nodes[0][i].mem_free, a, sizeof(a)));
			for (int s = 0; s < nsizes; s++) {
				snprintf(b, sizeof(b), "%lu/%lu", nodes[s + 1][i].pool_free, nodes[s + 1][i].pool_total);
				printf(" %17s", b);
			}
			printf("\n");
		}
	}
	printf("\npopulate threads for %s on %s pages: %u\n", hpshm_size_format(size, a, sizeof(a)),
	       hpshm_size_format(ps ? ps : hpshm_base_page_size(), b, sizeof(b)), hpshm_populate_threads(size, ps, cfg));
}

void tool_numa_probe_json(struct json *j, size_t size, const hpshm_config *cfg, const struct hpshm__pool *pools,
			  int npools)
{
	static struct hpshm__node nodes[HPSHM__MAX_PAGE_SIZES + 1][HPSHM__MAX_NODES];
	size_t sizes[HPSHM__MAX_PAGE_SIZES];
	int nsizes = numa_sizes(pools, npools, sizes), n;

	n = hpshm__os_numa_nodes(0, nodes[0], HPSHM__MAX_NODES);
	for (int s = 0; s < nsizes; s++)
		(void)hpshm__os_numa_nodes(sizes[s], nodes[s + 1], HPSHM__MAX_NODES);
	json_key(j, "numa_nodes");
	json_array_open(j);
	for (int i = 0; i < n; i++) {
		json_object_open(j);
		json_kv_uint(j, "node", (uint64_t)nodes[0][i].id);
		json_kv_bool(j, "has_memory", nodes[0][i].has_memory);
		json_kv_uint(j, "cpus", nodes[0][i].cpus);
		json_kv_uint(j, "mem_free", nodes[0][i].mem_free);
		json_key(j, "pools");
		json_array_open(j);
		for (int s = 0; s < nsizes; s++) {
			json_object_open(j);
			json_kv_uint(j, "page_size", sizes[s]);
			json_kv_uint(j, "total", nodes[s + 1][i].pool_total);
			json_kv_uint(j, "free", nodes[s + 1][i].pool_free);
			json_object_close(j);
		}
		json_array_close(j);
		json_object_close(j);
	}
	json_array_close(j);
	json_kv_uint(j, "populate_threads", hpshm_populate_threads(size, tool_config_page_size(cfg), cfg));
}

void tool_numa_report_json(struct json *j, const hpshm_report *r)
{
	char id[16];

	json_kv_uint(j, "populate_threads", r->populate_threads);
	json_key(j, "nodes");
	if (r->nnodes == 0) {
		json_null(j);
		return;
	}
	json_object_open(j);
	for (unsigned i = 0; i < r->nnodes && i < HPSHM_REPORT_NODES; i++) {
		snprintf(id, sizeof(id), "%u", i);
		json_kv_uint(j, id, r->node_bytes[i]);
	}
	json_object_close(j);
}

void tool_numa_report_text(const hpshm_report *r)
{
	char a[32];
	uint64_t all = 0;

	if (r->nnodes == 0)
		return;
	for (unsigned i = 0; i < r->nnodes && i < HPSHM_REPORT_NODES; i++)
		all += r->node_bytes[i];
	printf("pages by NUMA node (read back from the kernel):");
	for (unsigned i = 0; i < r->nnodes && i < HPSHM_REPORT_NODES; i++)
		if (r->node_bytes[i] != 0)
			printf(" node %u %s (%.0f%%)", i, tool_bytes(r->node_bytes[i], a, sizeof(a)),
			       all ? 100.0 * (double)r->node_bytes[i] / (double)all : 0.0);
	printf("\n");
}
