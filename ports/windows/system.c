/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/system.c -- what Windows answers about pages, time, randomness, the boot and the
 * environment.
 *
 * Pages: the base page size is GetSystemInfo()'s dwPageSize (4 KiB on x86-64 and arm64).
 * Large pages come in one size, GetLargePageMinimum() (2 MiB on x86-64, 0 where the processor
 * has none); Windows 10 can also back private VirtualAlloc2() memory with 1 GiB pages
 * (MEM_EXTENDED_PARAMETER_NONPAGED_HUGE), but whether a shareable section can have them is
 * not documented, so only the minimum is offered.
 *
 * The boot id: Windows has no counterpart of Linux's boot_id.  The boot counter the kernel
 * keeps in the registry (BootId under Session Manager\Memory Management\PrefetchParameters,
 * one more at every boot) is used where it exists.  A boot time computed from the tick count
 * and the clock would not do: it moves whenever the clock is set, and rounding it to make it
 * stable only moves the problem to the rounding boundary, where a valid token would be
 * refused as "made before the last reboot".  Without the counter the port says it has no boot
 * id (HPSHM_ENOTSUP) and nothing is compared: on Windows a section cannot outlive a reboot
 * anyway (it is a kernel object that dies with its last handle), so the boot id is only a
 * second check there.
 *
 * The trusted getenv is the plain environment: Windows has no setuid or setgid programs,
 * nothing runs with privileges its caller lacks by inheriting its environment (elevation
 * starts a new process with a new environment block), so every process may trust its
 * environment.  It is read wide and given in UTF-8, as hpshm's text is (text.c): msvcrt's
 * getenv() and _environ are in the ANSI code page, which turns other characters into '?'.
 */
#include "windows/windows.h"

#include <bcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows/sys.h"

size_t hpshm__port_base_page_size(void)
{
	SYSTEM_INFO si;

	GetSystemInfo(&si);
	return si.dwPageSize > 0 ? (size_t)si.dwPageSize : 4096;
}

size_t hpshm__port_default_huge_page_size(void)
{
	return (size_t)hpshm__win_sys.get_large_page_minimum();
}

int hpshm__port_huge_page_sizes(size_t *out, int max)
{
	size_t large = hpshm__port_default_huge_page_size();

	if (large == 0)
		return 0;
	if (max > 0)
		out[0] = large;
	return 1;
}

uint64_t hpshm__port_now_ns(void)
{
	LARGE_INTEGER freq, now;
	uint64_t f, c;

	/* Asked every time: it is fixed at boot and read from memory the kernel shares with every
	 * process, so it costs less than a cache shared between threads would need to be safe. */
	QueryPerformanceFrequency(&freq);
	QueryPerformanceCounter(&now);
	f = (uint64_t)freq.QuadPart;
	c = (uint64_t)now.QuadPart;
	if (f == 0)
		return 0;
	/* Split so that the product never overflows: seconds, then the remainder. */
	return c / f * 1000000000u + c % f * 1000000000u / f;
}

uint64_t hpshm__port_random64(void)
{
	LARGE_INTEGER t;
	uint64_t v = 0;

	if (BCryptGenRandom(NULL, (PUCHAR)&v, (ULONG)sizeof(v), BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0)
		return v;
	/* A nonce needs to be unlikely to repeat, not secret: the clock and the pid will do. */
	QueryPerformanceCounter(&t);
	v = (uint64_t)t.QuadPart ^ ((uint64_t)GetCurrentProcessId() << 32) ^ (uint64_t)GetTickCount64();
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL; /* the finaliser of MurmurHash3: spreads every bit */
	v ^= v >> 33;
	return v;
}

int hpshm__port_boot_id(char *buf, size_t len)
{
	DWORD boot = 0, size = sizeof(boot);
	LSTATUS rc;

	if (buf != NULL && len > 0)
		buf[0] = '\0';
	rc = RegGetValueW(HKEY_LOCAL_MACHINE,
			  L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory Management\\PrefetchParameters",
			  L"BootId", RRF_RT_REG_DWORD, NULL, &boot, &size);
	if (rc != ERROR_SUCCESS)
		return HPSHM_ENOTSUP;
	if (buf == NULL || (size_t)snprintf(buf, len, "windows-boot-%lu", (unsigned long)boot) >= len)
		return HPSHM_EINVAL;
	return 0;
}

long long hpshm__port_getpid(void)
{
	return (long long)GetCurrentProcessId();
}

const char *hpshm__port_getenv(const char *name)
{
	return hpshm__win_getenv_utf8(name);
}

char **hpshm__port_environ(void)
{
	static char *none[1] = { NULL };
	char **env = hpshm__win_environ_utf8();

	if (env != NULL)
		return env;
	/* Out of memory: the C runtime's copy in the ANSI code page beats none.  msvcrt fills
	 * _environ for a program with main(); one with wmain() has only _wenviron. */
	return _environ != NULL ? _environ : none;
}

/* Set (inherit 1) or clear (0) HANDLE_FLAG_INHERIT on handle.  0, or an error. */
static int system_inherit(intptr_t handle, int inherit, hpshm_error *err)
{
	DWORD code;

	if (!hpshm__win_sys.set_handle_information((HANDLE)handle, HANDLE_FLAG_INHERIT,
						   inherit ? HANDLE_FLAG_INHERIT : 0)) {
		code = GetLastError();
		return hpshm_error_set(err, HPSHM_ESYS, (int)code, "SetHandleInformation", NULL,
				       "cannot make handle %p %s (error %lu)", (void *)handle,
				       inherit ? "inheritable" : "private", (unsigned long)code);
	}
	return 0;
}

int hpshm__port_handle_inheritable(intptr_t handle, hpshm_error *err)
{
	return system_inherit(handle, 1, err);
}

int hpshm__port_handle_private(intptr_t handle, hpshm_error *err)
{
	return system_inherit(handle, 0, err);
}
