/* SPDX-License-Identifier: MIT */
/*
 * core/registry.c -- the provider table.
 *
 * The built-in providers are the rows of backends/list.h, best first, with plain always last:
 * `provider=auto` walks them in this order.  The order is a judgement about servers:
 *   memfd_hugetlb  needs no mount and no privilege, has a descriptor (so fallocate can
 *                  populate it without SIGBUS, and a child started by exec can inherit it),
 *                  and the kernel frees it when the last user goes: nothing to clean up;
 *   mmap_hugetlb   needs nothing either, but cannot be re-attached after exec;
 *   sysv_hugetlb   needs CAP_IPC_LOCK or vm.hugetlb_shm_group;
 *   hugetlbfs      needs a mount the process can write to;
 *   windows_large  (Windows) needs "Lock pages in memory" and contiguous free memory;
 *   plain          always works, with base pages.
 * Applications' providers (hpshm_provider_register) come before the built-in ones, since an
 * application that brings its own mechanism means it to be used.
 *
 * Registration is meant for start-up, but nothing breaks if it happens while other threads
 * create segments: the port's registry lock guards the table, and every walk works on its own
 * copy (hpshm__providers), so a table that shifts under a walk can neither skip nor repeat a
 * provider.  A provider must stay valid while segments it made exist (provider.h).
 */
#include <string.h>

#include "core/internal.h"
#include "port.h"

/*
 * The built-in rows come from backends/list.h, the one list of them (its opener explains the
 * columns).  CMake defines HPSHM_WITH_<KEY> to 1 for each row it builds here and to 0 for the
 * others, from the same file, so the table below holds exactly what was compiled; a row whose
 * macro is missing does not compile.  HPSHM__IF(c)(text) keeps text when c expands to 1.
 */
#define HPSHM__IF_0(...)
#define HPSHM__IF_1(...) __VA_ARGS__
#define HPSHM__IF_EXPANDED(c) HPSHM__IF_##c
#define HPSHM__IF(c) HPSHM__IF_EXPANDED(c)

/* Every row's provider and user object, declared (a row not built here declares what nothing uses). */
#define HPSHM_NO_USER
#define HPSHM_USER(tag, object) extern struct tag object;
#define HPSHM_BACKEND(name, key, os, build, source, ops, user) extern const struct hpshm_provider ops; user
#include "backends/list.h"
#undef HPSHM_BACKEND
#undef HPSHM_USER
#undef HPSHM_NO_USER

/* One built-in registration: an implementation, the name it is registered under, its user pointer. */
struct registry_row {
	const struct hpshm_provider *ops;  /* the implementation */
	const char                  *name; /* backends/list.h's name */
	void                        *user; /* self->user of every call through this row */
};

/* Best first; plain last and always built (backends/list.h). */
#define HPSHM_NO_USER NULL
#define HPSHM_USER(tag, object) &object
#define HPSHM_BACKEND(name, key, os, build, source, ops, user) \
	HPSHM__IF(HPSHM_WITH_##key)({ &ops, #name, user },)
static const struct registry_row builtin[] = {
#include "backends/list.h"
};
#undef HPSHM_BACKEND
#undef HPSHM_USER
#undef HPSHM_NO_USER
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

/* Applications' providers, in registration order: each one's implementation, name and user. */
static struct hpshm_instance registered[HPSHM__MAX_PROVIDERS - NBUILTIN];
static unsigned nregistered;
/* The table's lock is the port's (port.h): C11's atomics, which a spin lock here would use,
 * are not in MSVC's C mode without an experimental switch. */
static void registry_lock_take(void)
{
	hpshm__port_registry_lock();
}

static void registry_lock_give(void)
{
	hpshm__port_registry_unlock();
}

/*
 * Every name hpshm gives a provider, on any OS and in any build: a configuration that leaves
 * one out (provider=auto,-sysv_hugetlb) stays valid on a build or an OS without it.
 */
#define HPSHM_BACKEND(name, ...) #name,
static const char *const known_names[] = {
#include "backends/list.h"
};
#undef HPSHM_BACKEND

int hpshm__provider_name_known(const char *name)
{
	for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++)
		if (strcmp(known_names[i], name) == 0)
			return 1;
	return 0;
}

static void registry_builtin(unsigned i, struct hpshm_instance *out)
{
	out->ops = builtin[i].ops;
	hpshm__strlcpy(out->name, builtin[i].name, sizeof(out->name));
	out->user = builtin[i].user;
}

void hpshm__providers(struct hpshm__provider_list *out)
{
	registry_lock_take();
	memcpy(out->p, registered, nregistered * sizeof(registered[0]));
	out->n = nregistered;
	registry_lock_give();
	for (unsigned i = 0; i < NBUILTIN; i++)
		registry_builtin(i, &out->p[out->n++]);
}

/* Index of name among the registered providers, or -1; the caller holds the lock. */
static int registry_index(const char *name)
{
	for (unsigned i = 0; i < nregistered; i++)
		if (strcmp(registered[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int registry_builtin_index(const char *name)
{
	for (unsigned i = 0; i < NBUILTIN; i++)
		if (strcmp(builtin[i].name, name) == 0)
			return (int)i;
	return -1;
}

int hpshm__provider_find(const char *name, struct hpshm_instance *out)
{
	int i;

	registry_lock_take();
	i = registry_index(name);
	if (i >= 0)
		*out = registered[i];
	registry_lock_give();
	if (i >= 0)
		return 0;
	i = registry_builtin_index(name);
	if (i < 0)
		return HPSHM_ENOPROVIDER;
	registry_builtin(i, out);
	return 0;
}

int hpshm_provider_find(const char *name, struct hpshm_instance *out)
{
	if (!name || !out)
		return HPSHM_EINVAL;
	return hpshm__provider_find(name, out);
}

const char *hpshm_provider_name(unsigned index, unsigned *caps)
{
	/* Names of built-ins are static; a registered one's name lives in its table slot, which
	 * stays put until it is unregistered (the caller's contract, as for the provider). */
	if (caps)
		*caps = 0;
	registry_lock_take();
	if (index < nregistered) {
		const char *name = registered[index].name;

		if (caps)
			*caps = registered[index].ops->caps;
		registry_lock_give();
		return name;
	}
	index -= nregistered;
	registry_lock_give();
	if (index >= NBUILTIN)
		return NULL;
	if (caps)
		*caps = builtin[index].ops->caps;
	return builtin[index].name;
}

/* Add p, checked by hpshm_provider_register() (core/register.c), under name (len bytes). */
int hpshm__registry_add(const struct hpshm_provider *p, const char *name, size_t len, void *user,
			hpshm_error *err)
{
	int rc = 0;

	registry_lock_take();
	if (registry_index(name) >= 0 || registry_builtin_index(name) >= 0) {
		rc = hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "choose another name",
				     "a provider named \"%s\" is already registered", name);
	} else if (nregistered == sizeof(registered) / sizeof(registered[0])) {
		rc = hpshm_error_set(err, HPSHM_EFULL, 0, NULL, "unregister a provider first",
				     "the provider table is full");
	} else {
		registered[nregistered].ops = p;
		memcpy(registered[nregistered].name, name, len + 1);
		registered[nregistered].user = user;
		nregistered++;
	}
	registry_lock_give();
	return rc;
}

int hpshm_provider_unregister(const char *name)
{
	int rc = HPSHM_ENOPROVIDER, i;

	if (!name)
		return HPSHM_EINVAL;
	registry_lock_take();
	i = registry_index(name);
	if (i >= 0) {
		memmove(&registered[i], &registered[i + 1], (nregistered - (unsigned)i - 1) * sizeof(registered[0]));
		nregistered--;
		rc = 0;
	}
	registry_lock_give();
	return rc;
}
