/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/resize.c -- resizable segments on Windows (port.h): not yet.  A section's
 * pages cannot be given back while a view maps them, and a large-page section is committed
 * whole at creation, so growing and shrinking in place needs a section per piece mapped
 * into placeholders (VirtualAlloc2 with MEM_RESERVE_PLACEHOLDER, MapViewOfFile3 with
 * MEM_REPLACE_PLACEHOLDER, Windows 10 1803 and later), which no provider does yet: none
 * claims HPSHM_CAP_RESIZE here.  VirtualProtect() serves the rest of the contract.
 */
#include "windows/windows.h"

int hpshm__port_commit(struct hpshm__port_handle h, uint64_t off, size_t len, size_t page_size, hpshm_error *err)
{
	(void)h, (void)off, (void)len, (void)page_size;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
			       "no Windows provider can grow a section in place yet");
}

int hpshm__port_decommit(struct hpshm__port_handle h, uint64_t off, size_t len, hpshm_error *err)
{
	(void)h, (void)off, (void)len;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL,
			       "a section's pages cannot be given back while a view maps them");
}

/* No process but a creator's or an attacher's maps a section here (no fork()): ask no further. */
int hpshm__port_process_maps(long long pid, struct hpshm__port_handle h)
{
	(void)pid, (void)h;
	return -1;
}

int hpshm__port_protect(void *addr, size_t len, int writable, hpshm_error *err)
{
	DWORD old;

	if (VirtualProtect(addr, len, writable ? PAGE_READWRITE : PAGE_NOACCESS, &old))
		return 0;
	return hpshm_error_set(err, HPSHM_ESYS, (int)GetLastError(), "VirtualProtect", NULL,
			       "could not change the protection of %zu bytes at %p", len, addr);
}
