/* SPDX-License-Identifier: MIT */
/*
 * ports/windows/module.c -- loading a provider module with LoadLibraryW (Windows).
 *
 * The path is UTF-8, as every path hpshm takes; the DLL is never freed (ports/port.h).  A
 * module must link the same hpshm.dll as the process that loads it, so the two share one
 * provider table.  See doc/architecture.md.
 */
#include <stdio.h>
#include <stdlib.h>

#include "port.h"
#include "windows/windows.h"

hpshm__port_fn hpshm__port_module_entry(const char *path, const char *symbol, int *loaded, char *why, size_t len)
{
	wchar_t *wide = hpshm__win_wide_dup(path);
	char text[200];
	HMODULE dll;
	FARPROC sym;

	*loaded = 0;
	if (!wide) {
		snprintf(why, len, "the path is not valid UTF-8");
		return NULL;
	}
	dll = LoadLibraryW(wide);
	free(wide);
	if (!dll) {
		DWORD code = GetLastError();

		snprintf(why, len, "LoadLibraryW: %s (error %lu)", hpshm__win_strerror(code, text, sizeof(text)),
			 (unsigned long)code);
		return NULL;
	}
	*loaded = 1;
	sym = GetProcAddress(dll, symbol);
	if (!sym) {
		DWORD code = GetLastError();

		snprintf(why, len, "GetProcAddress: %s (error %lu)", hpshm__win_strerror(code, text, sizeof(text)),
			 (unsigned long)code);
		return NULL;
	}
	return (hpshm__port_fn)sym;
}
