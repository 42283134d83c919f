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
 *
 * NUMA: a pagefile-backed section's small page is allocated by the thread that touches it
 * first, from the node of that thread's ideal processor (ports/windows/numa.c).  With a numa
 * policy, every thread of the populate (the calling one too, which gets its own affinity and
 * ideal processor back afterwards) runs on the node's processors, with one of them as its
 * ideal processor, before it touches its range; a thread that cannot be placed fails the
 * populate, since the pages would land elsewhere without a word.
 * PrefetchVirtualMemory was weighed and not taken: it reads pages of a file into memory, and
 * a pagefile-backed section's pages that were never touched have nothing to read (they are
 * demand-zero), so it leaves the zeroing faults where they were.
 */
#include "windows/windows.h"

#include <assert.h>
#include <string.h>

#include "windows/sys.h"

struct touch_part {
	volatile unsigned char *addr;      /* the part's first page */
	size_t                  len;       /* its bytes, whole pages */
	size_t                  page_size; /* the step between touches */
	const GROUP_AFFINITY   *ga;        /* the processors to run on; NULL: wherever the thread is */
	unsigned                index;     /* which part: picks its ideal processor among ga's */
	DWORD                   code;      /* GetLastError() of a placement that failed; 0 */
	int                     failed;    /* 1 if the part could not be placed (code may be 0) */
};

static void touch_range(volatile unsigned char *b, size_t len, size_t page_size)
{
	for (size_t off = 0; off < len; off += page_size)
		b[off] = b[off];
}

/* The n-th processor of mask, counting round: the part's ideal processor. */
static BYTE nth_processor(KAFFINITY mask, unsigned n)
{
	unsigned count = 0, k;
	BYTE bit = 0;

	for (KAFFINITY m = mask; m != 0; m &= m - 1)
		count++;
	k = count ? n % count : 0;
	for (; bit < sizeof(KAFFINITY) * 8; bit++)
		if ((mask >> bit) & 1 && k-- == 0)
			break;
	return bit;
}

/*
 * Run the calling thread on the part's processors, one of them its ideal processor: the node of
 * a demand-zero page is the ideal processor's.  Setting the affinity moves the ideal processor
 * into it already; naming one spreads the parts over the node.  wine lacks
 * SetThreadIdealProcessorEx(): the affinity alone then.  prev and prev_ideal, when not NULL,
 * get what the thread had; *ideal_set says whether prev_ideal was filled.
 */
static void part_place(struct touch_part *p, GROUP_AFFINITY *prev, PROCESSOR_NUMBER *prev_ideal, int *ideal_set)
{
	PROCESSOR_NUMBER ideal;
	HANDLE self = GetCurrentThread();

	*ideal_set = 0;
	if (!hpshm__win_sys.set_thread_group_affinity(self, p->ga, prev)) {
		p->code = GetLastError();
		p->failed = 1;
		return;
	}
	memset(&ideal, 0, sizeof(ideal));
	ideal.Group = p->ga->Group;
	ideal.Number = nth_processor(p->ga->Mask, p->index);
	*ideal_set = hpshm__win_sys.set_thread_ideal_processor_ex(self, &ideal, prev_ideal) != 0;
}

static DWORD WINAPI touch_thread(LPVOID arg)
{
	struct touch_part *p = arg;
	PROCESSOR_NUMBER prev_ideal;
	int ideal_set;

	if (p->ga != NULL)
		part_place(p, NULL, &prev_ideal, &ideal_set);
	if (!p->failed)
		touch_range(p->addr, p->len, p->page_size);
	return 0;
}

/* The calling thread's share: part 0, and the parts of threads that could not start, on the
 * node's processors when asked, with its own affinity and ideal processor back afterwards. */
static void populate_own(struct touch_part *parts, const HANDLE *threads, unsigned n)
{
	GROUP_AFFINITY prev;
	PROCESSOR_NUMBER prev_ideal;
	int ideal_set = 0;

	if (parts[0].ga != NULL) {
		part_place(&parts[0], &prev, &prev_ideal, &ideal_set);
		if (parts[0].failed)
			return;
	}
	touch_range(parts[0].addr, parts[0].len, parts[0].page_size);
	for (unsigned i = 1; i < n; i++) {
		if (threads[i] == NULL)
			touch_range(parts[i].addr, parts[i].len, parts[i].page_size);
	}
	if (parts[0].ga != NULL) {
		(void)hpshm__win_sys.set_thread_group_affinity(GetCurrentThread(), &prev, NULL);
		if (ideal_set)
			(void)hpshm__win_sys.set_thread_ideal_processor_ex(GetCurrentThread(), &prev_ideal, NULL);
	}
}

static int populate_unplaced(hpshm_error *err, DWORD code, const char *call)
{
	char text[HPSHM_TEXT_MAX];

	if (code == 0)
		hpshm__strlcpy(text, "the node has no processor this process may run on", sizeof(text));
	else
		(void)hpshm__win_strerror(code, text, sizeof(text));
	return hpshm_error_set(err, HPSHM_EPOPULATE, (int)code, call,
			       "leave numa at default, or allow this process the node's processors",
			       "could not run the populate on the NUMA node's processors, so its pages would land "
			       "elsewhere: %s", text);
}

int hpshm__port_populate(void *addr, size_t len, size_t page_size, struct hpshm__port_handle h,
			 const struct hpshm__populate_how *how, unsigned *methods, hpshm_error *err)
{
	struct touch_part parts[HPSHM__POPULATE_THREADS_MAX];
	HANDLE threads[HPSHM__POPULATE_THREADS_MAX];
	size_t pages = len / page_size, each, extra, first;
	GROUP_AFFINITY ga;
	const char *call = NULL;
	DWORD code = 0;
	unsigned n;
	int placed;

	(void)h;
	assert(addr != NULL && len > 0 && page_size > 0 && how != NULL && how->threads > 0 && methods != NULL);
	*methods = HPSHM_POPULATE_TOUCH;
	memset(&ga, 0, sizeof(ga));
	placed = hpshm__win_numa_affinity(how->numa, &ga, &code, &call);
	if (placed < 0)
		return populate_unplaced(err, code, call);
	n = how->threads > HPSHM__POPULATE_THREADS_MAX ? HPSHM__POPULATE_THREADS_MAX : how->threads;
	if ((size_t)n > pages)
		n = (unsigned)pages;
	if (n == 0)
		n = 1; /* len is whole pages (port.h): never, but part 0 must be set */
	each = pages / n;
	extra = pages % n;
	for (unsigned i = 0; i < n; i++) {
		first = (size_t)i * each + (i < extra ? i : extra);
		memset(&parts[i], 0, sizeof(parts[i]));
		parts[i].addr = (volatile unsigned char *)addr + first * page_size;
		parts[i].len = (each + (i < extra ? 1 : 0)) * page_size;
		parts[i].page_size = page_size;
		parts[i].ga = placed ? &ga : NULL;
		parts[i].index = i;
		/* Part 0 is the calling thread's; a thread that cannot start leaves its part to it too. */
		threads[i] = i == 0 ? NULL : CreateThread(NULL, 0, touch_thread, &parts[i], 0, NULL);
	}
	populate_own(parts, threads, n);
	for (unsigned i = 1; i < n; i++) {
		if (threads[i] == NULL)
			continue;
		(void)WaitForSingleObject(threads[i], INFINITE);
		(void)CloseHandle(threads[i]);
	}
	for (unsigned i = 0; i < n; i++)
		if (parts[i].failed)
			return populate_unplaced(err, parts[i].code, "SetThreadGroupAffinity");
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
