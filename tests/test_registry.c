/* SPDX-License-Identifier: MIT */
/*
 * tests/test_registry.c -- the provider registry and the selection walk, with fake providers.
 *
 * Unit tests: the library looks at a fake /proc and /sys (fakes.h) whose 2 MiB pool is empty
 * unless a test says otherwise, so the built-in hugetlb providers are ruled out by probe on
 * every machine and the walk is the same everywhere.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#include "fakes.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"

#define MIB HPT_MIB

static hpshm_config *cfg;
static struct hpt_fake *registered[HPT_FAKES];

static void registry_init(void)
{
	hpt_fixture_init();
	hpt_fakeroot_create(0, 0);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	memset(registered, 0, sizeof registered);
}

static void registry_fini(void)
{
	int i;

	for (i = 0; i < HPT_FAKES; i++)
		if (registered[i])
			(void)hpt_fake_unregister(registered[i]);
	hpshm_config_free(cfg);
	hpt_fakeroot_destroy();
	hpt_fixture_fini();
}

TestSuite(registry, .init = registry_init, .fini = registry_fini);

/* Make fake i and register it. */
static struct hpt_fake *fake(int i, const char *name, unsigned caps)
{
	struct hpt_fake *f = hpt_fake_init(i, name, caps);
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpt_fake_register(f, &err);
	cr_assert_eq(rc, 0, "register %s: %s: %s", name, hpshm_errname(rc), err.message);
	registered[i] = f;
	return f;
}

static void set(const char *kv)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s: %s", kv, hpshm_errname(rc), err.message);
}

/* Index of a provider in the walk order, or -1. */
static int walk_index(const char *name)
{
	const char *n;
	unsigned i;

	for (i = 0; (n = hpshm_provider_name(i, NULL)) != NULL; i++)
		if (!strcmp(n, name))
			return (int)i;
	return -1;
}

static const hpshm_attempt *find_attempt(const hpshm_report *r, const char *provider)
{
	unsigned i;

	for (i = 0; i < r->nattempts; i++)
		if (!strcmp(r->attempts[i].provider, provider))
			return &r->attempts[i];
	return NULL;
}

/* ---- the table ---- */

Test(registry, builtins_are_listed_best_first_with_plain_last)
{
	static const char *const order[] = {"memfd_hugetlb", "mmap_hugetlb", "sysv_hugetlb", "hugetlbfs", "plain"};
	const char *name;
	unsigned caps, i, n = 0;
	int prev = -1;

	for (i = 0; i < 5; i++) {
		int at = walk_index(order[i]);

		cr_assert_geq(at, 0, "%s is not listed", order[i]);
		cr_assert_gt(at, prev, "%s is out of order", order[i]);
		prev = at;
	}
	for (i = 0; (name = hpshm_provider_name(i, &caps)) != NULL; i++) {
		n++;
		if (!strcmp(name, "plain"))
			cr_assert_eq(caps & HPSHM_CAP_HUGE, 0u, "plain claims HUGE");
		else if (strstr(name, "huge"))
			cr_assert(caps & HPSHM_CAP_HUGE, "%s lacks HPSHM_CAP_HUGE", name);
	}
	cr_assert_str_eq(hpshm_provider_name(n - 1, NULL), "plain");
	cr_assert_null(hpshm_provider_name(n, NULL));
}

Test(registry, registered_provider_is_named_before_the_builtins)
{
	fake(0, "fake_plain", 0);
	cr_assert_geq(walk_index("fake_plain"), 0);
	cr_assert_lt(walk_index("fake_plain"), walk_index("memfd_hugetlb"));
	cr_assert_lt(walk_index("fake_plain"), walk_index("plain"));
}

Test(registry, unregister_removes_it)
{
	struct hpt_fake *f = fake(0, "fake_gone", 0);
	hpshm_error err;

	cr_assert_eq(hpt_fake_unregister(f), 0);
	registered[0] = NULL;
	cr_assert_eq(walk_index("fake_gone"), -1);
	cr_assert_eq(hpt_fake_unregister(f), HPSHM_ENOPROVIDER);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set(cfg, "provider", "fake_gone", &err), HPSHM_ENOPROVIDER);
	cr_assert_eq(hpshm_provider_probe("fake_gone", 4096, NULL, NULL, NULL, 0), HPSHM_ENOPROVIDER);
}

Test(registry, bad_registrations_are_refused)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_bad", 0);
	struct hpshm_provider p;
	hpshm_error err;

	p = f->provider;
	p.abi_version = 0;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), HPSHM_EINVAL);
	cr_assert_eq(err.code, HPSHM_EINVAL);

	/* a provider built against the ABI 2 header is refused, and told to rebuild */
	p = f->provider;
	p.abi_version = 2;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "ABI 2"), "%s", err.message);
	cr_assert(hpt_contains(err.hint, "rebuild"), "%s", err.hint);

	/* ABI 3's struct ends before lookup: the core could not read it, so it is refused too */
	p = f->provider;
	p.abi_version = 3;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), HPSHM_EINVAL);
	cr_assert(hpt_contains(err.message, "ABI 3"), "%s", err.message);

	p = f->provider;
	p.create = NULL;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	p = f->provider;
	p.probe = NULL;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	p = f->provider;
	p.destroy = NULL;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	p = f->provider;
	p.name = NULL;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	p = f->provider;
	p.name = "auto";
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	p = f->provider;
	p.name = "a,b";
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, NULL), HPSHM_EINVAL);

	cr_assert_eq(hpshm_provider_register(NULL, NULL, NULL, NULL), HPSHM_EINVAL);
	cr_assert_eq(walk_index("fake_bad"), -1, "a refused provider is listed");
}

Test(registry, duplicate_names_are_eexist)
{
	struct hpt_fake *twin;
	struct hpshm_provider p;

	fake(0, "fake_twin", 0);
	twin = hpt_fake_init(1, "fake_twin", 0);
	cr_assert_eq(hpt_fake_register(twin, NULL), HPSHM_EEXIST);

	p = twin->provider;
	p.name = "plain";
	cr_assert_eq(hpshm_provider_register(&p, NULL, twin, NULL), HPSHM_EEXIST);
	p.name = "mmap_hugetlb";
	cr_assert_eq(hpshm_provider_register(&p, NULL, twin, NULL), HPSHM_EEXIST);
	/* the name given at registration is what counts */
	cr_assert_eq(hpshm_provider_register(&twin->provider, "plain", twin, NULL), HPSHM_EEXIST);
}

/* ---- creating through a registered provider ---- */

Test(registry, named_provider_creates_through_it)
{
	struct hpt_fake *f = fake(0, "fake_plain", 0);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	set("provider=fake_plain");
	rc = hpshm_segment_create_ex(&seg, 10000, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(f->creates, 1u);
	cr_assert_eq(hpshm_segment_address(seg), f->addr);
	cr_assert_str_eq(hpshm_segment_report(seg)->provider, "fake_plain");
	cr_assert_eq(f->last_page_size, hpshm_base_page_size());
	cr_assert_eq(f->last_size % hpshm_base_page_size(), 0u);
	cr_assert_geq(f->last_size, 10000u);
	cr_assert_eq(hpshm_segment_size(seg), f->last_size);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].provider, "fake_plain");
	cr_assert_eq(r.attempts[0].result, 0);
	memset(f->addr, 0xa5, 10000);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(f->destroys, 1u);
}

Test(registry, auto_tries_registered_providers_first)
{
	struct hpt_fake *f = fake(0, "fake_first", 0);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	set("provider=auto,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "fake_first");
	cr_assert_str_eq(r.attempts[0].provider, "fake_first");
	cr_assert_eq(f->creates, 1u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(registry, probe_failure_is_recorded_and_auto_moves_on)
{
	struct hpt_fake *f = fake(0, "fake_absent", 0);
	hpshm_segment *seg = NULL;
	const hpshm_attempt *a;
	hpshm_report r;
	hpshm_error err;
	int rc;

	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "the fake device is unplugged");
	set("provider=auto,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(f->probes, 1u);
	cr_assert_eq(f->creates, 0u, "created although probe said unavailable");
	cr_assert_str_neq(r.provider, "fake_absent");
	a = find_attempt(&r, "fake_absent");
	cr_assert_not_null(a);
	cr_assert_eq(a, &r.attempts[0], "the registered provider is not the first attempt");
	cr_assert_eq(a->result, HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(a->call, "probe");
	cr_assert_str_eq(a->reason, "the fake device is unplugged");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(registry, create_failure_is_recorded_with_call_and_errno)
{
	struct hpt_fake *f = fake(0, "fake_broken", 0);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	f->create_result = HPSHM_ESYS;
	f->create_errno = EACCES;
	snprintf(f->create_call, sizeof f->create_call, "ioctl");
	set("provider=fake_broken,plain,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.nattempts, 2u);
	cr_assert_str_eq(r.attempts[0].provider, "fake_broken");
	cr_assert_eq(r.attempts[0].result, HPSHM_ESYS);
	cr_assert_eq(r.attempts[0].sys_errno, EACCES);
	cr_assert_str_eq(r.attempts[0].call, "ioctl");
	cr_assert_str_eq(r.attempts[1].provider, "plain");
	cr_assert_eq(r.attempts[1].result, 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(registry, explicit_list_is_exactly_the_candidates)
{
	struct hpt_fake *f = fake(0, "fake_only", 0);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "not today");
	set("provider=fake_only,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_lt(rc, 0, "plain was appended to an explicit list");
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].provider, "fake_only");
	cr_expect(strstr(err.message, "not today"), "reason missing from %s", err.message);
}

Test(registry, on_with_only_a_failing_huge_fake_is_enohuge_with_its_reason)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	hpt_fakeroot_set_pool(64, 64);
	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "fake pool drained");
	set("provider=fake_huge,huge_pages=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "got %s", hpshm_errname(rc));
	cr_assert_eq(err.code, HPSHM_ENOHUGE);
	cr_assert_null(seg);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_eq(f->creates, 0u);
	cr_assert(strstr(err.message, "fake pool drained"), "reason missing from %s", err.message);
	cr_assert(strstr(err.message, "fake_huge"), "provider missing from %s", err.message);
}

Test(registry, on_failure_names_every_providers_reason)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	unsigned i, huge = 0;
	int rc;

	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "fake pool drained");
	set("provider=auto,huge_pages=on");
	memset(&err, 0, sizeof err);
	rc = hpshm_segment_create_ex(&seg, 4 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "got %s", hpshm_errname(rc));
	for (i = 0; i < r.nattempts; i++) {
		const hpshm_attempt *a = &r.attempts[i];

		cr_assert_lt(a->result, 0, "%s succeeded?", a->provider);
		cr_assert(a->reason[0], "%s has no reason", a->provider);
		cr_assert(strstr(err.message, a->provider), "%s missing from %s", a->provider, err.message);
		if (strcmp(a->call, "config") != 0) {
			huge++;
			cr_assert(strstr(err.message, a->reason), "reason \"%s\" missing from %s", a->reason,
				  err.message);
		}
	}
	cr_assert_geq(huge, 5u, "fake + 4 built-in huge providers should have been probed");
	/* the fake pool is empty: the one actionable hint names the sysctl */
	cr_assert(strstr(err.hint, "vm.nr_hugepages"), "hint: %s", err.hint);
}

Test(registry, try_falls_back_to_plain_and_lists_every_attempt_in_order)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	const char *name;
	unsigned i;
	int rc;

	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "fake pool drained");
	set("provider=auto,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(r.huge, 0);
	cr_assert_eq(r.mapped_size, 3 * MIB, "the fallback must use the original size");
	for (i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++) {
		cr_assert_lt(i, r.nattempts, "%s has no attempt", name);
		cr_assert_str_eq(r.attempts[i].provider, name, "attempt %u", i);
		if (strcmp(name, "plain") != 0) {
			cr_assert_lt(r.attempts[i].result, 0);
			cr_assert_str_eq(r.attempts[i].call, "probe", "%s", name);
			cr_assert(r.attempts[i].reason[0], "%s has no reason", name);
		}
	}
	cr_assert_eq(r.nattempts, i);
	cr_assert_eq(r.attempts[i - 1].result, 0);
	cr_assert_str_eq(r.attempts[0].reason, "fake pool drained");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(registry, on_skips_providers_without_huge_pages)
{
	struct hpt_fake *f = fake(0, "fake_plain", 0);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	set("provider=auto,huge_pages=on");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, HPSHM_ENOHUGE, "got %s", hpshm_errname(rc));
	cr_assert_eq(f->probes + f->creates, 0u, "a non-huge provider was tried under huge_pages=on");
	for (unsigned i = 0; i < r.nattempts; i++)
		cr_assert_lt(r.attempts[i].result, 0, "%s succeeded under huge_pages=on", r.attempts[i].provider);
	cr_assert_null(seg);
}

Test(registry, explicit_provider_contradicting_huge_pages_is_evalue)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	fake(0, "fake_huge", HPSHM_CAP_HUGE);
	set("provider=fake_huge,huge_pages=off");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, 4096, cfg, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "huge_pages");

	set("provider=plain,huge_pages=on");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, 4096, cfg, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "huge_pages");
	cr_assert_null(seg);
}

Test(registry, off_uses_only_plain)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	hpt_fakeroot_set_pool(64, 64);
	f->smaps_huge = 1;
	set("provider=auto,huge_pages=off");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(f->probes + f->creates, 0u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

/* ---- sizes ---- */

Test(registry, size_zero_is_einval)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, 0, NULL, &err), HPSHM_EINVAL);
	cr_assert_eq(err.code, HPSHM_EINVAL);
	cr_assert_null(seg);
}

Test(registry, size_max_is_eoverflow)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create(&seg, SIZE_MAX, NULL, &err), HPSHM_EOVERFLOW);
	cr_assert_eq(err.code, HPSHM_EOVERFLOW);
	cr_assert_null(seg);
	set("provider=plain");
	cr_assert_eq(hpshm_segment_create(&seg, SIZE_MAX - 100, cfg, &err), HPSHM_EOVERFLOW);
}

Test(registry, overflow_at_huge_rounding_falls_back_or_fails_cleanly)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	/* rounds to base pages, but not to 2 MiB pages */
	hpt_fakeroot_set_pool(64, 64);
	set("provider=fake_huge,huge_pages=on");
	rc = hpshm_segment_create_ex(&seg, SIZE_MAX - 2 * 4096, cfg, &r, &err);
	cr_assert_lt(rc, 0);
	cr_assert_eq(f->creates, 0u);
	cr_assert_eq(r.nattempts, 1u);
	cr_assert_eq(r.attempts[0].result, HPSHM_EOVERFLOW, "got %s", hpshm_errname(r.attempts[0].result));
}

Test(registry, huge_provider_gets_the_size_rounded_to_its_page_size)
{
	struct hpt_fake *f = fake(0, "fake_huge", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	hpt_fakeroot_set_pool(64, 64);
	f->smaps_huge = 1;
	set("provider=fake_huge,huge_pages=on,huge_page_size=2MB");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(f->last_page_size, 2 * MIB);
	cr_assert_eq(f->last_size, 4 * MIB);
	cr_assert_eq(r.requested_size, 3 * MIB);
	cr_assert_eq(r.mapped_size, 4 * MIB);
	cr_assert_eq(hpshm_segment_size(seg), 4 * MIB);
	cr_assert_eq(r.requested_page_size, 2 * MIB);
	cr_assert_eq(r.page_size, 2 * MIB);
	cr_assert_eq(r.verified, 1);
	cr_assert_eq(r.huge, 1);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(f->destroys, 1u);
}

Test(registry, huge_provider_not_verified_huge_has_failed)
{
	struct hpt_fake *f = fake(0, "fake_liar", HPSHM_CAP_HUGE);
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	/* the fake maps plain pages and does not disguise them: the kernel says 4 KiB */
	hpt_fakeroot_set_pool(64, 64);
	set("provider=fake_liar,plain,huge_pages=try");
	rc = hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "plain");
	cr_assert_eq(f->creates, 1u);
	cr_assert_eq(f->destroys, 1u, "the unverified mapping was not undone");
	cr_assert_eq(r.nattempts, 2u);
	cr_assert_lt(r.attempts[0].result, 0);
	cr_assert_eq(r.mapped_size, 3 * MIB, "the fallback must use the original size");
	cr_assert_eq(r.huge, 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);

	set("provider=fake_liar,huge_pages=on");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_segment_create_ex(&seg, 3 * MIB, cfg, &r, &err), HPSHM_ENOHUGE);
	cr_assert_eq(f->destroys, 2u);
}

Test(registry, probe_of_a_registered_provider_reports_its_reason)
{
	struct hpt_fake *f = fake(0, "fake_absent", HPSHM_CAP_HUGE);
	char reason[HPSHM_TEXT_MAX];
	size_t ps = 0;

	hpt_fakeroot_set_pool(64, 64);
	f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(f->probe_reason, sizeof f->probe_reason, "nothing here");
	cr_assert_eq(hpshm_provider_probe("fake_absent", 3 * MIB, NULL, &ps, reason, sizeof reason),
		     HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(reason, "nothing here");
	cr_assert_eq(ps, 2 * MIB, "the page size comes from the provider's probe");
	/* ABI 3: probe sees the size asked for and the configuration's wish, and picks the pages */
	cr_assert_eq(f->last_size, 3 * MIB);
	cr_assert_eq(f->last_page_size, HPSHM_PAGE_SIZE_DEFAULT);

	f->probe_result = 0;
	cr_assert_eq(hpshm_provider_probe("fake_absent", 3 * MIB, NULL, &ps, reason, sizeof reason), 0);
	cr_assert_eq(f->creates, 0u, "probe must not create");
}

/*
 * Provider ABI 3: one implementation, registered twice under two names with two user
 * pointers, is two providers; each call reaches the implementation with its own registration.
 */
Test(registry, one_implementation_registered_twice_serves_two_settings)
{
	struct hpt_fake *one = hpt_fake_init(0, "fake_one", 0);
	struct hpt_fake *two = hpt_fake_init(1, "fake_two", 0);
	const struct hpshm_provider *impl = &one->provider; /* the one implementation */
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_provider_register(impl, "fake_one", one, &err), 0, "%s", err.message);
	registered[0] = one;
	cr_assert_eq(hpshm_provider_register(impl, "fake_two", two, &err), 0, "%s", err.message);
	registered[1] = two;
	cr_assert_geq(walk_index("fake_one"), 0);
	cr_assert_geq(walk_index("fake_two"), 0);

	set("provider=fake_two");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "fake_two", "the report names the registration, not the implementation");
	cr_assert_eq(two->creates, 1u, "the call did not carry fake_two's user pointer");
	cr_assert_eq(one->creates, 0u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(two->destroys, 1u, "destroy must reach the registration that created the segment");

	set("provider=fake_one");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "fake_one");
	cr_assert_eq(one->creates, 1u);
	cr_assert_eq(two->creates, 1u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(one->destroys, 1u);

	cr_assert_eq(hpshm_provider_unregister("fake_two"), 0);
	registered[1] = NULL;
	cr_assert_eq(walk_index("fake_two"), -1);
	cr_assert_geq(walk_index("fake_one"), 0, "unregistering one name leaves the other");
}

/* provider=auto,-name walks the table without name: it is recorded as left out, never probed. */
Test(registry, auto_minus_a_name_leaves_that_provider_out)
{
	struct hpt_fake *a = fake(0, "fake_a", 0);
	struct hpt_fake *b = fake(1, "fake_b", 0);
	const hpshm_attempt *att;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char buf[256];
	int rc;

	set("provider=auto,-fake_a");
	cr_assert_gt(hpshm_config_get(cfg, "provider", buf, sizeof buf), 0);
	cr_assert_str_eq(buf, "auto,-fake_a");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "fake_b");
	cr_assert_eq(a->probes, 0u, "a provider left out was probed");
	cr_assert_eq(a->creates, 0u);
	att = find_attempt(&r, "fake_a");
	cr_assert_not_null(att, "the report must say fake_a was left out");
	cr_assert_eq(att->result, HPSHM_EUNAVAILABLE);
	cr_assert_str_eq(att->call, "config");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(b->destroys, 1u);

	/* "-name" alone implies auto */
	set("provider=-fake_a,-fake_b");
	cr_assert_gt(hpshm_config_get(cfg, "provider", buf, sizeof buf), 0);
	cr_assert_str_eq(buf, "auto,-fake_a,-fake_b");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_neq(r.provider, "fake_a");
	cr_assert_str_neq(r.provider, "fake_b");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}

Test(registry, exclusions_are_checked_like_names)
{
	hpshm_error err;

	fake(0, "fake_a", 0);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set(cfg, "provider", "fake_a,-plain", &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "provider");
	cr_assert_eq(hpshm_config_set(cfg, "provider", "-fake_a,auto", &err), HPSHM_EVALUE);
	cr_assert_eq(hpshm_config_set(cfg, "provider", "auto,-", &err), HPSHM_EVALUE);
	cr_assert_eq(hpshm_config_set(cfg, "provider", "auto,-no_such_provider", &err), HPSHM_ENOPROVIDER);
	cr_assert(hpt_contains(err.message, "no_such_provider"), "%s", err.message);
	/* a provider of another OS is a valid exclusion: one config file serves every build */
	cr_assert_eq(hpshm_config_set(cfg, "provider", "auto,-windows_large", &err), 0, "%s", err.message);
}

/* Registers and unregisters a provider named "fake_churn" until told to stop. */
struct churn {
	struct hpt_fake *f;
	atomic_int       stop;
	unsigned long    rounds;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;

	while (!atomic_load(&c->stop)) {
		if (hpt_fake_register(c->f, NULL) == 0)
			(void)hpt_fake_unregister(c->f);
		c->rounds++;
	}
	return NULL;
}

/*
 * A walk that runs while another thread registers and unregisters a provider sees every
 * built-in provider exactly once: the registry hands each walk a consistent view, so a
 * table that shifts under it can neither skip nor repeat one.
 */
Test(registry, walk_sees_each_builtin_once_while_another_thread_registers)
{
	struct churn c = { .f = hpt_fake_init(0, "fake_churn", HPSHM_CAP_HUGE) };
	const char *builtin[32];
	unsigned nbuiltin = 0, round, bad = 0;
	const char *name;
	pthread_t t;

	c.f->probe_result = HPSHM_EUNAVAILABLE;
	snprintf(c.f->probe_reason, sizeof c.f->probe_reason, "churning");
	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++)
		builtin[nbuiltin++] = name;
	cr_assert_eq(pthread_create(&t, NULL, churn_main, &c), 0);

	/* huge_pages=try walks every provider; the empty fake pool rules the huge ones out by
	 * probe, so each create ends on plain and its report lists the whole walk. */
	set("huge_pages=try");
	for (round = 0; round < 4000 && bad == 0; round++) {
		hpshm_segment *seg = NULL;
		hpshm_report r;
		hpshm_error err;

		cr_assert_eq(hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err), 0, "%s", err.message);
		for (unsigned b = 0; b < nbuiltin; b++) {
			unsigned seen = 0;

			for (unsigned a = 0; a < r.nattempts; a++)
				seen += strcmp(r.attempts[a].provider, builtin[b]) == 0;
			if (seen != 1) {
				cr_log_info("round %u: %s appears %u times in the walk", round, builtin[b], seen);
				bad++;
			}
		}
		hpshm_segment_destroy(seg);
	}
	atomic_store(&c.stop, 1);
	pthread_join(t, NULL);
	(void)hpt_fake_unregister(c.f);
	cr_log_info("%u walks against %lu register/unregister rounds", round, c.rounds);
	cr_assert_eq(bad, 0u, "a walk skipped or repeated a built-in provider while the table changed");
}

/* ---- requirements(): what `hpshm plan` turns into commands ---- */

struct needs_seen {
	int  n;                        /* needs passed to the callback */
	char provider[4][HPSHM_NAME_MAX];
	hpshm_requirement need[4];
};

static int needs_collect(void *user, const char *provider, const hpshm_requirement *r)
{
	struct needs_seen *s = user;

	if (s->n < 4) {
		snprintf(s->provider[s->n], sizeof s->provider[0], "%s", provider);
		s->need[s->n] = *r;
	}
	s->n++;
	return 0;
}

/* A fake's requirements(): one unmet privilege, with the length it was asked about. */
static int fake_needs(const struct hpshm_instance *self, const struct hpshm_request *rq, hpshm_need_fn fn,
		      void *user)
{
	struct hpt_fake *f = self->user;
	hpshm_requirement r;

	f->last_size = rq->size;
	f->last_page_size = rq->page_size;
	memset(&r, 0, sizeof r);
	snprintf(r.what, sizeof r.what, "privilege");
	snprintf(r.detail, sizeof r.detail, "%s needs a right for %zu bytes", self->name, rq->size);
	snprintf(r.now[0], sizeof r.now[0], "grant it");
	(void)fn(user, &r);
	return 0;
}

/* A requirements() that fills its need carelessly: no memset, garbage where the version and
 * the reserved space are, as an application's provider built without knowing of them may. */
static int fake_needs_careless(const struct hpshm_instance *self, const struct hpshm_request *rq, hpshm_need_fn fn,
			       void *user)
{
	hpshm_requirement r;

	(void)self;
	(void)rq;
	memset(&r, 0xa5, sizeof r);
	snprintf(r.what, sizeof r.what, "pool");
	r.met = 1;
	r.detail[0] = r.now[0][0] = r.now[1][0] = r.now[2][0] = '\0';
	r.persist[0][0] = r.persist[1][0] = r.persist[2][0] = r.note[0] = '\0';
	(void)fn(user, &r);
	return 0;
}

Test(registry, requirements_reach_the_caller_with_their_version_and_zeroed_reserved_space)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_careless", HPSHM_CAP_HUGE);
	struct needs_seen seen;
	hpshm_error err;

	f->provider.requirements = fake_needs_careless;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpt_fake_register(f, &err), 0, "%s", err.message);
	registered[0] = f;

	set("provider=fake_careless");
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(hpshm_requirements(3 * MIB, 0, cfg, needs_collect, &seen, &err), 1, "%s", err.message);
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.need[0].version, HPSHM_REQUIREMENT_VERSION);
	for (size_t i = 0; i < sizeof seen.need[0].reserved / sizeof seen.need[0].reserved[0]; i++)
		cr_assert_eq(seen.need[0].reserved[i], 0, "reserved[%zu] is %#llx", i,
			     (unsigned long long)seen.need[0].reserved[i]);
	cr_assert_str_eq(seen.need[0].what, "pool");
}

Test(registry, requirements_reach_the_caller_with_the_provider_name_and_the_mapped_length)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_needy", HPSHM_CAP_HUGE);
	struct needs_seen seen;
	hpshm_error err;
	int rc;

	f->provider.requirements = fake_needs;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpt_fake_register(f, &err), 0, "%s", err.message);
	registered[0] = f;

	set("provider=fake_needy");
	memset(&seen, 0, sizeof seen);
	rc = hpshm_requirements(3 * MIB, 0, cfg, needs_collect, &seen, &err);
	cr_assert_eq(rc, 1, "one provider asked, got %d: %s", rc, err.message);
	cr_assert_eq(seen.n, 1);
	cr_assert_str_eq(seen.provider[0], "fake_needy");
	cr_assert_str_eq(seen.need[0].what, "privilege");
	cr_assert_eq(seen.need[0].met, 0);
	/* requirements() is asked about what create maps: 3 MiB on probe's 2 MiB pages is 4 MiB */
	cr_assert_eq(f->last_size, 4 * MIB, "asked about %zu bytes", f->last_size);
	cr_assert_eq(f->last_page_size, 2 * MIB);

	/* a page size the provider does not offer: it has nothing to say about it */
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(hpshm_requirements(3 * MIB, 1024 * MIB, cfg, needs_collect, &seen, &err), 0);
	cr_assert_eq(seen.n, 0);

	/* huge_pages=off admits no huge page provider: nothing to set up */
	set("provider=auto,huge_pages=off");
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(hpshm_requirements(3 * MIB, 0, cfg, needs_collect, &seen, &err), 0);
	cr_assert_eq(seen.n, 0);

	cr_assert_eq(hpshm_requirements(0, 0, cfg, needs_collect, &seen, &err), HPSHM_EINVAL);
	/* a provider named in the configuration and unregistered since */
	set("provider=fake_needy,huge_pages=try");
	cr_assert_eq(hpt_fake_unregister(f), 0);
	registered[0] = NULL;
	cr_assert_eq(hpshm_requirements(MIB, 0, cfg, needs_collect, &seen, &err), HPSHM_ENOPROVIDER);
	cr_assert(strstr(err.message, "fake_needy"), "%s", err.message);
}

/*
 * The pool need of a hugetlb provider, from the (fake) kernel's counts: a 64 MiB segment on
 * 2 MiB pages needs 32, the pool has 10 free of 10, so it is short by 22 and the command
 * raises vm.nr_hugepages to 32; with 40 free it is met and says nothing more.
 */
Test(registry, hugetlb_pool_need_names_the_shortfall_and_the_command)
{
	struct needs_seen seen;
	hpshm_error err;
	int rc;

	hpt_fakeroot_set_pool(10, 10);
	set("provider=mmap_hugetlb");
	memset(&seen, 0, sizeof seen);
	rc = hpshm_requirements(64 * MIB, 0, cfg, needs_collect, &seen, &err);
	cr_assert_eq(rc, 1, "%d: %s", rc, err.message);
	cr_assert_geq(seen.n, 1);
	cr_assert_str_eq(seen.provider[0], "mmap_hugetlb");
	cr_assert_str_eq(seen.need[0].what, "pool");
	cr_assert_eq(seen.need[0].met, 0);
	cr_assert(strstr(seen.need[0].detail, "32 needed: short by 22"), "detail: %s", seen.need[0].detail);
	cr_assert_str_eq(seen.need[0].now[0], "sysctl -w vm.nr_hugepages=32");
	cr_assert(strstr(seen.need[0].persist[0], "vm.nr_hugepages = 32"), "persist: %s", seen.need[0].persist[0]);

	hpt_fakeroot_set_pool(40, 40);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(hpshm_requirements(64 * MIB, 0, cfg, needs_collect, &seen, &err), 1);
	cr_assert_str_eq(seen.need[0].what, "pool");
	cr_assert_eq(seen.need[0].met, 1);
	cr_assert_str_eq(seen.need[0].detail, "");
	cr_assert_str_eq(seen.need[0].now[0], "");
}

/* ---- provider ABI versions (SQLite's iVersion) ---- */

#include <sys/mman.h>
#include <unistd.h>

/*
 * A provider built against the ABI 4 header, which ends with lookup: the struct is copied to
 * the very end of a page whose next page is inaccessible, so the core reading any member ABI 4
 * does not have (one appended since) faults instead of reading past the provider's struct.
 */
Test(registry, a_provider_built_for_an_older_abi_is_accepted_and_only_its_members_are_read)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_abi4", 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct hpshm_provider *old;
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	char *area;
	int rc;

	cr_assert_geq(page, (size_t)HPSHM_PROVIDER_SIZE_4);
	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(area, MAP_FAILED);
	cr_assert_eq(mprotect(area + page, page, PROT_NONE), 0);
	old = (struct hpshm_provider *)(void *)(area + page - HPSHM_PROVIDER_SIZE_4);
	memcpy(old, &f->provider, HPSHM_PROVIDER_SIZE_4);
	old->abi_version = 4;
	cr_assert(HPSHM_PROVIDER_HAS(old, lookup));

	memset(&err, 0, sizeof err);
	rc = hpshm_provider_register(old, NULL, f, &err);
	cr_assert_eq(rc, 0, "an ABI 4 provider was refused: %s: %s", hpshm_errname(rc), err.message);
	registered[0] = f;
	cr_assert_geq(walk_index("fake_abi4"), 0);
	set("provider=fake_abi4");
	rc = hpshm_segment_create_ex(&seg, 10000, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "fake_abi4");
	cr_assert_eq(f->creates, 1u);
	memset(hpshm_segment_address(seg), 0x5a, 10000);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(f->destroys, 1u);
	cr_assert_eq(hpshm_provider_probe("fake_abi4", 4096, NULL, NULL, NULL, 0), 0);
	cr_assert_eq(hpshm_provider_unregister("fake_abi4"), 0);
	registered[0] = NULL;
	cr_assert_eq(munmap(area, 2 * page), 0);
}

Test(registry, a_provider_built_for_a_newer_abi_is_refused)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_abi_next", 0);
	struct hpshm_provider p = f->provider;
	hpshm_error err;

	p.abi_version = HPSHM_PROVIDER_ABI + 1;
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), HPSHM_EINVAL);
	cr_assert_eq(err.code, HPSHM_EINVAL);
	cr_assert_eq(walk_index("fake_abi_next"), -1, "a refused provider is listed");
	/* the oldest served and the current one are accepted */
	p.abi_version = HPSHM_PROVIDER_ABI_MIN;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_provider_unregister("fake_abi_next"), 0);
	p.abi_version = HPSHM_PROVIDER_ABI_MIN - 1;
	cr_assert_eq(hpshm_provider_register(&p, NULL, f, &err), HPSHM_EINVAL);
}

/* ---- a shim that wraps a built-in provider (hpshm_provider_find) ---- */

/* The shim's state: the provider it wraps and the calls it passed on. */
static struct shim {
	struct hpshm_instance inner;   /* plain, as hpshm_provider_find() gave it */
	struct hpshm_provider ops;     /* the shim itself */
	int                   narrow;  /* create() narrows the segment to no capabilities */
	unsigned probes, creates, destroys, identifies, attaches, detaches, scans, removes, lookups; /* calls */
} shim;

static int shim_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	struct shim *s = self->user;

	s->probes++;
	return s->inner.ops->probe(&s->inner, rq, out);
}

static int shim_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		       hpshm_error *err)
{
	struct shim *s = self->user;
	int rc;

	s->creates++;
	rc = s->inner.ops->create(&s->inner, m, rq, err);
	if (rc == 0 && s->narrow) {
		m->caps = 0;
		m->flags |= HPSHM_MAP_CAPS;
	}
	return rc;
}

static int shim_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	struct shim *s = self->user;

	s->destroys++;
	return s->inner.ops->destroy(&s->inner, m);
}

static int shim_identify(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	struct shim *s = self->user;

	s->identifies++;
	return s->inner.ops->identify(&s->inner, m, id, len);
}

static int shim_attach(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		       const char *id, hpshm_error *err)
{
	struct shim *s = self->user;

	s->attaches++;
	return s->inner.ops->attach(&s->inner, m, rq, id, err);
}

static int shim_detach(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	struct shim *s = self->user;

	s->detaches++;
	return s->inner.ops->detach(&s->inner, m);
}

static int shim_scan(const struct hpshm_instance *self, hpshm_found_fn fn, void *user)
{
	struct shim *s = self->user;

	s->scans++;
	return s->inner.ops->scan(&s->inner, fn, user);
}

static int shim_remove(const struct hpshm_instance *self, const struct hpshm_found *f, hpshm_error *err)
{
	struct shim *s = self->user;

	s->removes++;
	return s->inner.ops->remove(&s->inner, f, err);
}

static int shim_lookup(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_found *f,
		       hpshm_error *err)
{
	struct shim *s = self->user;

	s->lookups++;
	return s->inner.ops->lookup(&s->inner, rq, f, err);
}

/* Register the shim as name around the built-in plain. */
static void shim_register(const char *name, int narrow)
{
	hpshm_error err;
	int rc;

	memset(&shim, 0, sizeof shim);
	cr_assert_eq(hpshm_provider_find(NULL, &shim.inner), HPSHM_EINVAL);
	cr_assert_eq(hpshm_provider_find("no_such_provider", &shim.inner), HPSHM_ENOPROVIDER);
	cr_assert_eq(hpshm_provider_find("plain", &shim.inner), 0);
	cr_assert_str_eq(shim.inner.name, "plain");
	cr_assert_not_null(shim.inner.ops);
	cr_assert(HPSHM_PROVIDER_HAS(shim.inner.ops, lookup));
	shim.narrow = narrow;
	shim.ops.abi_version = HPSHM_PROVIDER_ABI;
	shim.ops.name = name;
	shim.ops.summary = "plain, counted";
	shim.ops.caps = shim.inner.ops->caps;
	shim.ops.probe = shim_probe;
	shim.ops.create = shim_create;
	shim.ops.destroy = shim_destroy;
	shim.ops.identify = shim.inner.ops->identify ? shim_identify : NULL;
	shim.ops.attach = shim.inner.ops->attach ? shim_attach : NULL;
	shim.ops.detach = shim.inner.ops->detach ? shim_detach : NULL;
	shim.ops.scan = shim.inner.ops->scan ? shim_scan : NULL;
	shim.ops.remove = shim.inner.ops->remove ? shim_remove : NULL;
	shim.ops.lookup = shim.inner.ops->lookup ? shim_lookup : NULL;
	memset(&err, 0, sizeof err);
	rc = hpshm_provider_register(&shim.ops, NULL, &shim, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
}

Test(registry, a_shim_found_with_provider_find_wraps_plain_through_create_open_and_destroy)
{
	char name[64], kv[128];
	hpshm_segment *seg = NULL, *opened = NULL;
	hpshm_report r;
	hpshm_error err;
	unsigned char *p;
	int rc;

	shim_register("shim_plain", 0);
	snprintf(name, sizeof name, "hpt-shim-%ld", (long)getpid());
	snprintf(kv, sizeof kv, "provider=shim_plain,huge_pages=off,name=%s", name);
	set(kv);
	rc = hpshm_segment_create_ex(&seg, 100000, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(r.provider, "shim_plain");
	cr_assert_geq(shim.probes, 1u);
	cr_assert_eq(shim.creates, 1u);
	p = hpshm_segment_address(seg);
	memset(p, 0xc3, 100000);

	rc = hpshm_segment_open(&opened, name, cfg, &err);
	cr_assert_eq(rc, 0, "open %s: %s: %s", name, hpshm_errname(rc), err.message);
	cr_assert_eq(shim.lookups, 1u);
	cr_assert_eq(shim.attaches, 1u);
	cr_assert_neq(hpshm_segment_address(opened), (void *)p);
	cr_assert_eq(((unsigned char *)hpshm_segment_address(opened))[99999], 0xc3, "the open maps another object");
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	cr_assert_eq(shim.detaches, 1u, "an opener's destroy detaches through the shim");
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(shim.destroys, 1u);
	/* the creator's destroy removed the object through plain: the name opens no more */
	cr_assert_eq(hpshm_segment_open(&opened, name, cfg, &err), HPSHM_ENOENT);
	cr_assert_eq(hpshm_provider_unregister("shim_plain"), 0);
}

Test(registry, a_segment_narrowed_to_no_capabilities_has_none)
{
	char token[512];
	hpshm_segment *seg = NULL;
	hpshm_report r;
	hpshm_error err;
	int rc;

	shim_register("shim_none", 1);
	/* reattach=exec needs HPSHM_CAP_REATTACH of the segment, which was narrowed away */
	set("provider=shim_none,huge_pages=off,reattach=exec");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_lt(rc, 0, "a segment without HPSHM_CAP_REATTACH was given for reattach=exec");
	cr_assert_eq(shim.creates, 1u);
	cr_assert_eq(shim.destroys, 1u, "the refused segment was not destroyed");
	cr_assert_geq(r.nattempts, 1u);
	cr_assert_str_eq(r.attempts[0].provider, "shim_none");
	cr_assert_eq(r.attempts[0].result, HPSHM_EUNAVAILABLE);

	/* without reattach=exec it is made, and gives no token a child could use */
	set("reattach=off");
	rc = hpshm_segment_create_ex(&seg, 4096, cfg, &r, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_lt(hpshm_segment_token(seg, token, sizeof token, &err), 0, "a token for a segment that cannot re-attach");
	cr_assert_eq(shim.identifies, 0u);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(shim.destroys, 2u);
	cr_assert_eq(hpshm_provider_unregister("shim_none"), 0);
}

/* ---- what the core says about providers comes from the registry ---- */

static int fake_identify_none(const struct hpshm_instance *self, const struct hpshm_mapping *m, char *id, size_t len)
{
	(void)self;
	(void)m;
	(void)id;
	(void)len;
	return HPSHM_ENOTSUP;
}

static int fake_attach_none(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
			    const char *id, hpshm_error *err)
{
	(void)self;
	(void)m;
	(void)rq;
	(void)id;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "a test double attaches nothing");
}

static int fake_detach_none(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	(void)m;
	return 0;
}

/*
 * A segment that cannot be re-attached gets a hint naming the providers that can: those
 * registered here with HPSHM_CAP_REATTACH, an application's own among them, and none
 * without it.
 */
Test(registry, token_hint_names_the_registered_providers_that_can_reattach)
{
	struct hpt_fake *f = hpt_fake_init(0, "fake_exec", HPSHM_CAP_REATTACH);
	hpshm_segment *seg = NULL;
	char token[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int rc;

	f->provider.identify = fake_identify_none;
	f->provider.attach = fake_attach_none;
	f->provider.detach = fake_detach_none;
	memset(&err, 0, sizeof err);
	rc = hpt_fake_register(f, &err);
	cr_assert_eq(rc, 0, "register fake_exec: %s: %s", hpshm_errname(rc), err.message);
	registered[0] = f;
	fake(1, "fake_bare", 0);
	set("provider=plain");
	rc = hpshm_segment_create(&seg, 4096, cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	rc = hpshm_segment_token(seg, token, sizeof token, &err);
	cr_assert_eq(rc, HPSHM_ENOTSUP, "token of a segment made without reattach=exec: %s", hpshm_errname(rc));
	cr_assert_not_null(strstr(err.hint, "fake_exec"), "hint: %s", err.hint);
	cr_assert_null(strstr(err.hint, "fake_bare"), "hint: %s", err.hint);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
}
