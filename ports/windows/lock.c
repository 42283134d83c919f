/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/lock.c -- the registry lock and the release fence (port.h) on the Win32 API,
 * which every Windows compiler has (MSVC's C mode has no <stdatomic.h> without
 * /experimental:c11atomics).  The address lock lives with the address choice it guards
 * (address.c).
 */
#include "windows/windows.h"

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
