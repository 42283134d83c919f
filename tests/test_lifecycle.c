/* SPDX-License-Identifier: MIT */
/*
 * tests/test_lifecycle.c -- a segment's life as servers lead it (DESIGN.md section 12): who
 * removes it, how an unrelated process opens it by name, and who inherits its descriptor.
 *
 *   - The owner is the process that created the segment.  A worker made by fork() holds a copy
 *     of the creator's handle and runs clean-up code: its hpshm_segment_destroy() only
 *     detaches, so the segment stays listed, openable and intact.  hpshm_segment_detach()
 *     never removes, even in the owner.
 *   - hpshm_segment_open() by name, from a process started apart (through `sh -c`, with no
 *     token and no inherited descriptor: reattach_child's open mode), at the creator's address
 *     under reattach=exec and where the system chooses otherwise; and its refusals: no such
 *     segment, an object under the name that is not hpshm's, a segment of another page size
 *     than the configuration asks, another user's segment (the opener runs as nobody).
 *   - hpshm_segment_uninherit(): after it, a program the creator execs no longer holds the
 *     descriptor hpshm_segment_inherit() left open.
 *
 * The providers with names on Linux: sysv_hugetlb and hugetlbfs on the default huge page size
 * (skipped with the reason, or failed under HPSHM_TEST_REQUIRE, without a pool), plain on base
 * pages.  hugetlbfs uses HPSHM_TEST_HUGETLBFS as hugetlbfs_path when it has the page size; the
 * processes opening by name find the file through the mounts, as an unrelated process would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "base/base.h"
#include "fixture.h"
#include "hpshm.h"
#include "hpshm/provider.h"
#include "reattach_child.h"

#ifndef HPSHM_REATTACH_CHILD
#error "HPSHM_REATTACH_CHILD must name the built reattach_child program"
#endif

#define NOBODY 65534

struct lcase {
	char   provider[HPSHM_NAME_MAX];
	size_t page_size; /* the default huge page size, or the base size for plain */
};

static struct lcase lcases[3];

static size_t collect(void)
{
	static const char *const names[] = { "sysv_hugetlb", "hugetlbfs", "plain" };
	size_t huge = hpt_default_huge_page_size();

	for (size_t i = 0; i < 3; i++) {
		memset(&lcases[i], 0, sizeof lcases[i]);
		snprintf(lcases[i].provider, sizeof lcases[i].provider, "%s", names[i]);
		lcases[i].page_size = strcmp(names[i], "plain") == 0 ? hpshm_base_page_size() : huge;
	}
	return 3;
}

TestSuite(lifecycle, .init = hpt_fixture_init, .fini = hpt_fixture_fini);

static int is_plain(const struct lcase *c)
{
	return strcmp(c->provider, "plain") == 0;
}

/* The test's segment name: its own, per process and call. */
static const char *lname(const char *what)
{
	static char name[96];
	static unsigned n;

	snprintf(name, sizeof name, "hpt-life-%s-%ld-%u", what, (long)getpid(), n++);
	return name;
}

/* The segment's size: two pages and a bit, so it spans pages and its header has room. */
static size_t lsize(const struct lcase *c)
{
	return 2 * c->page_size + 1;
}

/*
 * A configuration for case c naming the segment name, with reattach=exec and extra ("" for
 * none), probed: skips (or fails under HPSHM_TEST_REQUIRE) when the provider cannot work here.
 */
static hpshm_config *lconfig(const struct lcase *c, const char *name, const char *extra)
{
	const char *mnt = is_plain(c) ? NULL : hpt_test_hugetlbfs(c->page_size);
	char kv[512], psz[32], reason[HPSHM_TEXT_MAX];
	hpshm_config *cfg;
	hpshm_error err;
	int rc;

	if (!is_plain(c) && c->page_size == 0)
		HPT_UNAVAILABLE(c->provider, NULL, "%s: the kernel offers no huge page size", c->provider);
	if (!strcmp(c->provider, "sysv_hugetlb") && hpt_emulator_refuses_sysv_hugetlb(c->page_size))
		HPT_SKIP("%s", hpt_emulator_refuses_sysv_hugetlb(c->page_size));
	hpt_size_text(c->page_size, psz, sizeof psz);
	snprintf(kv, sizeof kv, "provider=%s,name=%s,reattach=exec,%s%s%s%s", c->provider, name,
		 is_plain(c) ? "huge_pages=off" : "huge_pages=on,huge_page_size=", is_plain(c) ? "" : psz,
		 *extra ? "," : "", extra);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	rc = hpshm_config_parse(cfg, kv, &err);
	cr_assert_eq(rc, 0, "%s: %s", kv, err.message);
	if (!strcmp(c->provider, "hugetlbfs") && mnt && *mnt)
		cr_assert_eq(hpshm_config_set(cfg, "hugetlbfs_path", mnt, &err), 0, "%s", err.message);
	rc = hpshm_provider_probe(c->provider, lsize(c), cfg, NULL, reason, sizeof reason);
	if (rc == HPSHM_EUNAVAILABLE) {
		hpshm_config_free(cfg);
		HPT_UNAVAILABLE_PAGES(c->provider, is_plain(c) ? NULL : psz,
				      hpt_pages(lsize(c) + HPSHM_HEADER_REGION, c->page_size), "%s (%s pages): %s",
				      c->provider, psz, reason);
	}
	cr_assert_eq(rc, 0, "probe %s: %s (%s)", c->provider, hpshm_errname(rc), reason);
	return cfg;
}

/* Create the case's segment under cfg and write the pattern over its usable size. */
static hpshm_segment *lcreate(const struct lcase *c, const hpshm_config *cfg)
{
	hpshm_segment *seg = NULL;
	hpshm_error err;
	uint64_t *w;
	size_t words;
	int rc;

	rc = hpshm_segment_create(&seg, lsize(c), cfg, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "create %s: %s: %s (hint: %s)", c->provider, hpshm_errname(rc), err.message, err.hint);
	cr_assert_str_eq(hpshm_segment_report(seg)->provider, c->provider);
	cr_assert_eq(hpshm_segment_report(seg)->page_size, c->page_size);
	w = hpshm_segment_address(seg);
	words = hpshm_segment_size(seg) / sizeof *w;
	for (size_t i = 0; i < words; i++)
		w[i] = reattach_pattern(i);
	return seg;
}

/* Is the pattern in every usable word of seg from word `from` on? */
static void assert_pattern(const hpshm_segment *seg, size_t from, const char *when)
{
	const uint64_t *w = hpshm_segment_address(seg);
	size_t words = hpshm_segment_size(seg) / sizeof *w;

	for (size_t i = from; i < words; i++)
		if (w[i] != reattach_pattern(i))
			cr_assert_fail("%s: word %zu of %zu is %#" PRIx64 ", not the pattern", when, i, words, w[i]);
}

/* What hpshm_objects_list() says of the object named name. */
struct lfound {
	const char  *name;  /* what to look for */
	int          times; /* how often it was listed */
	hpshm_object obj;   /* its last listing */
};

static int lfound_one(void *user, const hpshm_object *o)
{
	struct lfound *f = user;

	if (strcmp(o->name, f->name) == 0) {
		f->obj = *o;
		f->times++;
	}
	return 0;
}

static struct lfound llist(const char *name)
{
	struct lfound f;
	hpshm_error err;
	int n;

	memset(&f, 0, sizeof f);
	f.name = name;
	n = hpshm_objects_list(lfound_one, &f, &err);
	cr_assert_geq(n, 0, "hpshm_objects_list: %s", err.message);
	return f;
}

/*
 * Run reattach_child with args as a process started apart: through `sh -c`, with no
 * HPSHM_TOKEN in its environment and no descriptor of the test's (hpshm's are close-on-exec),
 * as user nobody when as_nobody.  Its exit status, or 128 + the signal that ended it.
 */
static int run_apart(const char *const *args, int as_nobody)
{
	static char text[16][512];
	char *argv[16];
	int n = 0, status;
	pid_t pid;

	/* execv() takes char *const []: copies, so no string literal loses its const. */
	snprintf(text[n], sizeof text[n], "sh");
	argv[n] = text[n], n++;
	snprintf(text[n], sizeof text[n], "-c");
	argv[n] = text[n], n++;
	snprintf(text[n], sizeof text[n], "exec \"$0\" \"$@\"");
	argv[n] = text[n], n++;
	snprintf(text[n], sizeof text[n], "%s", HPSHM_REATTACH_CHILD);
	argv[n] = text[n], n++;
	for (size_t i = 0; args[i] && n < 15; i++, n++) {
		snprintf(text[n], sizeof text[n], "%s", args[i]);
		argv[n] = text[n];
	}
	argv[n] = NULL;
	pid = hpt_fork();
	if (pid == 0) {
		(void)unsetenv("HPSHM_TOKEN");
		if (as_nobody && (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0))
			_exit(CHILD_EUSAGE);
		execv("/bin/sh", argv);
		_exit(127);
	}
	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run reattach_child's open mode apart: it opens name under kv and writes value in word 0. */
static void open_apart(const struct lcase *c, hpshm_segment *seg, const char *name, const char *kv, int exec)
{
	char addr[32], ps[32], value[32];
	uint64_t v = 0x09e4000000000000ULL | (uint64_t)getpid();
	volatile uint64_t *w = hpshm_segment_address(seg);
	const char *args[] = { "open", name, kv, addr, ps, value, NULL };
	int status;

	snprintf(addr, sizeof addr, exec ? "%#" PRIxPTR : "-", (uintptr_t)w);
	snprintf(ps, sizeof ps, "%zu", c->page_size);
	snprintf(value, sizeof value, "%#" PRIx64, v);
	w[0] = 0;
	status = run_apart(args, 0);
	cr_assert_eq(status, 0, "reattach_child open %s (%s, %s) exited %d (reattach_child.h names the check)", name,
		     c->provider, kv, status);
	cr_assert_eq(w[0], v, "the opener's write is not in the creator's segment");
	assert_pattern(seg, 1, "after the opener detached");
}

/* The configuration an opener started apart uses: kv, and the creator's hugetlbfs_path. */
static const char *opener_kv(const struct lcase *c, const char *kv, char *buf, size_t len)
{
	const char *mnt = is_plain(c) ? NULL : hpt_test_hugetlbfs(c->page_size);

	if (!strcmp(c->provider, "hugetlbfs") && mnt && *mnt)
		snprintf(buf, len, "%s%shugetlbfs_path=%s", strcmp(kv, "-") ? kv : "", strcmp(kv, "-") ? "," : "", mnt);
	else
		snprintf(buf, len, "%s", kv);
	return buf;
}

/* ---- the owner removes; a forked worker, or anyone's detach, does not ---- */

ParameterizedTestParameters(lifecycle, a_forked_workers_destroy_only_detaches)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, a_forked_workers_destroy_only_detaches)
{
	const char *name = lname("fork");
	hpshm_config *cfg = lconfig(c, name, "");
	hpshm_segment *seg = lcreate(c, cfg), *again = NULL;
	struct lfound f;
	hpshm_error err;
	int status, rc;
	pid_t pid;

	cr_assert_eq(llist(name).times, 1, "the new segment is not listed");
	pid = hpt_fork();
	if (pid == 0) {
		/* A worker: its copy of the handle says nothing of who created the segment. */
		int owner = hpshm_segment_is_owner(seg);

		rc = hpshm_segment_destroy(seg);
		_exit(owner != 0 ? 1 : rc < 0 ? 2 : 0);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the forked worker: %s", WIFEXITED(status) && WEXITSTATUS(status) == 1
						   ? "hpshm_segment_is_owner() said 1 in it"
						   : "its hpshm_segment_destroy() failed, or it died");
	cr_assert_eq(hpshm_segment_is_owner(seg), 1, "the creator is no longer the owner");

	/* Still there: listed, alive, openable by its name, and its memory intact. */
	f = llist(name);
	cr_assert_eq(f.times, 1, "%s segment %s is gone from the list after a forked worker's destroy", c->provider,
		     name);
	cr_assert_eq(f.obj.state, HPSHM_OBJECT_ALIVE, "%s", f.obj.note);
	assert_pattern(seg, 0, "after the worker's destroy");
	rc = hpshm_segment_open(&again, name, NULL, &err);
	cr_assert_eq(rc, 0, "open %s after the worker's destroy: %s: %s", name, hpshm_errname(rc), err.message);
	assert_pattern(again, 0, "opened after the worker's destroy");
	cr_assert_eq(hpshm_segment_destroy(again), 0);

	/* The owner's destroy removes it. */
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(llist(name).times, 0, "the owner's destroy left %s listed", name);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(lifecycle, a_forked_workers_destroy_leaves_the_companion_header)
{
	/* The huge page providers only (collect() lists them first): plain is on base pages, and a
	 * header on base pages is at the tail, never in a companion. */
	return cr_make_param_array(struct lcase, lcases, collect() - 1);
}

/*
 * An unnamed segment whose size fills its huge pages keeps its header in a companion, whose
 * magic the owner's destroy clears (core/header.c): a worker's destroy must not, or every
 * child started afterwards would be told the segment is gone.
 */
ParameterizedTest(struct lcase *c, lifecycle, a_forked_workers_destroy_leaves_the_companion_header)
{
	char path[] = HPSHM_REATTACH_CHILD, mode[] = "check", addr[32], ps[32], slot[] = "0", nslots[] = "1",
	     value[32];
	char *argv[] = { path, mode, addr, ps, slot, nslots, value, NULL };
	hpshm_config *cfg;
	hpshm_segment *seg = NULL;
	hpshm_child kid;
	hpshm_error err;
	char kv[256], psz[32];
	uint64_t *w;
	size_t words;
	int rc, status;
	pid_t pid;

	cfg = lconfig(c, "x", ""); /* skips where the provider cannot work */
	hpt_size_text(c->page_size, psz, sizeof psz);
	snprintf(kv, sizeof kv, "provider=%s,reattach=exec,huge_pages=on,huge_page_size=%s", c->provider, psz);
	hpshm_config_free(cfg);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	if (!strcmp(c->provider, "hugetlbfs") && hpt_test_hugetlbfs(c->page_size))
		cr_assert_eq(hpshm_config_set(cfg, "hugetlbfs_path", hpt_test_hugetlbfs(c->page_size), &err), 0);
	rc = hpshm_segment_create(&seg, 2 * c->page_size, cfg, &err);
	hpt_skip_emulated_refusal(rc, &err);
	cr_assert_eq(rc, 0, "create: %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(hpshm_segment_report(seg)->mapped_size, 2 * c->page_size, "the header took a page at the tail");
	w = hpshm_segment_address(seg);
	words = hpshm_segment_size(seg) / sizeof *w;
	for (size_t i = 0; i < words; i++)
		w[i] = reattach_pattern(i);
	pid = hpt_fork();
	if (pid == 0)
		_exit(hpshm_segment_destroy(seg) < 0 ? 2 : 0);
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked worker's destroy failed");

	snprintf(addr, sizeof addr, "%#" PRIxPTR, (uintptr_t)w);
	snprintf(ps, sizeof ps, "%zu", c->page_size);
	snprintf(value, sizeof value, "%#" PRIx64, (uint64_t)0xc0de0000u | (uint64_t)getpid());
	fflush(NULL);
	cr_assert_eq(hpshm_child_spawn(seg, path, argv, NULL, &kid, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_child_wait(&kid, &status, &err), 0, "%s", err.message);
	cr_assert_eq(status, 0, "a child started after the worker's destroy could not attach (exit %d)", status);
	cr_assert_eq(w[reattach_slot_word(0, words, 1)], strtoull(value, NULL, 16));
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

Test(lifecycle, detach_leaves_the_object_even_in_its_owner)
{
	const char *name = lname("detach");
	hpshm_segment *seg = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	struct lfound f;
	char kv[160];
	int status, rc;
	pid_t pid;

	/* A creator that detaches and ends: the object outlives both, dead, for gc. */
	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,name=%s", name);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	pid = hpt_fork();
	if (pid == 0) {
		if (hpshm_segment_create(&seg, 64 * 1024, cfg, NULL) < 0)
			_exit(1);
		for (size_t i = 0; i < 8; i++)
			((uint64_t *)hpshm_segment_address(seg))[i] = reattach_pattern(i);
		_exit(hpshm_segment_is_owner(seg) != 1 ? 2 : hpshm_segment_detach(seg) < 0 ? 3 : 0);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the creator: status %d", status);
	f = llist(name);
	cr_assert_eq(f.times, 1, "the owner's detach removed %s", name);
	cr_assert_eq(f.obj.state, HPSHM_OBJECT_DEAD, "%s", f.obj.note);
	rc = hpshm_segment_open(&seg, name, NULL, &err);
	cr_assert_eq(rc, 0, "open %s after its owner detached: %s: %s", name, hpshm_errname(rc), err.message);
	for (size_t i = 0; i < 8; i++)
		cr_assert_eq(((uint64_t *)hpshm_segment_address(seg))[i], reattach_pattern(i));
	cr_assert_eq(hpshm_segment_is_owner(seg), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	f = llist(name);
	cr_assert_eq(f.times, 1, "an opener's destroy removed %s", name);
	cr_assert_eq(hpshm_objects_remove(&f.obj, 0, &err), 0, "gc of the dead segment: %s", err.message);
	cr_assert_eq(llist(name).times, 0);
	hpshm_config_free(cfg);
}

/* ---- hpshm_segment_open() from a process started apart ---- */

ParameterizedTestParameters(lifecycle, a_process_started_apart_opens_at_the_creators_address)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, a_process_started_apart_opens_at_the_creators_address)
{
	const char *name = lname("exec");
	hpshm_config *cfg = lconfig(c, name, "");
	hpshm_segment *seg = lcreate(c, cfg);
	char kv[512];

	/* No provider= in the opener: the walk over the providers with names finds it. */
	open_apart(c, seg, name, opener_kv(c, "reattach=exec", kv, sizeof kv), 1);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(lifecycle, a_process_started_apart_opens_where_the_system_chooses)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, a_process_started_apart_opens_where_the_system_chooses)
{
	const char *name = lname("any");
	hpshm_config *cfg = lconfig(c, name, "");
	hpshm_segment *seg = lcreate(c, cfg);
	char kv[512], prov[96];

	snprintf(prov, sizeof prov, "provider=%s", c->provider);
	open_apart(c, seg, name, opener_kv(c, prov, kv, sizeof kv), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(lifecycle, an_opened_segment_elsewhere_says_so_and_gives_no_token)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, an_opened_segment_elsewhere_says_so_and_gives_no_token)
{
	const char *name = lname("here");
	hpshm_config *cfg = lconfig(c, name, "");
	hpshm_segment *seg = lcreate(c, cfg), *opened = NULL;
	const hpshm_report *r;
	char tok[HPSHM_TOKEN_MAX];
	hpshm_error err;
	int rc, ht = 0;

	/* In the creator itself its own mapping holds the creator's address: the system chooses. */
	rc = hpshm_segment_open(&opened, name, NULL, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	r = hpshm_segment_report(opened);
	cr_assert_eq(r->version, HPSHM_REPORT_VERSION);
	cr_assert_eq(r->origin, HPSHM_ORIGIN_OPENED);
	cr_assert_eq(r->relocated, 1);
	cr_assert_neq(hpshm_segment_address(opened), hpshm_segment_address(seg));
	cr_assert_str_eq(r->provider, c->provider);
	cr_assert_eq(r->page_size, c->page_size);
	cr_assert_eq(hpt_smaps_page_size(hpshm_segment_address(opened), &ht), c->page_size);
	cr_assert_eq(hpshm_segment_size(opened), hpshm_segment_size(seg));
	assert_pattern(opened, 0, "opened in the creator");
	/* A token would name an address its pointers do not lead to. */
	cr_assert_eq(hpshm_segment_token(opened, tok, sizeof tok, &err), HPSHM_ENOTSUP);
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	/* Under reattach=exec the creator's address is required, and here it is taken. */
	cr_assert_eq(hpshm_config_parse(cfg, "reattach=exec", &err), 0);
	rc = hpshm_segment_open(&opened, name, cfg, &err);
	cr_assert_eq(rc, HPSHM_EEXIST, "open at the creator's own address: %s: %s", hpshm_errname(rc), err.message);
	cr_assert_null(opened);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}
/* namespace is Windows' Local\ or Global\; a POSIX system has one namespace, so global
 * is accepted and changes nothing: the same object, found by a default configuration. */
Test(lifecycle, namespace_global_changes_nothing_on_posix)
{
	const char *name = lname("ns");
	hpshm_segment *seg = NULL, *opened = NULL;
	hpshm_config *cfg;
	hpshm_error err;
	char kv[160];
	struct lfound f;
	int rc;

	snprintf(kv, sizeof kv, "provider=plain,huge_pages=off,namespace=global,name=%s", name);
	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, kv, &err), 0, "%s", err.message);
	rc = hpshm_segment_create(&seg, 64 * 1024, cfg, &err);
	cr_assert_eq(rc, 0, "%s: %s", hpshm_errname(rc), err.message);
	((volatile uint64_t *)hpshm_segment_address(seg))[0] = reattach_pattern(0);
	f = llist(name);
	cr_assert_eq(f.times, 1, "%s listed %d times", name, f.times);
	rc = hpshm_segment_open(&opened, name, NULL, &err);
	cr_assert_eq(rc, 0, "open %s with namespace=local: %s: %s", name, hpshm_errname(rc), err.message);
	cr_assert_eq(((volatile uint64_t *)hpshm_segment_address(opened))[0], reattach_pattern(0));
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	cr_assert_eq(llist(name).times, 0);
	hpshm_config_free(cfg);
}

/* ---- the refusals ---- */

Test(lifecycle, a_name_nobody_created_is_enoent)
{
	const char *args[] = { "refuse-open", lname("none"), "-", "HPSHM_ENOENT", NULL };

	cr_assert_eq(run_apart(args, 0), 0, "reattach_child refuse-open (reattach_child.h names the check)");
}

/* An object under the name of case c's segment name, which is not hpshm's; 0, or skip. */
static void put_foreign(const struct lcase *c, const char *name)
{
	char path[512];
	int fd, id;

	if (is_plain(c)) {
		char junk[8192];

		snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
		memset(junk, 'J', sizeof junk);
		cr_assert_eq(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
		close(fd);
	} else if (!strcmp(c->provider, "hugetlbfs")) {
		const char *mnt = hpt_test_hugetlbfs(c->page_size);

		if (!mnt)
			HPT_SKIP("HPSHM_TEST_HUGETLBFS names no hugetlbfs mount of %zu-byte pages", c->page_size);
		/* A file of one huge page and nothing in it: no header proves it is hpshm's. */
		snprintf(path, sizeof path, "%s/hpshm.%s", mnt, name);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
		cr_assert_eq(ftruncate(fd, (off_t)c->page_size), 0, "%s", strerror(errno));
		close(fd);
	} else {
		/* Another program's segment of base pages whose key is hpshm's key of the name. */
		uint32_t h = hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "hpshm:", 6);

		h = hpshm__fnv1a32(h, name, strlen(name));
		id = shmget((key_t)(0x48000000u | (h & 0x00ffffffu)), 8192, IPC_CREAT | IPC_EXCL | 0600);
		cr_assert_geq(id, 0, "shmget: %s", strerror(errno));
	}
}

/* Remove what put_foreign() made (the object is still there: nobody removed it). */
static void take_foreign(const struct lcase *c, const char *name)
{
	char path[512];

	if (is_plain(c)) {
		snprintf(path, sizeof path, "/dev/shm/hpshm.%s", name);
		cr_assert_eq(unlink(path), 0, "the foreign object %s is gone: %s", path, strerror(errno));
	} else if (!strcmp(c->provider, "hugetlbfs")) {
		snprintf(path, sizeof path, "%s/hpshm.%s", hpt_test_hugetlbfs(c->page_size), name);
		cr_assert_eq(unlink(path), 0, "the foreign object %s is gone: %s", path, strerror(errno));
	} else {
		uint32_t h = hpshm__fnv1a32(hpshm__fnv1a32(HPSHM__FNV1A32_INIT, "hpshm:", 6), name, strlen(name));
		int id = shmget((key_t)(0x48000000u | (h & 0x00ffffffu)), 0, 0);

		cr_assert_geq(id, 0, "the foreign SysV segment is gone: %s", strerror(errno));
		cr_assert_eq(shmctl(id, IPC_RMID, NULL), 0);
	}
}

ParameterizedTestParameters(lifecycle, an_object_under_the_name_that_is_not_hpshms_is_refused)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, an_object_under_the_name_that_is_not_hpshms_is_refused)
{
	const char *name = lname("foreign");
	char kv[512], prov[96];
	const char *args[] = { "refuse-open", name, kv, "HPSHM_EINVAL", NULL };
	hpshm_config *cfg = lconfig(c, name, ""); /* skips where the provider cannot work */

	hpshm_config_free(cfg);
	put_foreign(c, name);
	snprintf(prov, sizeof prov, "provider=%s", c->provider);
	opener_kv(c, prov, kv, sizeof kv);
	cr_assert_eq(run_apart(args, 0), 0, "reattach_child refuse-open (reattach_child.h names the check)");
	take_foreign(c, name);
}

ParameterizedTestParameters(lifecycle, a_segment_of_another_page_size_than_asked_is_refused)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, a_segment_of_another_page_size_than_asked_is_refused)
{
	const char *name = lname("size");
	hpshm_config *cfg = lconfig(c, name, ""), *ocfg;
	hpshm_segment *seg = lcreate(c, cfg), *opened = NULL;
	char kv[512], other[64], psz[32];
	const char *args[] = { "refuse-open", name, kv, "HPSHM_EVALUE", NULL };
	hpshm_error err;
	int rc;

	/* Plain's base pages asked as huge ones; huge pages asked as pages twice their size. */
	hpt_size_text(is_plain(c) ? (size_t)2 << 20 : 2 * c->page_size, psz, sizeof psz);
	snprintf(other, sizeof other, "huge_page_size=%s", psz);
	opener_kv(c, other, kv, sizeof kv);
	cr_assert_eq(run_apart(args, 0), 0, "reattach_child refuse-open (reattach_child.h names the check)");
	/* The error names the key at fault. */
	cr_assert_eq(hpshm_config_new(&ocfg), 0);
	cr_assert_eq(hpshm_config_parse(ocfg, opener_kv(c, other, kv, sizeof kv), &err), 0, "%s", err.message);
	rc = hpshm_segment_open(&opened, name, ocfg, &err);
	cr_assert_eq(rc, HPSHM_EVALUE, "%s: %s", hpshm_errname(rc), err.message);
	cr_assert_str_eq(err.key, "huge_page_size");
	cr_assert_null(opened);
	/* The page size the segment has is fine. */
	hpt_size_text(c->page_size, psz, sizeof psz);
	cr_assert_eq(hpshm_config_set(ocfg, "huge_page_size", psz, &err), 0, "%s", err.message);
	rc = hpshm_segment_open(&opened, name, ocfg, &err);
	cr_assert_eq(rc, 0, "open with the segment's own page size: %s: %s", hpshm_errname(rc), err.message);
	cr_assert_eq(hpshm_segment_destroy(opened), 0);
	hpshm_config_free(ocfg);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

ParameterizedTestParameters(lifecycle, another_users_segment_is_refused_without_permission)
{
	return cr_make_param_array(struct lcase, lcases, collect());
}

ParameterizedTest(struct lcase *c, lifecycle, another_users_segment_is_refused_without_permission)
{
	const char *name = lname("perm");
	hpshm_config *cfg;
	hpshm_segment *seg;
	char kv[512];
	const char *args[] = { "refuse-open", name, kv, "HPSHM_EACCES", NULL };

	if (geteuid() != 0)
		HPT_SKIP("needs root, to run the opener as nobody");
	cfg = lconfig(c, name, "mode=0600");
	seg = lcreate(c, cfg);
	opener_kv(c, "-", kv, sizeof kv);
	cr_assert_eq(run_apart(args, 1), 0, "reattach_child refuse-open as nobody (reattach_child.h names the check)");
	/* Refused, and left alone. */
	assert_pattern(seg, 0, "after the refusal");
	cr_assert_eq(llist(name).times, 1);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}

/* ---- who inherits the descriptor ---- */

Test(lifecycle, uninherit_keeps_the_descriptor_from_later_programs)
{
	hpshm_config *cfg;
	hpshm_segment *seg;
	hpshm_error err;
	char tok[HPSHM_TOKEN_MAX], fd[16];
	const char *p;
	const char *open_args[] = { "fd", fd, "open", NULL }, *closed_args[] = { "fd", fd, "closed", NULL };
	int status;

	cr_assert_eq(hpshm_config_new(&cfg), 0);
	cr_assert_eq(hpshm_config_parse(cfg, "provider=plain,huge_pages=off,reattach=exec", &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_create(&seg, 64 * 1024, cfg, &err), 0, "%s", err.message);
	cr_assert_gt(hpshm_segment_inherit(seg, tok, sizeof tok, &err), 0, "%s", err.message);
	p = strstr(tok, ":fd=");
	if (!p)
		HPT_SKIP("the plain segment has no descriptor here (no memfd): token %s", tok);
	snprintf(fd, sizeof fd, "%d", atoi(p + 4));
	/* The server's own exec of its worker: the descriptor goes with it. */
	status = run_apart(open_args, 0);
	cr_assert_eq(status, 0, "a program exec'd after hpshm_segment_inherit() lacks descriptor %s (exit %d)", fd,
		     status);
	cr_assert_eq(hpshm_segment_uninherit(seg, &err), 0, "%s", err.message);
	/* Any program started later (a CGI script, a logger) gets nothing. */
	status = run_apart(closed_args, 0);
	cr_assert_eq(status, 0, "a program exec'd after hpshm_segment_uninherit() holds descriptor %s (exit %d)", fd,
		     status);
	/* Undone twice is still undone; the segment itself is untouched. */
	cr_assert_eq(hpshm_segment_uninherit(seg, &err), 0, "%s", err.message);
	cr_assert_eq(hpshm_segment_destroy(seg), 0);
	hpshm_config_free(cfg);
}
