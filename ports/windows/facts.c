/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/facts.c -- ports/facts.h on Windows: what Windows can say.
 *
 * Windows keeps no pool of large pages: they are taken from free physical memory when a
 * SEC_LARGE_PAGES section is created, contiguous 2 MiB runs that fragmentation makes rarer the
 * longer a machine runs, so there is no count to show or to resize, no mount and no control
 * group.  What there is: the large page size (GetLargePageMinimum(), 0 where the processor has
 * none), whether this process's token holds SeLockMemoryPrivilege ("Lock pages in memory",
 * the one thing an operator grants), what backs a view (QueryWorkingSetEx(), as the library
 * verifies), the memory free now, the process's page fault count (PageFaultCount, soft and
 * hard faults together), and this program's path.  Everything else is absent
 * (ports/facts_absent.c, shared with the POSIX fallbacks).
 */
#include "windows/windows.h"

#include <psapi.h>
#include <string.h>

#include "base/base.h"
#include "facts.h"
#include "windows/sys.h"

size_t hpshm__os_default_page_size(void)
{
	return (size_t)hpshm__win_sys.get_large_page_minimum();
}

const char *hpshm__os_huge_absent(void)
{
	return ""; /* GetLargePageMinimum() is 0 only on hardware without large pages */
}

int hpshm__os_lock_privilege(void)
{
	return hpshm__win_privilege_held(SE_LOCK_MEMORY_NAME) == 1;
}

const char *hpshm__os_lock_privilege_name(void)
{
	return "SeLockMemoryPrivilege";
}

int hpshm__os_backing(void *addr, size_t len, intptr_t file, struct hpshm__backing *out)
{
	(void)file; /* a section handle says nothing about the pages of one view */
	if (out == NULL)
		return HPSHM_EINVAL;
	return hpshm__port_verify_backing(addr, len, HPSHM__PORT_NO_HANDLE, out);
}

size_t hpshm__os_mapping_len(const void *addr)
{
	MEMORY_BASIC_INFORMATION mbi;
	const char *base, *at;

	if (hpshm__win_sys.virtual_query(addr, &mbi, sizeof(mbi)) != sizeof(mbi) || mbi.State == MEM_FREE)
		return 0;
	/* The allocation (a whole view) is the run of regions with one allocation base. */
	base = mbi.AllocationBase;
	at = base;
	while (hpshm__win_sys.virtual_query(at, &mbi, sizeof(mbi)) == sizeof(mbi) && mbi.AllocationBase == base &&
	       mbi.State != MEM_FREE)
		at = (const char *)mbi.BaseAddress + mbi.RegionSize;
	return (size_t)(at - base);
}

long hpshm__os_page_table_kib(void)
{
	return -1; /* see hpshm__os_page_table_absent() */
}

/*
 * The documented per-process memory counters (GetProcessMemoryInfo()'s
 * PROCESS_MEMORY_COUNTERS_EX) have working set, paged and nonpaged pool quota, pagefile and
 * private bytes, but no page-table figure; the performance counters have none per process
 * either.  Rather than derive one from something else, the bench says it is not offered.
 */
const char *hpshm__os_page_table_absent(void)
{
	return "not offered on Windows: its documented process memory counters have no page-table figure";
}

uint64_t hpshm__os_page_faults(void)
{
	PROCESS_MEMORY_COUNTERS pmc; /* K32GetProcessMemoryInfo in kernel32 (PSAPI_VERSION 2): no psapi.dll */

	memset(&pmc, 0, sizeof(pmc));
	pmc.cb = sizeof(pmc);
	if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof(pmc)))
		return 0;
	return (uint64_t)pmc.PageFaultCount;
}

uint64_t hpshm__os_mem_available(void)
{
	MEMORYSTATUSEX ms;

	ms.dwLength = sizeof(ms);
	return GlobalMemoryStatusEx(&ms) ? (uint64_t)ms.ullAvailPhys : 0;
}
