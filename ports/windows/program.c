/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/program.c -- ports/process.h on Windows: this program's path
 * (GetModuleFileNameW, as UTF-8), no death with the parent, the far address the library
 * would pick, and its arguments in UTF-8 (from the wide command line).
 */
#include "windows/windows.h"

#include <shellapi.h>
#include <stdlib.h>

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

int hpshm__os_args_utf8(int *argc, char ***argv)
{
	int n = 0, len;
	wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
	size_t bytes = 0, at;
	char **out;

	if (w == NULL)
		return 0; /* nothing better than the C runtime's */
	for (int i = 0; i < n; i++)
		bytes += (size_t)WideCharToMultiByte(CP_UTF8, 0, w[i], -1, NULL, 0, NULL, NULL);
	at = ((size_t)n + 1) * sizeof(*out);
	out = n > 0 ? malloc(at + bytes) : NULL;
	if (out == NULL) {
		LocalFree(w);
		return n > 0 ? HPSHM_ENOMEM : 0;
	}
	for (int i = 0; i < n; i++) {
		out[i] = (char *)out + at;
		/* bytes: what is left, at most 3 per wchar_t of a command line of 32767 */
		len = WideCharToMultiByte(CP_UTF8, 0, w[i], -1, out[i], (int)bytes, NULL, NULL);
		if (len <= 0) {
			free(out);
			LocalFree(w);
			return HPSHM_ENOMEM;
		}
		at += (size_t)len;
		bytes -= (size_t)len;
	}
	out[n] = NULL;
	LocalFree(w);
	*argc = n;
	*argv = out;
	return 0;
}
