/* SPDX-License-Identifier: MIT */
/*
 * tests/provider_module.c -- provider modules for tests/test_provider_keys.c.
 *
 * Built three times as a shared object (tests/CMakeLists.txt): with the entry point
 * registering "modprov" and its key modprov.size (MODULE_GOOD), with an entry point that
 * fails (MODULE_FAILING), and with no entry point at all.  None links hpshm: the process that
 * loads it (a test, the tool) provides hpshm's functions, as for any provider module.
 */
#include "hpshm.h"
#include "hpshm/provider.h"

static int mod_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	(void)rq;
	out->nsizes = 1;
	out->sizes[0] = 4096;
	out->page_size = 4096;
	out->available = HPSHM_PAGES_UNKNOWN;
	return 0;
}

static int mod_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		      hpshm_error *err)
{
	(void)self;
	(void)m;
	(void)rq;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "modprov makes no segments");
}

static int mod_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	(void)m;
	return 0;
}

static const struct hpshm_provider_key mod_keys[] = {
	{ "modprov.size", HPSHM_KEY_SIZE, "1MiB", "how much modprov would take" },
	{ NULL, 0, NULL, NULL },
};

static const struct hpshm_provider mod_provider = {
	.abi_version = HPSHM_PROVIDER_ABI,
	.name = "modprov",
	.summary = "a provider module for the tests",
	.probe = mod_probe,
	.create = mod_create,
	.destroy = mod_destroy,
	.keys = mod_keys,
};

#if defined(MODULE_GOOD) || defined(MODULE_FAILING)
#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int hpshm_provider_module(hpshm_error *err);

int hpshm_provider_module(hpshm_error *err)
{
#ifdef MODULE_FAILING
	(void)mod_provider;
	return hpshm_error_set(err, HPSHM_EUNAVAILABLE, 0, NULL, "plug the device in", "the device is missing");
#else
	return hpshm_provider_register(&mod_provider, NULL, NULL, err);
#endif
}
#else
/* No entry point: what a module built without hpshm_provider_module() looks like. */
const struct hpshm_provider *mod_provider_noentry(void);
const struct hpshm_provider *mod_provider_noentry(void)
{
	return &mod_provider;
}
#endif
