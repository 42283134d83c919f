/* SPDX-License-Identifier: MIT */
/*
 * tests/test_windows_numa.c -- NUMA placement and threaded populate on Windows
 * (ports/windows/numa.c, ports/windows/populate.c), on Windows or under wine.
 *
 * The machine's own nodes are what Windows says (GetNumaHighestNodeNumber; one node under
 * wine 8, which implements neither GetNumaAvailableMemoryNodeEx nor GetNumaNodeProcessorMaskEx
 * and leaves QueryWorkingSetEx's Node field at 0).  A machine of two nodes, one without
 * memory, and pages spread over nodes are injected through the port's system call table
 * (ports/windows/sys.h), so what check() refuses and what where() sums is shown without such
 * a machine.  Whether Windows puts a populated page on the node of the touching thread is only
 * shown by real Windows on a NUMA machine: there the preferred test reads the pages back, and
 * under wine it reads node 0, the only one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/internal.h"
#include "hpshm.h"
#include "port.h"
#include "ports/windows/sys.h"
#include "ports/windows/windows.h"

#include <psapi.h>

#define MiB ((size_t)1 << 20)

static void reset_table(void)
{
	hpshm__win_sys_reset();
}

TestSuite(winnuma, .fini = reset_table);

/* ---- helpers ---- */

static hpshm_config *config(const char *kv)
{
	hpshm_config *cfg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s: %s", kv, err.message);
	return cfg;
}

/* The node the calling thread runs on, as Windows says (0 where it cannot: one node, wine). */
static int current_node(void)
{
	PROCESSOR_NUMBER pn;
	USHORT node = 0;

	GetCurrentProcessorNumberEx(&pn);
	if (!GetNumaProcessorNodeEx(&pn, &node))
		return 0;
	return node;
}

/* The processors this process may run on. */
static KAFFINITY process_mask(void)
{
	DWORD_PTR mask = 0, sys = 0;

	cr_assert(GetProcessAffinityMask(GetCurrentProcess(), &mask, &sys));
	return (KAFFINITY)mask;
}

/* Every page of [p, p+len) in the working set, by QueryWorkingSetEx. */
static void assert_all_valid(char *p, size_t len)
{
	PSAPI_WORKING_SET_EX_INFORMATION info[256];
	size_t base = hpshm__port_base_page_size(), pages = len / base;

	for (size_t done = 0; done < pages; done += 256) {
		size_t k = pages - done < 256 ? pages - done : 256;

		for (size_t i = 0; i < k; i++)
			info[i].VirtualAddress = p + (done + i) * base;
		cr_assert(QueryWorkingSetEx(GetCurrentProcess(), info, (DWORD)(k * sizeof(info[0]))));
		for (size_t i = 0; i < k; i++)
			cr_assert(info[i].VirtualAttributes.Valid, "page %zu is not in the working set", done + i);
	}
}

/* ---- a machine of two nodes, injected ---- */

static ULONGLONG fake_avail[2];   /* free bytes of nodes 0 and 1 */
static KAFFINITY fake_cpus[2];    /* their processors, in group 0 */

static BOOL WINAPI fake_highest(PULONG highest)
{
	*highest = 1;
	return TRUE;
}

static BOOL WINAPI fake_available(USHORT node, PULONGLONG bytes)
{
	if (node > 1) {
		SetLastError(ERROR_INVALID_PARAMETER);
		return FALSE;
	}
	*bytes = fake_avail[node];
	return TRUE;
}

static BOOL WINAPI fake_mask(USHORT node, PGROUP_AFFINITY ga)
{
	if (node > 1) {
		SetLastError(ERROR_INVALID_PARAMETER);
		return FALSE;
	}
	memset(ga, 0, sizeof(*ga));
	ga->Mask = fake_cpus[node];
	return TRUE;
}

static BOOL WINAPI fake_on_node0(PPROCESSOR_NUMBER processor, PUSHORT node)
{
	(void)processor;
	*node = 0;
	return TRUE;
}

/* Two nodes; node 1 with memory when mem1, the process's highest processor its own. */
static void two_nodes(int mem1)
{
	KAFFINITY all = process_mask(), top = all;

	while (top & (top - 1))
		top &= top - 1;
	fake_avail[0] = 1ull << 30;
	fake_avail[1] = mem1 ? 1ull << 30 : 0;
	fake_cpus[0] = all == top ? all : all & ~top;
	fake_cpus[1] = top;
	hpshm__win_sys.get_numa_highest_node_number = fake_highest;
	hpshm__win_sys.get_numa_available_memory_node_ex = fake_available;
	hpshm__win_sys.get_numa_node_processor_mask_ex = fake_mask;
	hpshm__win_sys.get_numa_processor_node_ex = fake_on_node0;
}

/* SetThreadGroupAffinity, recorded: the masks the populate's threads asked for. */
static volatile LONG fake_placed;                 /* calls */
static KAFFINITY     fake_placed_mask[16];        /* the mask of each */
static DWORD         fake_place_error;            /* non-zero: fail with it */

static BOOL WINAPI fake_set_affinity(HANDLE thread, const GROUP_AFFINITY *ga, PGROUP_AFFINITY prev)
{
	LONG i = InterlockedIncrement(&fake_placed) - 1;

	(void)thread;
	if (i < 16)
		fake_placed_mask[i] = ga->Mask;
	if (fake_place_error != 0) {
		SetLastError(fake_place_error);
		return FALSE;
	}
	if (prev != NULL) {
		memset(prev, 0, sizeof(*prev));
		prev->Mask = (KAFFINITY)0x5a5a; /* what the restore must give back */
	}
	return TRUE;
}

static BOOL WINAPI fake_set_ideal(HANDLE thread, PPROCESSOR_NUMBER ideal, PPROCESSOR_NUMBER prev)
{
	(void)thread;
	(void)ideal;
	if (prev != NULL)
		memset(prev, 0, sizeof(*prev));
	return TRUE;
}

/* QueryWorkingSetEx over fake pages: page i on node i % 3, every fourth page not resident. */
static volatile LONG fake_queries;
static char         *fake_base;

static BOOL WINAPI fake_query_nodes(HANDLE process, PVOID info, DWORD len)
{
	PSAPI_WORKING_SET_EX_INFORMATION *w = info;
	size_t base = hpshm__port_base_page_size();

	(void)process;
	InterlockedIncrement(&fake_queries);
	for (size_t i = 0; i < len / sizeof(*w); i++) {
		size_t page = (size_t)((char *)w[i].VirtualAddress - fake_base) / base;

		/* Valid is bit 0 and Node bits 16 to 21 (psapi.h's PSAPI_WORKING_SET_EX_BLOCK). */
		w[i].VirtualAttributes.Flags = (ULONG_PTR)(page % 4 != 3) | (ULONG_PTR)(page % 3) << 16;
	}
	return TRUE;
}

/* ---- the machine's own nodes ---- */

Test(winnuma, nodes_are_the_ones_windows_numbers)
{
	struct hpshm__node nodes[HPSHM__MAX_NODES];
	ULONG highest = 0;
	int n = hpshm__port_numa_nodes(hpshm__port_base_page_size(), nodes, HPSHM__MAX_NODES), memory = 0;

	cr_assert(GetNumaHighestNodeNumber(&highest));
	cr_assert(n >= 1 && n <= (int)highest + 1, "%d nodes, highest %lu", n, (unsigned long)highest);
	for (int i = 0; i < n; i++) {
		cr_assert(i == 0 || nodes[i].id > nodes[i - 1].id, "not ascending at %d", i);
		cr_assert_eq(nodes[i].pool_total, 0ul, "Windows keeps no per-node pool");
		memory += nodes[i].has_memory && nodes[i].cpus > 0;
	}
	cr_assert(memory >= 1, "no node with memory and processors");
}

Test(winnuma, bind_to_a_node_the_machine_lacks_is_refused_naming_the_nodes_there)
{
	ULONG highest = 0;
	char kv[64], there[16];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	int rc;

	cr_assert(GetNumaHighestNodeNumber(&highest));
	if (highest >= 63)
		cr_skip_test("this machine has every node a policy can name");
	snprintf(kv, sizeof(kv), "huge_pages=off,numa=bind:%lu", (unsigned long)highest + 1);
	cfg = config(kv);
	rc = hpshm_segment_create(&seg, MiB, cfg, &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.key, "numa");
	snprintf(there, sizeof(there), "%d", current_node());
	cr_assert(strstr(err.hint, there) != NULL, "the hint names no node with memory: %s", err.hint);
	hpshm_config_free(cfg);
}

Test(winnuma, bind_to_a_node_there_is_refused_because_windows_cannot_bind)
{
	char kv[64], fix[32];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	int rc;

	snprintf(kv, sizeof(kv), "huge_pages=off,numa=bind:%d", current_node());
	cfg = config(kv);
	rc = hpshm_segment_create(&seg, MiB, cfg, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.key, "numa");
	snprintf(fix, sizeof(fix), "preferred:%d", current_node());
	cr_assert(strstr(err.hint, fix) != NULL, "%s", err.hint);
	hpshm_config_free(cfg);
}

Test(winnuma, interleave_is_refused_with_the_fix)
{
	hpshm_config *cfg = config("huge_pages=off,numa=interleave");
	hpshm_segment *seg;
	hpshm_error err;
	int rc;

	rc = hpshm_segment_create(&seg, MiB, cfg, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.key, "numa");
	cr_assert(strstr(err.hint, "preferred") != NULL, "%s", err.hint);
	hpshm_config_free(cfg);
}

/* numa=preferred:N with the node this thread runs on: created, populated, and the report's
 * nodes are QueryWorkingSetEx's (wine: node 0, Node left 0 for every resident page). */
static void create_placed(const char *numa)
{
	char kv[128];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	uint64_t bytes[HPSHM_REPORT_NODES], sum = 0;
	int rc, n;

	snprintf(kv, sizeof(kv), "huge_pages=off,populate=on,populate_threads=2,%s", numa);
	cfg = config(kv);
	rc = hpshm_segment_create_ex(&seg, 8 * MiB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(r.populate_threads, 2u);
	cr_assert(r.nnodes >= 1 && r.nnodes <= HPSHM_REPORT_NODES, "nnodes %u", r.nnodes);
	for (unsigned i = 0; i < r.nnodes; i++)
		sum += r.node_bytes[i];
	cr_assert_eq(sum, (uint64_t)r.mapped_size, "%llu of %zu bytes placed", (unsigned long long)sum, r.mapped_size);
	cr_assert(r.node_bytes[current_node()] > 0, "nothing on node %d", current_node());
	assert_all_valid(hpshm_segment_address(seg), r.mapped_size);
	n = hpshm_segment_nodes(seg, bytes, HPSHM_REPORT_NODES, &err);
	cr_assert_eq(n, (int)r.nnodes, "%d: %s", n, err.message);
	cr_assert_eq(bytes[current_node()], r.node_bytes[current_node()]);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(winnuma, preferred_creates_and_the_report_says_where_the_pages_are)
{
	char numa[32];

	snprintf(numa, sizeof(numa), "numa=preferred:%d", current_node());
	create_placed(numa);
}

Test(winnuma, local_creates_and_the_report_says_where_the_pages_are)
{
	create_placed("numa=local");
}

/* ---- two nodes, injected ---- */

Test(winnuma, a_node_without_memory_is_refused_naming_the_nodes_with_memory)
{
	struct hpshm__numa p = { HPSHM__NUMA_PREFERRED, 2 };
	hpshm_error err;
	int rc;

	two_nodes(0);
	memset(&err, 0, sizeof(err));
	rc = hpshm__port_numa_check(&p, MiB, hpshm__port_base_page_size(), &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(strstr(err.message, "node 1, which has no memory") != NULL, "%s", err.message);
	cr_assert_str_eq(err.hint, "name nodes among 0");
	p.nodes = 1;
	cr_assert_eq(hpshm__port_numa_check(&p, MiB, hpshm__port_base_page_size(), &err), 0, "%s", err.message);
}

Test(winnuma, a_node_without_memory_fails_the_create_on_the_numa_key)
{
	hpshm_config *cfg = config("huge_pages=off,numa=preferred:1");
	hpshm_segment *seg;
	hpshm_error err;

	two_nodes(0);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EVALUE, "%s", err.message);
	cr_assert_str_eq(err.key, "numa");
	hpshm_config_free(cfg);
}

Test(winnuma, nodes_of_an_injected_machine_say_which_have_memory)
{
	struct hpshm__node nodes[4];

	two_nodes(0);
	cr_assert_eq(hpshm__port_numa_nodes(hpshm__port_base_page_size(), nodes, 4), 2);
	cr_assert(nodes[0].id == 0 && nodes[0].has_memory && nodes[0].mem_free == 1ull << 30);
	cr_assert(nodes[1].id == 1 && !nodes[1].has_memory && nodes[1].cpus == 1);
}

Test(winnuma, large_pages_on_another_node_than_the_creating_thread_are_refused)
{
	struct hpshm__numa p = { HPSHM__NUMA_PREFERRED, 2 };
	hpshm_error err;
	int rc;

	two_nodes(1);
	rc = hpshm__port_numa_check(&p, 4 * MiB, 2 * MiB, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert(strstr(err.hint, "node 1") != NULL, "%s", err.hint);
	/* Small pages are placed by the populate's threads instead. */
	cr_assert_eq(hpshm__port_numa_check(&p, 4 * MiB, hpshm__port_base_page_size(), &err), 0, "%s", err.message);
	/* And large pages on the creating thread's own node are what CreateFileMapping gives. */
	p.nodes = 1;
	cr_assert_eq(hpshm__port_numa_check(&p, 4 * MiB, 2 * MiB, &err), 0, "%s", err.message);
}

Test(winnuma, where_sums_the_resident_pages_of_each_node)
{
	size_t base = hpshm__port_base_page_size(), pages = 1500; /* three chunks of QueryWorkingSetEx */
	uint64_t bytes[HPSHM_REPORT_NODES], want[3] = { 0, 0, 0 };
	int n;

	fake_base = (char *)(uintptr_t)0x40000000;
	hpshm__win_sys.query_working_set_ex = fake_query_nodes;
	for (size_t i = 0; i < pages; i++)
		if (i % 4 != 3)
			want[i % 3] += base;
	n = hpshm__port_numa_where(fake_base, pages * base, base, bytes, HPSHM_REPORT_NODES);
	cr_assert_eq(n, 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(bytes[i], want[i], "node %d: %llu, not %llu", i, (unsigned long long)bytes[i],
			     (unsigned long long)want[i]);
	cr_assert_eq(fake_queries, 3, "%ld calls", (long)fake_queries);
	/* Nodes beyond max are not counted, nor counted into the result. */
	cr_assert_eq(hpshm__port_numa_where(fake_base, pages * base, base, bytes, 2), 2);
	cr_assert_eq(bytes[0], want[0]);
}

/* ---- the populate's threads ---- */

Test(winnuma, preferred_runs_every_populate_thread_on_the_node_and_gives_the_caller_its_own)
{
	struct hpshm__numa p = { HPSHM__NUMA_PREFERRED, 2 };
	struct hpshm__populate_how how = { 4, &p };
	size_t base = hpshm__port_base_page_size();
	unsigned methods = 0;
	int on_node = 0, restored = 0;
	hpshm_error err;
	char *view;
	HANDLE h;

	two_nodes(1);
	hpshm__win_sys.set_thread_group_affinity = fake_set_affinity;
	hpshm__win_sys.set_thread_ideal_processor_ex = fake_set_ideal;
	h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)(64 * base), NULL);
	cr_assert_not_null(h);
	view = MapViewOfFile(h, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, 64 * base);
	cr_assert_not_null(view);
	cr_assert_eq(hpshm__port_populate(view, 64 * base, base, HPSHM__PORT_NO_HANDLE, &how, &methods, &err), 0,
		     "%s", err.message);
	/* Four placements on node 1's processors, and the calling thread's mask given back. */
	cr_assert_eq(fake_placed, 5, "%ld calls", (long)fake_placed);
	for (int i = 0; i < 5; i++) {
		on_node += fake_placed_mask[i] == fake_cpus[1];
		restored += fake_placed_mask[i] == (KAFFINITY)0x5a5a;
	}
	cr_assert_eq(on_node, 4, "%d threads on node 1's processors", on_node);
	cr_assert_eq(restored, 1, "the calling thread's own affinity was given back %d times", restored);
	assert_all_valid(view, 64 * base);
	UnmapViewOfFile(view);
	CloseHandle(h);
}

Test(winnuma, a_thread_that_cannot_be_placed_fails_the_populate)
{
	struct hpshm__numa p = { HPSHM__NUMA_PREFERRED, 1 };
	struct hpshm__populate_how how = { 2, &p };
	size_t base = hpshm__port_base_page_size();
	unsigned methods = 0;
	hpshm_error err;
	char *view;
	HANDLE h;

	two_nodes(1);
	hpshm__win_sys.set_thread_group_affinity = fake_set_affinity;
	fake_place_error = ERROR_INVALID_PARAMETER;
	h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)(16 * base), NULL);
	cr_assert_not_null(h);
	view = MapViewOfFile(h, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, 16 * base);
	cr_assert_not_null(view);
	cr_assert_eq(hpshm__port_populate(view, 16 * base, base, HPSHM__PORT_NO_HANDLE, &how, &methods, &err),
		     HPSHM_EPOPULATE);
	cr_assert_eq(err.sys_errno, ERROR_INVALID_PARAMETER);
	cr_assert_str_eq(err.call, "SetThreadGroupAffinity");
	UnmapViewOfFile(view);
	CloseHandle(h);
}

static void populate_threads(unsigned threads)
{
	char kv[96];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	int rc;

	snprintf(kv, sizeof(kv), "huge_pages=off,populate=on,populate_threads=%u", threads);
	cfg = config(kv);
	cr_assert_eq(hpshm_populate_threads(8 * MiB, 0, cfg), threads);
	rc = hpshm_segment_create_ex(&seg, 8 * MiB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(r.populate_threads, threads);
	cr_assert_eq(r.populate, (unsigned)HPSHM_POPULATE_TOUCH);
	cr_assert_eq(r.nnodes, 0u, "numa=default reads no nodes");
	assert_all_valid(hpshm_segment_address(seg), r.mapped_size);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(winnuma, two_threads_populate_every_page_and_the_report_says_two)
{
	populate_threads(2);
}

Test(winnuma, four_threads_populate_every_page_and_the_report_says_four)
{
	populate_threads(4);
}
