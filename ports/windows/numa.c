/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/numa.c -- NUMA placement on Windows: the nodes, the policies Windows can carry
 * out for a section, and where a view's pages are.
 *
 * How Windows places a section's pages.  hpshm's sections are pagefile-backed and committed
 * (SEC_COMMIT, backends/winsection.c): the commit is charged when the section is made, but a
 * small page is allocated only when it is first touched (a demand-zero fault), from the node of
 * the faulting thread's ideal processor, or from another node when that one has no free page.
 * Windows has no call that gives a node to a range of a view that exists already
 * (VirtualAllocExNuma is for private memory; a section gets its node when it is made,
 * CreateFileMappingNumaW's nndPreferred, or per view, MapViewOfFileExNuma, and the backends
 * have made both before apply() runs).  So the placement is the populate's: its threads run
 * on the node's processors (SetThreadGroupAffinity, and an ideal processor among them) and
 * take the first touch of every page (ports/windows/populate.c).  A page no populate touched
 * goes where its first toucher runs, and a page the working set trims and the pagefile takes
 * comes back by the same rule, on the node of the thread that faults it again: only a section
 * made with a preferred node (CreateFileMappingNumaW) keeps its node for good.
 *
 * Large pages are allocated, all of them, by CreateFileMapping() itself, from the creating
 * thread's node as far as it has free large pages: a later touch moves nothing.  So local is
 * what a large-page segment gets anyway, and preferred:N is taken for one only when the
 * creating thread runs on node N; otherwise it is refused with the fix (under huge_pages=try
 * the walk goes on to small pages, which can be placed).
 *
 * Refused rather than ignored (HPSHM_ENOTSUP, with the fix): bind, since Windows places
 * nothing strictly (a node without a free page gives way to another, silently), and its one
 * preferred node is what preferred:N asks for; interleave, since a section has no page-by-page
 * policy and a page goes where the thread that touches it first runs.
 *
 * The nodes: GetNumaHighestNodeNumber(), then per node GetNumaAvailableMemoryNodeEx() (its free
 * bytes: a node with none has no memory of its own) and GetNumaNodeProcessorMaskEx() (its
 * processors in their group, narrowed to the process's affinity when that is the group the
 * process runs in).  Windows keeps no per-node pool of large pages: pool_total and pool_free
 * stay 0.  wine 8 answers GetNumaHighestNodeNumber() (node 0) and fails the others with
 * ERROR_CALL_NOT_IMPLEMENTED: a machine of one node is then described from the whole machine
 * (free physical memory, the process's affinity mask), which is what its one node is.
 *
 * Where the pages are: QueryWorkingSetEx()'s Node field (6 bits: nodes 0 to 63, as
 * HPSHM__MAX_NODES), for the pages in the working set (Valid), asked in chunks.
 */
#include "windows/windows.h"

#include <assert.h>
#include <psapi.h>
#include <stdio.h>
#include <string.h>

#include "windows/sys.h"

#define WHERE_CHUNK 512 /* pages asked about per QueryWorkingSetEx() call: 8 KiB of stack */

/* One node as Windows describes it. */
struct win_node {
	int            has_memory; /* 1 if it has memory of its own */
	uint64_t       avail;      /* its free bytes (0 if unknown) */
	GROUP_AFFINITY cpus;       /* its processors this process may use */
	unsigned       ncpus;      /* how many */
};

static unsigned win_bits(KAFFINITY m)
{
	unsigned n = 0;

	for (; m != 0; m &= m - 1)
		n++;
	return n;
}

/* The node numbered node (highest is the highest one there is).  0, or -1 with GetLastError()
 * set when Windows does not describe it. */
static int win_node_read(USHORT node, ULONG highest, struct win_node *out)
{
	ULONGLONG avail = 0;
	DWORD_PTR pmask = 0, smask = 0;
	MEMORYSTATUSEX ms;
	PROCESSOR_NUMBER pn;

	memset(out, 0, sizeof(*out));
	GetCurrentProcessorNumberEx(&pn);
	if (!GetProcessAffinityMask(GetCurrentProcess(), &pmask, &smask))
		pmask = 0; /* a process in several groups has no one mask: no narrowing then */
	if (hpshm__win_sys.get_numa_available_memory_node_ex(node, &avail) &&
	    hpshm__win_sys.get_numa_node_processor_mask_ex(node, &out->cpus)) {
		out->avail = avail;
		out->has_memory = avail > 0;
	} else if (GetLastError() == ERROR_CALL_NOT_IMPLEMENTED && highest == 0) {
		/* One node that the system does not describe (wine): the whole machine. */
		ms.dwLength = sizeof(ms);
		out->avail = GlobalMemoryStatusEx(&ms) ? ms.ullAvailPhys : 0;
		out->has_memory = 1;
		memset(&out->cpus, 0, sizeof(out->cpus));
		out->cpus.Group = pn.Group;
		out->cpus.Mask = (KAFFINITY)pmask;
	} else {
		return -1;
	}
	if (pmask != 0 && out->cpus.Group == pn.Group)
		out->cpus.Mask &= (KAFFINITY)pmask;
	out->ncpus = win_bits(out->cpus.Mask);
	return 0;
}

/* The node of the processor the calling thread runs on, or -1 with GetLastError() set. */
static int win_current_node(ULONG highest)
{
	PROCESSOR_NUMBER pn;
	USHORT node = 0;

	GetCurrentProcessorNumberEx(&pn);
	if (hpshm__win_sys.get_numa_processor_node_ex(&pn, &node))
		return node;
	if (GetLastError() == ERROR_CALL_NOT_IMPLEMENTED && highest == 0)
		return 0; /* wine: one node */
	return -1;
}

static int win_lowest(uint64_t nodes)
{
	int n = 0;

	while (n < HPSHM__MAX_NODES - 1 && !(nodes & ((uint64_t)1 << n)))
		n++;
	return n;
}

int hpshm__port_numa_nodes(size_t page_size, struct hpshm__node *out, int max)
{
	ULONG highest = 0;
	struct win_node w;
	int n = 0;

	(void)page_size; /* Windows keeps no per-node pool of large pages (see above) */
	assert(out != NULL || max == 0);
	if (!hpshm__win_sys.get_numa_highest_node_number(&highest))
		return 0;
	for (ULONG node = 0; node <= highest && node < HPSHM__MAX_NODES && n < max; node++) {
		if (win_node_read((USHORT)node, highest, &w) < 0)
			continue; /* a number the system skips */
		memset(&out[n], 0, sizeof(out[n]));
		out[n].id = (int)node;
		out[n].has_memory = w.has_memory;
		out[n].cpus = w.ncpus;
		out[n].mem_free = w.avail;
		n++;
	}
	return n;
}

/* nodes as "0,2,5" in buf. */
static const char *win_node_list(uint64_t nodes, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < HPSHM__MAX_NODES && at < len; i++)
		if (nodes & ((uint64_t)1 << i))
			at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? "," : "", i);
	return buf[0] ? buf : "none";
}

/* preferred:N, once N is known to have memory: can a thread run there, and can large pages go there? */
static int win_check_preferred(int node, const struct hpshm__node *nd, size_t page_size, hpshm_error *err)
{
	char hint[HPSHM_TEXT_MAX];
	ULONG highest = 0;
	int here;

	if (nd->cpus == 0)
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, "GetNumaNodeProcessorMaskEx",
				       "choose a node with processors this process may run on, or leave numa at default",
				       "node %d has no processors this process may run on, and Windows puts a page on "
				       "the node of the thread that touches it first", node);
	if (page_size <= hpshm__port_base_page_size())
		return 0;
	(void)hpshm__win_sys.get_numa_highest_node_number(&highest);
	here = win_current_node(highest);
	if (here == node)
		return 0;
	snprintf(hint, sizeof(hint), "create the segment from a thread that runs on node %d (SetThreadGroupAffinity), "
		 "or use numa=local", node);
	return hpshm_error_set(err, HPSHM_ENOTSUP, here < 0 ? (int)GetLastError() : 0, "CreateFileMapping", hint,
			       "Windows allocates a large-page section's pages when it creates it, on the creating "
			       "thread's node (%d here), not on node %d", here, node);
}

int hpshm__port_numa_check(const struct hpshm__numa *p, size_t len, size_t page_size, hpshm_error *err)
{
	struct hpshm__node nodes[HPSHM__MAX_NODES];
	uint64_t there = 0, memory = 0, absent, empty;
	char a[HPSHM_TEXT_MAX / 4], b[HPSHM_TEXT_MAX / 4], c[HPSHM_TEXT_MAX / 4], hint[HPSHM_TEXT_MAX];
	int n = hpshm__port_numa_nodes(page_size, nodes, HPSHM__MAX_NODES), one;

	(void)len; /* no per-node pool that could be too small (see above) */
	if (n == 0)
		return hpshm_error_set(err, HPSHM_ENOTSUP, (int)GetLastError(), "GetNumaHighestNodeNumber",
				       "leave numa at default on this system", "Windows reports no NUMA nodes here");
	for (int i = 0; i < n; i++) {
		there |= (uint64_t)1 << nodes[i].id;
		if (nodes[i].has_memory)
			memory |= (uint64_t)1 << nodes[i].id;
	}
	absent = p->nodes & ~there;
	empty = p->nodes & there & ~memory;
	if (absent | empty) {
		snprintf(hint, sizeof(hint), "name nodes among %s", win_node_list(memory, c, sizeof(c)));
		if (absent && empty)
			return hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, hint,
					       "numa names nodes this machine lacks (%s) and nodes without memory "
					       "(%s); the nodes with memory here are %s",
					       win_node_list(absent, a, sizeof(a)), win_node_list(empty, b, sizeof(b)), c);
		one = ((absent | empty) & ((absent | empty) - 1)) == 0;
		return hpshm_error_set(err, HPSHM_EVALUE, 0, NULL, hint,
				       "numa names %s %s, which %s; the nodes with memory here are %s",
				       one ? "node" : "nodes", win_node_list(absent | empty, a, sizeof(a)),
				       absent ? "this machine lacks" : one ? "has no memory of its own" :
				       "have no memory of their own", c);
	}
	switch (p->mode) {
	case HPSHM__NUMA_LOCAL:
		return 0;
	case HPSHM__NUMA_PREFERRED:
		for (int i = 0; i < n; i++)
			if (nodes[i].id == win_lowest(p->nodes))
				return win_check_preferred(nodes[i].id, &nodes[i], page_size, err);
		break;
	case HPSHM__NUMA_BIND:
		snprintf(hint, sizeof(hint), "use numa=preferred:%d: Windows keeps the pages on that node while it "
			 "has free memory", win_lowest(p->nodes));
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, hint,
				       "Windows cannot bind a section's pages to nodes: it prefers one node and "
				       "takes memory from another, silently, when that node is short");
	case HPSHM__NUMA_INTERLEAVE:
		return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "use numa=preferred:N or local, or leave numa at default",
				       "Windows has no page-by-page interleave for a section: a page goes to the node "
				       "of the thread that touches it first");
	default:
		break;
	}
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "leave numa at default", "this NUMA policy is not known here");
}

int hpshm__win_numa_affinity(const struct hpshm__numa *p, GROUP_AFFINITY *ga, DWORD *code, const char **call)
{
	struct win_node w;
	ULONG highest = 0;
	int node;

	*code = 0;
	*call = NULL;
	if (p == NULL || (p->mode != HPSHM__NUMA_LOCAL && p->mode != HPSHM__NUMA_PREFERRED))
		return 0; /* default; check() refused the others */
	if (!hpshm__win_sys.get_numa_highest_node_number(&highest)) {
		*code = GetLastError();
		*call = "GetNumaHighestNodeNumber";
		return -1;
	}
	node = p->mode == HPSHM__NUMA_LOCAL ? win_current_node(highest) : win_lowest(p->nodes);
	if (node < 0) {
		*code = GetLastError();
		*call = "GetNumaProcessorNodeEx";
		return -1;
	}
	*call = "GetNumaNodeProcessorMaskEx";
	if (win_node_read((USHORT)node, highest, &w) < 0) {
		*code = GetLastError();
		return -1;
	}
	if (w.ncpus == 0)
		return -1; /* code 0: no processor of the node is this process's */
	*ga = w.cpus;
	return 1;
}

/* The view already exists, and Windows has no call that places a range of one (see above):
 * the populate's threads place the pages as they touch them first. */
int hpshm__port_numa_apply(void *addr, size_t len, const struct hpshm__numa *p, hpshm_error *err)
{
	(void)addr;
	(void)len;
	if (p->mode == HPSHM__NUMA_LOCAL || p->mode == HPSHM__NUMA_PREFERRED)
		return 0;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, "use numa=preferred:N or local",
			       "Windows can place a section's pages on one node only");
}

int hpshm__port_numa_where(void *addr, size_t len, size_t page_size, uint64_t *bytes, int max)
{
	PSAPI_WORKING_SET_EX_INFORMATION info[WHERE_CHUNK];
	size_t pages = len / page_size, k;
	int highest = -1;

	assert(addr != NULL && page_size > 0 && (bytes != NULL || max == 0));
	for (int i = 0; i < max; i++)
		bytes[i] = 0;
	for (size_t done = 0; done < pages; done += k) {
		k = pages - done < WHERE_CHUNK ? pages - done : WHERE_CHUNK;
		for (size_t i = 0; i < k; i++) {
			memset(&info[i], 0, sizeof(info[i]));
			info[i].VirtualAddress = (char *)addr + (done + i) * page_size;
		}
		if (!hpshm__win_sys.query_working_set_ex(GetCurrentProcess(), info, (DWORD)(k * sizeof(info[0]))))
			return HPSHM_ENOTSUP;
		for (size_t i = 0; i < k; i++) {
			int node = (int)info[i].VirtualAttributes.Node;

			if (!info[i].VirtualAttributes.Valid || node >= max)
				continue; /* not in the working set: it says nothing of a node */
			bytes[node] += page_size;
			if (node > highest)
				highest = node;
		}
	}
	return highest + 1;
}
