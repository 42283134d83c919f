/* SPDX-License-Identifier: MIT */
/*
 * tests/test_config.c -- the configuration keys (DESIGN.md section 4), sizes and error names.
 * Unit tests: no OS support needed.  Codes are asserted first, texts second.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "base/base.h"
#include "fixture.h"
#include "ports/linux/linux.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "ports/posix/sys.h"

static hpshm_config *cfg;
static char tmpfile_path[64];

static void config_init(void)
{
	hpt_fixture_init();
	hpt_clear_config_env();
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_not_null(cfg);
	tmpfile_path[0] = '\0';
}

static void config_fini(void)
{
	hpshm_config_free(cfg);
	cfg = NULL;
	if (tmpfile_path[0])
		unlink(tmpfile_path);
	hpt_clear_config_env();
	hpt_fixture_fini();
}

TestSuite(config, .init = config_init, .fini = config_fini);

/* The current value of key, as text. */
static const char *get(const char *key)
{
	static char buf[512];
	int n = hpshm_config_get(cfg, key, buf, sizeof buf);

	cr_assert_geq(n, 0, "hpshm_config_get(%s) = %d", key, n);
	return buf;
}

static void expect_good(const char *key, const char *value)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_set(cfg, key, value, &err);
	cr_assert_eq(rc, 0, "%s=%s rejected: %s (%s)", key, value, hpshm_errname(rc), err.message);
}

/* A bad value: EVALUE, the record names the key, and its message or hint lists each word. */
static void expect_bad(const char *key, const char *value, const char *const *accepted)
{
	char before[512];
	hpshm_error err;
	int rc;

	snprintf(before, sizeof before, "%s", get(key));
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set(cfg, key, value, &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "%s=%s: got %s, want HPSHM_EVALUE", key, value, hpshm_errname(rc));
	cr_assert_eq(err.code, HPSHM_EVALUE);
	cr_assert_str_eq(err.key, key, "%s=%s: err.key is \"%s\"", key, value, err.key);
	cr_assert_str_eq(get(key), before, "%s=%s changed the value to %s", key, value, get(key));
	for (; accepted && *accepted; accepted++)
		cr_expect(strstr(err.message, *accepted) || strstr(err.hint, *accepted),
			  "%s=%s: neither message \"%s\" nor hint \"%s\" lists \"%s\"", key, value, err.message,
			  err.hint, *accepted);
}

/* ---- every key, good values and bad ones ---- */

Test(config, defaults_are_the_documented_ones)
{
	cr_assert_str_eq(get("provider"), "auto");
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_assert_str_eq(get("huge_page_size"), "default");
	cr_assert_str_eq(get("reattach"), "off");
	cr_assert_str_eq(get("populate"), "auto");
	cr_assert_str_eq(get("mode"), "0600");
	cr_assert_str_eq(get("base_address"), "auto");
	cr_assert_str_eq(get("namespace"), "local");
}

Test(config, key_table_lists_every_documented_key)
{
	static const char *const documented[] = {"provider", "huge_pages", "huge_page_size", "reattach",
						 "populate", "hugetlbfs_path", "name", "mode",
						 "base_address", "log_level", "namespace"};
	size_t i;

	for (i = 0; i < sizeof documented / sizeof documented[0]; i++) {
		const char *name, *desc = NULL, *values = NULL;
		unsigned k;
		int found = 0;

		for (k = 0; (name = hpshm_config_key_name(k, &desc, &values)) != NULL; k++) {
			if (strcmp(name, documented[i]) != 0)
				continue;
			found = 1;
			cr_assert(desc && *desc, "%s has no description", name);
			cr_assert(values && *values, "%s has no accepted values", name);
		}
		cr_assert(found, "key %s missing from the key table", documented[i]);
	}
	cr_assert_null(hpshm_config_key_name(1000, NULL, NULL));
}

/* Blanks around keys, values and list items are dropped, as INI-style readers drop them. */
Test(config, blanks_around_keys_values_and_list_items_are_dropped)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, "huge_pages= on ,  provider = memfd_hugetlb , plain\t, mode =0640 ", &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(get("huge_pages"), "on");
	cr_assert_str_eq(get("provider"), "memfd_hugetlb,plain");
	cr_assert_str_eq(get("mode"), "0640");
	/* A value that is only blanks is empty, and refused as the empty value is. */
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_parse(cfg, "huge_pages=  ", &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "huge_pages");
	cr_assert_str_eq(get("huge_pages"), "on");
}

Test(config, unknown_key_is_enokey_naming_it)
{
	hpshm_error err;
	char buf[16];

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set(cfg, "huge_pagez", "on", &err), HPSHM_ENOKEY);
	cr_assert_eq(err.code, HPSHM_ENOKEY);
	cr_assert_str_eq(err.key, "huge_pagez");
	cr_expect(strstr(err.hint, "huge_pages") || strstr(err.message, "huge_pages"),
		  "the known keys are not listed: %s / %s", err.message, err.hint);
	cr_assert_eq(hpshm_config_get(cfg, "huge_pagez", buf, sizeof buf), HPSHM_ENOKEY);
}

Test(config, provider_accepts_auto_names_and_lists)
{
	expect_good("provider", "plain");
	cr_assert_str_eq(get("provider"), "plain");
	expect_good("provider", "mmap_hugetlb");
	expect_good("provider", "memfd_hugetlb,hugetlbfs,plain");
	cr_assert_str_eq(get("provider"), "memfd_hugetlb,hugetlbfs,plain");
	expect_good("provider", "auto");
	cr_assert_str_eq(get("provider"), "auto");
}

Test(config, provider_unknown_name_is_enoprovider_naming_the_key)
{
	hpshm_error err;
	int rc;

	expect_good("provider", "plain");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set(cfg, "provider", "nosuch_provider", &err);
	cr_assert_eq(rc, HPSHM_ENOPROVIDER, "got %s", hpshm_errname(rc));
	cr_assert_str_eq(err.key, "provider");
	cr_assert_str_eq(get("provider"), "plain");
	cr_expect(strstr(err.message, "nosuch_provider"), "message does not name the value: %s", err.message);
	cr_expect(strstr(err.hint, "mmap_hugetlb") || strstr(err.message, "mmap_hugetlb"),
		  "accepted providers not listed: %s / %s", err.message, err.hint);

	memset(&err, 0, sizeof err);
	rc = hpshm_config_set(cfg, "provider", "mmap_hugetlb,nosuch_provider", &err);
	cr_assert_eq(rc, HPSHM_ENOPROVIDER, "a list with one unknown name: got %s", hpshm_errname(rc));
	cr_assert_str_eq(get("provider"), "plain");
}

Test(config, provider_bad_lists_are_evalue)
{
	static const char *const accepted[] = {"auto", NULL};

	expect_bad("provider", "", accepted);
	expect_bad("provider", "plain,,mmap_hugetlb", accepted);
	expect_bad("provider", "auto,plain", accepted);
}

Test(config, huge_pages_accepts_off_try_on)
{
	static const char *const accepted[] = {"off", "try", "on", NULL};

	expect_good("huge_pages", "off");
	cr_assert_str_eq(get("huge_pages"), "off");
	expect_good("huge_pages", "on");
	cr_assert_str_eq(get("huge_pages"), "on");
	expect_good("huge_pages", "try");
	cr_assert_str_eq(get("huge_pages"), "try");
	expect_bad("huge_pages", "maybe", accepted);
	expect_bad("huge_pages", "", accepted);
	expect_bad("huge_pages", "ON ", accepted);
}

Test(config, huge_page_size_accepts_default_largest_and_powers_of_two)
{
	static const char *const accepted[] = {"default", "largest", NULL};

	expect_good("huge_page_size", "2MB");
	cr_assert_str_eq(get("huge_page_size"), "2MiB");
	expect_good("huge_page_size", "1GB");
	cr_assert_str_eq(get("huge_page_size"), "1GiB");
	expect_good("huge_page_size", "64KB");
	expect_good("huge_page_size", "largest");
	cr_assert_str_eq(get("huge_page_size"), "largest");
	expect_good("huge_page_size", "default");
	cr_assert_str_eq(get("huge_page_size"), "default");
	expect_bad("huge_page_size", "3MB", accepted);
	expect_bad("huge_page_size", "1.5GB", accepted);
	expect_bad("huge_page_size", "huge", accepted);
	expect_bad("huge_page_size", "", accepted);
}

Test(config, huge_page_size_not_a_power_of_two_is_evalue)
{
	static const char *const accepted[] = {"power", NULL};

	expect_bad("huge_page_size", "3MiB", accepted);
	expect_bad("huge_page_size", "12288", accepted);
}

Test(config, reattach_accepts_off_exec)
{
	static const char *const accepted[] = {"off", "exec", NULL};

	expect_good("reattach", "exec");
	cr_assert_str_eq(get("reattach"), "exec");
	expect_good("reattach", "off");
	expect_bad("reattach", "fork", accepted);
}

Test(config, populate_accepts_auto_on_off)
{
	static const char *const accepted[] = {"auto", "on", "off", NULL};

	expect_good("populate", "on");
	cr_assert_str_eq(get("populate"), "on");
	expect_good("populate", "off");
	expect_good("populate", "auto");
	expect_bad("populate", "always", accepted);
}

Test(config, hugetlbfs_path_accepts_an_absolute_directory)
{
	static const char *const accepted[] = {"absolute", NULL};
	char longpath[400];

	expect_good("hugetlbfs_path", "/dev/hugepages");
	cr_assert_str_eq(get("hugetlbfs_path"), "/dev/hugepages");
	expect_bad("hugetlbfs_path", "relative/dir", accepted);
	memset(longpath, 'a', sizeof longpath - 1);
	longpath[0] = '/';
	longpath[sizeof longpath - 1] = '\0';
	expect_bad("hugetlbfs_path", longpath, NULL);
}

Test(config, name_accepts_a_safe_name)
{
	static const char *const accepted[] = {"A-Z", NULL};
	char longname[200];

	expect_good("name", "server-main_1.seg");
	cr_assert_str_eq(get("name"), "server-main_1.seg");
	expect_bad("name", "a/b", accepted);
	expect_bad("name", "../x", accepted);
	expect_bad("name", "with space", accepted);
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	expect_bad("name", longname, accepted);
}

/* Local\ or Global\ on Windows; accepted everywhere, so one file serves every build. */
Test(config, namespace_accepts_local_and_global)
{
	static const char *const accepted[] = {"local", "global", NULL};

	expect_good("namespace", "global");
	cr_assert_str_eq(get("namespace"), "global");
	expect_good("namespace", "local");
	cr_assert_str_eq(get("namespace"), "local");
	expect_bad("namespace", "bogus", accepted);
	expect_bad("namespace", "Global", accepted);
	expect_bad("namespace", "", accepted);
}

Test(config, mode_accepts_octal_permissions)
{
	static const char *const accepted[] = {"octal", NULL};

	expect_good("mode", "0640");
	cr_assert_str_eq(get("mode"), "0640");
	expect_good("mode", "600");
	cr_assert_str_eq(get("mode"), "0600");
	expect_bad("mode", "0800", accepted);
	expect_bad("mode", "01777", accepted);
	expect_bad("mode", "rw-------", accepted);
	expect_bad("mode", "-1", accepted);
	expect_bad("mode", "", accepted);
}

/* A base_address every build of this word size takes: one above 4GiB is no address on 32 bits. */
#if UINTPTR_MAX > 0xffffffffu
#define HIGH_ADDRESS           "0x7e0000000000"
#define HIGH_ADDRESS_UNALIGNED "0x7e0000001000"
#else
#define HIGH_ADDRESS           "0x7e000000"
#define HIGH_ADDRESS_UNALIGNED "0x7e001000"
#endif

Test(config, base_address_accepts_auto_and_aligned_hex)
{
	static const char *const accepted[] = {"auto", NULL};

	expect_good("base_address", HIGH_ADDRESS);
	cr_assert_str_eq(get("base_address"), HIGH_ADDRESS);
	expect_good("base_address", "auto");
	cr_assert_str_eq(get("base_address"), "auto");
	expect_bad("base_address", HIGH_ADDRESS_UNALIGNED, accepted); /* not 64KiB aligned */
#if UINTPTR_MAX <= 0xffffffffu
	expect_bad("base_address", "0x7e0000000000", accepted); /* beyond a 32-bit address space */
#endif
	expect_bad("base_address", "0xZZ", accepted);
	expect_bad("base_address", "12345", accepted);
	expect_bad("base_address", "somewhere", accepted);
}

Test(config, log_level_accepts_the_five_levels)
{
	static const char *const accepted[] = {"off", "error", "warning", "info", "debug", NULL};
	static const char *const levels[] = {"off", "error", "warning", "info", "debug"};
	size_t i;

	for (i = 0; i < 5; i++) {
		expect_good("log_level", levels[i]);
		cr_assert_str_eq(get("log_level"), levels[i]);
	}
	expect_bad("log_level", "verbose", accepted);
}

/* ---- the typed setters ---- */

static void write_file(const char *text);

/*
 * A typed setter refused a value (rc, err): `key=text` through hpshm_config_set(), on a fresh
 * configuration, must be refused with the same code, the same key and the same accepted values
 * (the hint).
 */
static void expect_same_refusal(int rc, const hpshm_error *err, const char *key, const char *text)
{
	hpshm_config *other;
	hpshm_error want;
	int want_rc;

	cr_assert_eq(hpshm_config_new(&other), 0);
	memset(&want, 0, sizeof want);
	want_rc = hpshm_config_set(other, key, text, &want);
	hpshm_config_free(other);
	cr_assert_lt(want_rc, 0, "%s=%s is accepted as text", key, text);
	cr_assert_eq(rc, want_rc, "%s: the typed setter gives %s, the text \"%s\" %s", key, hpshm_errname(rc), text,
		     hpshm_errname(want_rc));
	cr_assert_eq(err->code, want.code);
	cr_assert_str_eq(err->key, want.key, "%s: err.key \"%s\", the text form's \"%s\"", key, err->key, want.key);
	cr_assert_str_eq(err->hint, want.hint, "%s: hint \"%s\", the text form's \"%s\"", key, err->hint, want.hint);
}

Test(config, typed_huge_pages_sets_each_policy)
{
	static const hpshm_huge_pages policy[] = {HPSHM_HUGE_OFF, HPSHM_HUGE_ON, HPSHM_HUGE_TRY};
	static const char *const word[] = {"off", "on", "try"};
	hpshm_error err;

	for (size_t i = 0; i < 3; i++) {
		memset(&err, 0, sizeof err);
		cr_assert_eq(hpshm_config_set_huge_pages(cfg, policy[i], &err), 0, "%s: %s", word[i], err.message);
		cr_assert_str_eq(get("huge_pages"), word[i]);
	}
}

Test(config, typed_huge_pages_refuses_what_the_text_form_refuses)
{
	hpshm_error err;
	int rc;

	expect_good("huge_pages", "on");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set_huge_pages(cfg, (hpshm_huge_pages)3, &err);
	expect_same_refusal(rc, &err, "huge_pages", "3");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set_huge_pages(cfg, (hpshm_huge_pages)-1, &err);
	expect_same_refusal(rc, &err, "huge_pages", "-1");
	cr_assert_str_eq(get("huge_pages"), "on");
}

Test(config, typed_provider_sets_lists_and_exclusions)
{
	static const char *const list[] = {"memfd_hugetlb", "plain"};
	static const char *const leave_out[] = {"auto", "-sysv_hugetlb", "-hugetlbfs"};
	static const char *const one[] = {"plain"};
	static const char *const automatic[] = {"auto"};
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_provider(cfg, list, 2, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("provider"), "memfd_hugetlb,plain");
	cr_assert_eq(hpshm_config_set_provider(cfg, leave_out, 3, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("provider"), "auto,-sysv_hugetlb,-hugetlbfs");
	cr_assert_eq(hpshm_config_set_provider(cfg, one, 1, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("provider"), "plain");
	cr_assert_eq(hpshm_config_set_provider(cfg, automatic, 1, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("provider"), "auto");
}

Test(config, typed_provider_refuses_what_the_text_form_refuses)
{
	static const char *const unknown[] = {"mmap_hugetlb", "nosuch_provider"};
	static const char *const mixed[] = {"auto", "plain"};
	static const char *const late_auto[] = {"plain", "auto"};
	static const char *const empty_first[] = {"", "plain"};
	const char *many[17], *overlong[1];
	char text[1024], longname[64];
	hpshm_error err;
	size_t i;
	int rc;

	expect_good("provider", "plain");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set_provider(cfg, unknown, 2, &err);
	expect_same_refusal(rc, &err, "provider", "mmap_hugetlb,nosuch_provider");
	cr_assert_eq(rc, HPSHM_ENOPROVIDER);
	rc = hpshm_config_set_provider(cfg, mixed, 2, &err);
	expect_same_refusal(rc, &err, "provider", "auto,plain");
	rc = hpshm_config_set_provider(cfg, late_auto, 2, &err);
	expect_same_refusal(rc, &err, "provider", "plain,auto");
	rc = hpshm_config_set_provider(cfg, empty_first, 2, &err);
	expect_same_refusal(rc, &err, "provider", ",plain");
	/* No names is the empty value, not a silent auto. */
	rc = hpshm_config_set_provider(cfg, NULL, 0, &err);
	expect_same_refusal(rc, &err, "provider", "");

	text[0] = '\0';
	for (i = 0; i < 17; i++) {
		many[i] = "plain";
		strcat(text, i ? ",plain" : "plain");
	}
	rc = hpshm_config_set_provider(cfg, many, 17, &err);
	expect_same_refusal(rc, &err, "provider", text);
	memset(longname, 'x', 40);
	longname[40] = '\0';
	overlong[0] = longname;
	rc = hpshm_config_set_provider(cfg, overlong, 1, &err);
	expect_same_refusal(rc, &err, "provider", longname);
	cr_assert_str_eq(get("provider"), "plain");
}

Test(config, typed_provider_refuses_a_comma_or_an_empty_name_inside_an_element)
{
	static const char *const comma[] = {"memfd_hugetlb,plain"};
	static const char *const empty_last[] = {"plain", ""};
	hpshm_error err;

	expect_good("provider", "mmap_hugetlb");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_provider(cfg, comma, 1, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "provider");
	cr_expect(hpt_contains(err.message, "comma"), "the message does not say why: %s", err.message);
	/* The text "plain," passes (a trailing comma); an empty element is refused. */
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_provider(cfg, empty_last, 2, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "provider");
	cr_assert_str_eq(get("provider"), "mmap_hugetlb");
}

Test(config, typed_provider_refuses_null_names)
{
	static const char *const with_null[] = {"plain", NULL};
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_provider(cfg, NULL, 1, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_set_provider(cfg, with_null, 2, &err), HPSHM_EINVAL);
	cr_expect(hpt_contains(err.message, "names[1]"), "the message does not name the element: %s", err.message);
	cr_assert_str_eq(get("provider"), "auto");
}

Test(config, typed_huge_page_size_sets_sizes_default_and_largest)
{
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_huge_page_size(cfg, (size_t)2 << 20, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_page_size"), "2MiB");
	cr_assert_eq(hpshm_config_set_huge_page_size(cfg, (size_t)1 << 30, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_page_size"), "1GiB");
	cr_assert_eq(hpshm_config_set_huge_page_size(cfg, HPSHM_PAGE_SIZE_LARGEST, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_page_size"), "largest");
	cr_assert_eq(hpshm_config_set_huge_page_size(cfg, HPSHM_PAGE_SIZE_DEFAULT, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_page_size"), "default");
}

Test(config, typed_huge_page_size_refuses_what_the_text_form_refuses)
{
	hpshm_error err;
	int rc;

	expect_good("huge_page_size", "1GiB");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_set_huge_page_size(cfg, 3000000, &err);
	expect_same_refusal(rc, &err, "huge_page_size", "3000000");
	rc = hpshm_config_set_huge_page_size(cfg, (size_t)3 << 20, &err);
	expect_same_refusal(rc, &err, "huge_page_size", "3MiB");
	cr_assert_str_eq(get("huge_page_size"), "1GiB");
}

Test(config, typed_reattach_sets_off_and_exec_and_refuses_the_rest)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_reattach(cfg, HPSHM_REATTACH_EXEC, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("reattach"), "exec");
	rc = hpshm_config_set_reattach(cfg, (hpshm_reattach)2, &err);
	expect_same_refusal(rc, &err, "reattach", "2");
	cr_assert_str_eq(get("reattach"), "exec");
	cr_assert_eq(hpshm_config_set_reattach(cfg, HPSHM_REATTACH_OFF, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("reattach"), "off");
}

/* Set from the API, a typed value outranks a file and the environment loaded after it. */
Test(config, typed_setters_set_with_api_precedence)
{
	static const char *const plain[] = {"plain"};
	hpshm_error err;

	write_file("huge_pages = on\nprovider = mmap_hugetlb\nhuge_page_size = 1GB\nreattach = exec\n");
	setenv("HPSHM_HUGE_PAGES", "on", 1);
	setenv("HPSHM_PROVIDER", "memfd_hugetlb", 1);
	setenv("HPSHM_HUGE_PAGE_SIZE", "1GB", 1);
	setenv("HPSHM_REATTACH", "exec", 1);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_set_huge_pages(cfg, HPSHM_HUGE_OFF, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set_provider(cfg, plain, 1, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set_huge_page_size(cfg, (size_t)2 << 20, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_set_reattach(cfg, HPSHM_REATTACH_OFF, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_pages"), "off");
	cr_assert_str_eq(get("provider"), "plain");
	cr_assert_str_eq(get("huge_page_size"), "2MiB");
	cr_assert_str_eq(get("reattach"), "off");
}

Test(config, typed_setters_refuse_a_null_configuration)
{
	static const char *const plain[] = {"plain"};
	hpshm_error err;

	cr_assert_eq(hpshm_config_set_huge_pages(NULL, HPSHM_HUGE_ON, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_set_provider(NULL, plain, 1, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_set_huge_page_size(NULL, HPSHM_PAGE_SIZE_DEFAULT, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_set_reattach(NULL, HPSHM_REATTACH_EXEC, &err), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_set_reattach(NULL, HPSHM_REATTACH_EXEC, NULL), HPSHM_EINVAL);
}

/* ---- key=value strings ---- */

Test(config, parse_sets_several_keys)
{
	hpshm_error err;

	cr_assert_eq(hpshm_config_parse(cfg, "huge_pages=on,populate=off,log_level=debug", &err), 0, "%s",
		     err.message);
	cr_assert_str_eq(get("huge_pages"), "on");
	cr_assert_str_eq(get("populate"), "off");
	cr_assert_str_eq(get("log_level"), "debug");
}

Test(config, parse_keeps_a_provider_list_together)
{
	hpshm_error err;

	cr_assert_eq(hpshm_config_parse(cfg, "provider=memfd_hugetlb,hugetlbfs,huge_pages=on", &err), 0, "%s",
		     err.message);
	cr_assert_str_eq(get("provider"), "memfd_hugetlb,hugetlbfs");
	cr_assert_str_eq(get("huge_pages"), "on");
}

Test(config, parse_with_a_bad_item_changes_nothing)
{
	hpshm_error err;
	int rc;

	cr_assert_eq(hpshm_config_set(cfg, "provider", "plain", NULL), 0);

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, "huge_pages=on,populate=on,bogus=1", &err);
	cr_assert_eq(rc, HPSHM_ENOKEY, "got %s", hpshm_errname(rc));
	cr_assert_str_eq(err.key, "bogus");

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, "huge_pages=on,provider=mmap_hugetlb,populate=sometimes", &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "got %s", hpshm_errname(rc));
	cr_assert_str_eq(err.key, "populate");

	memset(&err, 0, sizeof err);
	rc = hpshm_config_parse(cfg, "huge_pages=on,provider=plain,nosuch", &err);
	cr_assert_eq(rc, HPSHM_ENOPROVIDER, "got %s", hpshm_errname(rc));

	cr_assert_str_eq(get("huge_pages"), "try");
	cr_assert_str_eq(get("populate"), "auto");
	cr_assert_str_eq(get("provider"), "plain");
}

Test(config, parse_rejects_an_item_without_a_key)
{
	cr_assert_lt(hpshm_config_parse(cfg, "on", NULL), 0);
	cr_assert_lt(hpshm_config_parse(cfg, "=on", NULL), 0);
	cr_assert_str_eq(get("huge_pages"), "try");
}

/* ---- sources and precedence ---- */

/* Write n bytes of text (NUL bytes included) to a new temporary file, tmpfile_path. */
static void write_bytes(const char *text, size_t n)
{
	int fd;

	snprintf(tmpfile_path, sizeof tmpfile_path, "/tmp/hpshm-config-XXXXXX");
	fd = mkstemp(tmpfile_path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
}

static void write_file(const char *text)
{
	int fd;
	size_t n = strlen(text);

	snprintf(tmpfile_path, sizeof tmpfile_path, "/tmp/hpshm-config-XXXXXX");
	fd = mkstemp(tmpfile_path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
}

Test(config, file_values_beat_defaults)
{
	hpshm_error err;

	write_file("# a comment\n\n   \nhuge_pages = off\npopulate=on   # trailing comment\n"
		   "provider = memfd_hugetlb, plain\n");
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_pages"), "off");
	cr_assert_str_eq(get("populate"), "on");
	cr_assert_str_eq(get("provider"), "memfd_hugetlb,plain");
}

Test(config, file_with_a_bad_line_changes_nothing_and_names_the_line)
{
	hpshm_error err;
	int rc;

	write_file("huge_pages = on\n# ok\nthis line has no equals sign\npopulate = on\n");
	memset(&err, 0, sizeof err);
	rc = hpshm_config_load_file(cfg, tmpfile_path, &err);
	cr_assert_lt(rc, 0);
	cr_assert(rc == HPSHM_EVALUE || rc == HPSHM_ENOKEY, "got %s", hpshm_errname(rc));
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_expect(strstr(err.message, ":3") || strstr(err.message, "line 3"),
		  "message does not name line 3: %s", err.message);
}

Test(config, file_with_an_unknown_key_is_enokey_and_changes_nothing)
{
	hpshm_error err;

	write_file("huge_pages = on\nhuge_page_sise = 2MB\n");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), HPSHM_ENOKEY);
	cr_assert_str_eq(err.key, "huge_page_sise");
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_expect(strstr(err.message, ":2"), "message does not name line 2: %s", err.message);
}

Test(config, file_with_a_bad_value_is_evalue_naming_the_key)
{
	hpshm_error err;

	write_file("populate = sometimes\n");
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "populate");
	cr_assert_str_eq(get("populate"), "auto");
}

/*
 * A config file is text.  A NUL byte would end its line early for a C string reader, and the
 * rest of the line would be ignored without a word; the loader refuses it and names the line
 * (found by tests/fuzz/fuzz_config_file.c, which said "line too long" of a short line).
 */
static void expect_nul_refused(const char *text, size_t n, const char *line)
{
	hpshm_error err;
	int rc;

	write_bytes(text, n);
	memset(&err, 0, sizeof err);
	rc = hpshm_config_load_file(cfg, tmpfile_path, &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "a file with a NUL byte on line %s: %s (%s)", line, hpshm_errname(rc),
		     err.message);
	cr_assert(hpt_contains(err.message, "NUL"), "the message does not name the NUL byte: %s", err.message);
	cr_assert(!hpt_contains(err.message, "too long"), "a short line called too long: %s", err.message);
	cr_assert(strstr(err.message, line), "the message does not name line %s: %s", line, err.message);
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_assert_str_eq(get("provider"), "auto");
	unlink(tmpfile_path);
	tmpfile_path[0] = '\0';
}

Test(config, file_with_a_nul_byte_is_evalue_naming_the_line)
{
	static const char mid[] = "provider = plain\0huge_pages=on\nhuge_pages = on\n";
	static const char last[] = "huge_pages = on\nprovider = plain\0 and what follows";

	expect_nul_refused(mid, sizeof mid - 1, ":1");
	expect_nul_refused(last, sizeof last - 1, ":2");
}

Test(config, file_line_limit_is_1023_bytes_with_the_newline)
{
	char text[1100];
	hpshm_error err;

	memcpy(text, "name = ", 7);
	memset(text + 7, 'a', 1022 - 7);
	text[1022] = '\n';
	write_bytes(text, 1023);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), HPSHM_EVALUE,
		     "a name of 1015 characters is too long for the key, not for the line");
	cr_assert(!hpt_contains(err.message, "line too long"), "%s", err.message);
	unlink(tmpfile_path);
	memset(text + 7, 'a', 1023 - 7);
	text[1023] = '\n';
	write_bytes(text, 1024);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), HPSHM_EVALUE);
	cr_assert(hpt_contains(err.message, "line too long"), "%s", err.message);
}

/* A path that opens but cannot be read (a directory) is an error, not an empty file. */
Test(config, file_that_cannot_be_read_is_eio)
{
	hpshm_error err;
	int rc;

	memset(&err, 0, sizeof err);
	rc = hpshm_config_load_file(cfg, "/tmp", &err);
	cr_assert_eq(rc, HPSHM_EIO, "loading a directory: %s (%s)", hpshm_errname(rc), err.message);
	cr_assert(strstr(err.message, "/tmp"), "the message does not name the file: %s", err.message);
	cr_assert_neq(err.sys_errno, 0);
}

/* The loader stops at the first overlong line: a device without newlines is not read to its end. */
Test(config, file_without_newlines_is_not_read_to_its_end, .timeout = 10)
{
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, "/dev/zero", &err), HPSHM_EVALUE, "%s", err.message);
	cr_assert(strstr(err.message, "/dev/zero:1:"), "%s", err.message);
}

Test(config, missing_file_is_eio)
{
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_file(cfg, "/nonexistent/hpshm.conf", &err), HPSHM_EIO);
	cr_assert_eq(err.code, HPSHM_EIO);
}

Test(config, env_beats_file_in_either_order)
{
	hpshm_error err;

	write_file("huge_pages = off\npopulate = off\n");
	setenv("HPSHM_HUGE_PAGES", "on", 1);

	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_pages"), "on");
	cr_assert_str_eq(get("populate"), "off"); /* only in the file */

	/* loading the file again later must not undo the environment */
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_pages"), "on");
}

Test(config, api_beats_env_and_file_loaded_later)
{
	hpshm_error err;

	write_file("huge_pages = off\nprovider = plain\n");
	setenv("HPSHM_HUGE_PAGES", "on", 1);
	setenv("HPSHM_PROVIDER", "mmap_hugetlb", 1);

	cr_assert_eq(hpshm_config_set(cfg, "huge_pages", "try", &err), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "provider=memfd_hugetlb", &err), 0);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_config_load_file(cfg, tmpfile_path, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_assert_str_eq(get("provider"), "memfd_hugetlb");
}

Test(config, env_sets_any_key_by_its_upper_case_name)
{
	hpshm_error err;

	setenv("HPSHM_HUGE_PAGE_SIZE", "1GB", 1);
	setenv("HPSHM_POPULATE", "off", 1);
	setenv("HPSHM_LOG_LEVEL", "info", 1);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), 0, "%s", err.message);
	cr_assert_str_eq(get("huge_page_size"), "1GiB");
	cr_assert_str_eq(get("populate"), "off");
	cr_assert_str_eq(get("log_level"), "info");
}

Test(config, env_bad_value_is_evalue_and_changes_nothing)
{
	hpshm_error err;

	setenv("HPSHM_POPULATE", "on", 1);
	setenv("HPSHM_HUGE_PAGES", "sometimes", 1);
	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_config_load_env(cfg, &err), HPSHM_EVALUE);
	cr_assert(hpt_contains(err.key, "huge_pages"), "err.key is \"%s\"", err.key);
	cr_assert_str_eq(get("huge_pages"), "try");
	cr_assert_str_eq(get("populate"), "auto");
	cr_expect(strstr(err.message, "HPSHM_HUGE_PAGES"), "message does not name the variable: %s",
		  err.message);
}

/* The fake secure_getenv: what it was asked, and an environment it does not trust. */
static char asked[64];

static char *untrusted_getenv(const char *name)
{
	snprintf(asked, sizeof asked, "%s", name);
	return NULL;
}

/* A setuid or setgid process (glibc's secure_getenv answers NULL there) ignores HPSHM_*. */
Test(config, env_is_read_through_the_trusted_getenv)
{
	hpshm_error err;
	int rc;

	setenv("HPSHM_HUGE_PAGES", "on", 1);
	hpshm__linux_sys.secure_getenv = untrusted_getenv;
	asked[0] = '\0';
	rc = hpshm_config_load_env(cfg, &err);
	hpshm__linux_sys_reset();
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(get("huge_pages"), "try", "HPSHM_HUGE_PAGES was taken from an untrusted environment");
	cr_assert_str_neq(asked, "", "the trusted getenv was not asked");
	rc = hpshm_config_load_env(cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(get("huge_pages"), "on", "the real getenv does not see HPSHM_HUGE_PAGES");
}

/* ---- reading values back: hpshm_config_get() is snprintf-style ---- */

/* Every key set away from its default, with the longest values the getters format. */
static void set_long_values(void)
{
	char list[512] = "", path[HPSHM_PATH_MAX];
	const char *name;
	size_t used = 0;

	for (unsigned i = 0; (name = hpshm_provider_name(i, NULL)) != NULL; i++)
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", name);
	cr_assert_lt(used, sizeof list);
	expect_good("provider", list);
	expect_good("huge_pages", "on");
	expect_good("huge_page_size", "1GB");
	expect_good("reattach", "exec");
	expect_good("populate", "off");
	memset(path, 'p', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 2] = '\0';
	expect_good("hugetlbfs_path", path);
	expect_good("name", "a-rather-long-segment-name_0123456789.abcdefghijklmnopqrstuvwxyz");
	expect_good("mode", "0640");
	expect_good("base_address", HIGH_ADDRESS);
	expect_good("log_level", "debug");
}

/*
 * Run check on every key, once with the defaults and once with set_long_values(), giving it
 * the key and its whole value as read with a buffer that is surely large enough.
 */
static void every_key(void (*check)(const char *key, const char *full))
{
	for (int round = 0; round < 2; round++) {
		const char *key;

		if (round)
			set_long_values();
		for (unsigned k = 0; (key = hpshm_config_key_name(k, NULL, NULL)) != NULL; k++) {
			char full[2048];
			int n = hpshm_config_get(cfg, key, full, sizeof full);

			cr_assert_geq(n, 0, "hpshm_config_get(%s) = %s", key, hpshm_errname(n));
			cr_assert_eq((size_t)n, strlen(full), "%s: returned %d for \"%s\"", key, n, full);
			check(key, full);
		}
	}
}

/* hpshm_config_get(key) into a buffer of exactly len bytes followed by guard bytes. */
#define GUARD 16
static void get_into(const char *key, const char *full, size_t len)
{
	char *buf = malloc(len + GUARD);
	size_t want = len ? (strlen(full) < len ? strlen(full) : len - 1) : 0;
	int n;

	cr_assert_not_null(buf);
	memset(buf, 'x', len + GUARD);
	n = hpshm_config_get(cfg, key, buf, len);
	cr_assert_eq(n, (int)strlen(full), "%s, len %zu: returned %d, the value \"%s\" is %zu long", key, len, n, full,
		     strlen(full));
	if (len) {
		cr_assert_eq(memcmp(buf, full, want), 0, "%s, len %zu: \"%.*s\" is not the start of \"%s\"", key, len,
			     (int)want, buf, full);
		cr_assert_eq(buf[want], '\0', "%s, len %zu: not terminated at %zu", key, len, want);
	}
	for (size_t i = len; i < len + GUARD; i++)
		cr_assert_eq(buf[i], 'x', "%s, len %zu: wrote at byte %zu, past the buffer", key, len, i);
	free(buf);
}

static void check_null_0(const char *key, const char *full)
{
	int n = hpshm_config_get(cfg, key, NULL, 0);

	cr_assert_eq(n, (int)strlen(full), "%s with (NULL, 0): %d, want the value's length %zu", key, n, strlen(full));
}

static void check_len_0(const char *key, const char *full)
{
	get_into(key, full, 0);
}

static void check_len_1(const char *key, const char *full)
{
	get_into(key, full, 1);
}

static void check_exact(const char *key, const char *full)
{
	get_into(key, full, strlen(full) + 1);
	if (strlen(full))
		get_into(key, full, strlen(full));
}

static void check_every_len(const char *key, const char *full)
{
	for (size_t len = 0; len <= strlen(full) + 2; len++)
		get_into(key, full, len);
}

Test(config, get_with_no_buffer_returns_the_length)
{
	every_key(check_null_0);
}

Test(config, get_with_len_0_writes_nothing)
{
	every_key(check_len_0);
}

Test(config, get_with_len_1_writes_only_the_terminator)
{
	every_key(check_len_1);
}

Test(config, get_with_an_exact_buffer_fits_and_one_less_truncates)
{
	every_key(check_exact);
}

Test(config, get_truncates_safely_at_every_length)
{
	every_key(check_every_len);
}

Test(config, get_refuses_a_null_buffer_with_a_length)
{
	char buf[8];

	cr_assert_eq(hpshm_config_get(cfg, "provider", NULL, 8), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_get(NULL, "provider", buf, sizeof buf), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_get(cfg, NULL, buf, sizeof buf), HPSHM_EINVAL);
	cr_assert_eq(hpshm_config_get(cfg, "no_such_key", NULL, 0), HPSHM_ENOKEY);
}

/* ---- sizes ---- */

static size_t parse_ok(const char *text)
{
	size_t v = 0;
	int rc = hpshm_size_parse(text, &v);

	cr_assert_eq(rc, 0, "hpshm_size_parse(\"%s\") = %s", text, hpshm_errname(rc));
	return v;
}

static void parse_bad(const char *text, int code)
{
	size_t v = 12345;
	int rc = hpshm_size_parse(text, &v);

	cr_assert_eq(rc, code, "hpshm_size_parse(\"%s\") = %s, want %s", text, hpshm_errname(rc),
		     hpshm_errname(code));
	cr_assert_eq(v, 12345, "hpshm_size_parse(\"%s\") wrote its output on failure", text);
}

Test(config, size_parse_reads_units_of_1024)
{
	cr_assert_eq(parse_ok("16MiB"), (size_t)16777216);
	cr_assert_eq(parse_ok("2MB"), (size_t)2097152);
	cr_assert_eq(parse_ok("2M"), (size_t)2097152);
	cr_assert_eq(parse_ok("1G"), (size_t)1 << 30);
	cr_assert_eq(parse_ok("1g"), (size_t)1 << 30);
	cr_assert_eq(parse_ok("64KB"), (size_t)65536);
	cr_assert_eq(parse_ok("64k"), (size_t)65536);
	cr_assert_eq(parse_ok("4096"), (size_t)4096);
#if SIZE_MAX > 0xffffffffu
	cr_assert_eq(parse_ok("1TiB"), (size_t)1 << 40);
#else
	/* A 32-bit size_t holds less than 4GiB: a larger size is an overflow, never cut. */
	parse_bad("1TiB", HPSHM_EOVERFLOW);
	parse_bad("4GiB", HPSHM_EOVERFLOW);
	cr_assert_eq(parse_ok("3GiB"), (size_t)3 << 30);
#endif
}

Test(config, size_parse_rejects_what_is_not_a_size)
{
	parse_bad("1.5G", HPSHM_EVALUE);
	parse_bad("", HPSHM_EVALUE);
	parse_bad("abc", HPSHM_EVALUE);
	parse_bad("-1", HPSHM_EVALUE);
	parse_bad("12Q", HPSHM_EVALUE);
	parse_bad("2MiBs", HPSHM_EVALUE);
}

Test(config, size_parse_reports_overflow)
{
	parse_bad("99999999999999999999", HPSHM_EOVERFLOW);
	parse_bad("18446744073709551616", HPSHM_EOVERFLOW);
	parse_bad("16EiB", HPSHM_EOVERFLOW);
	parse_bad("16777216TiB", HPSHM_EOVERFLOW);
#if SIZE_MAX > 0xffffffffu
	cr_assert_eq(parse_ok("18446744073709551615"), SIZE_MAX);
#else
	parse_bad("18446744073709551615", HPSHM_EOVERFLOW);
	parse_bad("4294967296", HPSHM_EOVERFLOW);
	cr_assert_eq(parse_ok("4294967295"), SIZE_MAX);
#endif
}

Test(config, size_format_uses_exact_binary_units)
{
	char buf[32];

	cr_assert_str_eq(hpshm_size_format((size_t)2 << 20, buf, sizeof buf), "2MiB");
	cr_assert_str_eq(hpshm_size_format((size_t)1 << 30, buf, sizeof buf), "1GiB");
	cr_assert_str_eq(hpshm_size_format(3000, buf, sizeof buf), "3000B");
	cr_assert_str_eq(hpshm_size_format(65536, buf, sizeof buf), "64KiB");
	cr_assert_str_eq(hpshm_size_format((size_t)3 << 20, buf, sizeof buf), "3MiB");
}

Test(config, size_format_round_trips_through_parse)
{
	static const size_t sizes[] = {1, 4096, 3000, (size_t)2 << 20, (size_t)1 << 30,
#if SIZE_MAX > 0xffffffffu
				       (size_t)5 << 40,
#endif
				       (size_t)3 << 30};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		cr_assert_eq(parse_ok(hpshm_size_format(sizes[i], buf, sizeof buf)), sizes[i], "%s", buf);
}

Test(config, size_format_truncates_safely)
{
	char buf[8];

	memset(buf, 'x', sizeof buf);
	hpshm_size_format((size_t)2 << 20, buf, 3);
	cr_assert_eq(buf[2], '\0');
	cr_assert_eq(buf[3], 'x', "wrote past len");
}

Test(config, size_list_leaves_out_a_size_that_does_not_fit_rather_than_cut_it)
{
	size_t sizes[] = {(size_t)2 << 20, (size_t)1 << 30};
	char buf[64];

	cr_assert_str_eq(hpshm__size_list(sizes, 2, buf, sizeof buf), "2MiB, 1GiB");
	cr_assert_str_eq(hpshm__size_list(sizes, 0, buf, sizeof buf), "none");
	/* "2MiB, 1GiB" needs 11 bytes: with 10 the second size goes whole, not as "1Gi". */
	cr_assert_str_eq(hpshm__size_list(sizes, 2, buf, 10), "2MiB");
}

Test(config, fnv1a_is_the_published_hash_and_continues_across_parts)
{
	uint32_t h;

	/* Test vectors of the FNV reference: tokens and SysV keys depend on these values. */
	cr_assert_eq(hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "", 0), 0x811c9dc5u);
	cr_assert_eq(hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "a", 1), 0xe40c292cu);
	cr_assert_eq(hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "foobar", 6), 0xbf9cf968u);
	h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "foo", 3);
	cr_assert_eq(hpshm__fnv1a32(h, "bar", 3), 0xbf9cf968u);
}

/* ---- errors ---- */

Test(config, every_error_code_has_a_distinct_name_and_message)
{
	static const int codes[] = {
#define CODE(name, value, msg) HPSHM_##name,
		HPSHM_ERRORS(CODE)
#undef CODE
	};
	size_t n = sizeof codes / sizeof codes[0], i, j;
	char want[64];

	cr_assert_geq(n, 14);
	for (i = 0; i < n; i++) {
		const char *name = hpshm_errname(codes[i]), *msg = hpshm_strerror(codes[i]);

		cr_assert_lt(codes[i], 0);
		cr_assert_not_null(name);
		cr_assert_not_null(msg);
		cr_assert(*msg, "empty message for %d", codes[i]);
		for (j = 0; j < i; j++) {
			cr_assert_str_neq(name, hpshm_errname(codes[j]), "codes %d and %d share a name", codes[i],
					  codes[j]);
			cr_assert_str_neq(msg, hpshm_strerror(codes[j]), "codes %d and %d share a message",
					  codes[i], codes[j]);
		}
	}
#define NAME(name, value, msg)                                                 \
	snprintf(want, sizeof want, "HPSHM_%s", #name);                        \
	cr_assert_str_eq(hpshm_errname(HPSHM_##name), want);                   \
	cr_assert_str_eq(hpshm_strerror(HPSHM_##name), msg);
	HPSHM_ERRORS(NAME)
#undef NAME
	cr_assert_not_null(hpshm_errname(0));
	cr_assert_not_null(hpshm_strerror(0));
	cr_assert_not_null(hpshm_errname(-999));
	cr_assert_not_null(hpshm_strerror(-999));
	cr_assert_not_null(hpshm_errname(7));
}

Test(config, error_set_fills_the_record_and_returns_the_code)
{
	hpshm_error err;

	memset(&err, 0x55, sizeof err);
	cr_assert_eq(hpshm_error_set(&err, HPSHM_ESYS, 12, "mmap", "raise it", "failed %d", 7), HPSHM_ESYS);
	cr_assert_eq(err.code, HPSHM_ESYS);
	cr_assert_eq(err.sys_errno, 12);
	cr_assert_str_eq(err.call, "mmap");
	cr_assert_str_eq(err.hint, "raise it");
	cr_assert_str_eq(err.message, "failed 7");
	cr_assert_eq(hpshm_error_set(NULL, HPSHM_EINVAL, 0, NULL, NULL, "x"), HPSHM_EINVAL);
}

Test(config, version_is_major_minor_patch)
{
	char want[32];

	snprintf(want, sizeof want, "%d.%d.%d", HPSHM_VERSION_MAJOR, HPSHM_VERSION_MINOR, HPSHM_VERSION_PATCH);
	cr_assert_str_eq(hpshm_version(), want);
}

/* The preprocessor can compare the number: it is an integer constant expression. */
#if !defined(HPSHM_VERSION_NUMBER) || HPSHM_VERSION_NUMBER < 200
#error "HPSHM_VERSION_NUMBER is missing or not a number the preprocessor can compare"
#endif

Test(config, version_number_is_the_version_string_as_one_number)
{
	unsigned major = 0, minor = 0, patch = 0;

	cr_assert_eq(sscanf(hpshm_version(), "%u.%u.%u", &major, &minor, &patch), 3, "%s", hpshm_version());
	cr_assert_lt(minor, 100u);
	cr_assert_lt(patch, 100u);
	cr_assert_eq(hpshm_version_number(), major * 10000 + minor * 100 + patch, "%u for %s", hpshm_version_number(),
		     hpshm_version());
	cr_assert_eq(hpshm_version_number(), (unsigned)HPSHM_VERSION_NUMBER);
}

/* What create would map, as `hpshm plan` and a server sizing its pool ask it. */
Test(config, footprint_is_whole_pages_and_counts_the_header_of_reattachable_segments)
{
	const size_t mib = (size_t)1 << 20;
	size_t mapped = 0, usable = 0;

	cr_assert_eq(hpshm_segment_footprint(64 * mib, 2 * mib, cfg, &mapped, &usable), 0);
	cr_assert_eq(mapped, 64 * mib);
	cr_assert_eq(usable, 64 * mib);
	cr_assert_eq(hpshm_segment_footprint(64 * mib + 1, 2 * mib, NULL, &mapped, NULL), 0);
	cr_assert_eq(mapped, 66 * mib);

	expect_good("reattach", "exec");
	cr_assert_eq(hpshm_segment_footprint(64 * mib, 2 * mib, cfg, &mapped, &usable), 0);
	cr_assert_eq(mapped % (2 * mib), 0u);
	cr_assert_geq(usable, 64 * mib, "the caller gets less than asked: %zu", usable);
	cr_assert_leq(mapped, 66 * mib);

	cr_assert_eq(hpshm_segment_footprint(0, 2 * mib, cfg, &mapped, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm_segment_footprint(mib, 3 * mib, cfg, &mapped, NULL), HPSHM_EINVAL);
	cr_assert_eq(hpshm_segment_footprint(SIZE_MAX, 2 * mib, cfg, &mapped, NULL), HPSHM_EOVERFLOW);
}
