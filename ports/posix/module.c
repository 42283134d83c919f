/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/module.c -- loading a provider module with dlopen (POSIX).
 *
 * The module is opened RTLD_NOW, so a symbol it lacks is an error here and not a crash later,
 * and RTLD_LOCAL, so its own symbols stay its own; its references to hpshm's functions bind
 * first to the process's global scope, which is what makes a module built against the
 * installed libhpshm.so register with the copy of hpshm the process already runs.  It is
 * never closed (the port contract, ports/port.h).  See doc/architecture.md.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "port.h"

hpshm__port_fn hpshm__port_module_entry(const char *path, const char *symbol, int *loaded, char *why, size_t len)
{
	hpshm__port_fn fn;
	const char *e;
	void *handle, *sym;

	*loaded = 0;
	dlerror();
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		e = dlerror();
		snprintf(why, len, "%s", e ? e : "dlopen failed");
		return NULL;
	}
	*loaded = 1;
	dlerror();
	sym = dlsym(handle, symbol);
	if (!sym) {
		e = dlerror();
		snprintf(why, len, "%s", e ? e : "the symbol is NULL");
		return NULL;
	}
	/* POSIX guarantees a function's dlsym() result converts to a function pointer; ISO C
	 * does not, so the bytes are copied rather than cast. */
	memcpy(&fn, &sym, sizeof(fn));
	return fn;
}
