/* SPDX-License-Identifier: MIT */
/*
 * core/module.c -- loading a provider module: a shared object that registers providers.
 *
 * hpshm_provider_load() asks the port to load the file and find its entry point
 * (HPSHM_PROVIDER_MODULE_ENTRY), then calls it; the entry point registers the module's
 * providers as an application would.  A module is never unloaded: its providers and the
 * segments they made must stay valid.  See doc/architecture.md for the layers and
 * doc/providers.md for how a module is built.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "port.h"

int hpshm_provider_load(const char *path, hpshm_error *err)
{
	hpshm_provider_module_fn entry;
	char why[HPSHM_TEXT_MAX];
	int loaded = 0, rc;

	if (!path || !path[0])
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "name the module's file",
				       "hpshm_provider_load: no module file given");
	why[0] = '\0';
	entry = (hpshm_provider_module_fn)hpshm__port_module_entry(path, HPSHM_PROVIDER_MODULE_ENTRY, &loaded, why,
								     sizeof(why));
	if (!entry && !loaded)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, "dlopen",
				       "check the path (the file must exist and be a shared object built for this "
				       "machine, with hpshm's functions left to the process that loads it)",
				       "cannot load provider module %s: %s", path, why);
	if (!entry)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, "dlsym",
				       "export `int " HPSHM_PROVIDER_MODULE_ENTRY "(hpshm_error *err)` from the module, "
				       "registering its providers (doc/providers.md)",
				       "provider module %s has no entry point " HPSHM_PROVIDER_MODULE_ENTRY ": %s", path,
				       why);
	if (err)
		memset(err, 0, sizeof(*err));
	rc = entry(err);
	if (rc < 0 && err) {
		char msg[HPSHM_MESSAGE_MAX];

		/* Say which module failed, keeping the module's own message and hint. */
		snprintf(msg, sizeof(msg), "provider module %.200s: %.700s", path, err->message);
		hpshm__strlcpy(err->message, msg, sizeof(err->message));
		if (err->code == 0)
			err->code = rc;
	}
	return rc < 0 ? rc : 0;
}
