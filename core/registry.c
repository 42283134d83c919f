/* SPDX-License-Identifier: MIT */
/*
 * core/registry.c -- the provider table.
 *
 * The built-in providers sit in one static, ordered table, best first, with plain always
 * last: `provider=auto` walks it in this order.  The order is a judgement about servers:
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
 * create segments: a short spin lock guards the table, and every walk works on its own copy
 * (hpshm__providers), so a table that shifts under a walk can neither skip nor repeat a
 * provider.  A provider must stay valid while segments it made exist (provider.h).
 */
#include <stdatomic.h>
#include <string.h>

#include "core/internal.h"

extern const struct hpshm_provider hpshm__provider_memfd_hugetlb;
extern const struct hpshm_provider hpshm__provider_mmap_hugetlb;
extern const struct hpshm_provider hpshm__provider_sysv_hugetlb;
extern const struct hpshm_provider hpshm__provider_hugetlbfs;
extern const struct hpshm_provider hpshm__provider_windows_large;
extern const struct hpshm_provider hpshm__provider_freebsd_largepage;
extern const struct hpshm_provider hpshm__provider_plain;

/*
 * Best first; plain last and always built.  CMakeLists.txt builds a backend only on the OS it
 * belongs to and only when its HPSHM_WITH_<NAME> option is on, and defines the same macro for
 * this file: the two must change together.
 */
static const struct hpshm_provider *const builtin[] = {
#if HPSHM_WITH_MEMFD_HUGETLB
	&hpshm__provider_memfd_hugetlb,
#endif
#if HPSHM_WITH_MMAP_HUGETLB
	&hpshm__provider_mmap_hugetlb,
#endif
#if HPSHM_WITH_SYSV_HUGETLB
	&hpshm__provider_sysv_hugetlb,
#endif
#if HPSHM_WITH_HUGETLBFS
	&hpshm__provider_hugetlbfs,
#endif
#if HPSHM_WITH_WINDOWS_LARGE
	&hpshm__provider_windows_large,
#endif
#if HPSHM_WITH_FREEBSD_LARGEPAGE
	&hpshm__provider_freebsd_largepage,
#endif
	&hpshm__provider_plain,
};
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

/* Applications' providers, in registration order: each one's implementation, name and user. */
static struct hpshm_instance registered[HPSHM__MAX_PROVIDERS - NBUILTIN];
static unsigned nregistered;
static atomic_flag registry_lock = ATOMIC_FLAG_INIT;

static void registry_lock_take(void)
{
	while (atomic_flag_test_and_set_explicit(&registry_lock, memory_order_acquire))
		;
}

static void registry_lock_give(void)
{
	atomic_flag_clear_explicit(&registry_lock, memory_order_release);
}

/*
 * Every name hpshm gives a provider, on any OS and in any build: a configuration that leaves
 * one out (provider=auto,-sysv_hugetlb) stays valid on a build or an OS without it.
 */
static const char *const known_names[] = {
	"memfd_hugetlb", "mmap_hugetlb", "sysv_hugetlb", "hugetlbfs", "windows_large", "freebsd_largepage", "plain",
};

int hpshm__provider_name_known(const char *name)
{
	for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++)
		if (strcmp(known_names[i], name) == 0)
			return 1;
	return 0;
}

static void registry_builtin(unsigned i, struct hpshm_instance *out)
{
	out->ops = builtin[i];
	hpshm__strlcpy(out->name, builtin[i]->name, sizeof(out->name));
	out->user = NULL;
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
		if (strcmp(builtin[i]->name, name) == 0)
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
		*caps = builtin[index]->caps;
	return builtin[index]->name;
}

int hpshm_provider_register(const struct hpshm_provider *p, const char *name, void *user, hpshm_error *err)
{
	size_t len;
	int rc = 0;

	if (!p)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, NULL, "hpshm_provider_register: provider is NULL");
	if (p->abi_version != HPSHM_PROVIDER_ABI)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "rebuild the provider against this hpshm/provider.h (the history of the interface "
				       "is at its top)",
				       "provider %s was built for provider ABI %u; this library speaks ABI %d",
				       p->name ? p->name : "(unnamed)", p->abi_version, HPSHM_PROVIDER_ABI);
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
