/* SPDX-License-Identifier: MIT */
/*
 * core/register.c -- admitting an application's provider: its ABI version, its members, the
 * keys it declares (core/provider_keys.c) and the name it asks for are checked here, above
 * the table, which then only stores it (core/registry.c, doc/architecture.md).
 */
#include <string.h>

#include "core/internal.h"

int hpshm_provider_register(const struct hpshm_provider *p, const char *name, void *user, hpshm_error *err)
{
	size_t len;
	int rc;

	if (!p)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_provider_register: provider is NULL");
	/* SQLite's iVersion: members are only appended, so the core can serve a provider built
	 * against an older header as long as it reads only the members that version has
	 * (HPSHM_PROVIDER_HAS); a newer one may rely on what this core does not know. */
	if (p->abi_version > HPSHM_PROVIDER_ABI)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use an hpshm at least as new as the hpshm/provider.h the provider was built "
				       "against, or rebuild the provider against this one",
				       "provider %s was built for provider ABI %u, newer than this library's (ABI %d to %d)",
				       p->name ? p->name : "(unnamed)", p->abi_version, HPSHM_PROVIDER_ABI_MIN,
				       HPSHM_PROVIDER_ABI);
	if (p->abi_version < HPSHM_PROVIDER_ABI_MIN)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "rebuild the provider against this hpshm/provider.h (the history of the interface "
				       "is at its top)",
				       "provider %s was built for provider ABI %u; this library speaks ABI %d to %d",
				       p->name ? p->name : "(unnamed)", p->abi_version, HPSHM_PROVIDER_ABI_MIN,
				       HPSHM_PROVIDER_ABI);
	if (!p->name || !p->probe || !p->create || !p->destroy ||
	    ((p->caps & HPSHM_CAP_REATTACH) && (!p->identify || !p->attach || !p->detach)) ||
	    ((p->caps & HPSHM_CAP_NAMED) && !p->detach) ||
	    (!p->scan != !p->remove))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "fill name, probe, create and destroy; identify, attach and detach with "
				       "HPSHM_CAP_REATTACH; detach with HPSHM_CAP_NAMED; scan and remove together",
				       "provider to register is incomplete");
	if ((rc = hpshm__provider_keys_check(p, err)) < 0)
		return rc;
	if (!name)
		name = p->name;
	len = strlen(name);
	if (len == 0 || len >= HPSHM_NAME_MAX || strcmp(name, "auto") == 0 || name[0] == '-' ||
	    strpbrk(name, ",: \t\n"))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "use a short name without commas, colons or spaces, not starting with '-'",
				       "provider name \"%s\" is not usable", name);
	return hpshm__registry_add(p, name, len, user, err);
}
