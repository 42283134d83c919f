/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/address.c -- where a re-attachable segment goes, who holds a range, and the
 * reservation a parent leaves in its child.
 *
 * Address choice.  A child started by hpshm__port_spawn() gets the segment's range reserved
 * before its first instruction runs (PostgreSQL's way of keeping its DLLs, heaps and thread
 * stacks out of it), so the range only has to be free in the child's image layout at
 * creation: away from where Windows puts images (near the top, 0x7ff0_0000_0000 and up, and
 * the executable's preferred base) and from the bottom-up heaps and stacks.  So the range is
 * looked for at a few fixed hints in the middle of the 128 TiB user space, first 32 TiB,
 * then lower ones for the 8 TiB user space of Windows 8 and older; wine ignores MEM_TOP_DOWN,
 * which is why the hints are explicit.  Only if none is free does the system choose, top
 * down.  The range is reserved (MEM_RESERVE, nothing committed) to learn that it is free,
 * then released, and the segment is mapped there with MapViewOfFileEx(), which fails with
 * ERROR_INVALID_ADDRESS (487) rather than map over anything another thread took meanwhile.
 *
 * A parent's reservation in its child is a placeholder where Windows has them (10 1803 and
 * later): hpshm__port_reservation_release() then keeps it and the view replaces it, so no
 * other thread of the child can take the range in between; on older Windows and on wine it is
 * a plain reservation, released just before the map (ports/windows/placeholder.c).
 *
 * "Who holds this range": VirtualQuery() describes the region (committed, reserved or free;
 * an image, a mapped view or private memory; its allocation base), and for images and views
 * GetMappedFileNameW() names the file, in the kernel's \Device\HarddiskVolumeN form.
 */
#include "windows/windows.h"

#include <psapi.h>
#include <stdio.h>
#include <string.h>

#include "windows/sys.h"

/* The address lock (port.h): a slim reader/writer lock taken exclusively, statically
 * initialised, so it needs no setup call. */
static SRWLOCK address_lock = SRWLOCK_INIT;

void hpshm__port_address_lock(void)
{
	AcquireSRWLockExclusive(&address_lock);
}

void hpshm__port_address_unlock(void)
{
	ReleaseSRWLockExclusive(&address_lock);
}

int hpshm__port_pick_address(size_t len, size_t align, void **out)
{
#if UINTPTR_MAX > 0xffffffffu
	static const uintptr_t hints[] = {
		(uintptr_t)0x200000000000ULL, /* 32 TiB */
		(uintptr_t)0x100000000000ULL, /* 16 TiB */
		(uintptr_t)0x040000000000ULL, /*  4 TiB: inside the 8 TiB user space of Windows 8 */
		(uintptr_t)0x010000000000ULL, /*  1 TiB */
	};
#else
	static const uintptr_t hints[] = { 0 };
#endif
	size_t span;
	uintptr_t a;
	void *p = NULL;

	if (align == 0 || (align & (align - 1)) || len == 0 || len > SIZE_MAX - align)
		return HPSHM_EINVAL;
	span = len + align;
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]) && p == NULL; i++)
		if (hints[i] != 0)
			p = hpshm__win_sys.virtual_alloc((void *)hints[i], span, MEM_RESERVE, PAGE_NOACCESS);
	if (p == NULL)
		p = hpshm__win_sys.virtual_alloc(NULL, span, MEM_RESERVE | MEM_TOP_DOWN, PAGE_NOACCESS);
	if (p == NULL)
		return HPSHM_ENOMEM;
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	(void)hpshm__win_sys.virtual_free(p, 0, MEM_RELEASE);
	*out = (void *)a;
	return 0;
}

static const char *address_state(DWORD state)
{
	switch (state) {
	case MEM_COMMIT:
		return "committed";
	case MEM_RESERVE:
		return "reserved";
	default:
		return "free";
	}
}

static const char *address_type(DWORD type)
{
	switch (type) {
	case MEM_IMAGE:
		return "image";
	case MEM_MAPPED:
		return "mapped view";
	case MEM_PRIVATE:
		return "private";
	default:
		return "";
	}
}

int hpshm__port_maps_line(const void *addr, size_t size, char *buf, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi;
	wchar_t wname[MAX_PATH * 2];
	char name[MAX_PATH * 2] = "";
	uintptr_t at = (uintptr_t)addr, end = size ? (uintptr_t)addr + size : (uintptr_t)addr + 1;

	if (buf == NULL || len == 0)
		return HPSHM_EINVAL;
	buf[0] = '\0';
	/* The first region in the range that is not free: what holds it. */
	for (;;) {
		if (hpshm__win_sys.virtual_query((const void *)at, &mbi, sizeof(mbi)) != sizeof(mbi))
			return HPSHM_EUNAVAILABLE;
		if (mbi.State != MEM_FREE)
			break;
		at = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
		if (at >= end || at == 0)
			return HPSHM_EUNAVAILABLE;
	}
	if ((mbi.Type == MEM_IMAGE || mbi.Type == MEM_MAPPED) &&
	    GetMappedFileNameW(GetCurrentProcess(), mbi.BaseAddress, wname, (DWORD)(sizeof(wname) / sizeof(wname[0]))) > 0)
		hpshm__win_utf8(wname, name, sizeof(name));
	snprintf(buf, len, "%p-%p %s %s, allocation base %p%s%s", mbi.BaseAddress,
		 (void *)((uintptr_t)mbi.BaseAddress + mbi.RegionSize), address_state(mbi.State), address_type(mbi.Type),
		 mbi.AllocationBase, name[0] ? " " : "", name);
	return 0;
}

int hpshm__port_reservation_release(void *addr, size_t len)
{
	MEMORY_BASIC_INFORMATION mbi, next;

	if (addr == NULL || len == 0)
		return 0;
	if (hpshm__win_sys.virtual_query(addr, &mbi, sizeof(mbi)) != sizeof(mbi))
		return 0;
	/* Exactly what hpshm__port_spawn() made: one private reservation that starts at addr, is len
	 * long, has nothing committed, and is no part of a larger allocation. */
	if (mbi.State != MEM_RESERVE || mbi.Type != MEM_PRIVATE || mbi.AllocationBase != addr ||
	    mbi.BaseAddress != addr || mbi.RegionSize != len || mbi.AllocationProtect != PAGE_NOACCESS)
		return 0;
	if (hpshm__win_sys.virtual_query((char *)addr + len, &next, sizeof(next)) == sizeof(next) &&
	    next.AllocationBase == addr)
		return 0;
	/* A placeholder (ports/windows/placeholder.c) stays for the mapping to replace, so the
	 * range is never free; only a plain reservation is released here, just before the map. */
	switch (hpshm__win_placeholder_keep(addr, len)) {
	case 1:
		return 2;
	case -1:
		return 1;
	default:
		break;
	}
	return hpshm__win_sys.virtual_free(addr, 0, MEM_RELEASE) ? 1 : 0;
}
