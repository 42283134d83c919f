/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/lock.c -- the registry lock and the release fence (port.h) on the Win32 API,
 * which every Windows compiler has (MSVC's C mode has no <stdatomic.h> without
 * /experimental:c11atomics).  The address lock lives with the address choice it guards
 * (address.c).
 */
#include "windows/windows.h"

#include <string.h>

/* A slim reader/writer lock taken exclusively, statically initialised: no setup call. */
static SRWLOCK registry_lock = SRWLOCK_INIT;

void hpshm__port_registry_lock(void)
{
	AcquireSRWLockExclusive(&registry_lock);
}

void hpshm__port_registry_unlock(void)
{
	ReleaseSRWLockExclusive(&registry_lock);
}

/* MemoryBarrier() is a full fence on every Windows architecture (x86, x64, ARM64), so it
 * orders stores as a release fence must, and the compiler does not move accesses across it. */
void hpshm__port_release_fence(void)
{
	MemoryBarrier();
}

/* ---- resizable segments (port.h) ---- */

static SRWLOCK segments_lock = SRWLOCK_INIT;

void hpshm__port_segments_lock(void)
{
	AcquireSRWLockExclusive(&segments_lock);
}

void hpshm__port_segments_unlock(void)
{
	ReleaseSRWLockExclusive(&segments_lock);
}

/* Windows has no fork(): a process gets a segment by create, attach or open, never by copy. */
int hpshm__port_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	(void)prepare, (void)parent, (void)child;
	return 0;
}

/* The Interlocked functions are full barriers; a compare-exchange that changes nothing is an
 * atomic 64-bit load on 32-bit x86 as well, where a plain load of 8 bytes is not. */
uint64_t hpshm__port_load64(const volatile uint64_t *p)
{
	/* The exchange writes nothing (0 replaces 0), but its prototype takes a writable word. */
	volatile LONG64 *w;

	memcpy(&w, &p, sizeof(w));
	return (uint64_t)InterlockedCompareExchange64(w, 0, 0);
}

void hpshm__port_store64(volatile uint64_t *p, uint64_t v)
{
	(void)InterlockedExchange64((volatile LONG64 *)p, (LONG64)v);
}

int hpshm__port_cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired)
{
	LONG64 seen = InterlockedCompareExchange64((volatile LONG64 *)p, (LONG64)desired, (LONG64)*expected);

	if ((uint64_t)seen == *expected)
		return 1;
	*expected = (uint64_t)seen;
	return 0;
}
