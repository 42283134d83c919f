/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/memory.c -- what backs a view.
 *
 * Verification.  The flags a backend passed prove nothing on Windows either: before Windows
 * 10 1703 a SEC_LARGE_PAGES section mapped without FILE_MAP_LARGE_PAGES was silently backed
 * by small pages (PostgreSQL ran that way for years, BUG #17448), and wine creates
 * SEC_LARGE_PAGES sections without the privilege and backs them with 4 KiB pages.  So the
 * page size is read back with QueryWorkingSetEx(), whose LargePage bit says, per page, whether
 * a large page maps it.  The bit means something only for a page in the working set (Valid),
 * so a page that is not is read once (one byte, which faults it in; large pages are always
 * resident) and asked again.  A big range is sampled rather than walked: at most
 * VERIFY_SAMPLES pages, spread evenly over the range, always the first and the last, in one
 * call.  Every sampled page must be a large page for the range to count as huge; any small
 * page makes it small, since a server that asked for large pages must hear about a mix.
 *
 * Populate is in ports/windows/populate.c.
 */
#include "windows/windows.h"

#include <assert.h>
#include <psapi.h>
#include <string.h>

#include "windows/sys.h"

#define VERIFY_SAMPLES 64 /* pages asked about per verification, at most */

/* Read one byte the compiler may not optimise away, to fault a page in. */
static void memory_read(const void *p)
{
	const volatile unsigned char *b = (const volatile unsigned char *)p;

	(void)*b;
}

int hpshm__port_verify_backing(void *addr, size_t len, struct hpshm__port_handle h, struct hpshm__backing *out)
{
	PSAPI_WORKING_SET_EX_INFORMATION info[VERIFY_SAMPLES];
	size_t base = hpshm__port_base_page_size(), large, pages, n, valid = 0, huge = 0;
	HANDLE self = GetCurrentProcess();

	(void)h; /* a section handle says nothing about the pages of one view */
	assert(out != NULL); /* port.h's guarantee */
	out->page_size = 0;
	out->huge = 0;
	hpshm__strlcpy(out->source, "unverified", sizeof(out->source));
	if (addr == NULL || len == 0)
		return HPSHM_EUNAVAILABLE;
	pages = (len + base - 1) / base;
	n = pages < VERIFY_SAMPLES ? pages : VERIFY_SAMPLES;
	for (size_t i = 0; i < n; i++) {
		size_t page = n > 1 ? i * (pages - 1) / (n - 1) : 0;

		memset(&info[i], 0, sizeof(info[i]));
		info[i].VirtualAddress = (char *)addr + page * base;
	}
	if (!hpshm__win_sys.query_working_set_ex(self, info, (DWORD)(n * sizeof(info[0]))))
		return HPSHM_EUNAVAILABLE;
	for (size_t i = 0; i < n; i++) {
		if (info[i].VirtualAttributes.Valid)
			continue;
		memory_read(info[i].VirtualAddress);
		if (!hpshm__win_sys.query_working_set_ex(self, &info[i], (DWORD)sizeof(info[i])))
			return HPSHM_EUNAVAILABLE;
	}
	for (size_t i = 0; i < n; i++) {
		if (!info[i].VirtualAttributes.Valid)
			continue; /* trimmed again at once: this page says nothing */
		valid++;
		if (info[i].VirtualAttributes.LargePage)
			huge++;
	}
	if (valid == 0)
		return HPSHM_EUNAVAILABLE;
	large = (size_t)hpshm__win_sys.get_large_page_minimum();
	out->huge = huge == valid && large > 0;
	out->page_size = out->huge ? large : base;
	hpshm__strlcpy(out->source, "QueryWorkingSetEx", sizeof(out->source));
	return 0;
}
