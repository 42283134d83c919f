/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/program.c -- ports/process.h on Windows: this program's path
 * (GetModuleFileNameW, as UTF-8), no death with the parent, and the far address the library
 * would pick.
 */
#include "windows/windows.h"

#include "process.h"

int hpshm__os_program_path(char *buf, size_t len)
{
	wchar_t path[MAX_PATH * 4];
	DWORD n = GetModuleFileNameW(NULL, path, (DWORD)(sizeof(path) / sizeof(path[0])));

	if (buf != NULL && len > 0)
		buf[0] = '\0';
	if (n == 0 || n >= sizeof(path) / sizeof(path[0]) || buf == NULL)
		return HPSHM_EUNAVAILABLE;
	hpshm__win_utf8(path, buf, len);
	return 0;
}

int hpshm__os_die_with_parent(void)
{
	return HPSHM_ENOTSUP;
}

int hpshm__os_far_address(size_t len, size_t align, void **out)
{
	return hpshm__port_pick_address(len, align, out);
}
