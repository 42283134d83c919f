/* SPDX-License-Identifier: MIT */
/*
 * tests/test_windows.c -- the Windows port (ports/windows/) and the Windows backends, on Windows
 * or under wine.
 *
 * Each test checks one behaviour against what Windows itself reports (VirtualQuery,
 * QueryWorkingSetEx, GetHandleInformation, the child's own view through tests/win_child.c),
 * never against the library's word alone.  Errors the machine does not produce (a token
 * without SeLockMemoryPrivilege on a machine that has it, ERROR_NO_SYSTEM_RESOURCES,
 * ERROR_COMMITMENT_LIMIT) are injected through the port's system call table
 * (ports/windows/sys.h), the way tests/test_faults.c does it on Linux.
 *
 * Large pages: wine creates SEC_LARGE_PAGES sections without the privilege and backs them with
 * small pages, and real Windows needs "Lock pages in memory".  So a test on large pages
 * accepts "large pages obtained and verified by QueryWorkingSetEx" or "a clean fallback with
 * the reason", never "the call succeeded, so they are large pages".
 */
#include <errno.h>
#include <io.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "base/header.h"
#include "core/internal.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "port.h"
#include "ports/windows/sys.h"
#include "ports/windows/windows.h"
#include "win_beside.h"
#include "win_child.h"

#include <aclapi.h>
#include <psapi.h>
#include <sddl.h>

/* A populate in the calling thread alone, as every populate was before populate_threads. */
#define HPT_ONE_THREAD ((struct hpshm__populate_how){ 1, NULL })

#define MiB ((size_t)1 << 20)

static void reset_table(void)
{
	hpshm__win_sys_reset();
}

TestSuite(winport, .fini = reset_table);
TestSuite(winseg, .fini = reset_table);
TestSuite(winls, .fini = reset_table);

/* ---- helpers ---- */

/* win_child.exe, beside this program. */
static char *child_path(void)
{
	static char path[MAX_PATH * 4];

	return hpt_win_beside("win_child.exe", path, sizeof(path));
}

/* A NULL-terminated copy of list, whose strings the spawn calls may take as char *. */
static char **strings(const char *first, const char *const *list)
{
	size_t n = 0, k = 0;
	char **out;

	while (list != NULL && list[n] != NULL)
		n++;
	out = calloc(n + 2, sizeof(*out));
	cr_assert_not_null(out);
	if (first != NULL)
		out[k++] = _strdup(first);
	for (size_t i = 0; i < n; i++)
		out[k++] = _strdup(list[i]);
	return out;
}

static void strings_free(char **list)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++)
		free(list[i]);
	free(list);
}

/* Run win_child with args (NULL-terminated after the mode), inheriting handles; its status. */
static int run_child(const char *const *args, const char *const *envp, const intptr_t *inherit, int ninherit,
		     const void *reserve, size_t reserve_len)
{
	char **argv = strings(child_path(), args), **env = envp ? strings(NULL, envp) : NULL;
	struct hpshm__process proc;
	hpshm_error err;
	int status = -1, rc;

	memset(&err, 0, sizeof(err));
	rc = hpshm__port_spawn(argv[0], argv, env, inherit, ninherit, reserve, reserve_len, &proc, &err);
	strings_free(argv);
	strings_free(env);
	cr_assert_eq(rc, 0, "hpshm__port_spawn: %s (%s)", err.message, err.hint);
	cr_assert_neq(proc.handle, 0, "no process handle");
	rc = hpshm__port_wait(&proc, &status, &err);
	cr_assert_eq(rc, 0, "hpshm__port_wait: %s", err.message);
	cr_assert_eq(proc.handle, 0, "hpshm__port_wait kept the handle");
	return status;
}

/* Start win_child with args and leave it running: rc of hpshm__port_spawn(). */
static int start_child(const char *const *args, const intptr_t *inherit, int ninherit, const void *reserve,
		       size_t reserve_len, struct hpshm__process *proc, hpshm_error *err)
{
	char **argv = strings(child_path(), args);
	int rc;

	memset(err, 0, sizeof(*err));
	rc = hpshm__port_spawn(argv[0], argv, NULL, inherit, ninherit, reserve, reserve_len, proc, err);
	strings_free(argv);
	return rc;
}

/* A pagefile-backed section of len bytes, mapped anywhere. */
static void *map_section(size_t len, HANDLE *hp)
{
	HANDLE h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)len, NULL);
	void *p;

	cr_assert_not_null(h, "CreateFileMappingW: %lu", (unsigned long)GetLastError());
	p = MapViewOfFile(h, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, len);
	cr_assert_not_null(p, "MapViewOfFile: %lu", (unsigned long)GetLastError());
	*hp = h;
	return p;
}

/* Is every byte of [p, p+len) free, by VirtualQuery? */
static int range_free(const void *p, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi;
	uintptr_t at = (uintptr_t)p, end = (uintptr_t)p + len;

	while (at < end) {
		if (VirtualQuery((const void *)at, &mbi, sizeof(mbi)) != sizeof(mbi) || mbi.State != MEM_FREE)
			return 0;
		at = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
	}
	return 1;
}

static hpshm_config *config(const char *kv)
{
	hpshm_config *cfg;
	hpshm_error err;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	if (kv != NULL)
		cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s: %s", kv, err.message);
	return cfg;
}

/* The attempt of provider in r, or NULL. */
static const hpshm_attempt *attempt_of(const hpshm_report *r, const char *provider)
{
	for (unsigned i = 0; i < r->nattempts; i++)
		if (strcmp(r->attempts[i].provider, provider) == 0)
			return &r->attempts[i];
	return NULL;
}

/* ---- injected failures ---- */

static DWORD fake_code; /* the GetLastError() code the fakes below leave */

static BOOL WINAPI fake_adjust_not_all_assigned(HANDLE token, BOOL disable_all, PTOKEN_PRIVILEGES state, DWORD len,
						PTOKEN_PRIVILEGES previous, PDWORD ret_len)
{
	(void)token, (void)disable_all, (void)state, (void)len, (void)previous, (void)ret_len;
	SetLastError(ERROR_NOT_ALL_ASSIGNED); /* TRUE, as Windows answers for a privilege not held */
	return TRUE;
}

static BOOL WINAPI fake_adjust_fails(HANDLE token, BOOL disable_all, PTOKEN_PRIVILEGES state, DWORD len,
				     PTOKEN_PRIVILEGES previous, PDWORD ret_len)
{
	(void)token, (void)disable_all, (void)state, (void)len, (void)previous, (void)ret_len;
	SetLastError(fake_code);
	return FALSE;
}

static BOOL WINAPI fake_adjust_ok(HANDLE token, BOOL disable_all, PTOKEN_PRIVILEGES state, DWORD len,
				  PTOKEN_PRIVILEGES previous, PDWORD ret_len)
{
	(void)token, (void)disable_all, (void)state, (void)len, (void)previous, (void)ret_len;
	SetLastError(ERROR_SUCCESS);
	return TRUE;
}

static HANDLE WINAPI fake_create_mapping_fails(HANDLE file, LPSECURITY_ATTRIBUTES sa, DWORD protect, DWORD high,
					       DWORD low, LPCWSTR name)
{
	(void)file, (void)sa, (void)protect, (void)high, (void)low, (void)name;
	SetLastError(fake_code);
	return NULL;
}

static SIZE_T WINAPI fake_no_large_pages(void)
{
	return 0;
}

static BOOL WINAPI fake_query_fails(HANDLE process, PVOID info, DWORD len)
{
	(void)process, (void)info, (void)len;
	SetLastError(ERROR_ACCESS_DENIED);
	return FALSE;
}

static int fake_small_pages; /* fake_query_large(): how many of the sampled pages are small */

/* Every sampled page valid, and large but for the first fake_small_pages of them. */
static BOOL WINAPI fake_query_large(HANDLE process, PVOID info, DWORD len)
{
	PSAPI_WORKING_SET_EX_INFORMATION *w = info;

	(void)process;
	for (DWORD i = 0; i < len / sizeof(*w); i++) {
		w[i].VirtualAttributes.Flags = 0;
		w[i].VirtualAttributes.Valid = 1;
		w[i].VirtualAttributes.LargePage = (int)i >= fake_small_pages;
	}
	return TRUE;
}

static SIZE_T WINAPI fake_large_2mib(void)
{
	return 2 * MiB;
}

static LPVOID WINAPI fake_alloc_ex_taken(HANDLE process, LPVOID addr, SIZE_T len, DWORD type, DWORD protect)
{
	(void)process, (void)addr, (void)len, (void)type, (void)protect;
	SetLastError(ERROR_INVALID_ADDRESS);
	return NULL;
}

static int terminated; /* calls of counting_terminate() */

static BOOL WINAPI counting_terminate(HANDLE process, UINT code)
{
	terminated++;
	return TerminateProcess(process, code);
}

/* ---- pages ---- */

Test(winport, base_page_size_is_the_systems)
{
	SYSTEM_INFO si;

	GetSystemInfo(&si);
	cr_assert_eq(hpshm__port_base_page_size(), (size_t)si.dwPageSize);
	cr_assert_eq(hpshm_base_page_size(), (size_t)si.dwPageSize);
}

Test(winport, huge_page_sizes_are_the_large_page_minimum)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES], large = GetLargePageMinimum();
	int n = hpshm__port_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES);

	cr_assert_eq(n, large ? 1 : 0, "%d sizes for a large page minimum of %zu", n, large);
	if (n == 1)
		cr_assert_eq(sizes[0], large);
	cr_assert_eq(hpshm__port_default_huge_page_size(), large);
}

Test(winport, no_large_pages_means_no_huge_sizes)
{
	size_t sizes[HPSHM__MAX_PAGE_SIZES];

	hpshm__win_sys.get_large_page_minimum = fake_no_large_pages;
	cr_assert_eq(hpshm__port_huge_page_sizes(sizes, HPSHM__MAX_PAGE_SIZES), 0);
	cr_assert_eq(hpshm__port_default_huge_page_size(), 0);
}

Test(winport, verify_reports_the_small_pages_of_a_plain_view)
{
	struct hpshm__backing b;
	HANDLE h;
	void *p = map_section(4 * MiB, &h);

	/* Untouched: verification itself must bring the sampled pages in to read their bit. */
	cr_assert_eq(hpshm__port_verify_backing(p, 4 * MiB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.page_size, hpshm__port_base_page_size());
	cr_assert_eq(b.huge, 0);
	cr_assert_str_eq(b.source, "QueryWorkingSetEx");
	UnmapViewOfFile(p);
	CloseHandle(h);
}

Test(winport, verify_says_large_only_when_every_sample_is_large)
{
	struct hpshm__backing b;
	HANDLE h;
	void *p = map_section(8 * MiB, &h);

	hpshm__win_sys.query_working_set_ex = fake_query_large;
	hpshm__win_sys.get_large_page_minimum = fake_large_2mib;
	fake_small_pages = 0;
	cr_assert_eq(hpshm__port_verify_backing(p, 8 * MiB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, 1);
	cr_assert_eq(b.page_size, 2 * MiB);
	fake_small_pages = 1; /* one small page among the samples makes the whole range small */
	cr_assert_eq(hpshm__port_verify_backing(p, 8 * MiB, HPSHM__PORT_NO_HANDLE, &b), 0);
	cr_assert_eq(b.huge, 0);
	cr_assert_eq(b.page_size, hpshm__port_base_page_size());
	UnmapViewOfFile(p);
	CloseHandle(h);
}

Test(winport, verify_is_unavailable_when_the_query_fails)
{
	struct hpshm__backing b;
	HANDLE h;
	void *p = map_section(MiB, &h);

	hpshm__win_sys.query_working_set_ex = fake_query_fails;
	cr_assert_eq(hpshm__port_verify_backing(p, MiB, HPSHM__PORT_NO_HANDLE, &b), HPSHM_EUNAVAILABLE);
	cr_assert_eq(b.page_size, 0);
	cr_assert_str_eq(b.source, "unverified");
	UnmapViewOfFile(p);
	CloseHandle(h);
}

Test(winport, populate_brings_every_page_in)
{
	PSAPI_WORKING_SET_EX_INFORMATION info[256];
	size_t base = hpshm__port_base_page_size();
	unsigned methods = 99;
	hpshm_error err;
	HANDLE h;
	char *p = map_section(256 * base, &h);

	cr_assert_eq(hpshm__port_populate(p, 256 * base, base, HPSHM__PORT_NO_HANDLE, &HPT_ONE_THREAD, &methods, &err), 0);
	cr_assert_eq(methods, HPSHM_POPULATE_TOUCH);
	for (size_t i = 0; i < 256; i++)
		info[i].VirtualAddress = p + i * base;
	cr_assert(QueryWorkingSetEx(GetCurrentProcess(), info, sizeof(info)));
	for (size_t i = 0; i < 256; i++)
		cr_expect(info[i].VirtualAttributes.Valid, "page %zu is not in the working set", i);
	UnmapViewOfFile(p);
	CloseHandle(h);
}

/* ---- addresses ---- */

Test(winport, pick_address_gives_a_free_aligned_range_a_view_can_take)
{
	void *at = NULL, *view;
	HANDLE h;

	cr_assert_eq(hpshm__port_pick_address(8 * MiB, 2 * MiB, &at), 0);
	cr_assert_eq((uintptr_t)at % (2 * MiB), 0, "%p is not 2MiB-aligned", at);
	cr_assert(range_free(at, 8 * MiB), "%p..+8MiB is not free", at);
#if UINTPTR_MAX > 0xffffffffu
	cr_assert_geq((uintptr_t)at, (uintptr_t)1 << 40, "%p is low in the address space", at);
#endif
	h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)(8 * MiB), NULL);
	cr_assert_not_null(h);
	view = MapViewOfFileEx(h, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, 8 * MiB, at);
	cr_assert_eq(view, at, "MapViewOfFileEx at %p: %lu", at, (unsigned long)GetLastError());
	UnmapViewOfFile(view);
	CloseHandle(h);
}

Test(winport, pick_address_refuses_an_alignment_that_is_not_a_power_of_two)
{
	void *at;

	cr_assert_eq(hpshm__port_pick_address(MiB, 3 * 65536, &at), HPSHM_EINVAL);
	cr_assert_eq(hpshm__port_pick_address(MiB, 0, &at), HPSHM_EINVAL);
}

Test(winport, maps_line_names_a_view_and_nothing_for_free_memory)
{
	char line[512];
	void *at;
	HANDLE h;
	char *p = map_section(MiB, &h);

	cr_assert_eq(hpshm__port_maps_line(p + 4096, 0, line, sizeof(line)), 0);
	cr_assert(strstr(line, "committed mapped view") != NULL, "%s", line);
	UnmapViewOfFile(p);
	CloseHandle(h);
	cr_assert_eq(hpshm__port_pick_address(MiB, 65536, &at), 0);
	cr_assert_eq(hpshm__port_maps_line(at, MiB, line, sizeof(line)), HPSHM_EUNAVAILABLE, "free range said: %s", line);
}

Test(winport, reservation_release_frees_only_an_exact_reservation)
{
	void *r = VirtualAlloc(NULL, MiB, MEM_RESERVE, PAGE_NOACCESS);
	void *c = VirtualAlloc(NULL, MiB, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);

	cr_assert_not_null(r);
	cr_assert_not_null(c);
	cr_assert_eq(hpshm__port_reservation_release(r, MiB / 2), 0, "released a reservation of another length");
	cr_assert(!range_free(r, MiB));
	cr_assert_eq(hpshm__port_reservation_release(c, MiB), 0, "released committed memory");
	cr_assert_eq(hpshm__port_reservation_release(r, MiB), 1);
	cr_assert(range_free(r, MiB), "the reservation is still there");
	VirtualFree(c, 0, MEM_RELEASE);
}

/* ---- placeholders (ports/windows/placeholder.c) ----
 *
 * wine refuses placeholders, so these fakes stand in for Windows 10 1803's: a placeholder is a
 * plain reservation the fakes remember, split and merged by releasing and reserving again,
 * and replaced by releasing it and mapping there.  Every call is recorded, so a test sees
 * which path the port took; the window the fakes leave is theirs, not the port's. */
#define PH_MAX 4
static struct {
	void *base[PH_MAX];     /* the fake placeholders, NULL where a slot is empty */
	size_t len[PH_MAX];     /* their lengths */
	int alloc2;             /* VirtualAlloc2() calls */
	int map3;               /* MapViewOfFile3() calls with MEM_REPLACE_PLACEHOLDER at a placeholder */
	int plain_release;      /* VirtualFree(MEM_RELEASE) of a whole placeholder, no placeholder flag */
	int map_ex_at;          /* MapViewOfFileEx() calls at an address */
} ph;

static int ph_find(const void *addr)
{
	for (int i = 0; i < PH_MAX; i++)
		if (ph.base[i] != NULL && ph.base[i] == addr)
			return i;
	return -1;
}

static void ph_add(void *base, size_t len)
{
	for (int i = 0; i < PH_MAX; i++)
		if (ph.base[i] == NULL) {
			ph.base[i] = base;
			ph.len[i] = len;
			return;
		}
}

static PVOID WINAPI fake_alloc2(HANDLE process, PVOID addr, SIZE_T len, ULONG type, ULONG protect, PVOID ext, ULONG n)
{
	void *p;

	(void)ext;
	(void)n;
	ph.alloc2++;
	if (!(type & 0x00040000) || protect != PAGE_NOACCESS) {
		SetLastError(ERROR_INVALID_PARAMETER);
		return NULL;
	}
	p = VirtualAllocEx(process, addr, len, MEM_RESERVE, PAGE_NOACCESS);
	if (p != NULL)
		ph_add(p, len);
	return p;
}

static PVOID WINAPI fake_alloc2_refuses(HANDLE process, PVOID addr, SIZE_T len, ULONG type, ULONG protect, PVOID ext,
					ULONG n)
{
	(void)process, (void)addr, (void)len, (void)type, (void)protect, (void)ext, (void)n;
	ph.alloc2++;
	SetLastError(ERROR_INVALID_PARAMETER); /* wine 8.0's answer */
	return NULL;
}

static BOOL WINAPI fake_free(LPVOID addr, SIZE_T len, DWORD type)
{
	int i = ph_find(addr), j;

	if (type == (MEM_RELEASE | 0x2)) { /* split [addr, addr+len) off a placeholder */
		if (i < 0 || len == 0 || len >= ph.len[i]) {
			SetLastError(ERROR_INVALID_PARAMETER);
			return FALSE;
		}
		VirtualFree(addr, 0, MEM_RELEASE);
		VirtualAlloc(addr, len, MEM_RESERVE, PAGE_NOACCESS);
		VirtualAlloc((char *)addr + len, ph.len[i] - len, MEM_RESERVE, PAGE_NOACCESS);
		ph_add((char *)addr + len, ph.len[i] - len);
		ph.len[i] = len;
		return TRUE;
	}
	if (type == (MEM_RELEASE | 0x1)) { /* merge the placeholders of [addr, addr+len) */
		j = i < 0 ? -1 : ph_find((char *)addr + ph.len[i]);
		if (j < 0 || ph.len[i] + ph.len[j] != len) {
			SetLastError(ERROR_INVALID_PARAMETER);
			return FALSE;
		}
		VirtualFree(ph.base[j], 0, MEM_RELEASE);
		VirtualFree(addr, 0, MEM_RELEASE);
		VirtualAlloc(addr, len, MEM_RESERVE, PAGE_NOACCESS);
		ph.base[j] = NULL;
		ph.len[i] = len;
		return TRUE;
	}
	if (type == MEM_RELEASE && i >= 0) {
		ph.plain_release++;
		ph.base[i] = NULL;
	}
	return VirtualFree(addr, len, type);
}

static PVOID WINAPI fake_map3(HANDLE mapping, HANDLE process, PVOID addr, ULONG64 offset, SIZE_T len, ULONG type,
			      ULONG protect, PVOID ext, ULONG n)
{
	int i = ph_find(addr);

	(void)process, (void)offset, (void)ext, (void)n;
	if (!(type & 0x00004000) || protect != PAGE_READWRITE || i < 0 || ph.len[i] != len) {
		SetLastError(ERROR_INVALID_ADDRESS);
		return NULL;
	}
	ph.map3++;
	ph.base[i] = NULL;
	VirtualFree(addr, 0, MEM_RELEASE);
	return MapViewOfFileEx(mapping, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, len, addr);
}

static LPVOID WINAPI fake_map_ex(HANDLE mapping, DWORD access, DWORD high, DWORD low, SIZE_T len, LPVOID base)
{
	if (base != NULL)
		ph.map_ex_at++;
	return MapViewOfFileEx(mapping, access, high, low, len, base);
}

static void ph_install(void)
{
	memset(&ph, 0, sizeof(ph));
	hpshm__win_sys.virtual_alloc2 = fake_alloc2;
	hpshm__win_sys.virtual_free = fake_free;
	hpshm__win_sys.map_view_of_file3 = fake_map3;
	hpshm__win_sys.map_view_of_file_ex = fake_map_ex;
}

/*
 * The child's side of a spawn on Windows 10 1803+, in this process: the parent's reservation
 * of segment and companion granule is a placeholder, which the core's release keeps and the
 * provider's attach and the companion's map replace, never released before a map.
 */
Test(winport, placeholder_reservation_is_replaced_by_the_views_never_freed)
{
	const size_t gran = 65536;
	struct hpshm_instance inst;
	struct hpshm_request rq;
	struct hpshm_mapping m;
	hpshm_error err;
	HANDLE h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)MiB, NULL);
	HANDLE hc = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)gran, NULL);
	char id[32];
	void *at, *c;

	cr_assert(h != NULL && hc != NULL);
	cr_assert_eq(hpshm__provider_find("plain", &inst), 0);
	cr_assert_eq(hpshm__port_pick_address(MiB + gran, gran, &at), 0);
	ph_install();
	cr_assert_eq(hpshm__win_reserve_in(GetCurrentProcess(), at, MiB + gran), at);
	cr_assert_eq(ph.alloc2, 1, "the reservation was not asked as a placeholder");
	cr_assert_eq(hpshm__port_reservation_release(at, MiB + gran), 2, "the placeholder was not kept");
	cr_assert(!range_free(at, MiB + gran), "the range was freed before the map");
	memset(&rq, 0, sizeof(rq));
	memset(&m, 0, sizeof(m));
	memset(&err, 0, sizeof(err));
	rq.address = at;
	rq.size = MiB;
	snprintf(id, sizeof(id), "handle=%d", (int)(intptr_t)h);
	cr_assert_eq(inst.ops->attach(&inst, &m, &rq, id, &err), 0, "%s", err.message);
	cr_assert_eq(m.addr, at);
	c = hpshm__win_map_view_at(hc, FILE_MAP_READ | FILE_MAP_WRITE, gran, (char *)at + MiB);
	cr_assert_eq(c, (char *)at + MiB, "the companion's view: %lu", GetLastError());
	cr_assert_eq(ph.map3, 2, "MapViewOfFile3() replaced %d placeholders, not 2", ph.map3);
	cr_assert_eq(ph.plain_release, 0, "a placeholder was released before its map");
	cr_assert_eq(ph.map_ex_at, 0, "MapViewOfFileEx() mapped at an address: the old path");
	((volatile char *)at)[0] = 1;
	((volatile char *)c)[0] = 2;
	hpshm__win_sys_reset();
	UnmapViewOfFile(c);
	UnmapViewOfFile(at);
	cr_assert(range_free(at, MiB + gran), "unmapping left something behind");
	CloseHandle(hc);
	CloseHandle(h);
}

/* Where VirtualAlloc2() refuses placeholders (wine 8.0), the plain reservation is made, the
 * refusal is remembered, and the child releases the range before mapping: the old path. */
Test(winport, placeholder_refused_once_then_plain_reservations)
{
	void *at, *got;

	cr_assert_eq(hpshm__port_pick_address(2 * MiB, 65536, &at), 0);
	ph_install();
	hpshm__win_sys.virtual_alloc2 = fake_alloc2_refuses;
	got = hpshm__win_reserve_in(GetCurrentProcess(), at, MiB);
	cr_assert_eq(got, at, "no plain reservation after the refusal");
	cr_assert_eq(hpshm__port_reservation_release(at, MiB), 1, "the plain reservation was not released");
	cr_assert(range_free(at, MiB));
	got = hpshm__win_reserve_in(GetCurrentProcess(), at, MiB);
	cr_assert_eq(got, at);
	cr_assert_eq(ph.alloc2, 1, "VirtualAlloc2() was asked again after refusing");
	hpshm__win_sys_reset();
	VirtualFree(at, 0, MEM_RELEASE);
}

/* wine's real calls: no placeholder, so a plain reservation; and a reservation of the view's
 * length that is no placeholder (someone else's) is neither replaced nor released. */
Test(winport, map_view_at_leaves_a_plain_reservation_alone)
{
	HANDLE h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)MiB, NULL);
	MEMORY_BASIC_INFORMATION mbi;
	void *at;

	cr_assert(h != NULL);
	cr_assert_eq(hpshm__port_pick_address(MiB, 65536, &at), 0);
	cr_assert_eq(hpshm__win_reserve_in(GetCurrentProcess(), at, MiB), at);
	cr_assert_null(hpshm__win_map_view_at(h, FILE_MAP_READ | FILE_MAP_WRITE, MiB, at), "mapped over a reservation");
	cr_assert_eq(GetLastError(), ERROR_INVALID_ADDRESS);
	cr_assert_eq(VirtualQuery(at, &mbi, sizeof(mbi)), sizeof(mbi));
	cr_assert(mbi.State == MEM_RESERVE && mbi.RegionSize == MiB, "the reservation was released");
	VirtualFree(at, 0, MEM_RELEASE);
	CloseHandle(h);
}

/* ---- processes ---- */

Test(winport, start_time_and_liveness_identify_this_process)
{
	long long pid = hpshm__port_getpid();
	uint64_t start = hpshm__port_process_start(pid);

	cr_assert_eq(pid, (long long)GetCurrentProcessId());
	cr_assert_neq(start, 0);
	cr_assert_eq(hpshm__port_process_alive(pid, start), 1);
	cr_assert_eq(hpshm__port_process_alive(pid, start + 1), 0, "another start time is another process");
	cr_assert_eq(hpshm__port_process_alive(pid, 0), -1, "without a start time a live pid may be recycled");
	cr_assert_eq(hpshm__port_process_alive(0, start), 0);
}

Test(winport, a_child_that_exited_is_not_alive)
{
	static const char *const args[] = { "exit", "0", NULL };
	struct hpshm__process proc;
	hpshm_error err;
	uint64_t start;
	int status;

	cr_assert_eq(start_child(args, NULL, 0, NULL, 0, &proc, &err), 0, "%s", err.message);
	start = hpshm__port_process_start(proc.pid);
	cr_assert_neq(start, 0, "the child's start time, read while we hold its handle");
	cr_assert_eq(hpshm__port_wait(&proc, &status, &err), 0);
	cr_assert_eq(hpshm__port_process_alive(proc.pid, start), 0);
}

Test(winport, wait_gives_the_exit_code)
{
	static const char *const seven[] = { "exit", "7", NULL }, *const zero[] = { "exit", "0", NULL };

	cr_assert_eq(run_child(seven, NULL, NULL, 0, NULL, 0), 7);
	cr_assert_eq(run_child(zero, NULL, NULL, 0, NULL, 0), 0);
}

Test(winport, a_crash_is_reported_as_sigsegv)
{
	static const char *const args[] = { "crash", NULL };

	cr_assert_eq(run_child(args, NULL, NULL, 0, NULL, 0), 128 + SIGSEGV);
}

Test(winport, a_missing_program_is_an_error_not_a_child)
{
	static const char *const args[] = { "hpshm-no-such-program", NULL };
	char **argv = strings(NULL, args);
	struct hpshm__process proc;
	hpshm_error err;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(hpshm__port_spawn(argv[0], argv, NULL, NULL, 0, NULL, 0, &proc, &err), HPSHM_ESYS);
	strings_free(argv);
	cr_assert_eq(err.sys_errno, ERROR_FILE_NOT_FOUND);
	cr_assert_str_eq(err.call, "SearchPathW");
	cr_assert_eq(proc.handle, 0);
	cr_assert_eq(proc.pid, 0);
}

Test(winport, arguments_arrive_unchanged)
{
	const char *args[WIN_CHILD_NARGS + 2];

	args[0] = "args";
	for (size_t i = 0; i < WIN_CHILD_NARGS; i++)
		args[1 + i] = win_child_args[i];
	args[WIN_CHILD_NARGS + 1] = NULL;
	cr_assert_eq(run_child(args, NULL, NULL, 0, NULL, 0), WIN_CHILD_OK);
}

Test(winport, utf8_arguments_arrive_as_the_same_characters)
{
	static const char *const args[] = { "utf8", WIN_CHILD_UTF8, NULL };

	cr_assert_eq(run_child(args, NULL, NULL, 0, NULL, 0), WIN_CHILD_OK);
}

Test(winport, the_environment_is_the_one_given_or_ours)
{
	static const char *const given[] = { "env", "HPT_WIN_GIVEN", "a value with spaces", NULL };
	static const char *const ours[] = { "env", "HPT_WIN_OURS", "inherited", NULL };
	static const char *const envp[] = { "HPT_WIN_GIVEN=a value with spaces", "SYSTEMROOT=C:\\windows", NULL };

	cr_assert_eq(run_child(given, envp, NULL, 0, NULL, 0), WIN_CHILD_OK);
	cr_assert_eq(_putenv_s("HPT_WIN_OURS", "inherited"), 0);
	cr_assert_eq(run_child(ours, NULL, NULL, 0, NULL, 0), WIN_CHILD_OK);
	cr_assert_neq(run_child(ours, envp, NULL, 0, NULL, 0), WIN_CHILD_OK, "a given environment replaces ours");
}

/* A manual-reset event called "Local\hpt-<what>-<pid>", inheritable or not; its name in name. */
static HANDLE named_event(const char *what, BOOL inheritable, char *name, size_t len)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, inheritable };
	wchar_t wname[128];
	HANDLE h;

	snprintf(name, len, "Local\\hpt-%s-%lu", what, (unsigned long)GetCurrentProcessId());
	cr_assert_geq(hpshm__win_wide(name, wname, 128), 0);
	h = CreateEventW(&sa, TRUE, FALSE, wname);
	cr_assert_not_null(h, "CreateEventW: %lu", (unsigned long)GetLastError());
	return h;
}

Test(winport, the_child_inherits_exactly_the_listed_handles)
{
	char listed_name[64], other_name[64], listed_text[32], other_text[32];
	HANDLE listed = named_event("listed", TRUE, listed_name, sizeof(listed_name));
	HANDLE other = named_event("other", TRUE, other_name, sizeof(other_name));
	const char *has[] = { "handle", listed_text, listed_name, NULL };
	const char *lacks[] = { "nohandle", other_text, other_name, NULL };
	intptr_t inherit = (intptr_t)listed;

	snprintf(listed_text, sizeof(listed_text), "%lld", (long long)(intptr_t)listed);
	snprintf(other_text, sizeof(other_text), "%lld", (long long)(intptr_t)other);
	cr_assert_eq(run_child(has, NULL, &inherit, 1, NULL, 0), WIN_CHILD_OK);
	/* other is inheritable, but not in the list. */
	cr_assert_eq(run_child(lacks, NULL, &inherit, 1, NULL, 0), WIN_CHILD_OK);
	CloseHandle(listed);
	CloseHandle(other);
}

Test(winport, a_handle_made_inheritable_for_the_child_is_restored)
{
	char name[64], text[32];
	HANDLE h = named_event("private", FALSE, name, sizeof(name));
	const char *has[] = { "handle", text, name, NULL };
	intptr_t inherit = (intptr_t)h;
	DWORD flags = 0;

	snprintf(text, sizeof(text), "%lld", (long long)(intptr_t)h);
	cr_assert_eq(run_child(has, NULL, &inherit, 1, NULL, 0), WIN_CHILD_OK);
	cr_assert(GetHandleInformation(h, &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0, "the handle stayed inheritable");
	CloseHandle(h);
}

static BOOL WINAPI fake_create_process_fails(LPCWSTR app, LPWSTR cmdline, LPSECURITY_ATTRIBUTES process_sa,
					     LPSECURITY_ATTRIBUTES thread_sa, BOOL inherit, DWORD flags, LPVOID env,
					     LPCWSTR dir, LPSTARTUPINFOW si, LPPROCESS_INFORMATION pi)
{
	(void)app, (void)cmdline, (void)process_sa, (void)thread_sa, (void)inherit, (void)flags, (void)env, (void)dir;
	(void)si, (void)pi;
	SetLastError(fake_code);
	return FALSE;
}

Test(winport, a_child_that_cannot_be_created_leaves_the_handle_as_it_was)
{
	static const char *const args[] = { "exit", "0", NULL };
	HANDLE h = CreateEventW(NULL, TRUE, FALSE, NULL);
	struct hpshm__process proc;
	intptr_t inherit = (intptr_t)h;
	hpshm_error err;
	DWORD flags = 0;

	fake_code = ERROR_ACCESS_DENIED;
	hpshm__win_sys.create_process = fake_create_process_fails;
	cr_assert_eq(start_child(args, &inherit, 1, NULL, 0, &proc, &err), HPSHM_ESYS);
	cr_assert_str_eq(err.call, "CreateProcessW");
	cr_assert_eq(err.sys_errno, ERROR_ACCESS_DENIED);
	cr_assert_eq(proc.handle, 0);
	cr_assert(GetHandleInformation(h, &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0, "the handle stayed inheritable after the failed start");
	CloseHandle(h);
}

/* Wine's word for a new process that ended before its start was done: the error says to start it again. */
Test(winport, a_start_that_ended_early_says_to_start_it_again)
{
	static const char *const args[] = { "exit", "0", NULL };
	struct hpshm__process proc;
	hpshm_error err;

	fake_code = ERROR_INTERNAL_ERROR;
	hpshm__win_sys.create_process = fake_create_process_fails;
	cr_assert_eq(start_child(args, NULL, 0, NULL, 0, &proc, &err), HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, ERROR_INTERNAL_ERROR);
	cr_assert(strstr(err.hint, "start it again"), "hint: %s", err.hint);
	cr_assert_eq(proc.handle, 0);
}

Test(winport, a_closed_handle_cannot_be_inherited)
{
	static const char *const args[] = { "exit", "0", NULL };
	HANDLE h = CreateEventW(NULL, TRUE, FALSE, NULL);
	struct hpshm__process proc;
	intptr_t inherit = (intptr_t)h;
	hpshm_error err;

	CloseHandle(h);
	cr_assert_eq(start_child(args, &inherit, 1, NULL, 0, &proc, &err), HPSHM_EINVAL);
	cr_assert_str_eq(err.call, "GetHandleInformation");
}

Test(winport, the_range_is_reserved_in_the_child_until_it_releases_it)
{
	char addr_text[32], len_text[32];
	const char *args[] = { "reserved", addr_text, len_text, NULL };
	void *at;

	cr_assert_eq(hpshm__port_pick_address(16 * MiB, 65536, &at), 0);
	snprintf(addr_text, sizeof(addr_text), "%llx", (unsigned long long)(uintptr_t)at);
	snprintf(len_text, sizeof(len_text), "%llx", (unsigned long long)(16 * MiB));
	cr_assert_eq(run_child(args, NULL, NULL, 0, at, 16 * MiB), WIN_CHILD_OK);
}

Test(winport, a_range_the_child_cannot_keep_free_ends_the_child)
{
	static const char *const args[] = { "exit", "0", NULL };
	struct hpshm__process proc;
	hpshm_error err;
	void *at;

	cr_assert_eq(hpshm__port_pick_address(16 * MiB, 65536, &at), 0);
	hpshm__win_sys.virtual_alloc_ex = fake_alloc_ex_taken;
	hpshm__win_sys.terminate_process = counting_terminate;
	cr_assert_eq(start_child(args, NULL, 0, at, 16 * MiB, &proc, &err), HPSHM_EEXIST);
	cr_assert_eq(err.sys_errno, ERROR_INVALID_ADDRESS);
	cr_assert_str_eq(err.call, "VirtualAllocEx");
	cr_assert_eq(terminated, 1, "the suspended child was not ended");
	cr_assert_eq(proc.handle, 0);
}

Test(winport, waiting_for_no_process_is_an_error)
{
	struct hpshm__process proc = { 0, 0 };
	hpshm_error err;

	cr_assert_eq(hpshm__port_wait(&proc, NULL, &err), HPSHM_EINVAL);
}

/* ---- privileges, the boot, nonces, the clock, files, the environment ---- */

Test(winport, a_privilege_not_held_is_error_not_all_assigned)
{
	const char *call = "";

	hpshm__win_sys.adjust_token_privileges = fake_adjust_not_all_assigned;
	cr_assert_eq(hpshm__win_privilege_enable(SE_LOCK_MEMORY_NAME, &call), ERROR_NOT_ALL_ASSIGNED);
	cr_assert_str_eq(call, "AdjustTokenPrivileges");
	fake_code = ERROR_ACCESS_DENIED;
	hpshm__win_sys.adjust_token_privileges = fake_adjust_fails;
	cr_assert_eq(hpshm__win_privilege_enable(SE_LOCK_MEMORY_NAME, &call), ERROR_ACCESS_DENIED);
}

Test(winport, the_boot_id_is_stable_or_absent)
{
	char a[40], b[40];
	int ra = hpshm__port_boot_id(a, sizeof(a)), rb = hpshm__port_boot_id(b, sizeof(b));

	cr_assert_eq(ra, rb);
	if (ra == HPSHM_ENOTSUP) {
		cr_assert_str_eq(a, "");
		cr_log_info("no boot counter in the registry: boot ids are not compared here");
		return;
	}
	cr_assert_eq(ra, 0);
	cr_assert_str_eq(a, b);
	cr_assert_eq(strncmp(a, "windows-boot-", 13), 0, "%s", a);
}

Test(winport, nonces_differ)
{
	cr_assert_neq(hpshm__port_random64(), hpshm__port_random64());
}

Test(winport, the_clock_is_monotonic_in_nanoseconds)
{
	uint64_t t0 = hpshm__port_now_ns(), t1;

	Sleep(20);
	t1 = hpshm__port_now_ns();
	cr_assert_geq(t1 - t0, 10000000u, "20 ms of sleep took %llu ns", (unsigned long long)(t1 - t0));
	cr_assert_lt(t1 - t0, 10000000000u);
}

Test(winport, files_hpshm_opens_are_not_inherited)
{
	char dir[MAX_PATH], path[MAX_PATH + 32];
	DWORD flags = HANDLE_FLAG_INHERIT;
	FILE *f;

	cr_assert(GetTempPathA(sizeof(dir), dir) > 0);
	snprintf(path, sizeof(path), "%shpshm-test-%lu.txt", dir, (unsigned long)GetCurrentProcessId());
	f = hpshm__port_fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert(GetHandleInformation((HANDLE)_get_osfhandle(_fileno(f)), &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0);
	cr_assert_geq(fputs("huge_pages=try\n", f), 0);
	fclose(f);
	f = hpshm__port_fopen(path, "r");
	cr_assert_not_null(f);
	fclose(f);
	DeleteFileA(path);
	errno = 0;
	cr_assert_null(hpshm__port_fopen(path, "r"));
	cr_assert_eq(errno, ENOENT);
}

Test(winport, getenv_reads_the_environment)
{
	cr_assert_eq(_putenv_s("HPT_WIN_GETENV", "yes"), 0);
	cr_assert_not_null(hpshm__port_getenv("HPT_WIN_GETENV"));
	cr_assert_str_eq(hpshm__port_getenv("HPT_WIN_GETENV"), "yes");
	cr_assert_null(hpshm__port_getenv("HPT_WIN_NOT_SET"));
}

/* ---- segments: the backends through the public API ---- */

Test(winseg, try_gives_verified_large_pages_or_falls_back_to_verified_small_ones)
{
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	const hpshm_attempt *large;

	cr_assert_eq(hpshm_segment_create_ex(&seg, 4 * MiB, NULL, &r, &err), 0, "%s", err.message);
	cr_assert(r.verified, "the page size was not read back");
	cr_assert_str_eq(r.verified_by, "QueryWorkingSetEx");
	if (strcmp(r.provider, "windows_large") == 0) {
		cr_assert(r.huge);
		cr_assert_eq(r.page_size, GetLargePageMinimum());
	} else {
		cr_assert_str_eq(r.provider, "plain");
		cr_assert_eq(r.huge, 0);
		cr_assert_eq(r.page_size, hpshm__port_base_page_size());
		large = attempt_of(&r, "windows_large");
		if (GetLargePageMinimum() != 0) {
			cr_assert_not_null(large, "windows_large was not tried");
			cr_assert_neq(large->result, 0);
			cr_assert_neq(large->reason[0], '\0', "no reason for the fallback");
			cr_log_info("fell back to plain: %s", large->reason);
		}
	}
	memset(hpshm_segment_address(seg), 0xA5, hpshm_segment_size(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/*
 * No Windows provider grows a section in place yet (doc/resize.md): max_size is refused by
 * every one, and the error says none can here rather than naming Linux's providers.
 */
Test(winseg, max_size_is_refused_naming_that_no_provider_here_can)
{
	hpshm_config *any = config("max_size=64MiB"), *plain = config("provider=plain,max_size=64MiB");
	hpshm_segment *seg = NULL;
	hpshm_error err;

	cr_assert_lt(hpshm_segment_create(&seg, 4 * MiB, any, &err), 0);
	cr_assert_null(seg);
	cr_assert(strstr(err.message, "max_size") && strstr(err.message, "none on this system"), "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, plain, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "max_size");
	cr_assert(strstr(err.message, "none on this system") != NULL, "%s", err.message);
	hpshm_config_free(any);
	hpshm_config_free(plain);
}

Test(winseg, without_the_privilege_large_pages_are_unavailable_and_the_fix_is_named)
{
	hpshm_config *cfg = config("provider=windows_large,huge_pages=on");
	const hpshm_attempt *a;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;

	if (GetLargePageMinimum() == 0)
		cr_skip_test("this processor has no large pages");
	hpshm__win_sys.adjust_token_privileges = fake_adjust_not_all_assigned;
	cr_assert_eq(hpshm_segment_create_ex(&seg, 4 * MiB, cfg, &r, &err), HPSHM_ENOHUGE);
	cr_assert(strstr(err.message, "SeLockMemoryPrivilege") != NULL, "%s", err.message);
	a = attempt_of(&r, "windows_large");
	cr_assert_not_null(a);
	cr_assert_eq(a->result, HPSHM_EUNAVAILABLE);
	cr_assert_eq(a->sys_errno, ERROR_NOT_ALL_ASSIGNED);
	/* Provider ABI 3: the operator's fix comes from probe() and is the failure's one hint. */
	cr_assert(strstr(err.hint, "Lock pages in memory") != NULL, "%s", err.hint);
	hpshm_config_free(cfg);
}

/* ERROR_PRIVILEGE_NOT_HELD, ERROR_NO_SYSTEM_RESOURCES, ERROR_INVALID_PARAMETER from the section. */
static void large_error_falls_back(DWORD code, const char *says)
{
	hpshm_config *cfg = config("huge_pages=try");
	const hpshm_attempt *a;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;

	if (GetLargePageMinimum() == 0)
		cr_skip_test("this processor has no large pages");
	hpshm__win_sys.adjust_token_privileges = fake_adjust_ok;
	hpshm__win_sys.create_file_mapping = fake_create_mapping_fails;
	fake_code = code;
	/* Every section fails now, plain's too: the walk must still record windows_large as
	 * unavailable for this code, and say why. */
	cr_assert_lt(hpshm_segment_create_ex(&seg, 4 * MiB, cfg, &r, &err), 0);
	a = attempt_of(&r, "windows_large");
	cr_assert_not_null(a);
	cr_assert_eq(a->result, HPSHM_EUNAVAILABLE, "code %lu gave %s", (unsigned long)code, hpshm_errname(a->result));
	cr_assert_eq(a->sys_errno, (int)code);
	cr_assert_str_eq(a->call, "CreateFileMappingW");
	cr_assert(strstr(a->reason, says) != NULL, "%s", a->reason);
	hpshm_config_free(cfg);
}

Test(winseg, privilege_not_held_at_creation_is_unavailable)
{
	large_error_falls_back(ERROR_PRIVILEGE_NOT_HELD, "SeLockMemoryPrivilege");
}

Test(winseg, no_contiguous_memory_is_unavailable)
{
	large_error_falls_back(ERROR_NO_SYSTEM_RESOURCES, "contiguous");
}

Test(winseg, an_invalid_parameter_for_large_pages_is_unavailable)
{
	large_error_falls_back(ERROR_INVALID_PARAMETER, "refused");
}

Test(winseg, a_large_page_section_is_only_taken_once_verified)
{
	hpshm_config *cfg = config("provider=windows_large,huge_pages=on");
	const hpshm_attempt *a;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	int rc;

	if (GetLargePageMinimum() == 0)
		cr_skip_test("this processor has no large pages");
	/* The token "has" the privilege: on wine the section is then made, with small pages. */
	hpshm__win_sys.adjust_token_privileges = fake_adjust_ok;
	rc = hpshm_segment_create_ex(&seg, 4 * MiB, cfg, &r, &err);
	a = attempt_of(&r, "windows_large");
	cr_assert_not_null(a);
	if (rc == 0) {
		cr_assert(r.verified && r.huge, "taken without verified large pages");
		cr_assert_eq(r.page_size, GetLargePageMinimum());
		hpshm_segment_destroy(seg);
	} else {
		cr_assert_eq(rc, HPSHM_ENOHUGE);
		cr_log_info("windows_large: %s: %s", a->call, a->reason);
		cr_assert(strcmp(a->call, "verify") == 0 || a->result == HPSHM_EUNAVAILABLE,
			  "neither refused by verification nor unavailable: %s %s", a->call, a->reason);
	}
	hpshm_config_free(cfg);
}

/*
 * On a machine set up for large pages (the token holds SeLockMemoryPrivilege, which wine never
 * grants), the real thing with no fake: huge_pages=on gives windows_large, every page read
 * back as large by QueryWorkingSetEx, and the memory is usable.
 */
Test(winseg, real_large_pages_where_the_token_holds_the_right)
{
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	int rc;

	if (GetLargePageMinimum() == 0)
		cr_skip_test("this processor has no large pages");
	if (hpshm__win_privilege_held(SE_LOCK_MEMORY_NAME) != 1)
		cr_skip_test("this token lacks SeLockMemoryPrivilege (\"Lock pages in memory\"): real large pages "
			     "cannot be had here");
	cfg = config("provider=windows_large,huge_pages=on");
	rc = hpshm_segment_create_ex(&seg, 2 * GetLargePageMinimum(), cfg, &r, &err);
	hpshm_config_free(cfg);
	if (rc != 0 && err.sys_errno == ERROR_NO_SYSTEM_RESOURCES)
		cr_skip_test("no contiguous free memory for large pages now: %s", err.message);
	cr_assert_eq(rc, 0, "%s: %s (hint: %s)", hpshm_errname(rc), err.message, err.hint);
	cr_assert_str_eq(r.provider, "windows_large");
	cr_assert(r.verified && r.huge, "verified %d, huge %d", r.verified, r.huge);
	cr_assert_eq(r.page_size, GetLargePageMinimum());
	memset(hpshm_segment_address(seg), 0x5A, hpshm_segment_size(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/*
 * What real Windows does when all is well, which wine cannot: the right held, a section of
 * large pages, and QueryWorkingSetEx saying LargePage of every sample.  windows_large must
 * then report verified 2 MiB pages, and nothing else may be tried.
 */
Test(winseg, with_the_right_and_large_pages_verified_windows_large_reports_2mib_pages)
{
	hpshm_config *cfg = config("provider=windows_large,huge_pages=on");
	hpshm_segment *seg;
	hpshm_report r;
	hpshm_error err;
	int rc;

	hpshm__win_sys.adjust_token_privileges = fake_adjust_ok;
	hpshm__win_sys.get_large_page_minimum = fake_large_2mib;
	hpshm__win_sys.query_working_set_ex = fake_query_large;
	fake_small_pages = 0;
	rc = hpshm_segment_create_ex(&seg, 4 * MiB, cfg, &r, &err);
	if (rc != 0 && err.sys_errno == ERROR_PRIVILEGE_NOT_HELD)
		cr_skip_test("this Windows refuses the section itself without the right: %s", err.message);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "windows_large");
	cr_assert_eq(r.nattempts, 1u, "%u providers tried", r.nattempts);
	cr_assert(r.verified && r.huge, "verified %d, huge %d", r.verified, r.huge);
	cr_assert_str_eq(r.verified_by, "QueryWorkingSetEx");
	cr_assert_eq(r.page_size, 2 * MiB);
	cr_assert_eq(r.mapped_size, 4 * MiB);
	memset(hpshm_segment_address(seg), 0x5a, hpshm_segment_size(seg));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(winseg, a_commit_limit_is_out_of_memory_and_names_the_paging_file)
{
	hpshm_config *cfg = config("huge_pages=off");
	hpshm_segment *seg;
	hpshm_error err;

	hpshm__win_sys.create_file_mapping = fake_create_mapping_fails;
	fake_code = ERROR_COMMITMENT_LIMIT;
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), HPSHM_ENOMEM);
	cr_assert_eq(err.sys_errno, ERROR_COMMITMENT_LIMIT);
	cr_assert(strstr(err.hint, "paging file") != NULL, "%s", err.hint);
	hpshm_config_free(cfg);
}

Test(winseg, a_taken_base_address_names_what_holds_it)
{
	char kv[96];
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	HANDLE h;
	void *at, *view;

	cr_assert_eq(hpshm__port_pick_address(4 * MiB, 65536, &at), 0);
	h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)(4 * MiB), NULL);
	view = MapViewOfFileEx(h, FILE_MAP_READ, 0, 0, 4 * MiB, at);
	cr_assert_eq(view, at);
	snprintf(kv, sizeof(kv), "huge_pages=off,base_address=0x%llx", (unsigned long long)(uintptr_t)at);
	cfg = config(kv);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EEXIST);
	cr_assert_eq(err.sys_errno, ERROR_INVALID_ADDRESS);
	cr_assert(strstr(err.message, "mapped view") != NULL, "%s", err.message);
	hpshm_config_free(cfg);
	UnmapViewOfFile(view);
	CloseHandle(h);
}

Test(winseg, a_name_in_use_is_refused_naming_its_creator)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-interlock");
	hpshm_segment *a, *b;
	hpshm_error err;
	char pid[32];

	cr_assert_eq(hpshm_segment_create(&a, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&b, MiB, cfg, &err), HPSHM_EEXIST);
	snprintf(pid, sizeof(pid), "process %lu", (unsigned long)GetCurrentProcessId());
	cr_assert(strstr(err.message, pid) != NULL, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(a), 0);
	/* The last handle went with the destroy, and the name with it. */
	cr_assert_eq(hpshm_segment_create(&b, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(b), 0);
	hpshm_config_free(cfg);
}

/*
 * The privilege's hint is for a failure the privilege would cure: a name in use, or a size no
 * address space holds, keeps the hint of that failure even when windows_large, tried first,
 * lacked the privilege (issue 22); and a 64-bit program is not told to be one.
 */
Test(winseg, a_request_failure_keeps_its_own_hint_not_the_privileges)
{
	hpshm_segment *a, *b;
	hpshm_config *cfg;
	hpshm_error err;
	char kv[64];

	hpshm__win_sys.adjust_token_privileges = fake_adjust_not_all_assigned;
	snprintf(kv, sizeof(kv), "name=hpt-hint-%lu", (unsigned long)GetCurrentProcessId());
	cfg = config(kv);
	cr_assert_eq(hpshm_segment_create(&a, MiB, cfg, &err), 0, "%s", err.message);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(hpshm_segment_create(&b, MiB, cfg, &err), HPSHM_EEXIST, "%s", err.message);
	cr_assert(strstr(err.message, "SeLockMemoryPrivilege") != NULL, "windows_large was not tried: %s", err.message);
	cr_assert_null(strstr(err.hint, "Lock pages in memory"), "a name in use, hinted with the privilege: %s",
		       err.hint);
	cr_assert_neq(err.hint[0], '\0');
	cr_assert_eq(hpshm_segment_destroy(a), 0);
	hpshm_config_free(cfg);

	memset(&err, 0, sizeof(err));
	cr_assert_lt(hpshm_segment_create(&a, (size_t)1 << 40, NULL, &err), 0, "1 TiB was created");
	cr_assert_null(strstr(err.hint, "Lock pages in memory"), "1 TiB, hinted with the privilege: %s", err.hint);
	if (sizeof(void *) == 8)
		cr_assert_null(strstr(err.hint, "64-bit"), "a 64-bit program told to be one: %s", err.hint);
}

/* A token of the elevation type asked for; every other question goes to the real token. */
static TOKEN_ELEVATION_TYPE fake_elevation;

static BOOL WINAPI fake_token_elevation(HANDLE token, TOKEN_INFORMATION_CLASS cls, LPVOID info, DWORD len,
					PDWORD ret_len)
{
	if (cls != TokenElevationType)
		return GetTokenInformation(token, cls, info, len, ret_len);
	*ret_len = sizeof(fake_elevation);
	if (len < sizeof(fake_elevation)) {
		SetLastError(ERROR_INSUFFICIENT_BUFFER);
		return FALSE;
	}
	memcpy(info, &fake_elevation, sizeof(fake_elevation));
	return TRUE;
}

/* "start the program elevated" helps an administrator whose token UAC filtered, no one else. */
Test(winseg, the_large_page_hint_says_elevated_only_to_a_filtered_administrator)
{
	hpshm_config *cfg = config("provider=windows_large,huge_pages=on");
	hpshm_segment *seg;
	hpshm_error err;

	if (GetLargePageMinimum() == 0)
		cr_skip_test("this processor has no large pages");
	hpshm__win_sys.adjust_token_privileges = fake_adjust_not_all_assigned;
	hpshm__win_sys.get_token_information = fake_token_elevation;
	fake_elevation = TokenElevationTypeLimited;
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), HPSHM_ENOHUGE);
	cr_assert(strstr(err.hint, "elevated") != NULL, "a filtered administrator not told: %s", err.hint);
	fake_elevation = TokenElevationTypeDefault;
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), HPSHM_ENOHUGE);
	cr_assert(strstr(err.hint, "Lock pages in memory") != NULL, "%s", err.hint);
	cr_assert_null(strstr(err.hint, "elevated"), "a user who is no administrator told to elevate: %s", err.hint);
	fake_elevation = TokenElevationTypeFull;
	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), HPSHM_ENOHUGE);
	cr_assert_null(strstr(err.hint, "elevated"), "an elevated process told to elevate: %s", err.hint);
	hpshm_config_free(cfg);
}

Test(winseg, a_name_another_kind_of_object_holds_is_refused)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-event");
	HANDLE ev = CreateEventW(NULL, TRUE, FALSE, L"Local\\hpshm.hpt-event");
	hpshm_segment *seg;
	hpshm_error err;

	cr_assert_not_null(ev);
	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), HPSHM_EEXIST);
	cr_assert(strstr(err.message, "not a section") != NULL, "%s", err.message);
	CloseHandle(ev);
	hpshm_config_free(cfg);
}

Test(winseg, a_named_section_admits_its_user_alone)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-dacl");
	PSECURITY_DESCRIPTOR sd = NULL;
	ACCESS_ALLOWED_ACE *ace;
	TOKEN_USER *user;
	BYTE buf[256];
	hpshm_segment *seg;
	hpshm_error err;
	HANDLE h, token;
	PACL dacl = NULL;
	DWORD len;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	h = OpenFileMappingW(READ_CONTROL, FALSE, L"Local\\hpshm.hpt-dacl");
	cr_assert_not_null(h, "OpenFileMappingW: %lu", (unsigned long)GetLastError());
	cr_assert_eq(GetSecurityInfo(h, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL, &sd),
		     ERROR_SUCCESS);
	cr_assert_not_null(dacl, "no DACL: everyone is admitted");
	cr_assert_eq(dacl->AceCount, 1);
	cr_assert(GetAce(dacl, 0, (void **)&ace));
	cr_assert_eq(ace->Header.AceType, ACCESS_ALLOWED_ACE_TYPE);
	cr_assert(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
	cr_assert(GetTokenInformation(token, TokenUser, buf, sizeof(buf), &len));
	user = (TOKEN_USER *)buf;
	cr_assert(EqualSid((PSID)&ace->SidStart, user->User.Sid), "the ACE is for another SID");
	CloseHandle(token);
	LocalFree(sd);
	CloseHandle(h);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

/* Create with kv (reattach=exec), start win_child attach, check its reply; the token. */
static void reattach_round_trip(const char *kv, const char *id_prefix)
{
	static const char *const args[] = { "attach", NULL };
	char **argv = strings(child_path(), args);
	char token[HPSHM_TOKEN_MAX];
	hpshm_config *cfg = config(kv);
	volatile uint32_t *word;
	hpshm_segment *seg;
	hpshm_child child;
	hpshm_error err;
	int status = -1;

	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof(token), &err), 0, "%s", err.message);
	cr_assert(strstr(token, id_prefix) != NULL, "token %s does not name the section by %s", token, id_prefix);
	word = hpshm_segment_address(seg);
	word[0] = WIN_CHILD_MAGIC;
	word[2] = 0;
	cr_assert_eq(hpshm_child_spawn(seg, argv[0], argv, NULL, &child, &err), 0, "%s", err.message);
	strings_free(argv);
	cr_assert_not_null(child.handle);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, WIN_CHILD_OK, "the child failed to attach (status %d)", status);
	cr_assert_eq(word[2], WIN_CHILD_REPLY, "the child's write is not in the segment");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(winseg, a_child_attaches_an_unnamed_segment_by_its_inherited_handle)
{
	reattach_round_trip("huge_pages=off,reattach=exec", ":handle=");
}

Test(winseg, a_child_attaches_a_named_segment_by_name)
{
	reattach_round_trip("huge_pages=off,reattach=exec,name=hpt-byname", ":name=Local\\hpshm.hpt-byname:");
}

Test(winseg, the_segment_handle_stays_private_in_the_parent)
{
	static const char *const args[] = { "exit", "0", NULL };
	char **argv = strings(child_path(), args);
	char token[HPSHM_TOKEN_MAX];
	hpshm_config *cfg = config("huge_pages=off,reattach=exec");
	hpshm_segment *seg;
	hpshm_child child;
	hpshm_error err;
	const char *h;
	DWORD flags = HANDLE_FLAG_INHERIT;
	int status;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof(token), &err), 0, "%s", err.message);
	h = strstr(token, ":handle=");
	cr_assert_not_null(h, "%s", token);
	cr_assert_eq(hpshm_child_spawn(seg, argv[0], argv, NULL, &child, &err), 0, "%s", err.message);
	strings_free(argv);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0);
	cr_assert(GetHandleInformation((HANDLE)(intptr_t)strtoll(h + 8, NULL, 10), &flags));
	cr_assert_eq(flags & HANDLE_FLAG_INHERIT, 0, "the section's handle is left inheritable");
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

Test(winseg, attaching_where_the_range_is_taken_names_the_holder)
{
	char token[HPSHM_TOKEN_MAX];
	hpshm_config *cfg = config("huge_pages=off,reattach=exec");
	hpshm_segment *seg, *again;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_token(seg, token, sizeof(token), &err), 0, "%s", err.message);
	/* In the creator itself the range holds the creator's own view. */
	cr_assert_eq(hpshm_segment_attach(&again, token, NULL, &err), HPSHM_EEXIST);
	cr_assert_eq(err.sys_errno, ERROR_INVALID_ADDRESS);
	cr_assert(strstr(err.message, "mapped view") != NULL, "%s", err.message);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

/* ---- `hpshm ls` and `hpshm gc`: scan() and remove() of named sections ---- */

extern const struct hpshm_provider hpshm__provider_plain;

#define LS_MAX 8

/* The objects hpshm_objects_list() gives whose id is one of ids, and how often each came. */
struct ls_seen {
	const char  *ids[LS_MAX]; /* what to look for, NULL-terminated */
	hpshm_object obj[LS_MAX]; /* the last listing of each */
	int          times[LS_MAX];
};

static int ls_seen_one(void *user, const hpshm_object *o)
{
	struct ls_seen *s = user;

	for (int i = 0; i < LS_MAX && s->ids[i] != NULL; i++)
		if (strcmp(o->id, s->ids[i]) == 0) {
			s->obj[i] = *o;
			s->times[i]++;
		}
	return 0;
}

static void ls_list(struct ls_seen *s)
{
	hpshm_error err;
	int n;

	memset(s->obj, 0, sizeof(s->obj));
	memset(s->times, 0, sizeof(s->times));
	n = hpshm_objects_list(ls_seen_one, s, &err);
	cr_assert_geq(n, 0, "hpshm_objects_list: %s", err.message);
}

/* A pagefile-backed section named wname, with its tail written by tail(view, len) if given. */
static HANDLE ls_section(const wchar_t *wname, size_t len, void (*tail)(char *view, size_t len))
{
	HANDLE h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, (DWORD)len, wname);
	char *view;

	cr_assert_not_null(h, "CreateFileMappingW: %lu", (unsigned long)GetLastError());
	cr_assert_neq(GetLastError(), ERROR_ALREADY_EXISTS, "the name is taken: a leftover of another run?");
	if (tail != NULL) {
		view = MapViewOfFile(h, FILE_MAP_WRITE, 0, 0, len);
		cr_assert_not_null(view);
		tail(view, len);
		UnmapViewOfFile(view);
	}
	return h;
}

static void ls_tail_foreign(char *view, size_t len)
{
	memcpy(view + len - HPSHM_HEADER_REGION, "NOTHPSHM-some-other-format", 26);
}

static void ls_tail_large(char *view, size_t len)
{
	(void)hpshm__header_write(view + len - HPSHM_HEADER_REGION, len - HPSHM_HEADER_REGION, view, "windows_large",
				  "hpt-ls-large", 2 * MiB, "");
}

/* ---- the owner removes; a named section opened by a process started apart ---- */

/* Is the section name (UTF-16, with its namespace) there?  Opened and closed at once. */
static int section_exists(const wchar_t *name)
{
	HANDLE h = OpenFileMappingW(FILE_MAP_READ, FALSE, name);

	if (h == NULL)
		return 0;
	CloseHandle(h);
	return 1;
}

Test(winseg, a_spawned_childs_destroy_of_a_named_section_only_detaches)
{
	static const char *const args[] = { "attach", NULL };
	char **argv = strings(child_path(), args);
	char addr[32];
	const char *open_args[] = { "open", "hpt-keep", addr, NULL };
	hpshm_config *cfg = config("huge_pages=off,reattach=exec,name=hpt-keep");
	volatile uint32_t *word;
	hpshm_segment *seg;
	hpshm_child child;
	hpshm_error err;
	int status = -1;

	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), 0, "%s", err.message);
	word = hpshm_segment_address(seg);
	word[0] = WIN_CHILD_MAGIC;
	word[2] = 0;
	/* The child attaches, writes, and destroys its handle, as a worker's clean-up would. */
	cr_assert_eq(hpshm_child_spawn(seg, argv[0], argv, NULL, &child, &err), 0, "%s", err.message);
	strings_free(argv);
	cr_assert_eq(hpshm_child_wait(&child, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, WIN_CHILD_OK, "the child failed (status %d)", status);
	cr_assert_eq(word[2], WIN_CHILD_REPLY);
	/* The creator's segment is untouched, still its owner's, still named. */
	cr_assert_eq(hpshm_segment_is_owner(seg), 1);
	cr_assert_eq(word[0], WIN_CHILD_MAGIC);
	word[4] = 0x1234abcdu;
	cr_assert_eq(word[4], 0x1234abcdu);
	cr_assert(section_exists(L"Local\\hpshm.hpt-keep"), "the child's destroy removed the section's name");
	/* And a process started apart still opens it, at the creator's address. */
	snprintf(addr, sizeof(addr), "%llx", (unsigned long long)(uintptr_t)word);
	word[2] = 0;
	status = run_child(open_args, NULL, NULL, 0, NULL, 0);
	cr_assert_eq(status, WIN_CHILD_OK, "the opener failed (status %d)", status);
	cr_assert_eq(word[2], WIN_CHILD_REPLY);
	/* The owner's destroy lets the last handle go: the section is gone. */
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert(!section_exists(L"Local\\hpshm.hpt-keep"), "the section outlived its owner's destroy");
	hpshm_config_free(cfg);
}

Test(winseg, a_process_started_apart_opens_a_named_section_where_the_system_chooses)
{
	const char *open_args[] = { "open", "hpt-apart", "-", NULL };
	hpshm_config *cfg = config("huge_pages=off,name=hpt-apart");
	volatile uint32_t *word;
	hpshm_segment *seg;
	hpshm_error err;
	int status;

	cr_assert_eq(hpshm_segment_create(&seg, 4 * MiB, cfg, &err), 0, "%s", err.message);
	word = hpshm_segment_address(seg);
	word[0] = WIN_CHILD_MAGIC;
	word[2] = 0;
	status = run_child(open_args, NULL, NULL, 0, NULL, 0);
	cr_assert_eq(status, WIN_CHILD_OK, "the opener failed (status %d)", status);
	cr_assert_eq(word[2], WIN_CHILD_REPLY);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(winseg, open_refuses_a_section_that_is_not_hpshms)
{
	HANDLE h = ls_section(L"Local\\hpshm.hpt-open-foreign", 64 * 1024, ls_tail_foreign);
	hpshm_segment *seg = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_open(&seg, "hpt-open-foreign", NULL, &err), HPSHM_EINVAL, "%s", err.message);
	cr_assert_null(seg);
	cr_assert(err.hint[0] != '\0');
	cr_assert(section_exists(L"Local\\hpshm.hpt-open-foreign"));
	CloseHandle(h);
}

static HANDLE WINAPI fake_open_mapping_denied(DWORD access, BOOL inherit, LPCWSTR name)
{
	(void)access;
	(void)inherit;
	(void)name;
	SetLastError(ERROR_ACCESS_DENIED);
	return NULL;
}

Test(winseg, open_of_another_users_section_is_eacces)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-open-denied");
	hpshm_segment *seg, *opened = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	/* What another user's process gets: the section's DACL admits its creator's user alone
	 * (a_named_section_admits_its_user_alone), which wine does not tell apart. */
	hpshm__win_sys.open_file_mapping = fake_open_mapping_denied;
	cr_assert_eq(hpshm_segment_open(&opened, "hpt-open-denied", NULL, &err), HPSHM_EACCES, "%s", err.message);
	cr_assert_eq(err.sys_errno, ERROR_ACCESS_DENIED);
	cr_assert(err.hint[0] != '\0');
	cr_assert_null(opened);
	hpshm__win_sys_reset();
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
}

Test(winseg, open_refuses_a_segment_of_another_page_size_than_asked)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-open-size"), *ocfg = config("huge_page_size=2MB");
	hpshm_segment *seg, *opened = NULL;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_open(&opened, "hpt-open-size", ocfg, &err), HPSHM_EVALUE, "%s", err.message);
	cr_assert_str_eq(err.key, "huge_page_size");
	cr_assert_null(opened);
	cr_assert_eq(hpshm_segment_open(&opened, "hpt-open-none", NULL, &err), HPSHM_ENOENT, "%s", err.message);
	hpshm_segment_destroy(seg);
	hpshm_config_free(ocfg);
	hpshm_config_free(cfg);
}

Test(winls, a_named_segment_is_listed_alive_with_its_creator_until_destroyed)
{
	hpshm_config *cfg = config("huge_pages=off,name=hpt-ls");
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls", NULL } };
	hpshm_segment *seg;
	hpshm_error err;

	cr_assert_eq(hpshm_segment_create(&seg, MiB, cfg, &err), 0, "%s", err.message);
	ls_list(&s);
	cr_assert_eq(s.times[0], 1, "listed %d times", s.times[0]);
	cr_assert_str_eq(s.obj[0].provider, "plain");
	cr_assert_str_eq(s.obj[0].name, "hpt-ls");
	cr_assert_eq(s.obj[0].state, HPSHM_OBJECT_ALIVE, "state %d: %s", s.obj[0].state, s.obj[0].note);
	cr_assert_eq(s.obj[0].alive, 1);
	cr_assert_eq(s.obj[0].creator_pid, (long long)GetCurrentProcessId());
	cr_assert_geq(s.obj[0].size, MiB, "usable size %zu", s.obj[0].size);
	cr_assert_eq(s.obj[0].page_size, hpshm__port_base_page_size());
	/* gc keeps it, and it is still there to open. */
	cr_assert_eq(hpshm_objects_remove(&s.obj[0], HPSHM_REMOVE_FORCE, &err), HPSHM_EEXIST);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	/* The last handle went with the destroy, and the section with it. */
	ls_list(&s);
	cr_assert_eq(s.times[0], 0, "still listed after destroy");
	hpshm_config_free(cfg);
}

Test(winls, a_section_without_a_header_is_alive_and_never_removed)
{
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls-bare", NULL } };
	HANDLE h = ls_section(L"Local\\hpshm.hpt-ls-bare", 64 * 1024, NULL), again;
	hpshm_error err;

	ls_list(&s);
	cr_assert_eq(s.times[0], 1);
	cr_assert_str_eq(s.obj[0].provider, "plain");
	cr_assert_eq(s.obj[0].state, HPSHM_OBJECT_ALIVE, "state %d: %s", s.obj[0].state, s.obj[0].note);
	cr_assert_eq(s.obj[0].creator_pid, 0);
	cr_assert_eq(s.obj[0].size, 64 * 1024, "the section's own size: %zu", s.obj[0].size);
	cr_assert_eq(hpshm_objects_remove(&s.obj[0], HPSHM_REMOVE_FORCE, &err), HPSHM_EEXIST);
	again = OpenFileMappingW(FILE_MAP_READ, FALSE, L"Local\\hpshm.hpt-ls-bare");
	cr_assert_not_null(again, "the section went: %lu", (unsigned long)GetLastError());
	CloseHandle(again);
	CloseHandle(h);
}

Test(winls, objects_under_the_prefix_that_are_not_hpshm_sections_are_foreign)
{
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls-event", "Local\\hpshm.hpt-ls-foreign", NULL } };
	HANDLE ev = CreateEventW(NULL, TRUE, FALSE, L"Local\\hpshm.hpt-ls-event");
	HANDLE h = ls_section(L"Local\\hpshm.hpt-ls-foreign", 64 * 1024, ls_tail_foreign);
	hpshm_error err;

	cr_assert_not_null(ev);
	ls_list(&s);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(s.times[i], 1, "%s listed %d times", s.ids[i], s.times[i]);
		cr_assert_eq(s.obj[i].state, HPSHM_OBJECT_FOREIGN, "%s: state %d: %s", s.ids[i], s.obj[i].state,
			     s.obj[i].note);
		cr_assert_eq(hpshm_objects_remove(&s.obj[i], HPSHM_REMOVE_FORCE, &err), HPSHM_EINVAL);
	}
	CloseHandle(ev);
	CloseHandle(h);
}

Test(winls, a_large_page_segment_is_listed_once_by_windows_large)
{
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls-large", NULL } };
	HANDLE h = ls_section(L"Local\\hpshm.hpt-ls-large", 4 * MiB, ls_tail_large);

	ls_list(&s);
	cr_assert_eq(s.times[0], 1, "listed %d times", s.times[0]);
	cr_assert_str_eq(s.obj[0].provider, "windows_large");
	cr_assert_str_eq(s.obj[0].name, "hpt-ls-large");
	cr_assert_eq(s.obj[0].page_size, 2 * MiB);
	cr_assert_eq(s.obj[0].state, HPSHM_OBJECT_ALIVE);
	CloseHandle(h);
}

Test(winls, a_global_section_is_listed_by_its_global_name)
{
	struct ls_seen s = { .ids = { "Global\\hpshm.hpt-ls-global", "Local\\hpshm.hpt-ls-global", NULL } };
	HANDLE h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT, 0, 65536,
				      L"Global\\hpshm.hpt-ls-global");
	DWORD session = 0;

	if (h == NULL && GetLastError() == ERROR_ACCESS_DENIED)
		cr_skip_test("this process may not create Global\\ objects (no SeCreateGlobalPrivilege)");
	cr_assert_not_null(h, "CreateFileMappingW: %lu", (unsigned long)GetLastError());
	cr_assert(ProcessIdToSessionId(GetCurrentProcessId(), &session));
	ls_list(&s);
	/* In session 0 the two namespaces are one directory, listed once, as Local\\. */
	cr_assert_eq(s.times[session == 0 ? 1 : 0], 1, "listed %d and %d times", s.times[0], s.times[1]);
	cr_assert_eq(s.times[session == 0 ? 0 : 1], 0);
	CloseHandle(h);
}

Test(winls, remove_deletes_nothing_and_says_whether_the_section_is_held)
{
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls-remove", NULL } };
	HANDLE h = ls_section(L"Local\\hpshm.hpt-ls-remove", 64 * 1024, NULL), again;
	struct hpshm_instance self;
	struct hpshm_found f;
	hpshm_error err;

	memset(&self, 0, sizeof(self));
	self.ops = &hpshm__provider_plain;
	memset(&f, 0, sizeof(f));
	snprintf(f.id, sizeof(f.id), "%s", s.ids[0]);
	f.alive = 1;
	f.has_header = HPSHM_FOUND_BARE;
	/* The core asks only for dead objects; a provider asked anyway keeps a held section. */
	cr_assert_eq(hpshm__provider_plain.remove(&self, &f, &err), HPSHM_EEXIST);
	cr_assert(strstr(err.message, "still held") != NULL, "%s", err.message);
	again = OpenFileMappingW(FILE_MAP_READ, FALSE, L"Local\\hpshm.hpt-ls-remove");
	cr_assert_not_null(again, "remove() deleted a held section");
	CloseHandle(again);
	CloseHandle(h);
	/* Gone with its last handle: nothing to remove, which is success. */
	cr_assert_eq(hpshm__provider_plain.remove(&self, &f, &err), 0);
	snprintf(f.id, sizeof(f.id), "Local\\other.hpt-ls");
	cr_assert_eq(hpshm__provider_plain.remove(&self, &f, &err), HPSHM_EINVAL);
}

static NTSTATUS NTAPI fake_open_directory_missing(PHANDLE dir, ACCESS_MASK access, POBJECT_ATTRIBUTES attr)
{
	(void)dir;
	(void)access;
	(void)attr;
	return (NTSTATUS)0xC0000002L; /* STATUS_NOT_IMPLEMENTED */
}

static NTSTATUS NTAPI fake_open_directory_denied(PHANDLE dir, ACCESS_MASK access, POBJECT_ATTRIBUTES attr)
{
	(void)dir;
	(void)access;
	(void)attr;
	return (NTSTATUS)0xC0000022L; /* STATUS_ACCESS_DENIED */
}

Test(winls, a_system_that_cannot_list_its_objects_is_an_error_not_an_empty_list)
{
	hpshm_error err;

	hpshm__win_sys.nt_open_directory_object = fake_open_directory_missing;
	cr_assert_eq(hpshm_objects_list(ls_seen_one, &(struct ls_seen){ .ids = { NULL } }, &err), HPSHM_ENOTSUP);
	cr_assert(strstr(err.message, "could not list") != NULL, "%s", err.message);
	hpshm__win_sys.nt_open_directory_object = fake_open_directory_denied;
	cr_assert_eq(hpshm_objects_list(ls_seen_one, &(struct ls_seen){ .ids = { NULL } }, &err), HPSHM_ESYS);
}

static HANDLE WINAPI fake_open_mapping_gone(DWORD access, BOOL inherit, LPCWSTR name)
{
	(void)access;
	(void)inherit;
	(void)name;
	SetLastError(ERROR_FILE_NOT_FOUND);
	return NULL;
}

Test(winls, a_section_that_goes_while_the_directory_is_read_is_not_listed)
{
	struct ls_seen s = { .ids = { "Local\\hpshm.hpt-ls-race", NULL } };
	HANDLE h = ls_section(L"Local\\hpshm.hpt-ls-race", 64 * 1024, NULL);

	hpshm__win_sys.open_file_mapping = fake_open_mapping_gone;
	ls_list(&s);
	cr_assert_eq(s.times[0], 0);
	hpshm__win_sys_reset();
	ls_list(&s);
	cr_assert_eq(s.times[0], 1);
	CloseHandle(h);
}

/* ---- what large pages need of an operator: windows_large's requirements() ---- */

extern const struct hpshm_provider hpshm__provider_windows_large;

/* A token that holds SeLockMemoryPrivilege (disabled, as a granted right is at logon); every
 * other question goes to the real token. */
static BOOL WINAPI fake_token_holds_lock_memory(HANDLE token, TOKEN_INFORMATION_CLASS cls, LPVOID info, DWORD len,
						PDWORD ret_len)
{
	TOKEN_PRIVILEGES *tp = info;

	if (cls != TokenPrivileges)
		return GetTokenInformation(token, cls, info, len, ret_len);
	*ret_len = sizeof(*tp);
	if (len < sizeof(*tp)) {
		SetLastError(ERROR_INSUFFICIENT_BUFFER);
		return FALSE;
	}
	tp->PrivilegeCount = 1;
	cr_assert(LookupPrivilegeValueW(NULL, L"SeLockMemoryPrivilege", &tp->Privileges[0].Luid));
	tp->Privileges[0].Attributes = 0;
	return TRUE;
}

struct req_seen {
	int                      n;    /* requirements reported */
	struct hpshm_requirement last; /* the last one */
};

static int req_one(void *user, const struct hpshm_requirement *r)
{
	struct req_seen *s = user;

	s->n++;
	s->last = *r;
	return 0;
}

static void large_requirements(struct req_seen *s)
{
	struct hpshm_instance self;
	struct hpshm_request rq;

	memset(&self, 0, sizeof(self));
	self.ops = &hpshm__provider_windows_large;
	memset(&rq, 0, sizeof(rq));
	rq.size = 64 * MiB;
	rq.page_size = 2 * MiB;
	rq.mode = 0600;
	memset(s, 0, sizeof(*s));
	cr_assert_eq(hpshm__provider_windows_large.requirements(&self, &rq, req_one, s), 0);
	cr_assert_eq(s->n, 1, "%d requirements", s->n);
	cr_assert_str_eq(s->last.what, "privilege");
}

Test(winseg, requirements_name_the_account_and_how_to_grant_lock_pages_in_memory)
{
	struct req_seen s;
	BYTE buf[256];
	DWORD len;
	HANDLE token;
	wchar_t *wsid;
	char sid[128], want[160];

	hpshm__win_sys.get_token_information = fake_token_holds_lock_memory;
	large_requirements(&s);
	cr_assert_eq(s.last.met, 1, "the token holds it: %s", s.last.detail);
	cr_assert_eq(s.last.now[0][0], '\0', "a command for a right already held: %s", s.last.now[0]);

	hpshm__win_sys_reset();
	/* The real token: on a machine set up for large pages it holds the right, and there the
	 * real large-page tests (real_large_pages_...) run instead of this half. */
	if (hpshm__win_privilege_held(SE_LOCK_MEMORY_NAME) != 0)
		cr_skip_test("this token holds SeLockMemoryPrivilege: the fix for a token without it cannot be "
			     "read here (the held case passed above)");
	large_requirements(&s);
	cr_assert_eq(s.last.met, 0);
	cr_assert(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
	cr_assert(GetTokenInformation(token, TokenUser, buf, sizeof(buf), &len));
	cr_assert(ConvertSidToStringSidW(((TOKEN_USER *)buf)->User.Sid, &wsid));
	hpshm__win_utf8(wsid, sid, sizeof(sid));
	LocalFree(wsid);
	CloseHandle(token);
	snprintf(want, sizeof(want), "SeLockMemoryPrivilege = *%s", sid);
	cr_assert(strstr(s.last.now[1], want) != NULL, "no \"%s\" in: %s", want, s.last.now[1]);
	cr_assert(strstr(s.last.detail, sid) != NULL, "the account is not named: %s", s.last.detail);
	cr_assert(strstr(s.last.now[0], "secedit /export") != NULL, "%s", s.last.now[0]);
	cr_assert(strstr(s.last.now[2], "secedit /configure") != NULL, "%s", s.last.now[2]);
	cr_assert(strstr(s.last.persist[0], "logon") != NULL, "%s", s.last.persist[0]);
	cr_assert(strstr(s.last.persist[1], "elevated") != NULL, "%s", s.last.persist[1]);
}
