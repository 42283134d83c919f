/* SPDX-License-Identifier: MIT */
/*
 * tests/test_apr.c -- libhpshm_apr (include/hpshm/apr.h, doc/apr.md).
 *
 * Pools: a segment goes with its pool (its name too), a forked child's clear of the pool only
 * detaches, the explicit destroy and detach take the cleanups off.  Statuses: every HPSHM_E*
 * code to a status of its own and back, with hpshm's text.  Configurations from text and
 * from an apr_table_t, an unknown key refused by name.  hpshm_apr_shm_* behaves as apr_shm:
 * a second attach by name sees the first's bytes, destroy removes the name.  The apr
 * provider registers and makes page-aligned memory (the conformance suite runs the whole
 * contract on it: tests/CMakeLists.txt, conformance_apr).  Every segment is plain
 * (huge_pages=off): nothing here needs a huge page.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include "harness.h"

#include "fixture.h"
#include "hpshm.h"
#include "hpshm/apr.h"

static apr_pool_t *root;

static void apr_init(void)
{
	hpt_fixture_init();
	cr_assert_eq(apr_initialize(), APR_SUCCESS);
	cr_assert_eq(apr_pool_create(&root, NULL), APR_SUCCESS);
}

static void apr_fini(void)
{
	apr_pool_destroy(root);
	apr_terminate();
	hpt_fixture_fini();
}

TestSuite(apr, .init = apr_init, .fini = apr_fini);

/* A name of this test's own. */
static const char *aname(const char *what)
{
	static char name[64];

	snprintf(name, sizeof name, "hpt-apr-%s-%ld", what, (long)getpid());
	return name;
}

static hpshm_config *plain_cfg(apr_pool_t *pool, const char *name)
{
	char kv[128];
	hpshm_config *cfg = NULL;
	hpshm_error err;
	apr_status_t st;

	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off%s%s", name ? ",name=" : "", name ? name : "");
	st = hpshm_apr_config_parse(&cfg, kv, pool, &err);
	cr_assert_eq(st, APR_SUCCESS, "%s: %s", kv, err.message);
	return cfg;
}

static int opens(const char *name)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	int rc = hpshm_segment_open(&seg, name, NULL, &err);

	if (rc == 0)
		hpshm_segment_destroy(seg);
	return rc;
}

Test(apr, pool_destroy_removes_a_named_segment)
{
	const char *name = aname("pool");
	hpshm_segment *seg = NULL;
	apr_pool_t *pool;
	hpshm_error err;
	apr_status_t st;

	cr_assert_eq(apr_pool_create(&pool, root), APR_SUCCESS);
	st = hpshm_apr_segment_create(&seg, 64 * 1024, plain_cfg(root, name), pool, &err);
	cr_assert_eq(st, APR_SUCCESS, "create: %s (hint: %s)", err.message, err.hint);
	memset(hpshm_segment_address(seg), 0x5a, 64 * 1024);
	cr_assert_eq(opens(name), 0, "the segment cannot be opened by name while its pool lives");
	apr_pool_destroy(pool);
	cr_assert_eq(opens(name), HPSHM_ENOENT, "the name outlived the pool");
}

Test(apr, a_forked_childs_pool_clear_only_detaches)
{
	const char *name = aname("fork");
	hpshm_segment *seg = NULL, *opened = NULL;
	volatile uint64_t *w;
	apr_pool_t *pool;
	hpshm_error err;
	int status;
	pid_t pid;

	cr_assert_eq(apr_pool_create(&pool, root), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_segment_create(&seg, 64 * 1024, plain_cfg(root, name), pool, &err), APR_SUCCESS,
		     "create: %s", err.message);
	w = hpshm_segment_address(seg);
	w[0] = 1;
	pid = hpt_fork();
	if (pid == 0) {
		/* The worker's clean-up: its copy of the pool goes, and with it its mapping only. */
		w[1] = 2;
		apr_pool_clear(pool);
		apr_pool_destroy(pool);
		_exit(opens(name) == 0 ? 0 : 3);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child: status %d (3: the name was gone)",
		  status);
	cr_assert_eq(w[1], 2u, "the child's write is not seen");
	w[2] = 3;
	cr_assert_eq(hpshm_apr_segment_open(&opened, name, NULL, pool, &err), APR_SUCCESS,
		     "open after the child's clear: %s", err.message);
	cr_assert_eq(((volatile uint64_t *)hpshm_segment_address(opened))[2], 3u);
	apr_pool_destroy(pool);
	cr_assert_eq(opens(name), HPSHM_ENOENT, "the owner's pool destroy left the name");
}

/* What apr_proc_create() runs in its child before exec: the child cleanup, a detach. */
Test(apr, the_child_cleanup_before_exec_detaches)
{
	const char *name = aname("exec");
	hpshm_segment *seg = NULL;
	apr_pool_t *pool;
	hpshm_error err;
	void *addr;
	size_t len;
	int status;
	pid_t pid;

	cr_assert_eq(apr_pool_create(&pool, root), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_segment_create(&seg, 64 * 1024, plain_cfg(root, name), pool, &err), APR_SUCCESS,
		     "create: %s", err.message);
	addr = hpshm_segment_address(seg);
	len = hpshm_segment_report(seg)->mapped_size;
	pid = hpt_fork();
	if (pid == 0) {
		apr_pool_cleanup_for_exec();
		_exit(hpt_is_mapped(addr, len) ? 3 : opens(name) == 0 ? 0 : 4);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child: status %d (3: still mapped before exec, 4: the name was gone)", status);
	cr_assert_eq(opens(name), 0, "the child's cleanup before exec removed the segment");
	apr_pool_destroy(pool);
	cr_assert_eq(opens(name), HPSHM_ENOENT);
}

Test(apr, a_failure_keeps_hpshms_error)
{
	hpshm_segment *seg = (hpshm_segment *)&seg;
	hpshm_error err;

	memset(&err, 0, sizeof err);
	cr_assert_eq(hpshm_apr_segment_open(&seg, aname("missing"), plain_cfg(root, NULL), root, &err), APR_ENOENT);
	cr_assert_null(seg);
	cr_assert_eq(err.code, HPSHM_ENOENT);
	cr_assert(strstr(err.message, aname("missing")), "the message does not name the segment: %s", err.message);
	cr_assert_eq(hpshm_apr_segment_create(&seg, 4096, NULL, NULL, &err), APR_EINVAL, "no pool");
}

Test(apr, explicit_destroy_and_detach_take_the_cleanups_off)
{
	const char *name = aname("explicit");
	hpshm_segment *seg = NULL, *anon = NULL;
	apr_pool_t *pool;
	hpshm_error err;

	cr_assert_eq(apr_pool_create(&pool, root), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_segment_create(&seg, 4096, plain_cfg(root, name), pool, &err), APR_SUCCESS, "%s",
		     err.message);
	cr_assert_eq(hpshm_apr_segment_create(&anon, 4096, plain_cfg(root, NULL), pool, &err), APR_SUCCESS, "%s",
		     err.message);
	cr_assert_eq(hpshm_apr_segment_destroy(seg, pool), APR_SUCCESS);
	cr_assert_eq(opens(name), HPSHM_ENOENT);
	cr_assert_eq(hpshm_apr_segment_detach(anon, pool), APR_SUCCESS);
	/* A cleanup left behind would free the handles again: ASan and the fixture would see it. */
	apr_pool_destroy(pool);
}

Test(apr, every_code_round_trips_with_hpshms_text)
{
	static const struct {
		int          code;
		apr_status_t st;
	} named[] = {
		{ HPSHM_ENOMEM, APR_ENOMEM }, { HPSHM_EACCES, APR_EACCES }, { HPSHM_ENOENT, APR_ENOENT },
		{ HPSHM_EEXIST, APR_EEXIST }, { HPSHM_EINVAL, APR_EINVAL }, { HPSHM_ENOTSUP, APR_ENOTIMPL },
	};
	apr_status_t seen[16];
	char buf[256], want[256];
	int code, n = 0;

	cr_assert_eq(hpshm_apr_status(0), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_code(APR_SUCCESS), 0);
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
		cr_assert_eq(hpshm_apr_status(named[i].code), named[i].st, "%s", hpshm_errname(named[i].code));
		cr_assert_eq(hpshm_apr_code(named[i].st), named[i].code);
		/* APR's own statuses keep APR's text. */
		cr_assert_str_eq(hpshm_apr_strerror(named[i].st, buf, sizeof buf),
				 apr_strerror(named[i].st, want, sizeof want));
	}
	for (code = -1; code >= -16; code--) {
		apr_status_t st = hpshm_apr_status(code);
		int is_named = 0;

		cr_assert_str_neq(hpshm_errname(code), "HPSHM_E?", "code %d is not hpshm's any more", code);
		cr_assert_neq(st, APR_SUCCESS);
		cr_assert_eq(hpshm_apr_code(st), code, "%s does not round-trip", hpshm_errname(code));
		for (int j = 0; j < n; j++)
			cr_assert_neq(seen[j], st, "%s shares its status", hpshm_errname(code));
		seen[n++] = st;
		for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
			is_named |= named[i].code == code;
		if (is_named)
			continue;
		cr_assert(st > HPSHM_APR_START_ERROR && st < HPSHM_APR_START_ERROR + HPSHM_APR_ERRSPACE_SIZE,
			  "%s: %d is outside hpshm's range", hpshm_errname(code), st);
		cr_assert_str_eq(hpshm_apr_strerror(st, buf, sizeof buf), hpshm_strerror(code));
	}
	cr_assert_eq(hpshm_apr_code(APR_EOF), HPSHM_ESYS, "a status hpshm never gives");
	cr_assert_str_eq(hpshm_apr_strerror(APR_EOF, buf, sizeof buf), apr_strerror(APR_EOF, want, sizeof want));
	cr_assert_neq(hpshm_apr_status(-99), APR_SUCCESS);
}

Test(apr, configuration_from_text)
{
	hpshm_config *cfg = NULL;
	hpshm_error err;
	char v[64];
	apr_status_t st;

	cr_assert_eq(hpshm_apr_config_parse(&cfg, "huge_pages=off,name=abc", root, &err), APR_SUCCESS, "%s",
		     err.message);
	cr_assert_gt(hpshm_config_get(cfg, "name", v, sizeof v), 0);
	cr_assert_str_eq(v, "abc");
	memset(&err, 0, sizeof err);
	st = hpshm_apr_config_parse(&cfg, "huge_pages=off,no_such_key=1", root, &err);
	cr_assert_eq(st, hpshm_apr_status(HPSHM_ENOKEY));
	cr_assert_null(cfg);
	cr_assert_str_eq(err.key, "no_such_key");
	cr_assert(strstr(err.message, "no_such_key"), "%s", err.message);
}

Test(apr, configuration_from_a_table)
{
	apr_table_t *t = apr_table_make(root, 4);
	hpshm_config *cfg = NULL;
	hpshm_error err;
	char v[64];
	apr_status_t st;

	apr_table_set(t, "huge_pages", "off");
	apr_table_set(t, "provider", "plain");
	cr_assert_eq(hpshm_apr_config_table(&cfg, t, root, &err), APR_SUCCESS, "%s", err.message);
	cr_assert_gt(hpshm_config_get(cfg, "huge_pages", v, sizeof v), 0);
	cr_assert_str_eq(v, "off");
	cr_assert_gt(hpshm_config_get(cfg, "provider", v, sizeof v), 0);
	cr_assert_str_eq(v, "plain");
	apr_table_set(t, "hugepages", "on");
	memset(&err, 0, sizeof err);
	st = hpshm_apr_config_table(&cfg, t, root, &err);
	cr_assert_eq(hpshm_apr_code(st), HPSHM_ENOKEY);
	cr_assert_str_eq(err.key, "hugepages");
	cr_assert(strstr(err.message, "hugepages"), "%s", err.message);
	apr_table_set(t, "hugepages", "");
	apr_table_unset(t, "hugepages");
	apr_table_set(t, "huge_pages", "sometimes");
	st = hpshm_apr_config_table(&cfg, t, root, &err);
	cr_assert_eq(hpshm_apr_code(st), HPSHM_EVALUE);
	cr_assert_str_eq(err.key, "huge_pages");
}

Test(apr, shm_names_follow_the_filename)
{
	char a[HPSHM_APR_SHM_NAME_MAX], b[HPSHM_APR_SHM_NAME_MAX];

	cr_assert_not_null(hpshm_apr_shm_name("/var/run/mod x.shm", a, sizeof a));
	cr_assert_eq(strncmp(a, "apr-mod_x.shm-", 14), 0, "%s", a);
	cr_assert_eq(strlen(a), 14u + 16u, "%s", a);
	cr_assert_not_null(hpshm_apr_shm_name("/var/run/mod x.shm", b, sizeof b));
	cr_assert_str_eq(a, b, "one filename, one name");
	cr_assert_not_null(hpshm_apr_shm_name("/tmp/mod x.shm", b, sizeof b));
	cr_assert_str_neq(a, b, "two directories, one name");
	cr_assert_null(hpshm_apr_shm_name("/x", a, 8), "a short buffer");
	cr_assert_null(hpshm_apr_shm_name(NULL, a, sizeof a));
}

Test(apr, shm_create_attach_destroy_as_apr_shm)
{
	char file[96];
	hpshm_apr_shm_t *m = NULL, *m2 = NULL;
	apr_pool_t *p1, *p2;
	hpshm_error err;
	uint8_t *a, *b;
	apr_status_t st;

	snprintf(file, sizeof file, "/tmp/hpt-apr-%ld.shm", (long)getpid());
	cr_assert_eq(apr_pool_create(&p1, root), APR_SUCCESS);
	cr_assert_eq(apr_pool_create(&p2, root), APR_SUCCESS);
	st = hpshm_apr_shm_create_ex(&m, 10000, file, p1, "provider=plain,huge_pages=off", &err);
	cr_assert_eq(st, APR_SUCCESS, "create: %s", err.message);
	a = hpshm_apr_shm_baseaddr_get(m);
	cr_assert_eq((uintptr_t)a % hpshm_base_page_size(), 0u, "the base address is not page aligned");
	cr_assert_geq(hpshm_apr_shm_size_get(m), 10000u);
	cr_assert_not_null(hpshm_apr_shm_segment(m));
	for (size_t i = 0; i < 10000; i++)
		a[i] = (uint8_t)(i * 7);
	cr_assert_eq(hpshm_apr_shm_create_ex(&m2, 10000, file, p2, "provider=plain,huge_pages=off", NULL),
		     APR_EEXIST, "a second create of one filename");
	cr_assert_eq(hpshm_apr_shm_attach(&m2, file, p2), APR_SUCCESS);
	b = hpshm_apr_shm_baseaddr_get(m2);
	cr_assert_neq(a, b);
	cr_assert_eq(hpshm_apr_shm_size_get(m2), hpshm_apr_shm_size_get(m));
	cr_assert_eq(memcmp(a, b, 10000), 0, "the attach does not see the creator's bytes");
	b[1] = 0xee;
	cr_assert_eq(a[1], 0xee);
	cr_assert_eq(hpshm_apr_shm_detach(m2), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_shm_destroy(m), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_shm_attach(&m2, file, p2), APR_ENOENT, "destroy left the name");
	cr_assert_null(m2);
	apr_pool_destroy(p2);
	apr_pool_destroy(p1);
}

Test(apr, shm_anonymous_follows_its_pool_and_the_environment)
{
	hpshm_apr_shm_t *m = NULL;
	volatile uint64_t *w;
	apr_pool_t *pool;
	int status;
	pid_t pid;

	hpt_clear_config_env();
	setenv("HPSHM_HUGE_PAGES", "off", 1);
	setenv("HPSHM_PROVIDER", "plain", 1);
	cr_assert_eq(apr_pool_create(&pool, root), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_shm_create(&m, 5000, NULL, pool), APR_SUCCESS);
	cr_assert_str_eq(hpshm_segment_report(hpshm_apr_shm_segment(m))->provider, "plain");
	cr_assert_eq(hpshm_segment_report(hpshm_apr_shm_segment(m))->huge, 0);
	w = hpshm_apr_shm_baseaddr_get(m);
	pid = hpt_fork();
	if (pid == 0) {
		w[0] = 42;
		_exit(0);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(w[0], 42u, "a forked child's write is not seen");
	cr_assert_eq(hpshm_apr_shm_attach(&m, NULL, pool), APR_EINVAL, "no filename, nothing to attach");
	apr_pool_destroy(pool);
}

Test(apr, the_apr_provider_registers_and_aligns)
{
	size_t ps = hpshm_base_page_size(), size = 3 * ps + 1;
	hpshm_segment *seg = NULL;
	const hpshm_report *r;
	hpshm_config *cfg = NULL;
	hpshm_error err;
	unsigned caps = 99;
	const char *n;

	cr_assert_eq(hpshm_apr_provider_register(&err), APR_SUCCESS, "%s", err.message);
	cr_assert_eq(hpshm_apr_provider_register(&err), APR_EEXIST, "registered twice");
	for (unsigned i = 0; (n = hpshm_provider_name(i, &caps)) != NULL; i++)
		if (strcmp(n, "apr") == 0)
			break;
	cr_assert_not_null(n, "apr is not listed");
	cr_assert_eq(caps, 0u, "apr claims capabilities it does not have");
	cr_assert_eq(hpshm_apr_config_parse(&cfg, "provider=apr,huge_pages=off", root, &err), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_segment_create(&seg, size, cfg, root, &err), APR_SUCCESS, "%s", err.message);
	r = hpshm_segment_report(seg);
	cr_assert_str_eq(r->provider, "apr");
	cr_assert_eq((uintptr_t)hpshm_segment_address(seg) % ps, 0u);
	cr_assert_eq(hpshm_segment_size(seg), 4 * ps);
	memset(hpshm_segment_address(seg), 0xa5, 4 * ps);
	cr_assert_eq(hpshm_apr_segment_destroy(seg, root), APR_SUCCESS);
	/* It has no names: a named create is refused, not silently unnamed. */
	cr_assert_eq(hpshm_apr_config_parse(&cfg, "provider=apr,huge_pages=off,name=x", root, &err), APR_SUCCESS);
	cr_assert_eq(hpshm_apr_segment_create(&seg, size, cfg, root, &err), hpshm_apr_status(HPSHM_EUNAVAILABLE));
	cr_assert(strstr(err.message, "unnamed"), "the refusal does not say why: %s", err.message);
}
