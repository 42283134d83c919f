/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/populate.c -- faulting a view in, over as many threads as asked, and the CPUs
 * this process may use.
 *
 * A committed section cannot fail at fault time for want of memory: SEC_COMMIT charges the
 * whole size against the commit limit when the section is created, and large pages are
 * allocated, all of them, by CreateFileMapping() itself.  So there is no fault to guard
 * against, and populate is a plain touch of every page (one read and one write back of the
 * same byte), which takes the first-touch faults now instead of on a hot path: with
 * populate_threads above 1, one contiguous range per thread, as on POSIX.
 * PrefetchVirtualMemory was weighed and not taken: it reads pages of a file into memory, and
 * a pagefile-backed section's pages that were never touched have nothing to read (they are
 * demand-zero), so it leaves the zeroing faults where they were.
 */
#include "windows/windows.h"

#include <assert.h>
#include <string.h>

#include "windows/sys.h"

struct touch_part {
	volatile unsigned char *addr;
	size_t                  len, page_size;
};

static void touch_range(volatile unsigned char *b, size_t len, size_t page_size)
{
	for (size_t off = 0; off < len; off += page_size)
		b[off] = b[off];
}

static DWORD WINAPI touch_thread(LPVOID arg)
{
	struct touch_part *p = arg;

	touch_range(p->addr, p->len, p->page_size);
	return 0;
}

int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			 const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err)
{
	struct touch_part parts[HPSHM__POPULATE_THREADS_MAX];
	HANDLE threads[HPSHM__POPULATE_THREADS_MAX];
	size_t pages = len / page_size, each, extra, first;
	unsigned n;

	(void)h;
	(void)err; /* a committed section cannot fail here: see the file's comment */
	assert(addr != NULL && len > 0 && page_size > 0 && how != NULL && how->threads > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_TOUCH;
	n = how->threads > HPSHM__POPULATE_THREADS_MAX ? HPSHM__POPULATE_THREADS_MAX : how->threads;
	if ((size_t)n > pages)
		n = (unsigned)pages;
	each = pages / n;
	extra = pages % n;
	for (unsigned i = 0; i < n; i++) {
		first = (size_t)i * each + (i < extra ? i : extra);
		parts[i].addr = (volatile unsigned char *)addr + first * page_size;
		parts[i].len = (each + (i < extra ? 1 : 0)) * page_size;
		parts[i].page_size = page_size;
		/* Part 0 is the calling thread's; a thread that cannot start leaves its part to it too. */
		threads[i] = i == 0 ? NULL : CreateThread(NULL, 0, touch_thread, &parts[i], 0, NULL);
	}
	touch_range(parts[0].addr, parts[0].len, page_size);
	for (unsigned i = 1; i < n; i++) {
		if (threads[i] == NULL) {
			touch_range(parts[i].addr, parts[i].len, page_size);
			continue;
		}
		(void)WaitForSingleObject(threads[i], INFINITE);
		(void)CloseHandle(threads[i]);
	}
	return 0;
}

/* Windows populates by touching the committed view alone (above): other bits are not its methods. */
const char *hpshm__port_populate_name(unsigned methods)
{
	if (methods == HPSHM_POPULATE_NONE)
		return "none";
	return methods == HPSHM_POPULATE_TOUCH ? "touch" : "unknown";
}

/* The processors of this process's affinity mask in its group (a process starts in one group
 * of up to 64), or every active one when the mask cannot be read. */
unsigned hpshm__port_cpus_usable(void)
{
	DWORD_PTR mask = 0, sys = 0;
	unsigned n = 0;

	if (GetProcessAffinityMask(GetCurrentProcess(), &mask, &sys))
		for (; mask != 0; mask &= mask - 1)
			n++;
	if (n == 0)
		n = (unsigned)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	return n > 0 ? n : 1u;
}
