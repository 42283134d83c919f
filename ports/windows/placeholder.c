/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/placeholder.c -- a child's reserved range handed to its mapping with no moment
 * in which it is free.
 *
 * hpshm__port_spawn() and hpshm__port_child_prepare() reserve the segment's range in the
 * suspended child (ports/windows/address.c says where it goes).  With a plain reservation
 * (VirtualAllocEx(MEM_RESERVE)) the child must release it before MapViewOfFileEx() can map
 * there, and in between another thread of the child, or a DLL's initialisation, can take the
 * range: the attach then fails naming what took it.  Windows 10 1803 and later have
 * placeholders: VirtualAlloc2(MEM_RESERVE | MEM_RESERVE_PLACEHOLDER) reserves a range that
 * MapViewOfFile3(MEM_REPLACE_PLACEHOLDER) maps over in one step, so the range is never free.
 *
 * Which path runs where:
 *   - Windows 10 1803+, Windows Server 2019+: the parent makes a placeholder; the child splits
 *     it where the segment ends (the header's companion takes the last granule) with
 *     VirtualFree(MEM_RELEASE | MEM_PRESERVE_PLACEHOLDER) and replaces each piece.
 *   - Older Windows (no VirtualAlloc2 in kernelbase.dll): the plain reservation, released
 *     just before MapViewOfFileEx(), as before.
 *   - wine (8.0 has both functions but answers the placeholder reservation with
 *     ERROR_INVALID_PARAMETER): the plain reservation too.  The first such refusal is
 *     remembered, so each later spawn goes straight to VirtualAllocEx().
 *
 * How the child knows.  VirtualQuery() describes a placeholder exactly as a plain
 * reservation (MEM_RESERVE, MEM_PRIVATE, PAGE_NOACCESS), and the parent cannot tell a child it
 * did not start (hpshm_child_prepare()) anything through its environment.  So the child asks
 * the range itself: splitting it (VirtualFree() with MEM_PRESERVE_PLACEHOLDER and a length)
 * succeeds only on a placeholder and changes nothing on a plain reservation, and merging the
 * pieces back (MEM_COALESCE_PLACEHOLDERS) undoes the probe.  A range of one granule cannot be
 * split, so it takes the old path: a plain reservation and such a placeholder are both simply
 * released.  When the mapping finds a reservation of its own length at its address (nothing
 * to split), MapViewOfFile3() itself is the probe: on a plain reservation it fails with
 * ERROR_INVALID_ADDRESS or ERROR_INVALID_PARAMETER and changes nothing, and the view is then
 * mapped the old way, which names whatever holds the range.
 *
 * Unmapping such a view needs nothing special: UnmapViewOfFile() leaves the range free (only
 * UnmapViewOfFile2(MEM_PRESERVE_PLACEHOLDER) would leave a placeholder behind).
 *
 * The two calls are found in kernelbase.dll at their first use (no import library of an older
 * SDK or mingw-w64 has them) and go through hpshm__win_sys, so tests inject them.
 */
#include "windows/windows.h"

#include <string.h>

#include "windows/sys.h"

#ifndef MEM_RESERVE_PLACEHOLDER
#define MEM_RESERVE_PLACEHOLDER 0x00040000
#endif
#ifndef MEM_REPLACE_PLACEHOLDER
#define MEM_REPLACE_PLACEHOLDER 0x00004000
#endif
#ifndef MEM_PRESERVE_PLACEHOLDER
#define MEM_PRESERVE_PLACEHOLDER 0x00000002
#endif
#ifndef MEM_COALESCE_PLACEHOLDERS
#define MEM_COALESCE_PLACEHOLDERS 0x00000001
#endif

#define PLACEHOLDER_GRANULE ((SIZE_T)65536) /* where a placeholder can be split: the allocation granularity */

/* Did VirtualAlloc2() refuse a placeholder in this process (wine)?  Then it is not asked again. */
static volatile LONG placeholders_refused;

/* kernelbase.dll's function name, or NULL when this Windows lacks it. */
static FARPROC placeholder_proc(const char *name)
{
	HMODULE kb = GetModuleHandleW(L"kernelbase.dll");

	return kb ? GetProcAddress(kb, name) : NULL;
}

PVOID WINAPI hpshm__win_virtual_alloc2(HANDLE process, PVOID addr, SIZE_T len, ULONG type, ULONG protect, PVOID ext,
				       ULONG n)
{
	PVOID (WINAPI *call)(HANDLE, PVOID, SIZE_T, ULONG, ULONG, PVOID, ULONG);
	FARPROC f = placeholder_proc("VirtualAlloc2");

	if (f == NULL) {
		SetLastError(ERROR_CALL_NOT_IMPLEMENTED);
		return NULL;
	}
	/* A function pointer converted through FARPROC, as GetProcAddress() requires. */
	memcpy(&call, &f, sizeof(call));
	return call(process, addr, len, type, protect, ext, n);
}

PVOID WINAPI hpshm__win_map_view_of_file3(HANDLE mapping, HANDLE process, PVOID addr, ULONG64 offset, SIZE_T len,
					  ULONG type, ULONG protect, PVOID ext, ULONG n)
{
	PVOID (WINAPI *call)(HANDLE, HANDLE, PVOID, ULONG64, SIZE_T, ULONG, ULONG, PVOID, ULONG);
	FARPROC f = placeholder_proc("MapViewOfFile3");

	if (f == NULL) {
		SetLastError(ERROR_CALL_NOT_IMPLEMENTED);
		return NULL;
	}
	memcpy(&call, &f, sizeof(call));
	return call(mapping, process, addr, offset, len, type, protect, ext, n);
}

void hpshm__win_placeholder_reset(void)
{
	InterlockedExchange(&placeholders_refused, 0);
}

void *hpshm__win_reserve_in(HANDLE process, void *addr, size_t len)
{
	void *got;
	DWORD code;

	if (!placeholders_refused) {
		got = hpshm__win_sys.virtual_alloc2(process, addr, len, MEM_RESERVE | MEM_RESERVE_PLACEHOLDER,
						    PAGE_NOACCESS, NULL, 0);
		if (got != NULL)
			return got;
		code = GetLastError();
		/* No placeholders here (an older Windows, or wine): remember it.  Any other
		 * failure (the range is taken) is the plain reservation's to report. */
		if (code == ERROR_INVALID_PARAMETER || code == ERROR_CALL_NOT_IMPLEMENTED || code == ERROR_PROC_NOT_FOUND ||
		    code == ERROR_NOT_SUPPORTED)
			InterlockedExchange(&placeholders_refused, 1);
	}
	return hpshm__win_sys.virtual_alloc_ex(process, addr, len, MEM_RESERVE, PAGE_NOACCESS);
}

int hpshm__win_placeholder_keep(void *addr, size_t len)
{
	if (len <= PLACEHOLDER_GRANULE)
		return 0;
	if (!hpshm__win_sys.virtual_free(addr, PLACEHOLDER_GRANULE, MEM_RELEASE | MEM_PRESERVE_PLACEHOLDER))
		return 0; /* a plain reservation: untouched */
	if (hpshm__win_sys.virtual_free(addr, len, MEM_RELEASE | MEM_COALESCE_PLACEHOLDERS))
		return 1;
	/* Split and not merged again: give both pieces back and let the old path map. */
	(void)hpshm__win_sys.virtual_free(addr, 0, MEM_RELEASE);
	(void)hpshm__win_sys.virtual_free((char *)addr + PLACEHOLDER_GRANULE, 0, MEM_RELEASE);
	return -1;
}

/* Is [addr, addr+len) the start of a reservation of at least len at addr, as the parent made it?
 * Its length, or 0. */
static SIZE_T placeholder_region(void *addr, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi;

	if (addr == NULL || hpshm__win_sys.virtual_query(addr, &mbi, sizeof(mbi)) != sizeof(mbi))
		return 0;
	if (mbi.State != MEM_RESERVE || mbi.Type != MEM_PRIVATE || mbi.AllocationBase != addr ||
	    mbi.BaseAddress != addr || mbi.RegionSize < len || mbi.AllocationProtect != PAGE_NOACCESS)
		return 0;
	return mbi.RegionSize;
}

void *hpshm__win_map_view_at(HANDLE section, DWORD access, size_t len, void *addr)
{
	SIZE_T region = placeholder_region(addr, len);
	ULONG type = MEM_REPLACE_PLACEHOLDER | ((access & FILE_MAP_LARGE_PAGES) ? MEM_LARGE_PAGES : 0);
	int split = 0;
	DWORD code;
	void *p;

	if (region == 0)
		return hpshm__win_sys.map_view_of_file_ex(section, access, 0, 0, len, addr);
	/* The segment's piece of a longer placeholder (the companion's granule follows it).  A
	 * plain reservation refuses the split and is someone else's: the old path says whose. */
	if (region > len) {
		if (!hpshm__win_sys.virtual_free(addr, len, MEM_RELEASE | MEM_PRESERVE_PLACEHOLDER))
			return hpshm__win_sys.map_view_of_file_ex(section, access, 0, 0, len, addr);
		split = 1;
	}
	p = hpshm__win_sys.map_view_of_file3(section, GetCurrentProcess(), addr, 0, len, type,
					     (access & FILE_MAP_WRITE) ? PAGE_READWRITE : PAGE_READONLY, NULL, 0);
	if (p != NULL)
		return p;
	code = GetLastError();
	/* A placeholder that could not take the view (no memory, no privilege).  The piece split
	 * off is the parent's, so it goes back as the old path would have released it; a whole
	 * reservation that may be someone else's stays.  Either way the error is the report. */
	if (split)
		(void)hpshm__win_sys.virtual_free(addr, 0, MEM_RELEASE);
	if (split || (code != ERROR_INVALID_ADDRESS && code != ERROR_INVALID_PARAMETER)) {
		SetLastError(code);
		return NULL;
	}
	return hpshm__win_sys.map_view_of_file_ex(section, access, 0, 0, len, addr);
}
