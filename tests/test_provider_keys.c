/* SPDX-License-Identifier: MIT */
/*
 * tests/test_provider_keys.c -- providers' own configuration keys and provider modules.
 *
 * A provider declares its keys at registration (hpshm_provider.keys): they are listed
 * (hpshm_provider_key_at, `hpshm providers`), set from every source with the core's
 * precedence, read back by the provider through rq->option, and a value the key's type does
 * not admit is refused naming the key and the provider, leaving the configuration as it was.
 * Malformed declarations are refused at registration.  hpshm_provider_load() and the tool's
 * HPSHM_PROVIDER_MODULES load a module and say which file failed and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "toolrun.h"

/* What the provider's probe() read through rq->option, for the tests to judge. */
static char seen_path[HPSHM_PATH_MAX];
static int seen_rc;

static int kp_probe(const struct hpshm_instance *self, const struct hpshm_request *rq, struct hpshm_probe *out)
{
	(void)self;
	seen_rc = rq->option(rq, "kp.path", seen_path, sizeof seen_path);
	out->nsizes = 1;
	out->sizes[0] = hpshm_base_page_size();
	out->page_size = out->sizes[0];
	out->available = HPSHM_PAGES_UNKNOWN;
	return 0;
}

static int kp_create(const struct hpshm_instance *self, struct hpshm_mapping *m, const struct hpshm_request *rq,
		     hpshm_error *err)
{
	(void)self;
	(void)m;
	(void)rq;
	return hpshm_error_set(err, HPSHM_ENOTSUP, 0, NULL, NULL, "kp makes no segments");
}

static int kp_destroy(const struct hpshm_instance *self, struct hpshm_mapping *m)
{
	(void)self;
	(void)m;
	return 0;
}

static const struct hpshm_provider_key kp_keys[] = {
	{ "kp.path", HPSHM_KEY_PATH, "/kp/default", "where kp keeps its file" },
	{ "kp.size", HPSHM_KEY_SIZE, "2MiB", "how much kp takes" },
	{ "kp.count", HPSHM_KEY_UINT, "3", "how many kp makes" },
	{ "kp.flag", HPSHM_KEY_BOOL, "off", "whether kp is loud" },
	{ "kp.label", HPSHM_KEY_TEXT, "", "what kp calls itself" },
	{ NULL, 0, NULL, NULL },
};

#define KP(...) { .abi_version = HPSHM_PROVIDER_ABI, .name = "kp", .summary = "keys test", .probe = kp_probe, \
		  .create = kp_create, .destroy = kp_destroy, __VA_ARGS__ }

static const struct hpshm_provider kp = KP(.keys = kp_keys);

static hpshm_config *cfg;

static void keys_init(void)
{
	hpshm_error err;

	hpt_fixture_init();
	cr_assert_eq(hpshm_provider_register(&kp, NULL, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
}

static void keys_fini(void)
{
	hpshm_config_free(cfg);
	hpshm_provider_unregister("kp");
	hpshm_provider_unregister("kp2");
	hpshm_provider_unregister("modprov");
	hpt_fixture_fini();
}

TestSuite(provider_keys, .init = keys_init, .fini = keys_fini);

static const char *get(const char *key)
{
	static char buf[HPSHM_PATH_MAX];

	cr_assert_geq(hpshm_config_get(cfg, key, buf, sizeof buf), 0, "%s is not readable", key);
	return buf;
}

Test(provider_keys, declared_keys_are_listed_in_order)
{
	const struct hpshm_provider_key *k;
	unsigned n;

	for (n = 0; (k = hpshm_provider_key_at("kp", n)) != NULL; n++)
		cr_assert_str_eq(k->name, kp_keys[n].name);
	cr_assert_eq(n, 5u);
	cr_assert_null(hpshm_provider_key_at("plain", 0), "a built-in without keys lists none");
	cr_assert_null(hpshm_provider_key_at("no_such_provider", 0));
	cr_assert_null(hpshm_provider_key_at(NULL, 0));
}

Test(provider_keys, unset_keys_read_their_defaults_and_set_ones_their_values)
{
	hpshm_error err;

	cr_assert_str_eq(get("kp.path"), "/kp/default");
	cr_assert_str_eq(get("kp.count"), "3");
	cr_assert_eq(hpshm_config_parse(cfg, "kp.path=/srv/kp,kp.size=64KiB,kp.flag=yes,kp.label=hello there", &err),
		     0, "%s", err.message);
	cr_assert_str_eq(get("kp.path"), "/srv/kp");
	cr_assert_str_eq(get("kp.size"), "64KiB");
	cr_assert_str_eq(get("kp.flag"), "on", "a boolean reads back as on or off");
	cr_assert_str_eq(get("kp.label"), "hello there");
	cr_assert_eq(hpshm_config_set(cfg, "kp.flag", "0", &err), 0);
	cr_assert_str_eq(get("kp.flag"), "off");
}

Test(provider_keys, the_provider_reads_its_key_through_the_request)
{
	hpshm_error err;
	size_t ps = 0;

	cr_assert_eq(hpshm_config_set(cfg, "kp.path", "/srv/kp/file", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_provider_probe("kp", 4096, cfg, &ps, NULL, 0), 0);
	cr_assert_eq(seen_rc, (int)strlen("/srv/kp/file"));
	cr_assert_str_eq(seen_path, "/srv/kp/file");
}

Test(provider_keys, bad_values_are_refused_naming_key_and_provider)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "kp.path", "relative/file" }, { "kp.size", "lots" },  { "kp.count", "-1" },
		{ "kp.count", "4294967296" },   { "kp.flag", "maybe" }, { "kp.label", "two\nlines" },
	};
	hpshm_error err;

	cr_assert_eq(hpshm_config_set(cfg, "kp.count", "9", &err), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		cr_assert_eq(hpshm_config_set(cfg, bad[i].key, bad[i].value, &err), HPSHM_EVALUE, "%s=%s accepted",
			     bad[i].key, bad[i].value);
		cr_assert_eq(err.code, HPSHM_EVALUE);
		cr_assert_str_eq(err.key, bad[i].key);
		cr_assert_str_eq(err.provider, "kp");
		cr_assert_neq(err.hint[0], '\0', "no fix for %s=%s", bad[i].key, bad[i].value);
	}
	/* Nothing of a refused value or a refused line stays. */
	cr_assert_str_eq(get("kp.count"), "9");
	cr_assert_eq(hpshm_config_parse(cfg, "kp.count=5,kp.flag=maybe", &err), HPSHM_EVALUE);
	cr_assert_str_eq(get("kp.count"), "9");
}

Test(provider_keys, unknown_keys_stay_errors)
{
	hpshm_error err;

	cr_assert_eq(hpshm_config_set(cfg, "kp.nope", "1", &err), HPSHM_ENOKEY, "an undeclared key of kp");
	cr_assert_str_eq(err.key, "kp.nope");
	cr_assert_eq(hpshm_config_set(cfg, "nobody.path", "/x", &err), HPSHM_ENOKEY, "a key of no provider");
	cr_assert_str_eq(err.key, "nobody.path");
	cr_assert_eq(hpshm_config_set(cfg, "huge_pagez", "on", &err), HPSHM_ENOKEY, "the core's unknown key");
	cr_assert_eq(hpshm_config_get(cfg, "kp.nope", NULL, 0), HPSHM_ENOKEY);
	/* Unregistered, its keys go with it. */
	cr_assert_eq(hpshm_provider_unregister("kp"), 0);
	cr_assert_eq(hpshm_config_set(cfg, "kp.path", "/x", &err), HPSHM_ENOKEY);
	cr_assert_eq(hpshm_config_get(cfg, "kp.path", NULL, 0), HPSHM_ENOKEY);
}

Test(provider_keys, sources_rank_as_for_the_core_keys)
{
	char path[] = "/tmp/hpt-pkeys-XXXXXX";
	hpshm_error err;
	FILE *f;
	int fd;

	cr_assert_eq(setenv("HPSHM_KP_COUNT", "11", 1), 0);
	cr_assert_eq(setenv("HPSHM_KP_SIZE", "8KiB", 1), 0);
	cr_assert_eq(hpshm_config_set(cfg, "kp.size", "16KiB", &err), 0);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("kp.count"), "11", "the environment sets a provider's key");
	cr_assert_str_eq(get("kp.size"), "16KiB", "the API outranks the environment");

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "kp.count = 12\nkp.label = from the file\n");
	fclose(f);
	cr_assert_eq(hpshm_config_load_file(cfg, path, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("kp.count"), "11", "the environment outranks a file");
	cr_assert_str_eq(get("kp.label"), "from the file");

	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "kp.flag = perhaps\n");
	fclose(f);
	cr_assert_eq(hpshm_config_load_file(cfg, path, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "kp.flag");
	unlink(path);

	cr_assert_eq(setenv("HPSHM_KP_FLAG", "sometimes", 1), 0);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), HPSHM_EVALUE, "a bad value in the environment");
	cr_assert_str_eq(err.key, "kp.flag");
	unsetenv("HPSHM_KP_FLAG");
	unsetenv("HPSHM_KP_COUNT");
	unsetenv("HPSHM_KP_SIZE");
}

Test(provider_keys, malformed_declarations_are_refused_at_registration)
{
	static const struct hpshm_provider_key unprefixed[] = { { "path", HPSHM_KEY_PATH, "", "h" }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider_key other[] = { { "kq.path", HPSHM_KEY_PATH, "", "h" }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider_key upper[] = { { "kp.Path", HPSHM_KEY_PATH, "", "h" }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider_key badtype[] = { { "kp.x", 99, "", "h" }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider_key baddef[] = { { "kp.x", HPSHM_KEY_UINT, "many", "h" }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider_key nohelp[] = { { "kp.x", HPSHM_KEY_UINT, "1", NULL }, { NULL, 0, NULL, NULL } };
	static const struct hpshm_provider p[] = {
		KP(.keys = unprefixed), KP(.keys = other), KP(.keys = upper),
		KP(.keys = badtype),    KP(.keys = baddef), KP(.keys = nohelp),
	};
	static const struct hpshm_provider clash = KP(.keys = kp_keys);
	hpshm_error err;

	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		cr_assert_eq(hpshm_provider_register(&p[i], "kp2", NULL, &err), HPSHM_EINVAL, "declaration %zu accepted", i);
		cr_assert_eq(hpshm_provider_probe("kp2", 4096, NULL, NULL, NULL, 0), HPSHM_ENOPROVIDER);
	}
	/* Another implementation may not take kp's keys; kp itself may be registered twice. */
	cr_assert_eq(hpshm_provider_register(&clash, "kp2", NULL, &err), HPSHM_EEXIST);
	cr_assert_eq(hpshm_provider_register(&kp, "kp2", NULL, &err), 0, "%s", err.message);
}

/* ---- modules ---- */

/* A static program (HPSHM_STATIC_PROGRAMS: i686 under qemu) exports nothing a module could
 * bind its calls of hpshm to, so no module loads into it, nor into the static tool. */
#ifdef HPT_STATIC_PROGRAMS
#define SKIP_IF_STATIC() HPT_SKIP("static programs (HPSHM_STATIC_PROGRAMS) cannot load provider modules")
#else
#define SKIP_IF_STATIC() ((void)0)
#endif

Test(provider_keys, a_module_registers_its_provider_and_keys)
{
	hpshm_error err;

	SKIP_IF_STATIC();
	cr_assert_eq(hpshm_provider_load(HPT_MODULE_GOOD, &err), 0, "%s (%s)", err.message, err.hint);
	cr_assert_eq(hpshm_provider_probe("modprov", 4096, NULL, NULL, NULL, 0), 0);
	cr_assert_not_null(hpshm_provider_key_at("modprov", 0));
	cr_assert_eq(hpshm_config_set(cfg, "modprov.size", "a lot", &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.provider, "modprov");
}

Test(provider_keys, module_failures_name_the_file)
{
	hpshm_error err;

	SKIP_IF_STATIC();
	cr_assert_eq(hpshm_provider_load("/nonexistent/hpt-module.so", &err), HPSHM_EINVAL);
	cr_assert_str_eq(err.call, "dlopen");
	cr_assert(strstr(err.message, "/nonexistent/hpt-module.so"), "%s", err.message);
	cr_assert_neq(err.hint[0], '\0');

	cr_assert_eq(hpshm_provider_load(HPT_MODULE_NOENTRY, &err), HPSHM_EINVAL);
	cr_assert_str_eq(err.call, "dlsym");
	cr_assert(strstr(err.message, HPT_MODULE_NOENTRY), "%s", err.message);

	cr_assert_eq(hpshm_provider_load(HPT_MODULE_FAILING, &err), HPSHM_EUNAVAILABLE, "the entry point's code");
	cr_assert(strstr(err.message, HPT_MODULE_FAILING), "%s", err.message);
	cr_assert_str_eq(err.hint, "plug the device in", "the module's own fix");
	cr_assert_eq(hpshm_provider_probe("modprov", 4096, NULL, NULL, NULL, 0), HPSHM_ENOPROVIDER);

	cr_assert_eq(hpshm_provider_load("", &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_provider_load(NULL, &err), HPSHM_EINVAL);
}

#ifdef HPSHM_TOOL_PATH
Test(provider_keys, the_tool_lists_a_modules_provider_and_keys)
{
	static char e[] = "HPSHM_PROVIDER_MODULES=" HPT_MODULE_GOOD, providers[] = "providers", js[] = "--json",
		    pr[] = "probe", co[] = "--config", kv[] = "modprov.size=4KiB";
	char *const env[] = { e, NULL };
	char *const argv[] = { providers, NULL };
	char *const json[] = { providers, js, NULL };
	char *const probe[] = { pr, co, kv, NULL };
	struct hpt_run *r;

	SKIP_IF_STATIC();
	r = hpt_tool_argv(HPSHM_TOOL_PATH, argv, env);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "modprov"), "%s", r->out);
	cr_assert(strstr(r->out, "modprov.size"), "%s", r->out);
	r = hpt_tool_argv(HPSHM_TOOL_PATH, json, env);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(hpt_json_ok(r->out), "%s", r->out);
	cr_assert(strstr(r->out, "\"modprov.size\""), "%s", r->out);
	r = hpt_tool_argv(HPSHM_TOOL_PATH, probe, env);
	cr_assert_eq(r->status, 0, "stderr: %s", r->err);
	cr_assert(strstr(r->out, "modprov.size"), "%s", r->out);
	cr_assert(strstr(r->out, "4KiB"), "probe shows the value set: %s", r->out);
}

Test(provider_keys, the_tool_refuses_a_bad_module_naming_it)
{
	static char e1[] = "HPSHM_PROVIDER_MODULES=/nonexistent/hpt-module.so",
		    e2[] = "HPSHM_PROVIDER_MODULES=" HPT_MODULE_NOENTRY, e3[] = "HPSHM_PROVIDER_MODULES=" HPT_MODULE_GOOD,
		    providers[] = "providers", pr[] = "probe", co[] = "--config", kv[] = "modprov.size=huge";
	char *const env[] = { e1, NULL };
	char *const noentry[] = { e2, NULL };
	char *const argv[] = { providers, NULL };
	char *const bad[] = { pr, co, kv, NULL };
	char *const good[] = { e3, NULL };
	struct hpt_run *r;

	SKIP_IF_STATIC();
	r = hpt_tool_argv(HPSHM_TOOL_PATH, argv, env);
	cr_assert_eq(r->status, 1, "stdout: %s", r->out);
	cr_assert(strstr(r->err, "/nonexistent/hpt-module.so"), "%s", r->err);
	cr_assert(strstr(r->err, "hint:"), "%s", r->err);
	r = hpt_tool_argv(HPSHM_TOOL_PATH, argv, noentry);
	cr_assert_eq(r->status, 1, "stdout: %s", r->out);
	cr_assert(strstr(r->err, HPT_MODULE_NOENTRY), "%s", r->err);
	r = hpt_tool_argv(HPSHM_TOOL_PATH, bad, good);
	cr_assert_eq(r->status, 2, "a bad value of a module's key is a usage error: %s", r->err);
	cr_assert(strstr(r->err, "modprov.size"), "%s", r->err);
}
#endif
