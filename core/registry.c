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
	&hpshm__provider_plain,
};
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

static const struct hpshm_provider *registered[HPSHM__MAX_PROVIDERS - NBUILTIN];
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

void hpshm__providers(struct hpshm__provider_list *out)
{
	registry_lock_take();
	memcpy(out->p, registered, nregistered * sizeof(registered[0]));
	out->n = nregistered;
	registry_lock_give();
	memcpy(out->p + out->n, builtin, sizeof(builtin));
	out->n += NBUILTIN;
}

/* The caller holds the lock, or owns a snapshot. */
static const struct hpshm_provider *registry_find(const struct hpshm_provider *const *table, unsigned n,
						  const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

const struct hpshm_provider *hpshm__provider_find(const char *name)
{
	const struct hpshm_provider *p;

	registry_lock_take();
	p = registry_find(registered, nregistered, name);
	registry_lock_give();
	return p ? p : registry_find(builtin, NBUILTIN, name);
}

const char *hpshm_provider_name(unsigned index, unsigned *caps)
{
	struct hpshm__provider_list all;

	hpshm__providers(&all);
	if (index >= all.n)
		return NULL;
	if (caps)
		*caps = all.p[index]->caps;
	return all.p[index]->name;
}

int hpshm_provider_register(const struct hpshm_provider *p, hpshm_error *err)
{
	size_t len;
	int rc = 0;

	if (!p || p->abi_version < 1 || !p->name || !p->probe || !p->create || !p->destroy)
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL,
				       "set abi_version = HPSHM_PROVIDER_ABI and every member of the provider",
				       "provider to register is incomplete (NULL name, probe, create or destroy, or "
				       "abi_version 0)");
	len = strlen(p->name);
	if (len == 0 || len >= HPSHM_NAME_MAX || strcmp(p->name, "auto") == 0 || strchr(p->name, ','))
		return hpshm_error_set(err, HPSHM_EINVAL, 0, NULL, "use a short name without commas",
				       "provider name \"%s\" is not usable", p->name);
	registry_lock_take();
	if (registry_find(registered, nregistered, p->name) || registry_find(builtin, NBUILTIN, p->name))
		rc = hpshm_error_set(err, HPSHM_EEXIST, 0, NULL, "choose another name",
				     "a provider named \"%s\" is already registered", p->name);
	else if (nregistered == sizeof(registered) / sizeof(registered[0]))
		rc = hpshm_error_set(err, HPSHM_EFULL, 0, NULL, "unregister a provider first",
				     "the provider table is full");
	else
		registered[nregistered++] = p;
	registry_lock_give();
	return rc;
}

int hpshm_provider_unregister(const struct hpshm_provider *p)
{
	int rc = HPSHM_ENOPROVIDER;

	registry_lock_take();
	for (unsigned i = 0; i < nregistered; i++) {
		if (registered[i] != p)
			continue;
		memmove(&registered[i], &registered[i + 1], (nregistered - i - 1) * sizeof(registered[0]));
		nregistered--;
		rc = 0;
		break;
	}
	registry_lock_give();
	return rc;
}
