/* SPDX-License-Identifier: MIT */
/*
 * bench/memory_windows.c -- os.h's memory on Windows: the raw peer, a paging-file section
 * made and mapped with the Win32 calls hpshm's Windows backends make, without hpshm.
 *
 * The raw peer does what backends/winsection.c does, call for call, so the rows compare
 * hpshm with the calls at the same page size: for large pages the SeLockMemoryPrivilege
 * enabled in the token (AdjustTokenPrivileges(), whose TRUE means nothing until
 * GetLastError() is not ERROR_NOT_ALL_ASSIGNED), then CreateFileMappingW(INVALID_HANDLE_VALUE,
 * PAGE_READWRITE | SEC_COMMIT [| SEC_LARGE_PAGES]), MapViewOfFileEx(FILE_MAP_READ |
 * FILE_MAP_WRITE [| FILE_MAP_LARGE_PAGES]) at the slot's address, and a touch of every page
 * (hpshm's populate on Windows).  The section is unnamed; workers inherit it (worker_windows.c).
 * With c->threads > 1 the touch is split into one contiguous range per thread, as hpshm's
 * Windows port splits its populate.  The backing is verified the way hpshm verifies its own: QueryWorkingSetEx() through
 * ports/facts.h, so under wine, which makes SEC_LARGE_PAGES sections backed by 4 KiB
 * pages, a large raw section that got made anyway is refused as what it is.
 *
 * Windows has no transparent huge pages: the THP peer says so and is left out.
 *
 * Slots.  VirtualFree(MEM_RELEASE) frees a whole reservation, never a part, so each slot is
 * its own MEM_RESERVE reservation: the aligned range is found by reserving the whole span
 * once and releasing it, then every slot is reserved at its address.
 */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "os.h"
#include "ports/facts.h"
#include "ports/process.h"

#define WIN_GRANULARITY ((size_t)64 << 10) /* views start and sizes round at 64 KiB */

static size_t round_up(size_t v, size_t to)
{
	return to ? (v + to - 1) / to * to : v;
}

const char *bench_thp_mode(char *why, size_t len)
{
	snprintf(why, len, "Windows has no transparent huge pages: its large pages are sections made with "
		 "SEC_LARGE_PAGES (windows_large and the raw section)");
	return NULL;
}

int bench_os_thp_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			size_t len)
{
	(void)c;
	(void)addr;
	(void)size;
	(void)r;
	return bench_thp_mode(why, len) ? 0 : -1;
}

const char *bench_os_raw_peer(const char *provider, enum bench_start start, enum bench_kind *kind, char *label,
			      size_t label_len)
{
	(void)provider;
	(void)start;
	*kind = BENCH_RAW_SECTION;
	snprintf(label, label_len, "raw section");
	return NULL;
}

/* Enable SeLockMemoryPrivilege in this process's token, as any large-page program must: 0, or a Win32 error. */
/* ---- threads ----------------------------------------------------------------------------- */

struct parallel_part {
	void   (*fn)(void *arg, unsigned i);
	void    *arg;
	unsigned i;
};

static DWORD WINAPI parallel_main(LPVOID p)
{
	struct parallel_part *part = p;

	part->fn(part->arg, part->i);
	return 0;
}

void bench_os_parallel(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
	struct parallel_part parts[BENCH_THREADS_MAX];
	HANDLE threads[BENCH_THREADS_MAX] = { NULL };

	if (n > BENCH_THREADS_MAX)
		n = BENCH_THREADS_MAX;
	for (unsigned i = 1; i < n; i++) {
		parts[i].fn = fn;
		parts[i].arg = arg;
		parts[i].i = i;
		threads[i] = CreateThread(NULL, 0, parallel_main, &parts[i], 0, NULL);
	}
	fn(arg, 0);
	for (unsigned i = 1; i < n; i++) {
		if (threads[i]) {
			(void)WaitForSingleObject(threads[i], INFINITE);
			(void)CloseHandle(threads[i]);
		} else {
			fn(arg, i);
		}
	}
}

struct raw_touch { unsigned char *addr; size_t len, page; unsigned n; };

/* Every page of part i faulted in: one read and one write back, as hpshm's populate does. */
static void raw_touch_part(void *arg, unsigned i)
{
	struct raw_touch *t = arg;
	size_t pages = t->len / t->page, each = pages / t->n, extra = pages % t->n;
	size_t off = ((size_t)i * each + (i < extra ? i : extra)) * t->page;
	size_t end = off + (each + (i < extra ? 1 : 0)) * t->page;

	for (; off < end; off += t->page) {
		volatile unsigned char *at = t->addr + off;

		*at = *at;
	}
}

static DWORD raw_lock_privilege(void)
{
	TOKEN_PRIVILEGES tp;
	HANDLE token;
	DWORD code;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &token))
		return GetLastError();
	memset(&tp, 0, sizeof(tp));
	tp.PrivilegeCount = 1;
	tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
	if (!LookupPrivilegeValueW(NULL, SE_LOCK_MEMORY_NAME, &tp.Privileges[0].Luid)) {
		code = GetLastError();
	} else {
		(void)AdjustTokenPrivileges(token, FALSE, &tp, 0, NULL, NULL);
		code = GetLastError();   /* ERROR_NOT_ALL_ASSIGNED: the token lacks it */
	}
	(void)CloseHandle(token);
	return code;
}

static int raw_fail(char *why, size_t len, const char *call, DWORD code)
{
	snprintf(why, len, "%s: error %lu%s", call, (unsigned long)code,
		 code == ERROR_NOT_ALL_ASSIGNED || code == ERROR_PRIVILEGE_NOT_HELD ?
		 " (SeLockMemoryPrivilege not held: grant \"Lock pages in memory\")" :
		 code == ERROR_NO_SYSTEM_RESOURCES ? " (not enough contiguous free memory for large pages)" : "");
	return -1;
}

int bench_os_raw_create(const struct bench_config *c, void *addr, size_t size, struct bench_region *r, char *why,
			size_t len)
{
	int large = c->page_size != 0;
	size_t page = large ? c->page_size : hpshm_base_page_size();
	size_t maplen = c->map_len ? c->map_len : round_up(size, large ? page : WIN_GRANULARITY);
	struct hpshm__backing b;
	uint64_t t0 = bench_wall_ns(), t1, t2;
	HANDLE section;
	DWORD code;
	void *p;

	if (large && (code = raw_lock_privilege()) != ERROR_SUCCESS)
		return raw_fail(why, len, "AdjustTokenPrivileges(SeLockMemoryPrivilege)", code);
	section = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT | (large ? SEC_LARGE_PAGES : 0),
				     (DWORD)((uint64_t)maplen >> 32), (DWORD)((uint64_t)maplen & 0xffffffffu), NULL);
	if (section == NULL)
		return raw_fail(why, len, "CreateFileMappingW", GetLastError());
	p = MapViewOfFileEx(section, FILE_MAP_READ | FILE_MAP_WRITE | (large ? FILE_MAP_LARGE_PAGES : 0), 0, 0, maplen, addr);
	if (p == NULL) {
		code = GetLastError();
		(void)CloseHandle(section);
		return raw_fail(why, len, "MapViewOfFileEx", code);
	}
	/* Every page faulted in now, as hpshm's populate does, by c->threads threads. */
	t1 = bench_wall_ns();
	{
		struct raw_touch t = { (unsigned char *)p, maplen, page, c->threads > 1 && maplen / page > 1 ? c->threads : 1 };

		t.n = t.n > BENCH_THREADS_MAX ? BENCH_THREADS_MAX : t.n;
		r->threads = t.n;
		bench_os_parallel(t.n, raw_touch_part, &t);
	}
	t2 = bench_wall_ns();
	r->addr = p;
	r->len = maplen;
	r->handle = (intptr_t)section;
	r->raw_flags = large ? BENCH_RAW_LARGE : 0;
	memset(&b, 0, sizeof(b));
	if (hpshm__os_backing(p, maplen, -1, &b) == 0 && b.page_size) {
		r->page_size = b.page_size;
		r->huge = b.huge;
		snprintf(r->verified_by, sizeof(r->verified_by), "%s", b.source);
	} else {
		r->page_size = page;
		snprintf(r->verified_by, sizeof(r->verified_by), "unverified");
	}
	/* Split as hpshm's report splits its create; QueryWorkingSetEx reads resident pages, so
	 * here (as in hpshm's windows backends) verification comes after the touch. */
	r->populate_s = (double)(t2 - t1) / 1e9;
	r->rest_s = (double)(bench_wall_ns() - t0 - (t2 - t1)) / 1e9;
	return 0;
}

int bench_os_region_release(struct bench_region *r)
{
	int rc = 0;

	if (!UnmapViewOfFile(r->addr))
		rc = -1;
	if (r->handle != BENCH_OS_NONE && !CloseHandle((HANDLE)r->handle))
		rc = -1;
	return rc;
}

/* Windows has no THP to switch on (bench_os_left_out() says so): nothing to change. */
int bench_os_thp_advise(char *prev, size_t prev_len, char *why, size_t len)
{
	(void)prev_len;
	(void)why;
	(void)len;
	prev[0] = '\0';
	return 0;
}

int bench_os_thp_restore(const char *prev, char *why, size_t len)
{
	(void)prev;
	(void)why;
	(void)len;
	return 0;
}

const char *bench_os_populate_how(void)
{
	return "a touch of every page";
}

int bench_os_mix(unsigned char *const *addr, const size_t *len, unsigned n, size_t page, uint64_t seed, char *why,
		 size_t why_len)
{
	(void)addr;
	(void)page;
	(void)seed;
	(void)n;
	(void)len;
	snprintf(why, why_len, "a section's pages cannot be given back while it is mapped");
	return -1;
}

const char *bench_os_by_hand(void)
{
	return "by hand: a touch of every page, as hpshm's";
}

/*
 * wine exports wine_get_version() from its ntdll, which Windows' ntdll does not have: the one
 * documented way a program tells it runs under wine.  There, a file-backed section (hpshm's,
 * with its header companion) runs hundreds of times slower than a raw one with no hpshm code
 * involved (doc/bench.md), so the ratios say what wine does, not what Windows would.
 */
const char *bench_os_caveat(void)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

	if (ntdll == NULL || GetProcAddress(ntdll, "wine_get_version") == NULL)
		return "";
	return "running under wine, not Windows: wine's sections behave unlike Windows' (a file-backed "
	       "section is far slower than a raw one, with no hpshm code involved), so these ratios "
	       "measure wine, not what Windows would do (doc/bench.md)";
}

/* ---- slots --------------------------------------------------------------------------------- */

/* Where hpshm puts a re-attachable section, away from a worker's randomized images (see
 * worker_posix.c), and only then anywhere. */
int bench_os_slots_reserve(unsigned char **slot, unsigned n, size_t slot_len, size_t align, char *why, size_t len)
{
	size_t total = n * slot_len + align;
	unsigned char *p = NULL, *first;
	void *hint;

	if (hpshm__os_far_address(total, align, &hint) == 0)
		p = VirtualAlloc(hint, total, MEM_RESERVE, PAGE_NOACCESS);
	if (p == NULL)
		p = VirtualAlloc(NULL, total, MEM_RESERVE, PAGE_NOACCESS);

	if (p == NULL) {
		snprintf(why, len, "cannot reserve %zu bytes of address space: VirtualAlloc error %lu", total,
			 (unsigned long)GetLastError());
		return -1;
	}
	first = (unsigned char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	(void)VirtualFree(p, 0, MEM_RELEASE);
	for (unsigned i = 0; i < n; i++) {
		slot[i] = first + i * slot_len;
		if (bench_os_slot_close(slot[i], slot_len) < 0)
			slot[i] = NULL;   /* taken meanwhile by another thread: that member goes anywhere */
	}
	return 0;
}

void bench_os_slot_open(unsigned char *slot, size_t slot_len)
{
	(void)slot_len;
	(void)VirtualFree(slot, 0, MEM_RELEASE);
}

int bench_os_slot_close(unsigned char *slot, size_t slot_len)
{
	void *p = VirtualAlloc(slot, slot_len, MEM_RESERVE, PAGE_NOACCESS);

	if (p == (void *)slot)
		return 0;
	if (p != NULL)
		(void)VirtualFree(p, 0, MEM_RELEASE);
	return -1;
}

void bench_os_slots_free(unsigned char **slot, unsigned n, size_t slot_len)
{
	for (unsigned i = 0; i < n; i++)
		if (slot[i])
			bench_os_slot_open(slot[i], slot_len);
}

/* ---- the resize rows: no resizable segment on Windows yet (HPSHM_CAP_RESIZE is Linux's) ---- */

int bench_os_rs_create(size_t page_size, size_t size, size_t max, struct bench_region *r, char *why, size_t len)
{
	(void)page_size, (void)size, (void)max, (void)r;
	snprintf(why, len, "no provider resizes in place on Windows");
	return -1;
}

int bench_os_rs_grow(struct bench_region *r, size_t to, char *why, size_t len)
{
	(void)r, (void)to;
	snprintf(why, len, "no provider resizes in place on Windows");
	return -1;
}

int bench_os_rs_shrink(struct bench_region *r, size_t to, char *why, size_t len)
{
	(void)r, (void)to;
	snprintf(why, len, "no provider resizes in place on Windows");
	return -1;
}

int bench_os_forked(void (*fn)(void *arg, double *out, unsigned n), void *arg, double *out, unsigned n, char *why,
		    size_t len)
{
	(void)fn, (void)arg, (void)out, (void)n;
	snprintf(why, len, "Windows has no fork()");
	return -1;
}
